"""The seam between the CV package and the estimators (issue 33, item 4): the search
reaches an estimator only through ``estimator._cv_engine()`` (:class:`CVEngine`), and its
scores are addressed by axis name, so that the order of the grid's axes is free."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from mvkernels import MVMLSVC, MVMLClassifier, MVMLClassifierCV, MVMLRegressor, MVMLRegressorCV
from mvkernels.mvml._losses import SquareLoss
from mvkernels.mvml.cv import _grid
from mvkernels.mvml.cv._grid import Axis, ScoreGrid, ScreenResult, SearchGrid

CV_PACKAGE = Path(__file__).resolve().parents[3] / "src" / "mvkernels" / "mvml" / "cv"


def _private_uses() -> tuple[set[str], set[str], set[str]]:
    """In ``mvml/cv/*.py``: the private methods called on anything but ``self``,
    ``cls`` or ``super()``, the private attributes assigned on such objects, and the
    private names the CV's own classes define or keep on ``self``."""
    called, assigned, own = set(), set(), set()
    for path in sorted(CV_PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text())
        methods = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        own.add(item.name)
                    elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        own.add(item.target.id)
            if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
                continue
            if node.attr.startswith("__"):
                continue
            recv = node.value
            if isinstance(recv, ast.Name) and recv.id in ("self", "cls"):
                own.add(node.attr)
                continue
            if isinstance(recv, ast.Call) and getattr(recv.func, "id", None) == "super":
                continue
            if isinstance(node.ctx, ast.Store):
                assigned.add(node.attr)
            elif id(node) in methods:
                called.add(node.attr)
    return called, assigned, own


def test_the_cv_calls_one_private_method_of_the_estimators():
    """``cv/`` calls ``_cv_engine`` and no other private method of an estimator, and sets
    no private attribute of one (it set ``_loss_weight`` and called eight others:
    ``_make_loss``, ``_solve_path``, ``_build_problem``, ``_check_params``, ``_decision``,
    ``_full_outputs``, ``_check_n_classes``, ``_encode_targets``)."""
    called, assigned, own = _private_uses()
    estimators = (MVMLRegressor, MVMLClassifier, MVMLSVC)
    private = {n for cls in estimators for n in dir(cls) if n.startswith("_")}
    assert (called - own) & private == {"_cv_engine"}
    assert assigned <= own  # the CV's own state on its parts (e.g. _to_beat), nothing else


def _foreign_private_names() -> set[str]:
    """In ``mvml/cv/*.py``: the private names of the rest of mvkernels it uses, as
    ``file: name``: a ``_name`` imported from a module outside the package, and a
    ``obj._name`` read, called or set on anything but ``self``, ``cls``, ``super()`` or
    the CV's own objects (the private names its classes define or keep on ``self``)."""
    own = _private_uses()[2]
    found = set()
    for path in sorted(CV_PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                module = node.module or ""
                ours = node.level >= 2 or (node.level == 0 and module.startswith("mvkernels"))
                found |= {
                    f"{path.name}: {module}.{a.name}"
                    for a in node.names
                    if ours and a.name.startswith("_")
                }
            if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
                continue
            recv = node.value
            if node.attr.startswith("__") or node.attr in own:
                continue
            if isinstance(recv, ast.Name) and recv.id in ("self", "cls"):
                continue
            if isinstance(recv, ast.Call) and getattr(recv.func, "id", None) == "super":
                continue
            found.add(f"{path.name}: {ast.unparse(recv)}.{node.attr}")
    return found


def test_the_cv_uses_no_private_name_of_another_module():
    """``cv/`` reaches the rest of mvkernels by public names and the declared seam only:
    ``_cv_engine`` is the one private name of another object it uses, and it imports no
    private name from outside the package (it used ``nys._fit_views``,
    ``_base._weighted_missing_model``, ``_base._mvml_constraints``, ``_base._BaseMVML``
    and ``self._base_class._auto_feature_budget``). scikit-learn's ``_fit_context``
    (its documented way to write an estimator's ``fit``) is not mvkernels's."""
    found = _foreign_private_names()
    assert {name.rsplit(".", 1)[-1] for name in found} == {"_cv_engine"}, sorted(found)


def _views(n=60, seed=0):
    rng = np.random.RandomState(seed)
    X1, X2 = rng.randn(n, 3), rng.randn(n, 2)
    y = X1[:, 0] + np.sin(2 * X2[:, 1]) + 0.1 * rng.randn(n)
    return [X1, X2], y


class _CountedLoss(SquareLoss):
    calls: list = []

    def fold_paths(self, ctx, problem, Xtr, alphas, etas, K, rows=None):
        type(self).calls.append(alphas.size)
        return super().fold_paths(ctx, problem, Xtr, alphas, etas, K, rows)


class _CountedRegressor(MVMLRegressor):
    def _make_loss(self):
        return _CountedLoss(self)


class _CountedRegressorCV(MVMLRegressorCV):
    _base_classes = {"squared": _CountedRegressor}


def test_a_loss_reaches_the_folds_through_the_estimators_engine():
    """A loss plugged in by an estimator's ``_make_loss`` runs the CV's fold paths (one
    call per fold and joint-view candidate) with no change to the CV package, and gives
    the plain search's scores."""
    Xs, y = _views()
    kw = dict(cv=3, alphas=[0.01, 1.0], bandwidth_factors=[1.0, 4.0], search="exhaustive")
    kw.update(joint_view=False, feature_relevance="none", fit_intercept=False, random_state=0)
    _CountedLoss.calls = []
    counted = _CountedRegressorCV(**kw).fit(Xs, y)
    plain = MVMLRegressorCV(**kw).fit(Xs, y)
    assert _CountedLoss.calls == [2] * (3 * 2)  # 3 folds x 2 bandwidth factors
    assert type(counted.best_estimator_) is _CountedRegressor
    for key in ("mean_test_score", "split0_test_score", "split2_test_score"):
        np.testing.assert_array_equal(counted.cv_results_[key], plain.cv_results_[key])


def _by_params(cv):
    """``params -> split scores`` of every candidate (the order of ``cv_results_`` aside)."""
    res = cv.cv_results_
    splits = np.column_stack([res[f"split{k}_test_score"] for k in range(cv.n_splits_)])
    return {tuple(sorted(p.items(), key=str)): s for p, s in zip(res["params"], splits)}


@pytest.mark.parametrize(
    "kw",
    [
        dict(search="exhaustive"),  # Nystrom folds, every candidate
        dict(search="screen", n_finalists=1),  # the screen, then the finalist's folds
        dict(search="exhaustive", n_landmarks=None),  # full-kernel folds
    ],
    ids=["nystrom", "screened", "full"],
)
@pytest.mark.parametrize("cls", [MVMLRegressorCV, MVMLClassifierCV])
def test_the_scores_do_not_depend_on_the_order_of_the_axes(monkeypatch, kw, cls):
    """The scoring steps write and read the scores by axis name: with the grid's axes
    declared in another order, every candidate keeps its scores (screen columns too),
    and a classifier the held-out values of its best candidate (its probabilities)."""
    Xs, y = _views(n=48, seed=1)
    if cls is MVMLClassifierCV:
        y = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))  # 3 classes
    kw = dict(
        kw,
        cv=3,
        alphas=[0.01, 1.0],
        etas=[0.1, 1.0],
        bandwidth_factors=[1.0, 4.0, 8.0],
        max_iter=2,
        joint_view="auto",
        feature_relevance="none",
        random_state=0,
    )
    before = cls(**kw).fit(Xs, y)
    declared = _grid._CVSearch.grid

    def permuted(self):
        axes = {a.name: a for a in declared.fget(self).axes}
        order = ("max_iter", "alpha", "bandwidth_factor", "eta", "joint_view")
        return SearchGrid(tuple(axes[name] for name in order))

    monkeypatch.setattr(_grid._CVSearch, "grid", property(permuted))
    after = cls(**kw).fit(Xs, y)
    assert list(after.cv_results_["params"][0]) != list(before.cv_results_["params"][0])
    a, b = _by_params(before), _by_params(after)
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    assert np.isfinite(before.best_score_)
    if cls is MVMLClassifierCV and before.best_params_ == after.best_params_:
        np.testing.assert_array_equal(before.predict_proba(Xs), after.predict_proba(Xs))
    if "screen_score" in before.cv_results_:
        order = np.argsort([str(sorted(p.items(), key=str)) for p in before.cv_results_["params"]])
        order_after = np.argsort(
            [str(sorted(p.items(), key=str)) for p in after.cv_results_["params"]]
        )
        np.testing.assert_array_equal(
            before.cv_results_["screen_score"][order],
            after.cv_results_["screen_score"][order_after],
        )


def test_score_grid_puts_blocks_by_axis_name():
    """``put(block, axes=...)`` writes a block whose axes are in another order (the
    folds' selector ``folds`` alike); a block of other axes than the kept ones is refused."""
    g = SearchGrid((Axis("a", (1.0, 2.0)), Axis("b", (1.0, 2.0, 3.0)), Axis("c", (1.0,))))
    block = np.arange(6.0).reshape(2, 3)
    in_order = ScoreGrid.empty(g, n_splits=2)
    in_order.put(block[:, :, None], c=0, folds=[1])
    by_name = ScoreGrid.empty(g, n_splits=2)
    by_name.put(block.T, axes=("b", "a"), c=0, folds=1)
    np.testing.assert_array_equal(in_order.values, by_name.values)
    assert np.isnan(by_name.take(folds=0)).all()
    whole = ScoreGrid.empty(g.without("c"), n_splits=2)
    whole.put(by_name.take(c=0))
    target = ScoreGrid.empty(g, n_splits=2)
    target.put(whole, c=0)  # a ScoreGrid block names its axes
    np.testing.assert_array_equal(target.values, by_name.values)
    with pytest.raises(ValueError, match="written where"):
        target.put(block.T, axes=("b", "a"), a=0, folds=1)
    with pytest.raises(KeyError, match="no search axis named 'd'"):
        g.without("d")


def test_screen_columns_are_written_by_axis_name():
    """``ScreenResult.columns`` gives each candidate its own (joint view, bandwidth
    factor) pair's screen, whatever the order of the grid's axes; a looped axis indexes
    the runs (a run without a screen: NaN)."""
    rng = np.random.default_rng(0)
    runs = {}
    for k in (0, 2):
        r = ScreenResult.empty(n_joint=2, n_factor=3)
        r.score[:] = rng.random((2, 3))
        r.closeness[:] = -rng.random((2, 3))
        runs[(k,)] = r
    axes = {
        "loss": Axis("loss", ("a", "b", "c"), as_param=str, batched=False),
        "joint_view": Axis("joint_view", (False, True), as_param=bool),
        "bandwidth_factor": Axis("bandwidth_factor", (1.0, 2.0, 4.0)),
        "alpha": Axis("alpha", (0.1, 1.0)),
    }
    for order in (
        ("loss", "joint_view", "bandwidth_factor", "alpha"),
        ("loss", "alpha", "bandwidth_factor", "joint_view"),
    ):
        grid = SearchGrid(tuple(axes[name] for name in order))
        columns = ScreenResult.columns(runs, grid, looped=("loss",))
        for flat, (index, _) in enumerate(grid.candidates()):
            at = dict(zip(order, index))
            run = runs.get((at["loss"],))
            pair = (at["joint_view"], at["bandwidth_factor"])
            if run is None:
                assert np.isnan(columns["screen_score"][flat])
                continue
            assert columns["screen_score"][flat] == run.score[pair]
            assert columns["screen_squared_error"][flat] == -run.closeness[pair]


@pytest.mark.parametrize("cls", [MVMLRegressorCV, MVMLClassifierCV])
def test_full_kernel_folds_of_a_per_view_precomputed_list(cls):
    """Full-kernel mode cuts the training columns of precomputed Gram matrices named per
    view as of ``kernel="precomputed"`` (one helper, ``names_precomputed``): the same
    scores (the per-view list failed on a non-square training kernel)."""
    rng = np.random.default_rng(0)
    X1, X2 = rng.normal(size=(40, 3)), rng.normal(size=(40, 4))
    y = (X1[:, 0] + X2[:, 1] > 0).astype(int)
    Ks = [rbf_kernel(X1), rbf_kernel(X2, gamma=0.2)]
    kw = dict(cv=3, n_landmarks=None, joint_view=False, max_iter=2, alphas=[0.01, 1.0])
    one = cls(kernel="precomputed", **kw).fit(Ks, y)
    per_view = cls(kernel=["precomputed", "precomputed"], **kw).fit(Ks, y)
    np.testing.assert_array_equal(
        one.cv_results_["mean_test_score"], per_view.cv_results_["mean_test_score"]
    )
    assert one.best_params_ == per_view.best_params_


@pytest.mark.parametrize("kw", [dict(), dict(n_landmarks=None)], ids=["nystrom", "full"])
def test_the_scoring_steps_hold_no_estimator(monkeypatch, kw):
    """The scoring steps read a :class:`FoldScorer` built for each run (the CV
    estimator's parameters, the searched estimator's class and parameters, the run's
    state), not the CV estimator: none of its fields is an estimator or a method of one,
    and the estimators it makes through its seam are new, of the searched class."""
    from sklearn.base import BaseEstimator

    from mvkernels.mvml.cv import _search
    from mvkernels.mvml.cv._folds import FoldScorer

    seen = []
    score = _search.score_candidates

    def recorded(fs, S, scores):
        seen.append(fs)
        return score(fs, S, scores)

    monkeypatch.setattr(_search, "score_candidates", recorded)
    Xs, y = _views()
    cv = MVMLRegressorCV(cv=3, alphas=[0.1], bandwidth_factors=[1.0, 4.0], **kw).fit(Xs, y)
    (fs,) = seen
    assert isinstance(fs, FoldScorer)
    for name, value in vars(fs).items():
        assert not isinstance(value, BaseEstimator), name
        assert not isinstance(getattr(value, "__self__", None), BaseEstimator), name
    a, b = fs.estimator(), fs.estimator()
    assert type(a) is MVMLRegressor and a is not b and a is not cv.best_estimator_
    assert a.get_params() == b.get_params() and a.tol is None  # the paths run to the end

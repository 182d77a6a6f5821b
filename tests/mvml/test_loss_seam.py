"""The seam between the losses and the estimators (issue 33, item 1): a loss hook takes
the fit's :class:`FitContext`, never the estimator, so that no loss module reads or sets
an attribute of an estimator; and the CV engine hands the fold's loss weights over as an
argument instead of setting them on the estimator."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from mvkernels import MVMLSVC, MVMLClassifier, MVMLRegressor
from mvkernels.mvml._fit_context import FitContext
from mvkernels.mvml._losses import SquareLoss

MVML = Path(__file__).resolve().parents[2] / "src" / "mvkernels" / "mvml"

#: the loss part: the losses, the hinge loss's solvers, state and fit ends, the context
LOSS_MODULES = (
    "_losses.py",
    "_hinge_loss.py",
    "_hinge_fit.py",
    "_hinge_state.py",
    "_hinge_active.py",
    "_hinge.py",
    "_fit_context.py",
)

#: names an estimator goes by
ESTIMATOR_NAMES = {"est", "estimator"}


def estimator_uses(source: str) -> list[str]:
    """What of an estimator ``source`` reaches for: parameters named ``est`` /
    ``estimator``, any use of such a name, private attributes read or set on anything but
    ``self`` / ``cls`` / ``super()``, ``__dict__`` lookups and ``set_params`` calls."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.arg) and node.arg in ESTIMATOR_NAMES:
            found.append(f"parameter {node.arg} (line {node.lineno})")
        elif isinstance(node, ast.Name) and node.id in ESTIMATOR_NAMES:
            found.append(f"name {node.id} (line {node.lineno})")
        elif isinstance(node, ast.Attribute):
            recv = node.value
            own = (isinstance(recv, ast.Name) and recv.id in ("self", "cls")) or (
                isinstance(recv, ast.Call) and getattr(recv.func, "id", None) == "super"
            )
            if node.attr == "__dict__" or node.attr == "set_params":
                found.append(f".{node.attr} (line {node.lineno})")
            elif node.attr.startswith("_") and not node.attr.startswith("__") and not own:
                # (a module's own private names, e.g. an imported _COMMON_PARAMS, are
                # Name nodes, not attributes)
                found.append(f"private .{node.attr} (line {node.lineno})")
    return found


def test_the_checker_sees_the_old_hooks():
    """The old hooks (``est._problem_data``, ``est.__dict__.get("_loss_weight")``,
    ``est._ovo_rows``, ``est.set_params``) are all found."""
    old = """
def hinge_problem(est, X, Y):
    return est._problem_data(X, Y)

def set_hinge_attributes(loss, est, states):
    lw = est.__dict__.get("_loss_weight")
    rows = est._ovo_rows
    est.C_ = 1.0

def fold_paths(self, estimator, alphas):
    estimator.set_params(alpha=1.0)
"""
    found = estimator_uses(old)
    assert any("parameter est " in f for f in found)
    assert any("parameter estimator " in f for f in found)
    assert any("._problem_data" in f for f in found)
    assert any("._ovo_rows" in f for f in found)
    assert any(".__dict__" in f for f in found)
    assert any(".set_params" in f for f in found)
    assert estimator_uses("def g(self, ctx, X):\n    return ctx.problem_data(X, None, ctx)\n") == []


@pytest.mark.parametrize("name", LOSS_MODULES)
def test_no_loss_module_reaches_into_an_estimator(name):
    found = estimator_uses((MVML / name).read_text())
    assert found == [], f"{name} reaches into an estimator: {found}"


def test_the_cv_engine_sets_no_attribute_of_the_estimator():
    """``CVEngine`` assigns attributes on itself only (it set ``est._loss_weight``)."""
    tree = ast.parse((MVML / "_cv_engine.py").read_text())
    stores = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute)
        and isinstance(n.ctx, ast.Store)
        and not (isinstance(n.value, ast.Name) and n.value.id == "self")
    ]
    assert stores == []


def _views(n=60, seed=0):
    rng = np.random.RandomState(seed)
    Xs = [rng.randn(n, 3), rng.randn(n, 2)]
    y = np.argmax(np.hstack(Xs)[:, :3] + 0.3 * rng.randn(n, 3), axis=1)
    return Xs, y


def test_the_context_is_frozen_and_typed():
    ctx = MVMLClassifier(n_landmarks=None)._fit_context()
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.loss_weight = np.ones(3)  # type: ignore[misc]
    assert {f.name for f in dataclasses.fields(FitContext)} == {
        "name",
        "problem_data",
        "statistics_problem",
        "solve_path",
        "initial_metric",
        "loss_weight",
        "row_subsets",
        "rows_to_columns",
        "data",
    }
    assert ctx.name == "MVMLClassifier" and ctx.row_subsets() is None
    cols = [np.arange(3.0), np.ones(3)]
    np.testing.assert_array_equal(ctx.rows_to_columns(cols), np.column_stack(cols))


def test_a_loss_hook_runs_on_a_context_without_an_estimator():
    """The square loss's ``build_problem`` / ``nystrom_problem`` / ``fold_paths`` call the
    context's callables and nothing else."""
    calls = []
    problem = object()

    def problem_data(X, Y, ctx, loss):
        calls.append(("data", X, Y, ctx.name, loss))
        return problem

    def statistics(nys, Xs, Y, complete, data):
        calls.append(("stats", nys, complete, data))
        return problem

    ctx = FitContext(
        name="Mine",
        problem_data=problem_data,
        statistics_problem=statistics,
        solve_path=lambda *a: [],
        initial_metric=lambda p: None,
    )
    loss = SquareLoss(MVMLClassifier())
    assert loss.build_problem(ctx, "X", "Y") is problem
    assert loss.nystrom_problem(ctx, "nys", [], "Y", True, None, "part") is problem
    assert calls == [("data", "X", "Y", "Mine", loss), ("stats", "nys", True, "part")]
    assert loss.fitted_attributes(ctx, [], [], 3) == {}


def test_the_hinge_weight_reads_the_contexts_loss_weights_and_pairs():
    """One-vs-one with row weights: ``C_`` per pair is ``1 / sum_i s_i`` over the pair's
    rows (the context's ``loss_weight`` and ``row_subsets``), to rounding."""
    Xs, y = _views()
    w = np.random.RandomState(1).uniform(0.5, 2.0, y.size)
    svc = MVMLSVC(n_landmarks=10, random_state=0, multi_class="ovo", max_iter=2)
    svc.fit(Xs, y, sample_weight=w)
    ctx = svc._fit_context()
    rows = ctx.row_subsets()
    assert rows is not None and len(rows) == 3
    for k, r in enumerate(rows):
        assert svc.C_[k] == pytest.approx(1.0 / w[r].sum(), rel=1e-12)
        off = np.setdiff1d(np.arange(y.size), r)
        assert np.all(svc.dual_coef_[off, k] == 0.0)


def test_the_fold_problem_takes_the_loss_weights_as_an_argument():
    """The CV engine's fold problem with loss weights ``s`` (an argument, no longer set on
    the estimator by the engine) is the weighted square loss's: the unweighted problem's
    kernels, targets scaled by ``sqrt(s_i)`` (full mode); without weights, unweighted."""
    Xs, y = _views()
    w = np.random.RandomState(2).uniform(0.5, 2.0, y.size)
    Y = np.where(y[:, None] == np.arange(3), 1.0, -1.0)
    kw = dict(n_landmarks=None, joint_view=False, metric="identity")
    weighted = MVMLClassifier(**kw)._cv_engine().fold_problem(Xs, Y, w)
    plain = MVMLClassifier(**kw)._cv_engine().fold_problem(Xs, Y, None)
    assert plain.sample_weight is None
    np.testing.assert_array_equal(weighted.sample_weight, w)
    np.testing.assert_allclose(weighted.Y, Y * np.sqrt(w)[:, None], rtol=1e-15)
    for K, Kp in zip(weighted.Ks, plain.Ks):
        np.testing.assert_array_equal(K, Kp)


@pytest.mark.parametrize("cls", [MVMLClassifier, MVMLRegressor, MVMLSVC])
@pytest.mark.parametrize("kw", [{}, {"n_landmarks": None}, {"multi_class": "ovo"}])
def test_a_fit_builds_one_loss(monkeypatch, cls, kw):
    """One loss object per fit: the problem, the solve (every one-vs-one pair's too), the
    completed full problem of missing views and the loss's fitted attributes all take the
    fit's loss."""
    if cls is MVMLRegressor and "multi_class" in kw:
        pytest.skip("one-vs-one is the classifiers'")
    Xs, y = _views()
    if kw.get("n_landmarks", 0) is None:  # full-kernel mode with a missing view
        Xs[1] = Xs[1].copy()
        Xs[1][:3] = np.nan
    made = []
    original = cls._make_loss

    def counted(self):
        made.append(original(self))
        return made[-1]

    monkeypatch.setattr(cls, "_make_loss", counted)
    w = np.random.RandomState(3).uniform(0.5, 2.0, y.size)
    cls(random_state=0, max_iter=3, **kw).fit(Xs, y, sample_weight=w)
    assert len(made) == 1

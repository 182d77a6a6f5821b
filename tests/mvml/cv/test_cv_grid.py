"""The CV estimators' search grid of named axes (``mvkernels.mvml.cv._grid``)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.utils._param_validation import StrOptions

from _abandon import check_abandoned, fold_order, splits
from mvkernels import MVMLClassifierCV, MVMLRegressorCV
from mvkernels.mvml.cv import _data, _parts, _search
from mvkernels.mvml.cv import _grid as _grid_module
from mvkernels.mvml.cv._folds import FoldScorer
from mvkernels.mvml.cv._grid import Axis, PartAxis, ScoreGrid, SearchGrid


def _grid():
    return SearchGrid(
        (
            Axis("joint_view", (False, True), as_param=bool),
            Axis("alpha", (0.1, 1.0, 10.0)),
            Axis("eta", (np.nan,), reported=False),
            Axis("max_iter", (0, 1), as_param=lambda i: i + 1),
        )
    )


def test_candidates_follow_the_declared_axes_in_c_order():
    g = _grid()
    assert g.shape == (2, 3, 1, 2) and g.size == 12
    cands = list(g.candidates())
    assert [i for i, _ in cands] == [tuple(i) for i in np.ndindex(*g.shape)]
    assert cands[0][1] == {"joint_view": False, "alpha": 0.1, "max_iter": 1}
    assert cands[-1][1] == {"joint_view": True, "alpha": 10.0, "max_iter": 2}
    assert g.position("max_iter") == 3
    with pytest.raises(KeyError, match="no search axis named 'loss'"):
        g.position("loss")


def test_results_rank_ties_and_unscored_candidates():
    g = _grid()
    rng = np.random.default_rng(0)
    scores = rng.uniform(size=(*g.shape, 3))
    scores[1, 2, 0, 1] = np.nan  # left out (screened): ranks last
    scores[0, 1, 0, 0] = scores[1, 0, 0, 1] = 2.0  # best, tied: the first in grid order wins
    extra = {"pair": g.expand(np.array([5.0, 6.0]), ("joint_view",))}
    res, best = g.results(scores, extra)
    flat = scores.reshape(g.size, 3)
    assert best == int(np.ravel_multi_index((0, 1, 0, 0), g.shape))
    np.testing.assert_array_equal(res["mean_test_score"], flat.mean(axis=1))
    for k in range(3):
        np.testing.assert_array_equal(res[f"split{k}_test_score"], flat[:, k])
    assert res["rank_test_score"][best] == 1
    assert res["rank_test_score"][np.ravel_multi_index((1, 0, 0, 1), g.shape)] == 1
    assert res["rank_test_score"][np.ravel_multi_index((1, 2, 0, 1), g.shape)] == g.size
    assert set(k for k in res if k.startswith("param_")) == {
        "param_joint_view",
        "param_alpha",
        "param_max_iter",
    }
    np.testing.assert_array_equal(res["pair"], np.repeat([5.0, 6.0], 6))


def test_cv_results_columns_come_from_the_estimators_grid():
    rng = np.random.RandomState(0)
    Xs = [rng.randn(60, 3), rng.randn(60, 2)]
    y = (Xs[0][:, 0] + Xs[1][:, 0] > 0).astype(int)
    cv = MVMLClassifierCV(
        alphas=[0.01, 1.0],
        etas=[0.1],
        bandwidth_factors=[1.0, 4.0],
        cv=3,
        max_iter=2,
        joint_view=False,
        search="exhaustive",
        random_state=0,
    ).fit(Xs, y)
    params = cv.cv_results_["params"]
    assert len(params) == 2 * 2 * 1 * 2
    assert list(params[0]) == ["bandwidth_factor", "alpha", "eta", "max_iter"]
    assert params[1] == {"bandwidth_factor": 1.0, "alpha": 0.01, "eta": 0.1, "max_iter": 2}
    assert cv.best_params_ == params[cv.best_index_]
    assert cv.best_score_ == cv.cv_results_["mean_test_score"].max()


def test_score_grid_reads_and_writes_by_name_as_positional_indexing():
    g = _grid()  # joint_view (2), alpha (3), eta (1), max_iter (2); 3 folds
    ref = np.arange(np.prod(g.shape) * 3, dtype=float).reshape(*g.shape, 3)
    scores = ScoreGrid(g, ref.copy())
    assert_array_equal(scores.take(alpha=1), ref[:, 1])
    assert_array_equal(scores.take(joint_view=1, max_iter=0), ref[1, :, :, 0])
    mask = np.array([True, False, True])
    assert_array_equal(scores.take(joint_view=0, alpha=mask), ref[0][mask])
    # (NumPy's ref[:, [2, 0], :, 1] would move the alpha axis first)
    assert_array_equal(scores.take(alpha=[2, 0], max_iter=1), ref[:, [2, 0]][:, :, :, 1])
    # writes: an index drops its axis from the block, a mask keeps it
    block = -np.arange(2 * 2 * 3, dtype=float).reshape(2, 2, 1, 3)
    scores.put(block, alpha=mask, max_iter=1)
    for i, a in enumerate(np.flatnonzero(mask)):
        ref[:, a, :, 1] = block[:, i]
    assert_array_equal(scores.values, ref)
    scores.put(7.0, joint_view=1, alpha=1, eta=0, max_iter=0)
    ref[1, 1, 0, 0] = 7.0
    assert_array_equal(scores.values, ref)
    # a fixed value: a view with the other axes, written through
    view = scores.fix(joint_view=1, eta=0)
    assert [a.name for a in view.grid.axes] == ["alpha", "max_iter"]
    view.put(np.full((2, 3), 9.0), alpha=2)
    ref[1, 2, 0] = 9.0
    assert_array_equal(scores.values, ref)
    assert scores.best() == scores.position(int(np.argmax(ref.mean(axis=-1))))
    for bad in (scores.take, scores.fix):
        with pytest.raises(KeyError, match="no search axis named 'loss'"):
            bad(loss=0)


class _WeightsAxisCV(MVMLRegressorCV):
    """A toy product axis, declared and nothing else: ``learn_weights`` searched, the
    search run once per value (the scoring steps do not batch over it). (It was
    ``learn_weights`` until that became a part axis, :data:`PART_AXES`.)"""

    def _looped_axes(self):
        return (Axis("learn_weights", (False, True), as_param=bool, batched=False),)


def test_a_declared_looped_axis_gives_its_columns_and_best_params():
    rng = np.random.default_rng(0)
    Xs = [rng.normal(size=(90, 3)), rng.normal(size=(90, 2))]
    y = np.sin(2 * Xs[0][:, 0]) + Xs[1][:, 1] + 2.0
    grid = dict(alphas=[0.01, 1.0], etas=[0.1], bandwidth_factors=[1.0, 4.0], max_iter=2, cv=3)
    both = _WeightsAxisCV(random_state=0, **grid).fit(Xs, y)
    alone = {v: MVMLRegressorCV(learn_weights=v, random_state=0, **grid) for v in (False, True)}
    alone = {v: est.fit(Xs, y) for v, est in alone.items()}
    res, n = both.cv_results_, len(alone[False].cv_results_["params"])
    # the axis is outermost: each value's rows are that value's search, screen included
    assert list(res["params"][0])[0] == "learn_weights"
    assert_array_equal(res["param_learn_weights"], [False] * n + [True] * n)
    for i, value in enumerate((False, True)):
        rows, other = slice(i * n, (i + 1) * n), alone[value].cv_results_
        for key in ("mean_test_score", "std_test_score", "screen_score", "screen_squared_error"):
            assert_array_equal(res[key][rows], other[key])
        assert_array_equal(splits(res, rows), splits(other))
        assert [p | {"learn_weights": value} for p in other["params"]] == res["params"][rows]
    # the best candidate over both (ties to the first value) and its refit
    winner = alone[alone[True].best_score_ > alone[False].best_score_]
    assert both.best_score_ == winner.best_score_
    assert both.best_params_ == {"learn_weights": winner.learn_weights, **winner.best_params_}
    assert res["params"][both.best_index_] == both.best_params_
    assert res["rank_test_score"][both.best_index_] == 1
    assert both.best_estimator_.learn_weights == winner.learn_weights
    assert_allclose(both.predict(Xs), winner.predict(Xs), rtol=1e-12, atol=1e-12)
    assert both.learn_weights is False  # the parameter as given, after the search
    # beside a part axis (the relevance's two searches) the looped axis is in each part
    _data.RELEVANCE_MIN_ROWS, before = 0, _data.RELEVANCE_MIN_ROWS
    try:
        rel = _WeightsAxisCV(feature_relevance="auto", random_state=0, **grid).fit(Xs, y)
    finally:
        _data.RELEVANCE_MIN_ROWS = before
    keys = {(p["feature_relevance"], p["learn_weights"]) for p in rel.cv_results_["params"]}
    assert keys == {(r, f) for r in ("none", "ard") for f in (False, True)}


def test_fold_order_beside_earlier_parts_moves_only_where_candidates_stop(monkeypatch):
    """A later part (one-vs-one, the hinge loss) runs its folds worst first (the earlier
    parts' best candidate's per-fold scores): every score it reports is that of the
    search alone, the choice is the same, and it is the folds run in that order, in
    any order of the folds (reversed here), that it stops after."""
    rng = np.random.default_rng(3)
    Xs = [rng.normal(size=(120, 3)), rng.normal(size=(120, 3))]
    y = np.digitize(Xs[0][:, 0] + np.sin(2 * Xs[1][:, 1]), [-0.6, 0.6])
    grid = dict(alphas=[0.01, 0.1, 1.0], etas=[0.1], bandwidth_factors=[1.0, 4.0], cv=4)
    fits = {}
    for mode in ("worst first", "reversed", "in order"):
        if mode == "reversed":
            monkeypatch.setattr(FoldScorer, "folds_in_order", lambda self, n: list(range(n))[::-1])
        if mode == "in order":
            monkeypatch.setattr(FoldScorer, "folds_in_order", lambda self, n: [*range(n)])
        auto = MVMLClassifierCV(multi_class="auto", loss="auto", random_state=0, **grid)
        fits[mode] = auto.fit(Xs, y)
    monkeypatch.undo()
    parts = {}
    for loss in ("squared", "hinge"):
        for mc in ("ovr", "ovo"):
            parts[loss, mc] = MVMLClassifierCV(loss=loss, multi_class=mc, random_state=0, **grid)
            parts[loss, mc].fit(Xs, y)
    for mode, auto in fits.items():
        res = auto.cv_results_
        assert auto.best_params_ == fits["in order"].best_params_
        assert auto.best_score_ == fits["in order"].best_score_
        assert_allclose(auto.predict_proba(Xs), fits["in order"].predict_proba(Xs), rtol=1e-12)
        earlier = []
        for key, part in parts.items():
            rows = (np.asarray(res["param_loss"]) == key[0]) & (
                np.asarray(res["param_multi_class"]) == key[1]
            )
            if earlier:
                best = max(np.nanmax(e.cv_results_["mean_test_score"]) for e in earlier)
                order = {"worst first": fold_order([e.cv_results_ for e in earlier])}
                order["reversed"] = np.arange(4)[::-1]
                order["in order"] = np.arange(4)
                check_abandoned(res, rows, part.cv_results_, best, order[mode])
            else:
                assert_array_equal(splits(res, rows), splits(part.cv_results_))
            earlier.append(part)
    stopped = {m: int(np.isnan(splits(f.cv_results_)).sum()) for m, f in fits.items()}
    assert stopped["worst first"] >= stopped["in order"]


class _SearchAxisCV(MVMLRegressorCV):
    """A CV regressor whose ``search`` may be "auto" (the toy part axis below)."""

    _parameter_constraints = {
        **MVMLRegressorCV._parameter_constraints,
        "search": [StrOptions({"screen", "exhaustive", "auto"})],
    }


def test_a_declared_part_axis_gives_its_columns_and_best_params(monkeypatch):
    """A part axis is one declaration in PART_AXES: a toy axis over ``search`` (its
    "screen" part configured to one finalist) gives the union of the two searches run
    alone, its ``param_search`` column and ``best_params_``, with no other code."""
    toy = PartAxis(
        "search",
        auto=lambda est: ("screen", "exhaustive"),
        own=lambda est: est.search,
        configure=lambda value, est: {"n_finalists": 1} if value == "screen" else {},
    )
    axes = (*_grid_module.PART_AXES, toy)
    monkeypatch.setattr(_grid_module, "PART_AXES", axes)
    monkeypatch.setattr(_search, "PART_AXES", axes)
    monkeypatch.setattr(_parts, "PART_AXES", axes)
    rng = np.random.default_rng(1)
    Xs = [rng.normal(size=(60, 3)), rng.normal(size=(60, 2))]
    y = np.sin(2 * Xs[0][:, 0]) + Xs[1][:, 1]
    grid = dict(alphas=[0.01, 1.0], etas=[0.1], bandwidth_factors=[1.0, 4.0, 16.0], cv=3)
    grid |= dict(max_iter=2, random_state=0)
    both = _SearchAxisCV(search="auto", **grid).fit(Xs, y)
    alone = {
        "screen": MVMLRegressorCV(search="screen", n_finalists=1, **grid).fit(Xs, y),
        "exhaustive": MVMLRegressorCV(search="exhaustive", **grid).fit(Xs, y),
    }
    res, n = both.cv_results_, len(alone["screen"].cv_results_["params"])
    assert_array_equal(res["param_search"], ["screen"] * n + ["exhaustive"] * n)
    for i, value in enumerate(("screen", "exhaustive")):
        rows, other = slice(i * n, (i + 1) * n), alone[value].cv_results_
        assert_array_equal(res["mean_test_score"][rows], other["mean_test_score"])
        assert_array_equal(splits(res, rows), splits(other))
        assert [{"search": value} | p for p in other["params"]] == res["params"][rows]
    # the screen with one finalist left candidates unscored: the parts differ
    unscored = np.isnan(res["mean_test_score"])
    assert unscored[:n].sum() > unscored[n:].sum()
    # ties go to the first value; the best part's choices and refit
    winner = max(alone.values(), key=lambda e: (e.best_score_, e.search == "screen"))
    assert both.best_score_ == winner.best_score_
    assert both.best_params_ == {"search": winner.search, **winner.best_params_}
    assert both._current("search") == winner.search and both.search == "auto"
    assert_allclose(both.predict(Xs), winner.predict(Xs), rtol=1e-12, atol=1e-12)
    # one value searched: the estimator searches itself (the axis not reported)
    one = _SearchAxisCV(search="exhaustive", **grid).fit(Xs, y)
    assert "param_search" not in one.cv_results_ and "search" not in one.best_params_
    assert_array_equal(one.cv_results_["mean_test_score"], res["mean_test_score"][n:])

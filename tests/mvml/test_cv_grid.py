"""The CV estimators' search grid of named axes (``mvkernels.mvml.cv._grid``)."""

from __future__ import annotations

import numpy as np
import pytest

from mvkernels import MVMLClassifierCV
from mvkernels.mvml.cv._grid import Axis, SearchGrid


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

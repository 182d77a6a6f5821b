"""The loss axis of the CV estimators: ``MVMLClassifierCV(loss="hinge" | "auto")``."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from _abandon import check_abandoned, splits
from mvkernels import MVMLSVC, MVMLSVCCV, MVMLClassifier, MVMLClassifierCV, MVMLRegressorCV
from mvkernels.mvml.cv._grid import LOSS_SEARCHES, union_results

GRID = dict(bandwidth_factors=[1.0, 4.0], cv=3, random_state=0)


def _data(seed=0, n=90):
    rng = np.random.RandomState(seed)
    Xs = [rng.randn(n, 3), rng.randn(n, 2)]
    y = np.digitize(Xs[0][:, 0] + Xs[1][:, 0] + 0.3 * rng.randn(n), [-0.6, 0.6])
    return Xs, y


def _scores(cv, mask):
    return np.asarray(cv.cv_results_["mean_test_score"])[mask]


def test_hinge_loss_is_the_svc_search_with_its_candidates():
    """loss="hinge" in MVMLClassifierCV runs MVMLSVCCV's search (its grid, its screen), with
    MVMLSVCCV's path length and joint view beside the square loss's defaults."""
    Xs, y = _data()
    a = MVMLClassifierCV(loss="hinge", **GRID).fit(Xs, y)
    b = MVMLSVCCV(max_iter=2, joint_view=False, **GRID).fit(Xs, y)
    assert isinstance(a.best_estimator_, MVMLSVC)
    assert a.best_params_ == {"loss": "hinge", **b.best_params_}
    assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])
    assert_array_equal(a.cv_results_["param_loss"], ["hinge"] * len(b.cv_results_["params"]))
    assert_allclose(a.decision_function(Xs), b.decision_function(Xs), rtol=1e-12)
    assert_allclose(a.predict_proba(Xs), b.predict_proba(Xs), rtol=1e-12)


def test_auto_is_the_union_of_both_searches_on_the_same_folds():
    Xs, y = _data(1)
    auto = MVMLClassifierCV(loss="auto", **GRID).fit(Xs, y)
    sq = MVMLClassifierCV(**GRID).fit(Xs, y)
    hi = MVMLSVCCV(max_iter=min(10, LOSS_SEARCHES["hinge"].max_iter), **GRID).fit(Xs, y)
    loss = np.asarray(auto.cv_results_["param_loss"])
    n_sq = len(sq.cv_results_["params"])
    assert_array_equal(loss, ["squared"] * n_sq + ["hinge"] * len(hi.cv_results_["params"]))
    assert_array_equal(_scores(auto, loss == "squared"), sq.cv_results_["mean_test_score"])
    # the hinge loss's candidates: those scored on every fold as in the hinge search alone;
    # the others were abandoned, as they could not beat the square loss's best
    check_abandoned(auto.cv_results_, loss == "hinge", hi.cv_results_, sq.best_score_)
    # the best candidate of the union, ties to the square loss (the first value)
    mean = np.nan_to_num(auto.cv_results_["mean_test_score"], nan=-np.inf)
    assert auto.best_index_ == int(np.argmax(mean))
    assert auto.best_score_ == max(sq.best_score_, hi.best_score_)
    winner = sq if sq.best_score_ >= hi.best_score_ else hi
    assert auto.best_params_["loss"] == ("squared" if winner is sq else "hinge")
    assert type(auto.best_estimator_) is type(winner.best_estimator_)
    assert_allclose(auto.decision_function(Xs), winner.decision_function(Xs), rtol=1e-12)
    assert_allclose(auto.predict_proba(Xs), winner.predict_proba(Xs), rtol=1e-12)
    # ranks over the union; parameters a loss does not search are masked in its rows
    assert auto.cv_results_["rank_test_score"][auto.best_index_] == 1
    joint = auto.cv_results_["param_joint_view"]
    assert joint.mask[loss == "hinge"].all() and not joint.mask[loss == "squared"].any()


def test_abandoned_hinge_candidates_could_not_win():
    """loss="auto": the hinge loss's candidates stop once they cannot beat the square
    loss's best; its candidates still able to win are scored in full, so the choice is
    that of the two searches apart. A square loss scoring 1 leaves nothing to search."""
    for seed, n in ((2, 90), (5, 45)):  # the hinge loss's best beaten, then winning
        Xs, y = _data(seed, n)
        sq = MVMLClassifierCV(**GRID).fit(Xs, y)
        hi = MVMLClassifierCV(loss="hinge", **GRID).fit(Xs, y)
        auto = MVMLClassifierCV(loss="auto", **GRID).fit(Xs, y)
        loss = np.asarray(auto.cv_results_["param_loss"])
        check_abandoned(auto.cv_results_, loss == "hinge", hi.cv_results_, sq.best_score_)
        assert auto.best_score_ == max(sq.best_score_, hi.best_score_)
        winner = sq if sq.best_score_ >= hi.best_score_ else hi
        assert auto.best_params_ == {"loss": winner._current_loss, **winner.best_params_}
        assert_allclose(auto.decision_function(Xs), winner.decision_function(Xs), rtol=1e-12)
    assert auto.best_params_["loss"] == "hinge"
    Xs, y = _data(2)
    # separable classes: the square loss scores 1 on every fold, the hinge is not fitted
    Xs_sep = [Xs[0] + 4.0 * np.eye(3)[y], Xs[1]]
    auto = MVMLClassifierCV(loss="auto", **GRID).fit(Xs_sep, y)
    loss = np.asarray(auto.cv_results_["param_loss"])
    assert auto.best_score_ == 1.0 and auto.best_params_["loss"] == "squared"
    assert np.isnan(splits(auto.cv_results_, loss == "hinge")).all()
    # a custom scoring has no known bound: nothing abandoned
    auto = MVMLClassifierCV(loss="auto", scoring="accuracy", **GRID).fit(Xs, y)
    loss = np.asarray(auto.cv_results_["param_loss"])
    hi = MVMLClassifierCV(loss="hinge", **GRID).fit(Xs, y)
    assert_array_equal(_scores(auto, loss == "hinge"), hi.cv_results_["mean_test_score"])


def test_union_masks_missing_parameters_and_fills_missing_columns():
    a = {
        "params": [{"alpha": 1.0, "eta": 0.1}],
        "param_alpha": np.ma.MaskedArray([1.0]),
        "split0_test_score": np.array([0.5]),
        "mean_test_score": np.array([0.5]),
        "std_test_score": np.array([0.0]),
        "rank_test_score": np.array([1]),
        "screen_score": np.array([0.9]),
    }
    b = {
        "params": [{"alpha": 2.0}, {"alpha": 3.0}],
        "split0_test_score": np.array([np.nan, 0.5]),
        "mean_test_score": np.array([np.nan, 0.5]),
        "std_test_score": np.array([np.nan, 0.0]),
        "rank_test_score": np.array([2, 1]),
    }
    res, best, part = union_results([a, b], "loss", ("squared", "hinge"))
    assert (best, part) == (0, 0)  # a tie goes to the first part
    assert res["rank_test_score"].tolist() == [1, 3, 1]  # unscored ranks last
    assert res["param_eta"].mask.tolist() == [False, True, True]
    assert_array_equal(res["screen_score"], [0.9, np.nan, np.nan])
    assert res["params"][2] == {"loss": "hinge", "alpha": 3.0}


def test_loss_values_are_validated():
    Xs, y = _data()
    with pytest.raises(ValueError, match="loss"):
        MVMLRegressorCV(loss="hinge").fit(Xs, y.astype(float))
    with pytest.raises(ValueError, match="loss"):
        MVMLSVCCV(loss="squared").fit(Xs, y)
    with pytest.raises(ValueError, match="loss"):
        MVMLClassifierCV(loss="log").fit(Xs, y)


def test_squared_is_the_default_and_unchanged():
    Xs, y = _data(3)
    a = MVMLClassifierCV(**GRID).fit(Xs, y)
    assert "loss" not in a.best_params_ and isinstance(a.best_estimator_, MVMLClassifier)
    b = MVMLClassifierCV(loss="squared", **GRID).fit(Xs, y)
    assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])

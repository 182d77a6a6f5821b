"""The relevance axis of the CV estimators (``feature_relevance="auto"``, mvml/cv/_data.py
and _search.py): "none" and "ard" searched on the same folds, the better one kept."""

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

from _abandon import check_abandoned, fold_order, splits
from mvkernels import MVMLClassifierCV, MVMLRegressorCV
from mvkernels.mvml._relevance import learn_feature_relevance, learn_feature_relevance_rows
from mvkernels.mvml.cv import _data
from mvkernels.mvml.cv._data import _held_out_elsewhere
from mvkernels.mvml.cv._grid import RELEVANCE_SEARCH

GRID = dict(alphas=[0.01, 0.1, 1.0], etas=[0.5], bandwidth_factors=[1.0, 4.0], max_iter=2, cv=3)


@pytest.fixture(autouse=True)
def _relevance_at_any_size(monkeypatch):
    """The axis on small data: "auto" searches the learned relevance from 0 rows (the
    default threshold, RELEVANCE_MIN_ROWS, has its own test below)."""
    monkeypatch.setattr(_data, "RELEVANCE_MIN_ROWS", 0)


def _noise_columns(seed=0, n=200):
    """Two views of 6 columns, one relevant in each (the other 10 pure noise)."""
    rng = np.random.default_rng(seed)
    X1, X2 = rng.normal(size=(n, 6)), rng.normal(size=(n, 6))
    y = np.where(np.sin(2 * X1[:, 0]) + X2[:, 1] > 0, "a", "b")
    return [X1, X2], y


def _all_relevant(seed=1, n=200):
    """Two views of 4 columns, the label a function of the norm of all 8 (isotropic)."""
    rng = np.random.default_rng(seed)
    X1, X2 = rng.normal(size=(n, 4)), rng.normal(size=(n, 4))
    y = np.where(np.sum(X1**2, 1) + np.sum(X2**2, 1) > 8, "a", "b")
    return [X1, X2], y


def _part(results, value):
    """The rows of ``cv_results_`` of one relevance."""
    return np.asarray(results["param_feature_relevance"]) == value


def test_picks_ard_with_pure_noise_columns():
    Xs, y = _noise_columns(n=400)
    auto = MVMLClassifierCV(feature_relevance="auto", random_state=0, **GRID).fit(Xs, y)
    none = MVMLClassifierCV(feature_relevance="none", random_state=0, **GRID).fit(Xs, y)
    assert auto.best_params_["feature_relevance"] == "ard"
    assert auto.best_score_ > none.best_score_ + 0.05
    # the noise columns get scales near zero, the relevant ones the largest
    r = auto.feature_relevance_
    assert r[0].argmax() == 0 and r[1].argmax() == 1
    assert max(np.delete(r[0], 0).max(), np.delete(r[1], 1).max()) < 0.3 * min(r[0][0], r[1][1])
    # the refitted model is the "ard" model, with the scales fixed
    for a, b in zip(auto.feature_relevance_, auto.best_estimator_.feature_relevance_):
        np.testing.assert_array_equal(a, b)
    Xt, yt = _noise_columns(seed=10, n=400)
    assert auto.score(Xt, yt) > none.score(Xt, yt) + 0.05
    # probabilities: the calibration of the chosen search's held-out decision values
    proba = auto.predict_proba(Xt)
    np.testing.assert_array_equal(auto.classes_[proba.argmax(axis=1)], auto.predict(Xt))


def test_picks_none_when_every_column_counts_the_same():
    # the learned relevance is flat (the held-out shrinkage keeps the flat scale): the
    # "ard" candidates are the "none" ones, with the same scores, and ties go to "none"
    Xs, y = _all_relevant()
    r = learn_feature_relevance(Xs, np.where(y == "a", 1.0, -1.0)[:, None], random_state=0)
    assert all(np.all(rv == 1.0) for rv in r)
    auto = MVMLClassifierCV(feature_relevance="auto", random_state=0, **GRID).fit(Xs, y)
    none = MVMLClassifierCV(feature_relevance="none", random_state=0, **GRID).fit(Xs, y)
    assert auto.best_params_["feature_relevance"] == "none"
    assert auto.feature_relevance_ is None
    res = auto.cv_results_
    np.testing.assert_array_equal(
        res["mean_test_score"][_part(res, "none")], res["mean_test_score"][_part(res, "ard")]
    )
    np.testing.assert_array_equal(auto.decision_function(Xs), none.decision_function(Xs))


def test_each_half_of_the_results_is_the_search_of_its_relevance():
    # the same folds: the "none" rows are feature_relevance="none"'s search, the "ard" rows
    # feature_relevance="ard"'s (its scales learned once, as "auto" learns them)
    Xs, y = _noise_columns(seed=3, n=150)
    auto = MVMLClassifierCV(feature_relevance="auto", random_state=0, **GRID).fit(Xs, y)
    res = auto.cv_results_
    assert set(np.asarray(res["param_feature_relevance"])) == set(RELEVANCE_SEARCH)
    assert "param_feature_relevance" in res and len(res["params"]) == 2 * _part(res, "ard").sum()
    # the folds score only the rows the relevance was not learned on: "none" alone on
    # those folds
    _, learned = learn_feature_relevance_rows(
        Xs, np.where(y == "b", 1.0, -1.0)[:, None], random_state=0, max_rows=len(y) // 4
    )
    folds = _held_out_elsewhere(list(StratifiedKFold(3).split(Xs[0], y)), learned, len(y))
    assert all(np.intersect1d(te, learned).size == 0 for _, te in folds)
    for value in RELEVANCE_SEARCH:
        given = {"cv": folds} if value == "none" else {}
        alone = MVMLClassifierCV(feature_relevance=value, random_state=0, **{**GRID, **given}).fit(
            Xs, y
        )
        rows = _part(res, value)
        np.testing.assert_array_equal(
            res["mean_test_score"][rows], alone.cv_results_["mean_test_score"]
        )
        for k in range(3):
            np.testing.assert_array_equal(
                res[f"split{k}_test_score"][rows], alone.cv_results_[f"split{k}_test_score"]
            )
        assert [
            {k: v for k, v in p.items() if k != "feature_relevance"}
            for p in np.asarray(res["params"])[rows]
        ] == alone.cv_results_["params"]
        if value == auto.best_params_["feature_relevance"]:
            assert auto.best_score_ == alone.best_score_
            np.testing.assert_allclose(
                auto.decision_function(Xs), alone.decision_function(Xs), atol=1e-12
            )
    # ranks over the union: the best candidate ranks first
    assert res["rank_test_score"][auto.best_index_] == 1
    assert res["params"][auto.best_index_] == auto.best_params_


def test_the_learned_relevance_is_a_part_axis_that_abandons():
    """feature_relevance="auto" is a part axis (PART_AXES) that abandons: the learned
    relevance's candidates stop once they cannot beat the best of the views as given, on
    the same folds (the rows the scales were learned on train every fold of both), its
    folds run worst first. Every score reported is that of its search alone and the
    choice is the same."""
    rng = np.random.default_rng(3)
    X1, X2 = rng.normal(size=(150, 4)), rng.normal(size=(150, 4))
    y = np.where(1.9 * np.sum(X1**2, 1) + np.sum(X2**2, 1) + rng.normal(size=150) > 15.2, "a", "b")
    Xs = [X1, X2]
    auto = MVMLClassifierCV(feature_relevance="auto", random_state=0, **GRID).fit(Xs, y)
    ard = MVMLClassifierCV(feature_relevance="ard", random_state=0, **GRID).fit(Xs, y)
    _, learned = learn_feature_relevance_rows(
        Xs, np.where(y == "b", 1.0, -1.0)[:, None], random_state=0, max_rows=len(y) // 4
    )
    folds = _held_out_elsewhere(list(StratifiedKFold(3).split(X1, y)), learned, len(y))
    none = MVMLClassifierCV(feature_relevance="none", random_state=0, **{**GRID, "cv": folds})
    none.fit(Xs, y)
    res = auto.cv_results_
    np.testing.assert_array_equal(splits(res, _part(res, "none")), splits(none.cv_results_))
    order = fold_order([none.cv_results_])
    check_abandoned(res, _part(res, "ard"), ard.cv_results_, none.best_score_, order)
    # some were abandoned here, and the choice is the searches' apart
    assert np.isnan(splits(res, _part(res, "ard"))).sum() > np.isnan(splits(ard.cv_results_)).sum()
    assert none.best_score_ >= ard.best_score_
    assert auto.best_params_ == {"feature_relevance": "none", **none.best_params_}
    assert auto.feature_relevance_ is None
    np.testing.assert_allclose(
        auto.decision_function(Xs), none.decision_function(Xs), rtol=1e-12, atol=1e-12
    )


def test_with_the_loss_axis_and_for_regression():
    Xs, y = _noise_columns(seed=4, n=120)
    both = MVMLClassifierCV(feature_relevance="auto", loss="auto", random_state=0, **GRID).fit(
        Xs, y
    )
    res = both.cv_results_
    pairs = {
        (p["feature_relevance"], p["loss"]) for p in res["params"]
    }  # the four searches, side by side
    assert pairs == {(r, l) for r in RELEVANCE_SEARCH for l in ("squared", "hinge")}
    assert {"feature_relevance", "loss"} <= set(both.best_params_)
    np.testing.assert_array_equal(both.predict(Xs), both.best_estimator_.predict(Xs))
    rng = np.random.default_rng(0)
    X1, X2 = rng.normal(size=(150, 5)), rng.normal(size=(150, 5))
    target = np.sin(2 * X1[:, 0]) + X2[:, 1]
    reg = MVMLRegressorCV(feature_relevance="auto", random_state=0, **GRID).fit([X1, X2], target)
    assert reg.best_params_["feature_relevance"] == "ard"
    assert reg.score([X1, X2], target) > 0.9


def test_auto_searches_none_alone_where_nothing_is_learned():
    Xs, y = _noise_columns(seed=5, n=90)
    none = MVMLClassifierCV(feature_relevance="none", random_state=0, **GRID)
    auto = MVMLClassifierCV(feature_relevance="auto", random_state=0, **GRID)
    # sample weights: no learned relevance yet, "auto" is "none"
    w = np.ones(90)
    w[:10] = 2.0
    a = auto.fit(Xs, y, sample_weight=w)
    b = none.fit(Xs, y, sample_weight=w)
    assert "feature_relevance" not in a.best_params_ and a.feature_relevance_ is None
    np.testing.assert_array_equal(
        a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"]
    )
    # precomputed kernels: no columns to scale
    K = [Xv @ Xv.T for Xv in Xs]
    pre = dict(kernel="precomputed", n_landmarks=None, random_state=0, **GRID)
    a = MVMLClassifierCV(feature_relevance="auto", **pre).fit(K, y)
    b = MVMLClassifierCV(feature_relevance="none", **pre).fit(K, y)
    assert a.feature_relevance_ is None and a.best_params_ == b.best_params_
    with pytest.raises(ValueError, match="feature_relevance"):
        MVMLClassifierCV(feature_relevance="ard", **pre).fit(K, y)
    with pytest.raises(ValueError, match="feature_relevance"):
        MVMLClassifierCV(feature_relevance="lasso").fit(Xs, y)


def test_auto_searches_the_relevance_from_enough_rows(monkeypatch):
    # below RELEVANCE_MIN_ROWS complete rows "auto" is "none" alone (the subsample the
    # scales are learned on would be most of the rows), from it both
    Xs, y = _noise_columns(n=400)
    monkeypatch.setattr(_data, "RELEVANCE_MIN_ROWS", 401)
    auto = MVMLClassifierCV(feature_relevance="auto", random_state=0, **GRID).fit(Xs, y)
    none = MVMLClassifierCV(feature_relevance="none", random_state=0, **GRID).fit(Xs, y)
    assert "param_feature_relevance" not in auto.cv_results_ and auto.feature_relevance_ is None
    np.testing.assert_array_equal(
        auto.cv_results_["mean_test_score"], none.cv_results_["mean_test_score"]
    )
    monkeypatch.setattr(_data, "RELEVANCE_MIN_ROWS", 400)
    auto = MVMLClassifierCV(feature_relevance="auto", random_state=0, **GRID).fit(Xs, y)
    assert auto.best_params_["feature_relevance"] == "ard"
    assert _data.RELEVANCE_MIN_ROWS == 400 and MVMLClassifierCV().feature_relevance == "auto"


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_ridge_folds_with_rows_never_held_out_equal_direct_fits(fit_intercept):
    # the joint-only candidate's folds when the relevance's rows train every fold: the
    # training Gram matrices are the total minus the held-out part's, as recomputed ones
    from mvkernels.mvml._screen import ridge_fold_outputs

    rng = np.random.default_rng(0)
    U, Y = rng.normal(size=(40, 5)), rng.normal(size=(40, 2))
    folds = _held_out_elsewhere(
        [(np.setdiff1d(np.arange(40), te), te) for te in np.array_split(np.arange(40), 4)],
        np.arange(0, 40, 5),
        40,
    )
    alphas = np.array([0.1, 1.0])
    got = ridge_fold_outputs(U, Y, folds, alphas, fit_intercept)
    for D, (tr, te) in zip(got, folds):
        assert np.intersect1d(te, np.arange(0, 40, 5)).size == 0
        mu = U[tr].mean(axis=0) if fit_intercept else np.zeros(5)
        ybar = Y[tr].mean(axis=0) if fit_intercept else np.zeros(2)
        Uc = U[tr] - mu
        for a, Da in zip(alphas, D):
            g = np.linalg.solve(Uc.T @ Uc + a * np.eye(5), Uc.T @ (Y[tr] - ybar))
            np.testing.assert_allclose(Da, (U[te] - mu) @ g + ybar, rtol=1e-10, atol=1e-12)

"""The CV estimators' search on a subsample of the rows (``max_search_rows``, issue 31):
the search of a subsample is the search of those rows, the refit is on every row with the
capacity of all of them, and the refit's statistics in row chunks equal the one-shot ones."""

import numpy as np
import pytest
from sklearn.base import clone

from mvkernels import MVMLClassifier, MVMLClassifierCV, MVMLRegressorCV
from mvkernels.mvml import grown_n_landmarks
from mvkernels.mvml.cv._data import SEARCH_MAX_ROWS, search_subsample

GRID = dict(alphas=[0.01, 0.1, 1.0], etas=[0.5], bandwidth_factors=[1.0, 4.0], max_iter=2, cv=3)


def _data(seed=0, n=300):
    """Two views of 5 columns; labels from one column of each (3 classes, unbalanced)."""
    rng = np.random.default_rng(seed)
    X1, X2 = rng.normal(size=(n, 5)), rng.normal(size=(n, 5))
    f = np.sin(2 * X1[:, 0]) + X2[:, 1] + 0.3 * rng.normal(size=n)
    return [X1, X2], np.digitize(f, [-0.3, 1.2])


def _same_search(a, b):
    for key in ("mean_test_score", "rank_test_score", "split0_test_score"):
        np.testing.assert_array_equal(a.cv_results_[key], b.cv_results_[key])
    assert a.best_params_ == b.best_params_


@pytest.mark.parametrize("relevance", ["none", "auto"])
def test_threshold_at_or_above_n_is_the_full_search(relevance):
    Xs, y = _data()
    kw = dict(feature_relevance=relevance, random_state=0, **GRID)
    full = MVMLClassifierCV(max_search_rows=None, **kw).fit(Xs, y)
    for limit in (len(y), "auto"):
        est = MVMLClassifierCV(max_search_rows=limit, **kw).fit(Xs, y)
        assert est.n_search_rows_ == len(y) < SEARCH_MAX_ROWS
        _same_search(est, full)
        np.testing.assert_array_equal(est.decision_function(Xs), full.decision_function(Xs))


@pytest.mark.parametrize("relevance", ["none", "auto"])
def test_the_search_is_that_of_the_subsample_and_the_refit_uses_every_row(relevance):
    Xs, y = _data(n=400)
    kw = dict(feature_relevance=relevance, random_state=0, **GRID)
    est = MVMLClassifierCV(max_search_rows=150, **kw).fit(Xs, y)
    assert est.n_search_rows_ == 150
    rows = search_subsample(400, 150, y, random_state=0)
    alone = MVMLClassifierCV(max_search_rows=None, **kw).fit([Xv[rows] for Xv in Xs], y[rows])
    _same_search(est, alone)
    # the refit: the chosen model on all 400 rows, at least the search's landmarks
    searched = alone.best_estimator_.n_landmarks_
    ref = clone(alone.best_estimator_).set_params(
        n_landmarks=max(grown_n_landmarks(400, 2), searched)
    )
    ref.fit(Xs, y)
    assert est.best_estimator_.n_landmarks_ == max(300, searched) > 150
    np.testing.assert_allclose(
        est.decision_function(Xs), ref.decision_function(Xs), rtol=1e-10, atol=1e-10
    )


def test_regressor_subsample_is_uniform_and_the_refit_sees_every_row():
    rng = np.random.default_rng(1)
    X1, X2 = rng.normal(size=(300, 3)), rng.normal(size=(300, 3))
    target = np.sin(2 * X1[:, 0]) + X2[:, 1]
    est = MVMLRegressorCV(max_search_rows=100, random_state=0, **GRID).fit([X1, X2], target)
    rows = search_subsample(300, 100, None, random_state=0)
    alone = MVMLRegressorCV(max_search_rows=None, random_state=0, **GRID).fit(
        [X1[rows], X2[rows]], target[rows]
    )
    _same_search(est, alone)
    assert est.score([X1, X2], target) > 0.8


def test_stratified_subsample_keeps_every_class():
    y = np.repeat([0, 1, 2, 3], [900, 95, 4, 1])
    rows = search_subsample(1000, 100, y, random_state=0)
    assert rows.size == 100 and np.all(np.diff(rows) > 0)
    # shares 90, 9.5, 0.4, 0.1 -> 90, 10, 0, 0 (largest remainder); at least 2 rows of a
    # class that has them (1 of a class of 1), taken from the largest class
    assert np.bincount(y[rows], minlength=4).tolist() == [87, 10, 2, 1]


def test_refit_statistics_in_row_chunks_equal_the_one_shot_refit():
    Xs, y = _data(n=500)
    kw = dict(n_landmarks=40, joint_view=True, feature_relevance="ard", random_state=0)
    one = MVMLClassifier(**kw).fit(Xs, y)  # one chunk: every row at once
    chunked = MVMLClassifier(chunk_size=37, **kw).fit(Xs, y)
    np.testing.assert_allclose(
        chunked.decision_function(Xs), one.decision_function(Xs), rtol=1e-10, atol=1e-10
    )


def test_bad_max_search_rows():
    Xs, y = _data(n=60)
    with pytest.raises(ValueError, match="max_search_rows"):
        MVMLClassifierCV(max_search_rows=1).fit(Xs, y)
    with pytest.raises(ValueError, match="max_search_rows"):
        MVMLClassifierCV(max_search_rows="all").fit(Xs, y)

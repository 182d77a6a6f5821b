"""Data and helpers shared by the sample-weight tests (the MVML estimators, their CV
versions, the hinge loss and the baselines): integer weights are checked against repeated
rows and zero weights against removed rows, on the same small seeded data."""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold


def weighted_data():
    """Two views of 30 rows, a real target ``r``, three labels, integer weights in
    [0, 3] (row 0 removed, row 1 tripled) and 10 test rows."""
    rng = np.random.default_rng(0)
    n = 30
    X1, X2 = rng.normal(size=(n, 3)), rng.normal(size=(n, 2))
    r = X1[:, 0] + np.sin(X2[:, 1])
    labels = np.where(r > 0.2, "a", np.where(r < -0.5, "b", "c"))
    w = rng.integers(0, 4, size=n)
    w[:2] = [0, 3]  # at least one removed and one tripled row
    test = [rng.normal(size=(10, 3)), rng.normal(size=(10, 2))]
    return [X1, X2], r, labels, w, test


def fixed_landmarks(w):
    """Fixed landmark rows of positive weight, the same rows among the repeated rows, and
    the repeated rows' indices into the rows given."""
    lm = np.array([1, 3, 4, 6, 8, 10, 12, 14, 17, 20])
    lm = lm[w[lm] > 0]
    rep = np.repeat(np.arange(len(w)), w)
    return lm, np.array([np.flatnonzero(rep == i)[0] for i in lm]), rep


def fit_quietly(est, X, y, **kw):
    """``est.fit`` without the convergence warnings of the short paths used here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y, **kw)


def outputs(est, X):
    """Decision values of a classifier, predictions of a regressor."""
    return est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)


def weighted_folds(n, w, n_splits=4):
    """Explicit folds of the rows given, the same folds without the rows of zero weight,
    and of the repeated rows (every copy in its row's fold)."""
    splits = list(KFold(n_splits, shuffle=True, random_state=0).split(np.zeros((n, 1))))
    kept = np.flatnonzero(w > 0)
    new = np.full(n, -1)
    new[kept] = np.arange(kept.size)
    removed = [(new[tr][new[tr] >= 0], new[te][new[te] >= 0]) for tr, te in splits]
    rep = np.repeat(np.arange(n), w)
    repeated = [
        (np.flatnonzero(np.isin(rep, tr)), np.flatnonzero(np.isin(rep, te))) for tr, te in splits
    ]
    return splits, removed, repeated


def split_scores(cv_est):
    """The held-out score of every candidate on every fold, ``(n_splits, n_candidates)``."""
    k = cv_est.n_splits_
    return np.array([cv_est.cv_results_[f"split{i}_test_score"] for i in range(k)])

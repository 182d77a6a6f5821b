"""Reduced models for samples with missing views (the CV estimators' ``missing_views``).

A sample whose observed views are ``O`` (a strict subset of the views) is predicted by
the model of the views ``O`` alone, fitted on every training row that observes at least
one of them (its views of ``O`` that are missing completed by their conditional
expectation, :mod:`mvkernels.nystrom._missing`). The model of all the views predicts the
complete rows and the patterns that no training row had.

This is the *reduced-feature model* of prediction with missing values (Saar-Tsechansky
and Provost, JMLR 8, 2007): instead of feeding a model completed values it never saw as
such, each pattern of observed inputs gets the model that uses exactly those inputs. The
completed features of the missing views are a linear function of the observed ones, so
the model of all the views restricts how a sample with missing views is predicted to
``(w_O + B^T w_M)^T z_O``; the reduced model fits that function freely and is not
distorted by the training rows where other views were completed. Assumption: views are
missing at random (the pattern carries no information about the label).

The reduced models' search starts from the search of all the views. A reduced model
keeps that search's bandwidth factor and ``eta`` (a factor scales each view's own
bandwidth heuristic, so a view's kernel is the same in every model that contains it) and
cross-validates what fewer views on fewer rows change: ``alpha`` (the chosen value and
its grid neighbours, :func:`~._screen.alpha_window`), the joint view of the observed
views or none, and the number of iterations, on ``min(cv, REDUCED_CV_FOLDS)`` folds
(:func:`reduced_search_params`). With one bandwidth factor nothing is screened: a reduced
search costs one Nystrom map and its features, per fold one eigendecomposition and one
batched metric path per joint-view option, and the refit. Measured on the benchmark of
incomplete views (uWave, 3 views; digits cut into 4 views; one core): with an unrestricted
search on each pattern (every factor and joint-view option screened, 4 finalist pairs on
5 folds) the whole fit cost about 4 times as much on digits at 30 % missing (61 against
15 CPU seconds), for test accuracies within 0.3 points above and 0.8 points below these
at 10 to 50 % missing. Measured and not kept: fixing the joint-view choice as well, or
letting the screen choose it (1.1 points lower on uWave at 50 % missing); refitting with
all of the chosen hyperparameters and no search (cheaper still, but 1.2 points lower
there); every pattern at the landmark count of the model of all the
views, so that Nystrom maps and moments could be shared between patterns (lower
accuracy on digits at 50 %: under ``n_landmarks="auto"`` a pattern of ``u`` views gets
``budget / u`` landmarks per view, the capacity its model needs).

Cost: one such search per distinct pattern of observed views among the training rows
(at most ``2^v - 2``, and at most :data:`MAX_REDUCED_MODELS`: the most frequent
patterns), each on fewer views; with ``n_jobs`` the patterns' searches run in parallel
threads. Prediction routes each row to its pattern's model.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone, is_classifier

from .._validation import observed_mask
from ..nystrom._landmarks import is_index_landmarks
from ._screen import alpha_window

__all__ = ["MAX_REDUCED_MODELS", "REDUCED_CV_FOLDS", "fit_reduced_models", "reduced_outputs"]

#: at most this many reduced models (the most frequent patterns among the training rows;
#: ``2^4 - 2``: every strict pattern of up to four views), so that the cost of a fit with
#: many views stays bounded; rows of the other patterns go to the model of all the views
MAX_REDUCED_MODELS = 14
#: folds of a reduced model's search (at most the search of all the views' folds; a
#: splitter object given as ``cv`` is kept as it is)
REDUCED_CV_FOLDS = 3


def reduced_search_params(cv_est: Any, n_views: int, alphas: np.ndarray) -> dict:
    """Parameters of the search of a pattern of ``n_views`` views, from the fitted search of
    all the views ``cv_est`` and its grid of ``alpha`` (``alphas``, in grid order): its
    bandwidth factor and ``eta`` fixed, ``alphas`` its chosen ``alpha`` and the grid
    neighbours (:func:`~._screen.alpha_window`); the joint-view options stay those of
    ``cv_est`` (none for a single view)."""
    best = cv_est.best_params_
    alphas = np.asarray(alphas, dtype=np.float64)
    params: dict = {
        "bandwidth_factors": [best["bandwidth_factor"]],
        "alphas": alphas[alpha_window(alphas, np.flatnonzero(alphas == best["alpha"])[:1])],
    }
    if n_views == 1:  # no joint view of a single view
        params["joint_view"] = False
    if "eta" in best:
        params["etas"] = [best["eta"]]
    return params


def fit_reduced_models(
    cv_est: Any,
    Xs: list,
    y: Any,
    mask: np.ndarray,
    alphas: np.ndarray,
    sample_weight: np.ndarray | None = None,
) -> dict:
    """One refitted model per strict pattern of observed views among the training rows.

    At most :data:`MAX_REDUCED_MODELS` patterns, the most frequent first (ties in the
    order of ``np.unique``). Each is searched from the search of all the views
    (:func:`reduced_search_params`, on ``min(cv, REDUCED_CV_FOLDS)`` folds); with
    ``cv_est.n_jobs`` the patterns are searched in parallel threads.

    Parameters
    ----------
    cv_est : a fitted CV estimator (``MVMLRegressorCV``, ``MVMLClassifierCV``, ...)
        Its parameters are reused (``views=None``, ``missing_views="complete"``), and its
        chosen hyperparameters restrict the reduced searches.
    Xs : list of ndarray
        The validated training views (NaN rows where a view is missing).
    y : array of shape (n,) or (n, k)
    mask : ndarray of bool (n, v)
        Observed views per training row.
    alphas : ndarray
        The ``alpha`` grid of ``cv_est``'s search (of its best candidate's loss), in grid
        order: the reduced searches take the chosen value's neighbours in it.
    sample_weight : ndarray of shape (n,), optional
        The rows' frequency weights (all positive: the rows of zero weight were dropped
        before the search); each pattern's search is weighted by those of its rows (and
        by ``cv_est.class_weight``, which its clone keeps).

    Returns
    -------
    dict
        ``{tuple(pattern): best_estimator_}`` of the search on the views of the pattern
        (rows observing at least one of them). Patterns whose rows do not hold every
        class of ``cv_est`` are left out (the model of all the views predicts them).
    """
    y = np.asarray(y)
    cv = cv_est.cv
    if cv is None or isinstance(cv, Integral):
        cv = min(5 if cv is None else int(cv), REDUCED_CV_FOLDS)
    elif not hasattr(cv, "split"):
        cv = len(list(cv))  # explicit splits index the full rows: the same number of folds
    folds = cv if isinstance(cv, Integral) else 1
    patterns, counts = np.unique(mask, axis=0, return_counts=True)
    strict = ~patterns.all(axis=1)
    patterns, counts = patterns[strict], counts[strict]
    jobs = []
    for pat in patterns[np.argsort(-counts, kind="stable")][:MAX_REDUCED_MODELS]:
        views = np.flatnonzero(pat)
        rows = mask[:, views].any(axis=1)
        y_sub = y[rows]
        if is_classifier(cv_est):
            classes, n_class = np.unique(y_sub, return_counts=True)
            if classes.size != cv_est.classes_.size or n_class.min() < folds:
                continue
        params = reduced_search_params(cv_est, views.size, alphas)
        if is_index_landmarks(cv_est.landmarks):
            # training-row indices (among the rows of positive weight), renumbered among
            # the rows kept (every given row is observed in every view: checked by the
            # fit of all the views)
            landmarks = np.asarray(cv_est.landmarks, dtype=np.intp)
            kept = cv_est.__dict__.get("_cv_rows")  # the rows of positive weight (None: all)
            if kept is not None:
                landmarks = np.searchsorted(kept, landmarks)
            params["landmarks"] = np.searchsorted(np.flatnonzero(rows), landmarks)
        sub = clone(cv_est).set_params(
            views=None,
            missing_views="complete",
            feature_relevance="none",  # the views given are scaled already
            verbose=0,
            cv=cv,
            n_jobs=None,
            **params,
        )
        w_sub = None if sample_weight is None else sample_weight[rows]
        jobs.append((tuple(bool(b) for b in pat), sub, [Xs[l][rows] for l in views], y_sub, w_sub))

    def fit_one(sub: Any, Xp: list, yp: np.ndarray, wp: np.ndarray | None) -> Any:
        if wp is None:
            return sub.fit(Xp, yp).best_estimator_
        return sub.fit(Xp, yp, sample_weight=wp).best_estimator_

    # patterns in parallel threads only when asked for (each search is then serial)
    fitted = Parallel(n_jobs=cv_est.n_jobs, prefer="threads")(
        delayed(fit_one)(sub, Xp, yp, wp) for _, sub, Xp, yp, wp in jobs
    )
    return {pat: est for (pat, *_), est in zip(jobs, fitted)}


def reduced_outputs(
    est: Any, Xs: list, fn: Callable[[list], np.ndarray], classes: np.ndarray | None
) -> np.ndarray:
    """Outputs of ``est`` on its validated NumPy test views ``Xs`` (the input views, then
    the joint view when the model has one): each row whose pattern of observed views has
    a reduced model (``est.reduced_models_``) gets that model's outputs, and only the
    other rows go through ``fn``, the row-wise output function of the model of all the
    views."""
    mask = observed_mask(Xs[: est.n_views_ - bool(est._joint_view())])
    if mask is None:
        return fn(Xs)
    routed = np.zeros(mask.shape[0], dtype=bool)
    parts = []
    for pat, model in est.reduced_models_.items():
        rows = np.flatnonzero((mask == np.asarray(pat)[None, :]).all(axis=1))
        if rows.size:
            routed[rows] = True
            views = np.flatnonzero(pat)
            parts.append((rows, model._decision([Xs[l][rows] for l in views], classes)))
    rest = np.flatnonzero(~routed)
    if rest.size:
        parts.append((rest, fn([Xv[rest] for Xv in Xs])))
    first = parts[0][1]
    out = np.empty((mask.shape[0], *first.shape[1:]), dtype=first.dtype)
    for rows, values in parts:
        out[rows] = values
    return out

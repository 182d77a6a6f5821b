"""Reduced models for samples with missing views (the CV estimators' ``missing_views``).

A sample whose observed views are ``O`` (a strict subset of the views) is predicted by
the model of the views ``O`` alone, fitted on every training row that observes at least
one of them (its views of ``O`` that are missing completed by their conditional
expectation, :mod:`mvkernels.nystrom._missing`), with its own hyperparameters chosen by
the same cross-validated search. The model of all the views predicts the complete rows
and the patterns that no training row had.

This is the *reduced-feature model* of prediction with missing values (Saar-Tsechansky
and Provost, JMLR 8, 2007): instead of feeding a model completed values it never saw as
such, each pattern of observed inputs gets the model that uses exactly those inputs. The
completed features of the missing views are a linear function of the observed ones, so
the model of all the views restricts how a sample with missing views is predicted to
``(w_O + B^T w_M)^T z_O``; the reduced model fits that function freely and is not
distorted by the training rows where other views were completed. Assumption: views are
missing at random (the pattern carries no information about the label). Cost: one
cross-validated search per distinct pattern of observed views among the training rows
(at most ``2^v - 2``, and at most :data:`MAX_REDUCED_MODELS`: the most frequent
patterns), each on fewer views; prediction routes each row to its pattern's
model.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral
from typing import Any

import numpy as np
from sklearn.base import clone, is_classifier

from .._validation import observed_mask

__all__ = ["MAX_REDUCED_MODELS", "fit_reduced_models", "reduced_outputs"]

#: at most this many reduced models (the most frequent patterns among the training rows;
#: ``2^4 - 2``: every strict pattern of up to four views), so that the cost of a fit with
#: many views stays bounded; rows of the other patterns go to the model of all the views
MAX_REDUCED_MODELS = 14


def fit_reduced_models(cv_est: Any, Xs: list, y: Any, mask: np.ndarray) -> dict:
    """One refitted model per strict pattern of observed views among the training rows.

    At most :data:`MAX_REDUCED_MODELS` patterns, the most frequent first (ties in the
    order of ``np.unique``).

    Parameters
    ----------
    cv_est : a fitted CV estimator (``MVMLRegressorCV``, ``MVMLClassifierCV``, ...)
        Its parameters are reused (``views=None``, ``missing_views="complete"``).
    Xs : list of ndarray
        The validated training views (NaN rows where a view is missing).
    y : array of shape (n,) or (n, k)
    mask : ndarray of bool (n, v)
        Observed views per training row.

    Returns
    -------
    dict
        ``{tuple(pattern): best_estimator_}`` of the search on the views of the pattern
        (rows observing at least one of them). Patterns whose rows do not hold every
        class of ``cv_est`` are left out (the model of all the views predicts them).
    """
    y = np.asarray(y)
    cv = cv_est.cv
    if not (cv is None or isinstance(cv, Integral) or hasattr(cv, "split")):
        cv = len(list(cv))  # explicit splits index the full rows: the same number of folds
    models: dict = {}
    patterns, counts = np.unique(mask, axis=0, return_counts=True)
    strict = ~patterns.all(axis=1)
    patterns, counts = patterns[strict], counts[strict]
    for pat in patterns[np.argsort(-counts, kind="stable")][:MAX_REDUCED_MODELS]:
        views = np.flatnonzero(pat)
        rows = mask[:, views].any(axis=1)
        sub = clone(cv_est).set_params(views=None, missing_views="complete", verbose=0, cv=cv)
        y_sub = y[rows]
        if is_classifier(cv_est):
            classes, counts = np.unique(y_sub, return_counts=True)
            folds = 5 if cv is None else cv if isinstance(cv, Integral) else 1
            if classes.size != cv_est.classes_.size or counts.min() < folds:
                continue
        sub.fit([Xs[l][rows] for l in views], y_sub)
        models[tuple(bool(b) for b in pat)] = sub.best_estimator_
    return models


def reduced_outputs(
    est: Any, Xs: list, fn: Callable[[list], np.ndarray], classes: np.ndarray | None
) -> np.ndarray:
    """Outputs of ``est`` on its validated NumPy test views ``Xs`` (the input views, then
    the joint view when the model has one): each row whose pattern of observed views has
    a reduced model (``est.reduced_models_``) gets that model's outputs, and only the
    other rows go through ``fn``, the row-wise output function of the model of all the
    views."""
    mask = observed_mask(Xs[: est.n_views_ - bool(est.joint_view)])
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

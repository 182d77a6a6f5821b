"""The refit of the best candidate of a cross-validated search (:func:`refit_best`)."""

from __future__ import annotations

from typing import Any

from sklearn.base import is_classifier

from .._base import grown_n_landmarks
from .._data_part import data_part
from .._joint import JOINT_ONLY
from .._reduced import fit_reduced_models
from ._data import _SearchData
from ._prepare import candidate_grid

__all__ = []


def refit_best(cv_est: Any, data: _SearchData, n_landmarks_pair: tuple) -> Any:
    """The best candidate of the CV estimator ``cv_est``'s search (its ``best_params_``,
    ``best_kernel_params_``, ``best_joint_view_``) refitted on all the rows of ``data``
    (the rows as given with weights; every row after a search on a subsample, with a
    named landmark count grown to the rows, :func:`~.._base.grown_n_landmarks`); with
    missing views, the reduced models of the patterns (``reduced_models_``).
    ``n_landmarks_pair``: the landmark counts of the best candidate's search (the
    joint-only candidate's second)."""
    Xs, y, mask = data.Xs, data.y, data.mask
    dask_input = not data_part(Xs).in_memory
    n_landmarks, n_landmarks_only = n_landmarks_pair
    if data.full is not None and isinstance(cv_est.n_landmarks, str):
        # searched on a subsample: capacity that grows with the rows of the refit
        # (never fewer than the search's; the joint-only candidate's count, bounded by
        # its cost, would shrink)
        n_all, v = data.full[0][0].shape[0], len(data.full[0])
        budget = cv_est._base_estimator()._cv_engine().auto_feature_budget
        grown = grown_n_landmarks(n_all, v, budget)
        n_landmarks = max(grown, int(n_landmarks))
        if n_landmarks_only is not None:
            n_landmarks_only = max(grown, int(n_landmarks_only))
    best = cv_est.best_params_
    est = cv_est._base_estimator().set_params(
        alpha=best["alpha"],
        kernel_params=cv_est.best_kernel_params_,
        n_landmarks=n_landmarks,
        joint_view=cv_est.best_joint_view_,
    )
    if cv_est.best_joint_view_ == JOINT_ONLY:  # kernel ridge on the joint view
        est.set_params(metric="identity", learn_weights=False, n_landmarks=n_landmarks_only)
    elif cv_est._learned():
        est.set_params(eta=best["eta"])
    if "max_iter" in best:
        est.set_params(max_iter=best["max_iter"])
    if data.relevance is not None:  # fixed: the refitted model scales the input views
        est.set_params(feature_relevance=data.relevance)
    if data.given is not None:  # weighted: the rows as given, zero weights included
        if is_classifier(cv_est):
            est.set_params(class_weight=getattr(cv_est, "class_weight", None))
        Xs_in, y_in, w_in = data.given
        model = est.fit(Xs_in, y_in, sample_weight=w_in)
    elif data.full is not None:  # every row, the relevance fixed (scaled in the fit)
        model = est.fit(*data.full)
    else:
        model = est.fit(data.Xs_input, y)  # the views validated above
    for name in ("n_features_in_", "feature_names_in_"):  # what predict checks
        if hasattr(cv_est, name):
            setattr(model, name, getattr(cv_est, name))
    if mask is not None and cv_est.missing_views == "reduced" and not dask_input:
        # the alpha grid of the best candidate's search (its loss's default or ``alphas``)
        alphas = candidate_grid(cv_est.alphas, cv_est._loss_search.alphas, "alphas")
        model.reduced_models_ = fit_reduced_models(cv_est, Xs, y, mask, alphas, data.sample_weight)
    return model

"""The declaration of one run of a cross-validated search (:func:`prepare_search`): the
candidates of every batched axis, the searched views and kernel (with a joint-view
candidate, the joint view last), the base bandwidths and the landmark counts, from the
search's data and the CV estimator's parameters (a part's, under the part axes)."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np

from ..._kernel_families import names_precomputed
from ...kernels import make_view_kernels
from ...nystrom import check_landmark_count
from ...nystrom._landmarks import is_index_landmarks
from .._bandwidth import BANDWIDTH_KERNELS, resolve_bandwidths
from .._base import named_n_landmarks
from .._data_part import data_part
from .._joint import (
    JOINT_ONLY,
    joint_candidates,
    joint_kernel_spec,
    joint_only_landmarks,
    joint_views,
)
from .._multiclass import ovo_pairs
from ._data import _SearchData
from ._grid import _CVSearch

__all__ = []


@dataclass(frozen=True)
class PreparedRun:
    """One run's declaration (:func:`prepare_search`)."""

    search: _CVSearch
    #: the feature dimension the run's BLAS threads follow
    dim: int
    #: the landmark counts of the search (the joint-only candidate's second)
    n_landmarks: tuple
    #: the joint-view candidates (:func:`~.._joint.joint_candidates`)
    joints: tuple
    #: the kernel of the searched views
    kernel: Any


def candidate_grid(values: Any, default: tuple, name: str) -> np.ndarray:
    """The values of a searched parameter (``alphas``, ``etas``, ``bandwidth_factors``):
    ``values``, or ``default`` when None; finite and positive.

    Examples
    --------
    >>> candidate_grid(None, (0.1, 1.0), "alphas").tolist()
    [0.1, 1.0]
    """
    arr = np.asarray(default if values is None else values, dtype=np.float64).ravel()
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} must be a non-empty list of finite numbers > 0, got {values!r}")
    return arr


def prepare_search(est: Any, data: _SearchData) -> PreparedRun:
    """The run of the CV estimator ``est``'s search on ``data`` at its parameters: the
    candidates, the searched views and kernel, the base bandwidths (in that order: a
    ``random_state`` instance is drawn from as before), and the landmark counts."""
    Xs, mask = data.Xs, data.mask
    n, v = Xs[0].shape[0], len(Xs)
    dask_input = not data_part(Xs).in_memory
    loss_search, learned = est._loss_search, est._learned()
    alphas = candidate_grid(est.alphas, loss_search.alphas, "alphas")
    etas = candidate_grid(est.etas, loss_search.etas, "etas") if learned else np.array([np.nan])
    joints, pairs = _candidates(est, data, dask_input)
    kernel, kernel_params = est.kernel, est.kernel_params
    Xs_search = Xs
    if joints[-1]:  # the joint view last (the other candidate drops its block)
        Xs_search = joint_views(Xs, kernel)
        kernel, kernel_params = joint_kernel_spec(kernel, kernel_params, v)
    factors, base_params = _bandwidths(est, data, Xs_search, kernel, kernel_params)
    n_landmarks, n_landmarks_only = _landmark_counts(est, n, v, joints, dask_input)
    search = _CVSearch(
        Xs=Xs_search,
        Y=data.Y,
        y_score=data.y_score,
        splits=data.splits,
        base_params=base_params,
        factors=factors,
        alphas=alphas,
        etas=etas,
        K=est.max_iter if learned or est.learn_weights else 1,
        n_landmarks=n_landmarks,
        scorer=data.scorer,
        joints=joints,
        v_in=v,
        n_landmarks_only=n_landmarks_only,
        missing=mask is not None,
        learned=learned,
        sample_weight=data.sample_weight,
        loss_weight=data.loss_weight,
        pairs=pairs,
    )
    if n_landmarks is None:
        dim = v * n
    elif isinstance(n_landmarks, Integral):
        dim = v * int(n_landmarks)
    else:
        dim = v * max(1, round(float(n_landmarks) * n))
    return PreparedRun(search, dim, (n_landmarks, n_landmarks_only), joints, kernel)


def _candidates(est: Any, data: _SearchData, dask_input: bool) -> tuple[tuple, Any]:
    """The joint-view candidates (the joint-only one: Nystrom mode on complete in-memory
    views) and the one-vs-one pairs (None: one-vs-rest)."""
    only_ok = (
        est._loss_search.joint_only
        and est.n_landmarks is not None
        and not dask_input
        and data.mask is None
        and not names_precomputed(est.kernel)
    )
    pairs = None
    if est._current("multi_class") == "ovo" and len(est.classes_) > 2:
        pairs = ovo_pairs(len(est.classes_))
        if dask_input:
            raise ValueError(
                f"{type(est).__name__}(multi_class='ovo') does not support Dask input "
                "(the pairs' row subsets); use multi_class='ovr'"
            )
    return joint_candidates(est.joint_view, len(data.Xs), joint_only=only_ok), pairs


def _bandwidths(
    est: Any, data: _SearchData, Xs_search: list, kernel: Any, kernel_params: Any
) -> tuple[np.ndarray, list]:
    """The bandwidth factors (``[1.0]`` for kernels without a bandwidth) and the per-view
    base kernel parameters, each view's bandwidth from its observed rows (the joint
    view: the complete rows), weighted by the rows' frequency weights."""
    mask, v, n = data.mask, len(data.Xs), data.Xs[0].shape[0]
    kernels = make_view_kernels(kernel, kernel_params, len(Xs_search))
    has_bandwidth = any(k.name in BANDWIDTH_KERNELS for k in kernels)
    factors = (
        candidate_grid(
            est.bandwidth_factors, est._loss_search.bandwidth_factors, "bandwidth_factors"
        )
        if has_bandwidth
        else np.array([1.0])
    )
    bandwidth_weight: Any = data.sample_weight
    if mask is None:
        bandwidth_views = Xs_search
    else:
        search_mask = mask
        if len(Xs_search) > v:
            search_mask = np.column_stack([mask, mask.all(axis=1)])
        bandwidth_views = [Xv[search_mask[:, l]] for l, Xv in enumerate(Xs_search)]
        if bandwidth_weight is not None:  # each view's observed rows' weights
            bandwidth_weight = [bandwidth_weight[m] for m in search_mask.T]
    # thin products: the fit's BLAS threads (DataPart.fit_threads, as MVMLSVC's fit; the
    # targets are on the client)
    with data_part(data.Xs).fit_threads(n):
        base_params = resolve_bandwidths(
            kernel,
            kernel_params,
            bandwidth_views,
            1.0,
            est.random_state,
            sample_weight=bandwidth_weight,
        )
    return factors, base_params


def _landmark_counts(est: Any, n: int, v: int, joints: tuple, dask_input: bool) -> tuple[Any, Any]:
    """The landmark count of the search (None: full-kernel mode; named counts from the
    loss's feature budget; landmark indices fix it) and the joint-only candidate's (its
    own capacity under a named count, :func:`~.._joint.joint_only_landmarks`)."""
    if est.n_landmarks is None:
        if dask_input:
            raise ValueError(
                f"{type(est).__name__}: Dask input needs the Nystrom mode; set n_landmarks"
            )
        n_landmarks: Any = None
    elif isinstance(est.n_landmarks, str):
        budget = est._base_estimator()._cv_engine().auto_feature_budget
        n_landmarks = named_n_landmarks(est.n_landmarks, n, v, budget)
    else:
        n_landmarks = est.n_landmarks
    if n_landmarks is not None and is_index_landmarks(est.landmarks):
        n_in = est.__dict__.get("_cv_n_in") or n  # rows given to fit (weights drop some)
        check_landmark_count(est.n_landmarks, est.landmarks, n_in)
        n_landmarks = int(np.asarray(est.landmarks).size)  # the indices fix the count
    n_landmarks_only = None
    if JOINT_ONLY in joints:
        n_landmarks_only = (
            joint_only_landmarks(n)
            if isinstance(est.n_landmarks, str) and not is_index_landmarks(est.landmarks)
            else n_landmarks
        )
    return n_landmarks, n_landmarks_only

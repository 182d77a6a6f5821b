"""The joint view of the MVML family: one extra kernel on all views together.

An MVML predictor is additive over views: with per-view features ``z_l(x_l)`` (block
Nystrom) or per-view kernels ``k_l`` (full mode), every decision function is
``f(x) = sum_l w_l z_l(x_l)^T g_l`` (resp. ``sum_l w_l sum_i k_l(x_l, x_il) g_il``); the
metric ``A`` couples the coefficients ``g_l`` through the regulariser ``<g, A^+ g>`` but
cannot create a term that depends on two views at once. ``joint_view=True`` appends one
view, the concatenation ``x_J = (x_1, ..., x_v)``, whose Gaussian kernel
``exp(-gamma_J ||x_J - x'_J||^2) = prod_l exp(-gamma_J ||x_l - x'_l||^2)`` is a product of
per-view kernels and so models cross-view interactions. It is an ordinary MVML view: its
own bandwidth (the same heuristic times ``bandwidth_factor``), its own Nystrom block (on
the shared landmarks), its own rows and columns of the metric and its own weight; it is
always the last view. Precomputed kernels: the joint kernel is the elementwise (Schur)
product of the view kernels, PSD as a product of PSD kernels.

``joint_view="only"`` keeps the joint view alone (one view, the concatenation). With the
identity metric a single-view MVML is ridge regression on the Nystrom features ``u(x)``
of the joint kernel: the g-step (eq. 15 with ``v = 1``, ``w = 1``, ``A = I``) is
``g = (U^T U + alpha I)^{-1} U^T y`` and by the push-through identity the predictions are
``u(x)^T g = k~(x, X) (K~ + alpha I)^{-1} y`` with ``K~ = U U^T`` the Nystrom kernel. With
every training row a landmark ``K~ = K`` (up to the eigenvalue floor), so the model *is*
kernel ridge regression on the concatenated views with the same ``alpha`` (scikit-learn's
``KernelRidge(alpha=alpha)``, no ``1/n`` scaling). It is the cross-validated estimators'
"never lose" candidate: the additive models and the joint block of
``joint_view=True`` share the ``n_landmarks="auto"`` budget of about 600 features, while the
joint-only candidate has its own, larger one (:func:`joint_only_landmarks`).

Everything here is a small, stateless helper used as a hook by the estimators
(``_base.py``) and the cross-validated estimators (``cv/``).
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np

from .._arrays import observed_rows
from .._kernel_families import names_precomputed
from .._validation import ValidatedViews
from ..nystrom import BlockNystrom, FeatureMoments
from ._data_part import DataPart, data_part

__all__ = [
    "JOINT_ONLY",
    "JOINT_AUTO",
    "fitted_joint_view",
    "JOINT_ONLY_MAX_LANDMARKS",
    "joint_only_landmarks",
    "joint_only_kernel_spec",
    "joint_candidates",
    "joint_views",
    "joint_kernel_spec",
    "drop_joint_block",
    "leading_moments",
]


def _is_precomputed(kernel: Any) -> bool:
    """Precomputed Gram matrices, named once or per view (the plain estimators' rule,
    :func:`~mvkernels._kernel_families.names_precomputed`; a mix is refused)."""
    return names_precomputed(kernel)


def _precomputed_views(kernel: Any, n_views: int) -> list[int]:
    """Indices of the views whose kernel is ``"precomputed"`` (one name or a list)."""
    names = list(kernel) if isinstance(kernel, (list, tuple)) else [kernel] * n_views
    return [i for i, k in enumerate(names[:n_views]) if _is_precomputed(k)]


#: ``joint_view`` value of the model on the joint view alone
JOINT_ONLY = "only"
#: ``joint_view`` value of the plain estimators: the joint view when there are at least two
#: views to join (``MVMLClassifier``'s default); the cross-validated estimators read
#: ``"auto"`` as "searched" (:func:`joint_candidates`)
JOINT_AUTO = "auto"
#: the joint-only candidate's landmark rule: every row up to this many rows, above it a
#: count that keeps one pass over the rows at ``n p_J^2 <= JOINT_ONLY_MAX_LANDMARKS^3``
JOINT_ONLY_MAX_LANDMARKS = 3000
#: fewest landmarks of the joint-only candidate on very many rows
JOINT_ONLY_MIN_LANDMARKS = 600


def joint_only_landmarks(n_samples: int, cap: int = JOINT_ONLY_MAX_LANDMARKS) -> int:
    """Landmarks of the cross-validated estimators' joint-only candidate.

    ``p_J = min(n, max(600, floor(sqrt(cap^3 / n))))`` with ``cap = 3000``: every training
    row is a landmark up to ``n = 3000`` (the candidate is then exact kernel ridge on the
    concatenation); above, the count shrinks as ``1 / sqrt(n)`` so that one pass over the
    rows, ``O(n p_J^2)``, costs no more than at ``n = 3000`` (the ``n x p_J`` features grow
    as ``sqrt(n)``): 1643 landmarks at 10,000 rows, 948 at 30,000, never fewer than 600
    (the multi-view candidates' whole budget).

    Parameters
    ----------
    n_samples : int
        Number of training rows ``n``.
    cap : int, default=3000
        Rows up to which every row is a landmark (``JOINT_ONLY_MAX_LANDMARKS``).

    Returns
    -------
    int

    Examples
    --------
    >>> [joint_only_landmarks(n) for n in (896, 3000, 10000, 30000, 10**6)]
    [896, 3000, 1643, 948, 600]
    """
    n = int(n_samples)
    return int(min(n, max(JOINT_ONLY_MIN_LANDMARKS, math.isqrt(int(cap) ** 3 // max(n, 1)))))


def joint_candidates(
    joint_view: bool | str, n_views: int, joint_only: bool = False
) -> tuple[bool | str, ...]:
    """The cross-validated estimators' joint-view candidates, in grid order (ties go to
    the earlier one): ``"auto"`` searches without and with the joint view and, when
    ``joint_only``, the joint view alone (only ``False`` for a single view); a bool or
    ``"only"`` fixes it."""
    if joint_view == JOINT_ONLY:
        return (JOINT_ONLY,)
    if isinstance(joint_view, str):  # "auto" (validated by _parameter_constraints)
        if n_views < 2:
            return (False,)
        return (False, True, JOINT_ONLY) if joint_only else (False, True)
    return (bool(joint_view),)


def fitted_joint_view(joint_view: bool | str, n_views: int, kernel: Any) -> bool | str:
    """The joint view a plain estimator fits: ``"auto"`` is ``True`` with at least two
    input views and one kernel named for all of them (not ``"precomputed"``), else
    ``False`` (a single view has nothing to join; with per-view kernels or precomputed
    Gram matrices the joint view's kernel would be a guess); a bool or ``"only"`` is kept.

    Examples
    --------
    >>> fitted_joint_view("auto", 3, "rbf"), fitted_joint_view("auto", 1, "rbf")
    (True, False)
    >>> fitted_joint_view("auto", 2, ["rbf", "linear"]), fitted_joint_view("only", 2, "rbf")
    (False, 'only')
    """
    if joint_view == JOINT_AUTO:
        return n_views >= 2 and isinstance(kernel, str) and not _is_precomputed(kernel)
    return joint_view


def joint_views(Xs: list, kernel: Any, part: DataPart | None = None) -> list:
    """The views followed by the joint view (the concatenation, or for precomputed
    kernels the elementwise product of the Gram / cross-kernel matrices). A sample with
    a missing view (NaN row) has a missing joint view; sparse views give a CSR joint view.
    Validated views (:class:`~mvkernels._validation.ValidatedViews`) stay validated.
    ``part``: the fit's data part (:class:`~mvkernels.mvml._data_part.DataPart`, whose
    ``side_by_side`` builds the concatenation); None: decided from ``Xs``."""
    J = _joint_view(Xs, kernel, part)
    return Xs.with_view(J) if isinstance(Xs, ValidatedViews) else [*Xs, J]


def _joint_view(Xs: list, kernel: Any, part: DataPart | None) -> Any:
    if len(Xs) < 2:
        raise ValueError(
            f"joint_view=True needs at least 2 views (the joint view is a kernel on all "
            f"views together), got {len(Xs)}"
        )
    precomputed = _precomputed_views(kernel, len(Xs))
    if precomputed and len(precomputed) < len(Xs):
        raise ValueError(
            f"joint_view with a precomputed kernel on views {precomputed} only: the joint "
            "view is either the concatenation of every view's features or the elementwise "
            "product of every view's precomputed kernel; give every view a precomputed "
            "kernel or set joint_view=False"
        )
    if precomputed:
        for i, K in enumerate(Xs[1:], start=1):
            if K.shape != Xs[0].shape:
                raise ValueError(
                    f"joint_view with precomputed kernels multiplies the view kernels "
                    f"elementwise: view {i} has shape {K.shape}, view 0 {Xs[0].shape}"
                )
        J = Xs[0]
        for K in Xs[1:]:
            J = J * K
        return J
    return (data_part(Xs) if part is None else part).side_by_side(Xs, _joint_block)


def _joint_block(*blocks: np.ndarray) -> np.ndarray:
    """The views' rows side by side; a sample with a missing view (a NaN row in that view)
    misses the joint view too (a whole NaN row)."""
    J = np.hstack(blocks)
    missing = ~np.column_stack([observed_rows(B) for B in blocks]).all(axis=1)
    if missing.any():
        J[missing] = np.nan
    return J


def joint_kernel_spec(kernel: Any, kernel_params: Any, n_views: int) -> tuple[Any, Any]:
    """``(kernel, kernel_params)`` for the ``n_views + 1`` views with the joint view.

    One kernel for all views: the joint view uses it too. A list of per-view kernels
    (length ``v``): the joint view is Gaussian (``"rbf"``) with the default bandwidth
    (precomputed Gram matrices: the joint view is their elementwise product, precomputed
    too); a list of ``v + 1`` names the joint view's kernel last. ``kernel_params``: one dict
    applies to every view including the joint one; a list of ``v`` dicts leaves the joint
    view's bandwidth to the heuristic; a list of ``v + 1`` gives it last.
    """
    if isinstance(kernel, (list, tuple)):
        kernel = list(kernel)
        if len(kernel) == n_views:  # precomputed Gram matrices: their product's, precomputed
            kernel = [*kernel, "precomputed" if _is_precomputed(kernel) else "rbf"]
    if isinstance(kernel_params, (list, tuple)):
        kernel_params = list(kernel_params)
        if len(kernel_params) == n_views:
            kernel_params = [*kernel_params, None]
    return kernel, kernel_params


def joint_only_kernel_spec(kernel: Any, kernel_params: Any, n_views: int) -> tuple[Any, Any]:
    """``(kernel, kernel_params)`` of the joint view alone (``joint_view="only"``): as
    :func:`joint_kernel_spec`, keeping the joint view's entry (the last) of per-view lists;
    a one-element ``kernel_params`` list is the joint view's already."""
    kernel, kernel_params = joint_kernel_spec(kernel, kernel_params, n_views)
    if isinstance(kernel, list):
        kernel = kernel[-1]
    if isinstance(kernel_params, list) and len(kernel_params) != 1:
        kernel_params = kernel_params[-1:]
    return kernel, kernel_params


def drop_joint_block(nys: BlockNystrom, n_views: int) -> BlockNystrom:
    """A fitted block Nystrom map restricted to its first ``n_views`` views.

    The map of the same views without the joint one: the same landmarks and normalisers
    (shared by the two candidates of a cross-validation), a shallow copy.
    """
    out = copy.copy(nys)
    out.kernels_ = nys.kernels_[:n_views]
    out.landmarks_ = nys.landmarks_[:n_views]
    out.normalizers_ = nys.normalizers_[:n_views]
    out.ranks_ = nys.ranks_[:n_views]
    out.n_features_view_ = list(nys.n_features_view_)[:n_views]
    out.n_views_ = n_views
    return out


def leading_moments(mom: FeatureMoments, dim: int) -> FeatureMoments:
    """Statistics of the first ``dim`` features (the views without the joint block)."""
    s = slice(0, dim)
    return FeatureMoments(
        mom.n_samples,
        mom.sum[s],
        mom.gram[s, s],
        None if mom.cross is None else mom.cross[s],
        mom.target_sum,
        mom.target_gram,
        None if mom.scatter is None else mom.scatter[s, s],
        mom.weight,
    )

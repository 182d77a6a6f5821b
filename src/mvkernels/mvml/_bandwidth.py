"""Default kernel bandwidths of the MVML family.

``kernel_params`` that leave a Gaussian (``"rbf"``) or Laplacian view's bandwidth open are
resolved here, once per fit, as ``gamma_l = f * gamma_l^0`` with ``gamma_l^0`` the library's
per-view heuristic (Gaussian: ``1 / (2 sigma_l^2)``, ``sigma_l`` the mean pairwise distance
of view ``l``'s training rows, at most 2000 sampled; Laplacian: ``1 / mean L1 distance``)
and ``f`` the estimators' ``bandwidth_factor``. ``f = 1`` is the papers' setting; the
estimators' default ``f = 4`` is a narrower kernel, of the order of scikit-learn's
``gamma="scale"`` (``1 / (d_l var_l)``, about ``4 gamma_l^0`` for high-dimensional views),
which the cross-validated estimators select most often. Given ``gamma``/``sigma`` values and
other kernels (linear, polynomial, precomputed, callables) are left unchanged.

Nothing here names a kernel or a parameter: each
:class:`~mvkernels._kernel_families.KernelFamily` says whether its bandwidth is open
(``open_bandwidth``), which parameter holds it (``bandwidth_param``, ``"gamma"`` for the
built-in kernels) and how a factor scales it (``scale_bandwidth``: ``gamma * f``).
"""

from __future__ import annotations

from typing import Any

from sklearn.utils import check_random_state

from .._kernel_families import BANDWIDTH_KERNELS
from ..kernels import make_view_kernels

__all__ = ["BANDWIDTH_KERNELS", "resolve_bandwidths", "scale_bandwidths"]


def resolve_bandwidths(
    kernel: Any,
    kernel_params: Any,
    Xs: list,
    factor: float,
    random_state: Any = None,
    sample_weight: Any = None,
) -> list[dict | None]:
    """Per-view ``kernel_params`` with every open bandwidth made explicit.

    Returns one dict (or None) per view. Views may be NumPy or Dask arrays (only the
    sampled rows are read). ``sample_weight``: frequency weights of the rows (one vector,
    or one per view), for the weighted mean pairwise distance
    (:func:`~mvkernels.kernels.mean_pairwise_distance`).
    """
    if sample_weight is not None and not isinstance(sample_weight, list):
        sample_weight = [sample_weight] * len(Xs)
    kernels = make_view_kernels(kernel, kernel_params, len(Xs))
    rng = check_random_state(random_state)
    out: list[dict | None] = []
    for l, (Xv, kern) in enumerate(zip(Xs, kernels)):
        given, family = dict(kern.params), kern.family
        if family is not None and family.open_bandwidth(given):
            if sample_weight is None:
                kern.fit(Xv, random_state=rng)
            else:
                kern.fit(Xv, random_state=rng, sample_weight=sample_weight[l])
            out.append(family.with_bandwidth(given, kern.params_, factor))
        else:
            out.append(given or None)
    return out


def scale_bandwidths(kernel: Any, params: list, factor: float) -> list:
    """Scale the resolved per-view bandwidth parameter of bandwidth kernels by ``factor``
    (:meth:`~mvkernels._kernel_families.KernelFamily.scale_bandwidth`: ``gamma * factor``
    for the built-in kernels)."""
    kernels = make_view_kernels(kernel, params, len(params))
    out = []
    for k, p in zip(kernels, params):
        family = k.family
        key = None if family is None else family.bandwidth_param
        if (
            family is not None
            and k.name in BANDWIDTH_KERNELS
            and p is not None
            and key is not None
            and key in p
        ):
            p = {**p, key: family.scale_bandwidth(p[key], factor)}
        out.append(p)
    return out

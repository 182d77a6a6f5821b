"""Missing views in :class:`~mvkernels.rkm.MultiViewKPCA` (private).

Fit (primal solvers, explicit feature maps): the feature mean and covariance ``C`` of
eq. (10) are estimated pairwise: block ``(a, b)`` of ``C`` from the rows where views
``a`` and ``b`` are both observed, each view's mean from its observed rows
(:func:`mvkernels.nystrom._missing.pairwise_statistics`); the eigenproblem (11) / (8) is
then solved on that ``C`` as usual. Hidden units of a sample with missing views, at fit
and at transform: eq. (15), from its observed views only (the inference the model uses
for missing views). Assumes views missing at random.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..nystrom._missing import _patterns, pairwise_statistics


def pairwise_moments(
    stack: Any, Xs: list[np.ndarray], mask: np.ndarray, dims: list[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairwise-complete ``mean``, ``C = n Cov`` and the centred features ``Phi`` with the
    missing blocks at 0 (the mean), from the views' observed rows."""
    n, v = mask.shape
    bounds = np.cumsum([0] + list(dims))
    Phi = np.zeros((n, int(bounds[-1])))
    for l, (vmap, Xv) in enumerate(zip(stack.maps, Xs)):
        obs = mask[:, l]
        Phi[obs, bounds[l] : bounds[l + 1]] = vmap.features(Xv[obs])
    aug = np.hstack([Phi, mask.astype(np.float64)])
    _, mean, cov = pairwise_statistics(aug.T @ aug, list(dims))
    Phi = np.where(np.repeat(mask, dims, axis=1), Phi - mean, 0.0)
    return mean, n * 0.5 * (cov + cov.T), Phi


def infer_hidden(kpca: Any, Xs: list[np.ndarray], mask: np.ndarray) -> np.ndarray:
    """Hidden units (n, s): eq. (6) for complete rows, eq. (15) from the observed views
    for rows with missing views."""
    full = mask.all(axis=1)
    H = np.empty((mask.shape[0], kpca.n_components))
    if full.any():
        H[full] = kpca._hidden_fn([Xv[full] for Xv in Xs])
    for pat, rows in _patterns(mask):
        obs = {v: Xs[v][rows] for v in np.flatnonzero(pat)}
        H[rows] = kpca._hidden_units(obs, [int(m) for m in np.flatnonzero(~pat)])
    return H

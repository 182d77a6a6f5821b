"""Ridge of the missing-view inference (eq. 15/16), chosen on the training rows.

The inference matrix ``A = Sigma - sum_m W_m^T W_m`` (dual: ``Sigma - sum_m H^T K_m H``)
equals ``W_O^T W_O`` (``H^T K_O H``) with the rescaling: the normal matrix of the least
squares problem ``min_h ||W_O h - phi_O^c||``. More components add directions that the
observed views barely see; their tiny eigenvalues amplify noise. The ridge

    h*(alpha) = (A + alpha I)^{-1} r,    r = sum_{v in O} W_v^T phi_v^c  (dual: H^T k_v^c)

moves from the least-squares answer (``alpha = 0``) to the training mean of the missing
views (``alpha -> inf`` gives ``h* = 0``). ``alpha`` is the grid value with the smallest
squared reconstruction error of the missing views' centred features on (up to
``MAX_ROWS``) training rows, computed in closed form for every grid value from one
eigendecomposition of ``A``:

    err(alpha) = sum_i ||phi_m,i^c||^2 - 2 p_i^T h_i + h_i^T G h_i,

with ``p_i = W_m^T phi_m,i^c`` (dual: ``(K_m H)_i``) and ``G = W_m^T W_m`` (``H^T K_m H``).
The grid contains ``alpha = inf``, so on the training rows the chosen inference is never
worse than predicting the training mean; when the mean wins, ``infer_views`` warns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: at most this many training rows score the ridge grid (a seeded uniform subsample)
MAX_ROWS = 2000
#: ridge grid, relative to the largest eigenvalue of the inference matrix (plus 0 and inf)
RELATIVE_GRID = np.logspace(-10, 2, 49)


@dataclass
class RidgeChoice:
    """The chosen ridge and its training-row errors (for reports and tests)."""

    alpha: float
    error: float
    mean_error: float


def choose_ridge(
    w: np.ndarray,
    V: np.ndarray,
    R: np.ndarray,
    P: np.ndarray,
    G: np.ndarray,
    sq_norm: float,
    allow_zero: bool,
) -> RidgeChoice:
    """Ridge with the smallest training reconstruction error of the missing views.

    Parameters
    ----------
    w, V : eigenpairs of the inference matrix ``A`` (s,), (s, s).
    R : (n, s) right-hand sides ``r_i`` of the training rows (observed views).
    P : (n, s) ``p_i`` of the training rows (missing views).
    G : (s, s) ``W_m^T W_m`` summed over the missing views (dual: ``H^T K_m H``).
    sq_norm : ``sum_i ||phi_m,i^c||^2`` over the same rows.
    allow_zero : whether ``alpha = 0`` (plain least squares) is a candidate; False when
        ``A`` is numerically singular.
    """
    top = float(np.abs(w).max()) if w.size else 0.0
    alphas = list(top * RELATIVE_GRID)
    if allow_zero:
        alphas.insert(0, 0.0)
    Rt, Pt, Gt = R @ V, P @ V, V.T @ G @ V
    best = RidgeChoice(np.inf, sq_norm, sq_norm)
    for a in alphas:
        d = w + a
        if not np.all(d > 0):  # indefinite without the rescaling: skip
            continue
        Ht = Rt / d
        err = sq_norm - 2.0 * float(np.sum(Pt * Ht)) + float(np.sum((Ht @ Gt) * Ht))
        if err < best.error:
            best = RidgeChoice(float(a), err, sq_norm)
    return best

"""Learned feature relevance inside the views (``feature_relevance="ard"``, issue 31).

The view kernels of MVML are isotropic: a view's few relevant columns are drowned by its
irrelevant ones, since every column weighs the same in the distances. Automatic relevance
determination (ARD) learns one inverse length scale ``s_k`` per column; the estimators
multiply each column of a view by its scale before the view's kernel (and its default
bandwidth, which then follows the scaled view), at fit and at predict time.

What is learned. A uniform subsample of at most ``2 x`` :data:`RELEVANCE_MAX_ROWS` complete
training rows (every view observed) is split in two halves. On the first, the columns of
all the views side by side ``x``, the Gaussian ARD kernel

    k(x, x') = exp(-sum_k theta_k (x_k - x'_k)^2),   theta_k = s_k^2,

(a product over the views of per-view Gaussian kernels, so that interactions across views
count) and the ridge ``lambda`` of kernel ridge regression of the centred, standardised
targets ``Y`` (real targets, or the one-vs-all +-1 columns of a classifier) minimise the
exact leave-one-out mean squared error

    L(theta, lambda) = (1 / nT) sum_{i,t} e_it^2,   e = (G^{-1} Y) / diag(G^{-1}),
    G = K + lambda I

(the leave-one-out residual of kernel ridge, ``y_i - yhat_{-i} = [G^{-1} y]_i / [G^{-1}]_ii``),
by L-BFGS-B on ``log theta`` and ``log lambda`` (:data:`RELEVANCE_MAX_ITER` iterations),
started from the best flat scale (one ``theta`` for all columns, with ``lambda``, chosen on a
grid around ``1 /`` the median squared distance between the rows). The per-column scales
are then shrunk towards the flat one, ``log theta_t = (1 - t) log theta_flat +
t log theta_ard`` (``lambda`` likewise), with the ``t`` of :data:`SHRINKAGE_STEPS` of
smallest leave-one-out error on the second half: per-column scales that do not generalise
give way to the flat scale (``t = 0``, exactly the views as given). With fewer rows in a
half than columns in all the views, nothing is learned (flat scales).

The gradient. With ``C = G^{-1}``, ``A = C Y``, ``c = diag(C)``, ``U = 2 E / c``,
``v_i = sum_t 2 E_it^2 / c_i`` it is ``dL = <dG, M> / nT`` with

    M = C diag(v) C - (W A^T + A W^T) / 2,   W = C U,

so ``dL/dlambda = tr(M) / nT`` and, with ``B = K o M``,
``dL/dtheta_k = -sum_ij B_ij (x_ik - x_jk)^2 / nT = -2 [X^T (diag(B 1) - B) X]_kk / nT``
(:func:`ard_loo_loss_grad`). ``C`` comes from one eigendecomposition of ``K`` per
evaluation: ``O(m^3)`` for ``m`` sampled rows plus ``O(m^2 d)`` for the ``d`` columns.

What is reported. The relevance of view ``l`` is ``s`` over its columns normalised to a root
mean square of 1 (a flat relevance is all ones, and a view scaled by it keeps its overall
scale); the overall length scale of each view stays the job of its bandwidth heuristic and
``bandwidth_factor`` (and of the CV's bandwidth grid), the weight of each view that of the
metric and the view weights. These normalised scales are what multiplies the columns.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import minimize

from .._arrays import compute_if_dask
from .._kernel_families import names_precomputed
from .._linalg import robust_eigh
from .._pairwise import laplacian_apply, squared_distances
from .._validation import ValidatedViews
from ..kernels import subsample_indices

__all__ = [
    "FEATURE_RELEVANCE",
    "RELEVANCE_MAX_ITER",
    "RELEVANCE_MAX_ROWS",
    "SHRINKAGE_STEPS",
    "ard_loo_loss_grad",
    "check_feature_relevance",
    "learn_feature_relevance",
    "learn_feature_relevance_rows",
    "resolve_feature_relevance",
    "resolve_feature_relevance_rows",
    "scale_views",
]

#: the named values of ``feature_relevance`` (a list of arrays fixes the scales instead)
FEATURE_RELEVANCE = ("none", "ard")
#: rows of each half of the subsample the relevance is learned on (uniform among complete rows)
RELEVANCE_MAX_ROWS = 500
#: L-BFGS-B iterations of the relevance learning
RELEVANCE_MAX_ITER = 60
#: bounds of ``log theta`` around the flat start, and of ``lambda``
_LOG_THETA_RANGE = (-15.0, 10.0)
_LAMBDA_RANGE = (1e-6, 1e2)
_LAMBDA_START = 0.1
#: the grid of the flat optimum: log theta around the median start, and lambda
_FLAT_LOG_THETA = np.arange(-6.0, 2.5, 1.0)
_FLAT_LAMBDAS = np.logspace(-5, 1, 13)
#: the shrinkage of the ARD scales towards the flat one, chosen on held-out rows
SHRINKAGE_STEPS = (0.0, 0.25, 0.5, 0.75, 1.0)
_COLUMN_BLOCK = 2048  # columns per block of the gradient (sparse views: dense blocks)


def _scatter_diag(B: np.ndarray, X: Any) -> np.ndarray:
    """``diag(X^T (diag(B 1) - B) X)`` (``= sum_ij B_ij (x_ik - x_jk)^2 / 2``, ``B`` symmetric),
    a block of columns at a time."""
    d = X.shape[1]
    out = np.empty(d)
    for start in range(0, d, _COLUMN_BLOCK):
        cols = slice(start, min(d, start + _COLUMN_BLOCK))
        Xb = X[:, cols]
        LXb = laplacian_apply(B, Xb)
        if sparse.issparse(Xb):
            out[cols] = np.asarray(Xb.multiply(LXb).sum(axis=0)).ravel()
        else:
            out[cols] = np.einsum("ij,ij->j", Xb, LXb)
    return out


def _scaled(X: Any, s: np.ndarray) -> Any:
    """Columns of ``X`` times ``s`` (sparse stays sparse, in CSR)."""
    if sparse.issparse(X):
        return sparse.csr_matrix(X.multiply(s[None, :]))
    return X * s[None, :]


def ard_loo_loss_grad(params: np.ndarray, X: Any, Y: np.ndarray) -> tuple[float, np.ndarray]:
    """Leave-one-out error of Gaussian-ARD kernel ridge regression and its gradient.

    ``params = (log theta_1, ..., log theta_d, log lambda)``; the loss is the mean squared
    leave-one-out residual ``L`` of the module docstring, the gradient is with respect to
    ``params``.

    Parameters
    ----------
    params : ndarray of shape (d + 1,)
    X : ndarray or sparse matrix of shape (m, d)
        The sampled rows, the columns of every view side by side.
    Y : ndarray of shape (m, T)
        Centred targets.

    Returns
    -------
    loss : float
    grad : ndarray of shape (d + 1,)

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 3))
    >>> Y = np.sin(X[:, :1])
    >>> loss, grad = ard_loo_loss_grad(np.array([0.0, 0.0, 0.0, -2.0]), X, Y - Y.mean())
    >>> grad.shape
    (4,)
    """
    theta, lam = np.exp(params[:-1]), float(np.exp(params[-1]))
    m, T = Y.shape
    K = np.exp(-squared_distances(_scaled(X, np.sqrt(theta))))
    w, Q = robust_eigh(K, what="the ARD kernel matrix")
    inv = 1.0 / (np.maximum(w, 0.0) + lam)
    C = (Q * inv) @ Q.T  # G^{-1} from the eigendecomposition, G = K + lambda I
    A = C @ Y
    c = np.diag(C).copy()
    E = A / c[:, None]
    nT = m * T
    loss = float(np.sum(E * E)) / nT
    U = 2.0 * E / c[:, None]
    v = 2.0 * np.sum(E * E, axis=1) / c
    WA = (C @ U) @ A.T
    M = (C * v[None, :]) @ C - 0.5 * (WA + WA.T)
    grad = np.empty(params.shape[0])
    grad[-1] = lam * float(np.trace(M)) / nT
    grad[:-1] = -2.0 * theta * _scatter_diag(K * M, X) / nT
    return loss, grad


def _sample_rows(
    Xs: list, Y: Any, mask: np.ndarray | None, n_rows: int, random_state: Any
) -> tuple[Any, np.ndarray, np.ndarray]:
    """A uniform subsample of the complete rows, views side by side (dense, or CSR when a
    view is sparse; Dask views and targets are computed for these rows only), its targets
    and the indices of the rows."""
    complete = np.arange(Xs[0].shape[0]) if mask is None else np.flatnonzero(mask.all(axis=1))
    if complete.size < 4:
        raise ValueError(
            f"feature_relevance='ard' learns on the rows where every view is observed; "
            f"only {complete.size} such row(s), at least 4 needed"
        )
    rows = complete[subsample_indices(complete.size, n_rows, random_state)]
    blocks = [compute_if_dask(Xv[rows]) for Xv in Xs]
    if any(sparse.issparse(b) for b in blocks):
        X = sparse.hstack([sparse.csr_matrix(b) for b in blocks], format="csr")
    else:
        X = np.hstack([np.asarray(b, dtype=np.float64) for b in blocks])
    return X, np.asarray(compute_if_dask(Y[rows]), dtype=np.float64), rows


def _standardised(Y: np.ndarray) -> np.ndarray:
    Y = Y - Y.mean(axis=0)
    scale = float(np.sqrt(np.mean(Y * Y)))
    return Y / (scale if scale > 0 else 1.0)


def _flat_optimum(X: Any, Y: np.ndarray, rho0: float) -> np.ndarray:
    """``(log theta, log lambda)`` of smallest leave-one-out error for one ``theta`` for
    all columns, on the grid :data:`_FLAT_LOG_THETA` (around ``rho0``) x
    :data:`_FLAT_LAMBDAS`: one eigendecomposition per ``theta``, then every ``lambda`` in
    ``O(m^2)`` (``diag(G^{-1}) = (Q o Q) (w + lambda)^{-1}``)."""
    D2 = squared_distances(X)
    best, best_loss = np.array([rho0, np.log(_LAMBDA_START)]), np.inf
    for step in _FLAT_LOG_THETA:
        w, Q = robust_eigh(np.exp(-np.exp(rho0 + step) * D2), what="the flat kernel matrix")
        w = np.maximum(w, 0.0)
        QY, Q2 = Q.T @ Y, Q * Q
        for lam in _FLAT_LAMBDAS:
            inv = 1.0 / (w + lam)
            E = (Q @ (QY * inv[:, None])) / (Q2 @ inv)[:, None]
            loss = float(np.mean(E * E))
            if loss < best_loss:
                best, best_loss = np.array([rho0 + step, np.log(lam)]), loss
    return best


def _fit_ard(X: Any, Y: np.ndarray, max_iter: int) -> tuple[np.ndarray, np.ndarray]:
    """``(params_ard, params_flat)``: the minimiser of :func:`ard_loo_loss_grad` with one
    ``theta`` per column (L-BFGS-B from the flat optimum) and the flat optimum
    (:func:`_flat_optimum`), each ``(log theta, log lambda)``."""
    off = squared_distances(X)[np.triu_indices(X.shape[0], 1)]
    med = float(np.median(off))
    if not med > 0:
        med = float(off.mean()) if off.mean() > 0 else 1.0
    d = X.shape[1]
    rho0 = -np.log(med)  # k = exp(-1) at the median squared distance
    flat = _flat_optimum(X, Y, rho0)
    params_flat = np.append(np.full(d, flat[0]), flat[1])
    rho_bounds = (rho0 + _LOG_THETA_RANGE[0], rho0 + _LOG_THETA_RANGE[1])
    lam_bounds = (np.log(_LAMBDA_RANGE[0]), np.log(_LAMBDA_RANGE[1]))
    res = minimize(
        ard_loo_loss_grad,
        params_flat,
        args=(X, Y),
        jac=True,
        method="L-BFGS-B",
        bounds=[rho_bounds] * d + [lam_bounds],
        options={"maxiter": max_iter},
    )
    return res.x, params_flat


def learn_feature_relevance(
    Xs: list,
    Y: Any,
    mask: np.ndarray | None = None,
    random_state: Any = None,
    max_rows: int = RELEVANCE_MAX_ROWS,
    max_iter: int = RELEVANCE_MAX_ITER,
) -> list[np.ndarray]:
    """Learn the per-column relevance of the views (the module docstring's ARD).

    :func:`learn_feature_relevance_rows` also returns the rows it was learned on.

    The sampled rows are split in two halves: the ARD scales and the best flat scale are
    learned on the first, and the shrinkage of the ARD scales towards the flat one
    (``log theta_t = (1 - t) log theta_flat + t log theta_ard``, ``t`` in
    :data:`SHRINKAGE_STEPS`; ``lambda`` likewise) is the one of smallest leave-one-out error
    on the second half (ties: the flatter). With fewer rows in a half than columns in all
    the views the held-out half cannot tell per-column scales from noise: the relevance is
    then flat (all ones) and nothing is learned.

    Parameters
    ----------
    Xs : list of arrays
        The validated training views (NumPy, scipy.sparse or Dask).
    Y : ndarray of shape (n, T)
        Real target columns (classifiers: the one-vs-all +-1 columns).
    mask : ndarray of shape (n, v) or None
        Observed (sample, view) pairs; the relevance is learned on complete rows.
    random_state : int, RandomState or None
        The subsample.
    max_rows : int, default=RELEVANCE_MAX_ROWS
        Rows of each half of the subsample.
    max_iter : int, default=RELEVANCE_MAX_ITER
        L-BFGS-B iterations.

    Returns
    -------
    list of ndarray
        One array per view: the column scales normalised to a root mean square of 1.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X1, X2 = rng.normal(size=(400, 3)), rng.normal(size=(400, 2))
    >>> y = np.sin(2 * X1[:, 0]) + np.cos(2 * X2[:, 1])
    >>> r = learn_feature_relevance([X1, X2], y[:, None], random_state=0)
    >>> [round(float(np.sqrt(np.mean(rv**2))), 6) for rv in r]  # normalised per view
    [1.0, 1.0]
    >>> bool(r[0][0] > 5 * max(r[0][1], r[0][2]) and r[1][1] > 5 * r[1][0])
    True
    """
    return learn_feature_relevance_rows(Xs, Y, mask, random_state, max_rows, max_iter)[0]


def learn_feature_relevance_rows(
    Xs: list,
    Y: Any,
    mask: np.ndarray | None = None,
    random_state: Any = None,
    max_rows: int = RELEVANCE_MAX_ROWS,
    max_iter: int = RELEVANCE_MAX_ITER,
) -> tuple[list[np.ndarray], np.ndarray]:
    """:func:`learn_feature_relevance` and the indices of the rows the relevance was
    learned on (both halves of the subsample; sorted), so that a model selection can
    score the relevance on the other rows only (the CV estimators' ``"ard"``).

    Parameters
    ----------
    Xs, Y, mask, random_state, max_rows, max_iter
        As :func:`learn_feature_relevance`.

    Returns
    -------
    relevance : list of ndarray
        As :func:`learn_feature_relevance`.
    rows : ndarray of int
        The sampled rows (empty when nothing was learned: a flat relevance).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X1, X2 = rng.normal(size=(400, 3)), rng.normal(size=(400, 2))
    >>> y = np.sin(2 * X1[:, 0]) + np.cos(2 * X2[:, 1])
    >>> r, rows = learn_feature_relevance_rows([X1, X2], y[:, None], random_state=0, max_rows=50)
    >>> rows.size
    100
    """
    X, Yr, rows = _sample_rows(list(Xs), Y, mask, 2 * max_rows, random_state)
    fit, held = np.arange(0, X.shape[0], 2), np.arange(1, X.shape[0], 2)
    if held.size < X.shape[1]:  # fewer held-out rows than scales: flat, nothing learned
        return [np.ones(Xv.shape[1]) for Xv in Xs], np.zeros(0, dtype=np.intp)
    p_ard, p_flat = _fit_ard(X[fit], _standardised(Yr[fit]), max_iter)
    X_held, Y_held = X[held], _standardised(Yr[held])
    best, best_loss = p_flat, np.inf
    for t in SHRINKAGE_STEPS:
        p = (1.0 - t) * p_flat + t * p_ard
        loss = ard_loo_loss_grad(p, X_held, Y_held)[0]
        if loss < best_loss:
            best, best_loss = p, loss
    s = np.exp(0.5 * (best[:-1] - best[:-1].max()))  # sqrt(theta), relative
    out, start_col = [], 0
    for Xv in Xs:
        sv = s[start_col : start_col + Xv.shape[1]]
        start_col += Xv.shape[1]
        out.append(sv / np.sqrt(np.mean(sv * sv)))
    return out, np.sort(rows)


def check_feature_relevance(value: Any, widths: list[int]) -> list[np.ndarray]:
    """A fixed ``feature_relevance`` (a list of one array per view) as float arrays,
    checked against the views' widths.

    Parameters
    ----------
    value : list of array-like
        One 1-D array of column scales (finite, >= 0) per view.
    widths : list of int
        Columns of each view.

    Returns
    -------
    list of ndarray
    """
    if len(value) != len(widths):
        raise ValueError(
            f"feature_relevance has {len(value)} array(s) but there are {len(widths)} views"
        )
    out = []
    for l, (r, d) in enumerate(zip(value, widths)):
        arr = np.asarray(r, dtype=np.float64)
        if arr.shape != (d,):
            raise ValueError(
                f"feature_relevance for view {l} must have shape ({d},) (one scale per "
                f"column), got shape {arr.shape}"
            )
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise ValueError(f"feature_relevance for view {l} must be finite and >= 0")
        out.append(arr)
    return out


def resolve_feature_relevance(
    spec: Any, Xs: list, Y: Any, mask: np.ndarray | None, kernel: Any, random_state: Any
) -> list[np.ndarray] | None:
    """The column scales of a fit: None for ``"none"``, learned for ``"ard"``
    (:func:`learn_feature_relevance`), checked for a list (:func:`check_feature_relevance`).

    Parameters
    ----------
    spec : {"none", "ard"} or list of array-like
        The estimator's ``feature_relevance``.
    Xs : list of arrays
        The validated input views.
    Y : ndarray of shape (n, T)
        Real target columns.
    mask : ndarray or None
        Observed (sample, view) pairs.
    kernel : str, callable or list
        The estimator's ``kernel`` (precomputed kernels have no columns to scale).
    random_state : int, RandomState or None

    Returns
    -------
    list of ndarray or None
    """
    return resolve_feature_relevance_rows(spec, Xs, Y, mask, kernel, random_state)[0]


def resolve_feature_relevance_rows(
    spec: Any,
    Xs: list,
    Y: Any,
    mask: np.ndarray | None,
    kernel: Any,
    random_state: Any,
    max_rows: int = RELEVANCE_MAX_ROWS,
) -> tuple[list[np.ndarray] | None, np.ndarray]:
    """:func:`resolve_feature_relevance` and the rows a learned relevance was learned on
    (:func:`learn_feature_relevance_rows`; empty when none was learned).

    Parameters
    ----------
    spec, Xs, Y, mask, kernel, random_state
        As :func:`resolve_feature_relevance`.
    max_rows : int, default=RELEVANCE_MAX_ROWS
        Rows of each half of the subsample (:func:`learn_feature_relevance`).

    Returns
    -------
    relevance : list of ndarray or None
    rows : ndarray of int
    """
    none = np.zeros(0, dtype=np.intp)
    if isinstance(spec, str) and spec == "none":
        return None, none
    if names_precomputed(kernel):
        raise ValueError(
            "feature_relevance scales the columns of the views; precomputed kernels have "
            "none: use feature_relevance='none'"
        )
    if isinstance(spec, str):  # "ard" (validated by the estimator's constraints)
        return learn_feature_relevance_rows(Xs, Y, mask, random_state, max_rows)
    return check_feature_relevance(spec, [int(Xv.shape[1]) for Xv in Xs]), none


def scale_views(Xs: list, relevance: list[np.ndarray] | None) -> Any:
    """Each view's columns times its relevance (None: ``Xs`` itself).

    NaN rows (missing views) stay NaN, sparse views stay sparse (CSR) and Dask views stay
    lazy; validated views (:class:`~mvkernels._validation.ValidatedViews`) stay validated,
    with their observed mask.

    Parameters
    ----------
    Xs : list of arrays
    relevance : list of ndarray or None

    Returns
    -------
    list of arrays (a ValidatedViews for validated input)
    """
    if relevance is None:
        return Xs
    if len(relevance) != len(Xs):
        raise ValueError(f"expected {len(relevance)} view(s) (as seen in fit), got {len(Xs)}")
    out = [_scaled(Xv, r) for Xv, r in zip(Xs, relevance)]  # (a Dask view stays lazy)
    if isinstance(Xs, ValidatedViews):
        return Xs.with_views(out)
    return out

"""Optimisation on the Stiefel manifold: Cayley transform with Adam-style momentum.

Written for this project in NumPy after Li, Li & Todorovic (ICLR 2019), "Efficient
Riemannian optimization on the Stiefel manifold via the Cayley transform" (their
Algorithm 2, *Cayley Adam*), used by the multi-view RKM (Achten et al. 2023, Algorithms 3
and 4) to solve

    min_{U^T U = I_s}  -1/2 Tr(U^T A U)        (A = C, eq. 8, or A = K, eq. 12).

One iteration, with Euclidean gradient ``G`` at the orthonormal ``X`` (n x p):

    M <- beta1 M + (1 - beta1) G                       (first moment)
    v <- beta2 v + (1 - beta2) ||G||_F^2              (scalar second moment)
    r  = (1 - beta1^k) sqrt(v / (1 - beta2^k) + eps)
    W  = (What - What^T) / r,  What = M X^T - 1/2 X (X^T M X^T)     (skew-symmetric)
    M <- r W X                                          (momentum moved to the tangent space)
    alpha = min(lr, 2 q / (||W||_F + eps))
    Y <- X - alpha M;  repeat ``n_fixed_point`` times: Y <- X - alpha/2 W (X + Y)
    X <- Y                                              (fixed-point Cayley transform)

Choices the paper leaves open, written down here and in ``docs/rkm.md``:

* ``W`` is never formed (n x n): ``What = P X^T`` with ``P = M - 1/2 X (X^T M)``, so
  ``W Z = (P (X^T Z) - X (P^T Z)) / r`` and ``||W||_F^2 = 2 (||P||^2 - Tr((P^T X)^2)) / r^2``;
  an iteration costs O(n p^2) plus one gradient.
* Stopping rule, not a fixed epoch count: the relative Riemannian gradient norm
  ``||G - X sym(X^T G)||_F / ||G||_F <= tol`` (for the trace objective this is
  ``||(I - X X^T) A X|| / ||A X||``, zero exactly on invariant subspaces), and optionally a
  relative objective change ``<= ftol`` over ``patience`` consecutive iterations.
* The fixed-point Cayley iteration is orthonormal only up to its truncation error; when
  ``||X^T X - I||_max`` exceeds ``reortho_tol`` (1e-14: almost every step) X is
  re-orthonormalised by its polar factor ``X (X^T X)^{-1/2}`` (a p x p eigendecomposition).
  With a looser 1e-10 the Riemannian gradient test stalled at ~4e-12 (the non-orthogonality
  leaks into it); with 1e-14 it goes down to 1e-13 and below.
* Defaults: beta1 0.9, beta2 0.99, eps 1e-8, q 0.5, 5 fixed-point iterations (the RKM
  authors' settings), but ``lr = 0.5`` instead of their 2e-3: with Adam's normalisation by
  ``||G||`` the step is measured in radians and 2e-3 needs >1e5 iterations on the sum of
  sines; 0.5 is still capped by ``2q/||W||``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

__all__ = [
    "StiefelResult",
    "riemannian_gradient",
    "orthonormalize",
    "cayley_adam",
    "stiefel_trace_max",
]


@dataclass
class StiefelResult:
    """Outcome of :func:`cayley_adam`.

    Attributes
    ----------
    X : ndarray (n, p), orthonormal columns
    fun : float, objective at ``X``
    n_iter : int
    converged : bool
    grad_norm : float, final relative Riemannian gradient norm
    history : list of (iteration, objective, relative gradient norm), every ``log_every``
    """

    X: np.ndarray
    fun: float
    n_iter: int
    converged: bool
    grad_norm: float
    history: list = field(default_factory=list)


def riemannian_gradient(X: np.ndarray, G: np.ndarray) -> np.ndarray:
    """Projection of the Euclidean gradient onto the tangent space: ``G - X sym(X^T G)``."""
    XtG = X.T @ G
    return G - X @ (0.5 * (XtG + XtG.T))


def orthonormalize(X: np.ndarray) -> np.ndarray:
    """Polar factor ``X (X^T X)^{-1/2}``: the closest orthonormal matrix to X."""
    s, V = np.linalg.eigh(X.T @ X)
    if s[0] <= 0:
        raise ValueError("cannot orthonormalise: the columns are linearly dependent")
    return X @ ((V / np.sqrt(s)) @ V.T)


def _check_positive(name: str, value: float, upper: float | None = None) -> float:
    value = float(value)
    if not np.isfinite(value) or value <= 0 or (upper is not None and value >= upper):
        bound = f" and < {upper}" if upper is not None else ""
        raise ValueError(f"{name} must be > 0{bound}, got {value!r}")
    return value


def cayley_adam(
    fun_and_grad: Callable[[np.ndarray], tuple[float, np.ndarray]],
    X0: np.ndarray,
    *,
    lr: float = 0.5,
    beta1: float = 0.9,
    beta2: float = 0.99,
    eps: float = 1e-8,
    q: float = 0.5,
    n_fixed_point: int = 5,
    tol: float = 1e-10,
    ftol: float = 0.0,
    patience: int = 10,
    max_iter: int = 100_000,
    reortho_tol: float = 1e-14,
    log_every: int = 100,
    callback: Callable[[int, np.ndarray, float], Any] | None = None,
) -> StiefelResult:
    """Minimise ``f(X)`` subject to ``X^T X = I`` with Cayley Adam (Li et al. 2019, Alg. 2).

    Parameters
    ----------
    fun_and_grad : callable
        ``fun_and_grad(X) -> (f(X), G)`` with ``G`` the Euclidean gradient (n x p).
    X0 : ndarray of shape (n, p), p <= n
        Starting point; orthonormalised first.
    lr, beta1, beta2, eps, q, n_fixed_point :
        Step size, Adam moment coefficients, Adam epsilon, step cap factor
        (``alpha <= 2 q / ||W||``), fixed-point iterations of the Cayley transform.
    tol : float
        Stop when ``||grad_R f||_F <= tol * ||G||_F`` (relative Riemannian gradient).
    ftol : float
        If > 0, also stop when ``|f_k - f_{k-1}| <= ftol * max(|f_k|, 1)`` for ``patience``
        consecutive iterations.
    max_iter : int
        Safety cap on the number of iterations (``converged`` is False when it is hit).
    reortho_tol : float
        Re-orthonormalise (polar factor) when ``max |X^T X - I|`` exceeds it.
    log_every : int
        Record ``(k, f, grad)`` in ``history`` every ``log_every`` iterations.
    callback : callable, optional
        ``callback(k, X, f)`` after each iteration; returning True stops.

    Returns
    -------
    StiefelResult
    """
    lr = _check_positive("lr", lr)
    beta1 = float(beta1)
    beta2 = float(beta2)
    if not (0 <= beta1 < 1 and 0 <= beta2 < 1):
        raise ValueError(f"beta1 and beta2 must be in [0, 1), got {beta1}, {beta2}")
    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter}")
    if int(n_fixed_point) < 1:
        raise ValueError(f"n_fixed_point must be >= 1, got {n_fixed_point}")
    if tol < 0 or ftol < 0:
        raise ValueError(f"tol and ftol must be >= 0, got {tol}, {ftol}")
    X = np.array(X0, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] > X.shape[0]:
        raise ValueError(f"X0 must be n x p with p <= n, got shape {X.shape}")
    X = orthonormalize(X)
    p = X.shape[1]
    eye = np.eye(p)
    M = np.zeros_like(X)
    v = 1.0
    history: list = []
    f, G = fun_and_grad(X)
    rel = np.inf
    small = 0
    converged = False
    k = 0
    for k in range(1, int(max_iter) + 1):
        gnorm = np.linalg.norm(G)
        rel = np.linalg.norm(riemannian_gradient(X, G)) / max(gnorm, np.finfo(float).tiny)
        if not np.isfinite(f) or not np.isfinite(rel):
            raise ValueError(
                f"Stiefel optimisation diverged at iteration {k} (objective {f!r}); "
                "lower lr"
            )
        if (k - 1) % log_every == 0:
            history.append((k - 1, float(f), float(rel)))
        if rel <= tol:
            converged = True
            k -= 1
            break
        M = beta1 * M + (1.0 - beta1) * G
        v = beta2 * v + (1.0 - beta2) * gnorm**2
        r = (1.0 - beta1**k) * np.sqrt(v / (1.0 - beta2**k) + eps)
        XtM = X.T @ M
        P = M - 0.5 * X @ XtM                    # What = P X^T
        PtX = P.T @ X
        w2 = max(2.0 * (np.sum(P * P) - np.sum(PtX * PtX.T)), 0.0) / r**2
        wnorm = np.sqrt(w2)

        def W_times(Z: np.ndarray, P=P, r=r, X=X) -> np.ndarray:
            return (P @ (X.T @ Z) - X @ (P.T @ Z)) / r

        M = r * W_times(X)                       # tangent momentum (in gradient units)
        alpha = min(lr, 2.0 * q / (wnorm + eps))
        Y = X - alpha * M
        for _ in range(int(n_fixed_point)):
            Y = X - 0.5 * alpha * W_times(X + Y)
        X = Y
        if np.abs(X.T @ X - eye).max() > reortho_tol:
            X = orthonormalize(X)
        f_new, G = fun_and_grad(X)
        if ftol > 0:
            small = small + 1 if abs(f_new - f) <= ftol * max(abs(f_new), 1.0) else 0
        f = f_new
        if callback is not None and callback(k, X, f):
            break
        if ftol > 0 and small >= patience:
            converged = True
            break
    history.append((k, float(f), float(rel)))
    return StiefelResult(X=X, fun=float(f), n_iter=k, converged=converged,
                         grad_norm=float(rel), history=history)


def stiefel_trace_max(
    A: np.ndarray,
    n_components: int,
    random_state: Any = None,
    X0: np.ndarray | None = None,
    **kwargs: Any,
) -> StiefelResult:
    """Top invariant subspace of a symmetric PSD ``A`` by Cayley Adam (eq. 8 / 12).

    Minimises ``-1/2 Tr(X^T A X)`` over ``X^T X = I`` (n x ``n_components``). Any
    maximiser spans the top eigenspace; ``X^T A X`` is then the (generally non-diagonal)
    Lagrange multiplier Sigma (Corollary 3.4). The start is a seeded Gaussian matrix
    (orthonormalised) unless ``X0`` is given. ``kwargs`` go to :func:`cayley_adam`.
    """
    A = np.asarray(A, dtype=np.float64)
    n = A.shape[0]
    if A.ndim != 2 or A.shape[1] != n:
        raise ValueError(f"A must be square, got shape {A.shape}")
    if not 1 <= n_components <= n:
        raise ValueError(f"n_components must be in [1, {n}], got {n_components}")
    if X0 is None:
        X0 = check_random_state(random_state).standard_normal((n, n_components))

    def fun_and_grad(X: np.ndarray) -> tuple[float, np.ndarray]:
        AX = A @ X
        return -0.5 * float(np.sum(X * AX)), -AX

    return cayley_adam(fun_and_grad, X0, **kwargs)

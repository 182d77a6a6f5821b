"""Optimisation on the Stiefel manifold: Cayley Adam and a block Riemannian CG (LOBPCG).

Two optimisers for the RKM trace problems (eq. 8 and eq. 12):

* :func:`lobpcg_trace_max` (default of the RKM classes): a Riemannian conjugate-gradient
  method whose line search is exact, done by a Rayleigh-Ritz step on
  ``span[X, grad, previous direction]`` (Knyazev's LOBPCG seen as CG on the Stiefel /
  Grassmann manifold); converges in tens of iterations where Cayley Adam needs thousands.
* :func:`cayley_adam`: the paper's optimiser, described next.

Cayley Adam:

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

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from ._linalg import robust_eigh, sym
from ._threads import serial_blas

#: optimisers of :func:`stiefel_trace_max`
STIEFEL_OPTIMIZERS = ("lobpcg", "cayley-adam")

__all__ = [
    "StiefelResult",
    "STIEFEL_OPTIMIZERS",
    "lobpcg_trace_max",
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
    seconds, cpu_seconds : float
        Wall-clock and process CPU time of the optimisation (set by
        :func:`stiefel_trace_max`).
    """

    X: np.ndarray
    fun: float
    n_iter: int
    converged: bool
    grad_norm: float
    history: list = field(default_factory=list)
    seconds: float = 0.0
    cpu_seconds: float = 0.0


def riemannian_gradient(X: np.ndarray, G: np.ndarray) -> np.ndarray:
    """Projection of the Euclidean gradient onto the tangent space: ``G - X sym(X^T G)``.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Point of the Stiefel manifold.
    G : ndarray of shape (n, p)
        Euclidean gradient at ``X``.

    Returns
    -------
    ndarray of shape (n, p)
    """
    XtG = X.T @ G
    return G - X @ sym(XtG)


def orthonormalize(X: np.ndarray) -> np.ndarray:
    """Polar factor ``X (X^T X)^{-1/2}``: the closest orthonormal matrix to X.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Full column rank.

    Returns
    -------
    ndarray of shape (n, p)
    """
    s, V = np.linalg.eigh(X.T @ X)
    if s[0] <= 0:
        raise ValueError("cannot orthonormalise: the columns are linearly dependent")
    return X @ ((V / np.sqrt(s)) @ V.T)


def _start_point(X0: Any) -> np.ndarray:
    """The starting point ``X0`` as a float64 copy of shape (n, p) with ``p <= n``."""
    X = np.array(X0, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] > X.shape[0]:
        raise ValueError(f"X0 must be n x p with p <= n, got shape {X.shape}")
    return X


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
    verbose: int = 0,
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
    patience : int
        Consecutive iterations of the ``ftol`` rule.
    max_iter : int
        Safety cap on the number of iterations (``converged`` is False when it is hit).
    reortho_tol : float
        Re-orthonormalise (polar factor) when ``max |X^T X - I|`` exceeds it.
    log_every : int
        Record ``(k, f, grad)`` in ``history`` every ``log_every`` iterations.
    callback : callable, optional
        ``callback(k, X, f)`` after each iteration; returning True stops.
    verbose : int
        If > 0, print ``(iteration, objective, relative Riemannian gradient)`` every
        ``log_every`` iterations.

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
    X = _start_point(X0)
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
                f"Stiefel optimisation diverged at iteration {k} (objective {f!r}); lower lr"
            )
        if (k - 1) % log_every == 0:
            history.append((k - 1, float(f), float(rel)))
            if verbose:
                _report("cayley-adam", k - 1, f, rel)
        if rel <= tol:
            converged = True
            k -= 1
            break
        M = beta1 * M + (1.0 - beta1) * G
        v = beta2 * v + (1.0 - beta2) * gnorm**2
        r = (1.0 - beta1**k) * np.sqrt(v / (1.0 - beta2**k) + eps)
        XtM = X.T @ M
        P = M - 0.5 * X @ XtM  # What = P X^T
        PtX = P.T @ X
        w2 = max(2.0 * (np.sum(P * P) - np.sum(PtX * PtX.T)), 0.0) / r**2
        wnorm = np.sqrt(w2)

        def W_times(
            Z: np.ndarray, P: np.ndarray = P, r: float = r, X: np.ndarray = X
        ) -> np.ndarray:
            return (P @ (X.T @ Z) - X @ (P.T @ Z)) / r

        M = r * W_times(X)  # tangent momentum (in gradient units)
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
    if verbose:
        _report("cayley-adam", k, f, rel, done=converged)
    return StiefelResult(
        X=X, fun=float(f), n_iter=k, converged=converged, grad_norm=float(rel), history=history
    )


def _report(name: str, k: int, f: float, rel: float, done: bool | None = None) -> None:
    tail = "" if done is None else ("  (converged)" if done else "  (stopped, not converged)")
    print(
        f"[stiefel {name}] iteration {k:6d}  objective {f: .12e}  "
        f"rel. Riemannian gradient {rel:.3e}{tail}",
        flush=True,
    )


def _orth_complement_basis(X: np.ndarray, W: np.ndarray, drop: float = 1e-7) -> np.ndarray:
    """Orthonormal basis of the part of ``range(W)`` orthogonal to the orthonormal ``X``.

    Two passes of block Gram-Schmidt against X, then the columns are normalised and
    orthonormalised through the eigendecomposition of their Gram matrix (directions with
    singular value below ``drop`` are dropped: nearly dependent, they carry no new
    information), and a Cholesky-QR pass restores orthonormality to working precision.
    """
    for _ in range(2):
        W = W - X @ (X.T @ W)
    nrm = np.linalg.norm(W, axis=0)
    top = float(nrm.max()) if nrm.size else 0.0
    keep = nrm > 1e-14 * max(top, np.finfo(float).tiny)
    if not top > 0 or not keep.any():
        return W[:, :0]
    W = W[:, keep] / nrm[keep]
    mu, V = robust_eigh(W.T @ W, what="Gram matrix of the search directions")
    k = mu > drop**2 * mu[-1]
    Z = W @ (V[:, k] / np.sqrt(mu[k]))
    for _ in range(2):  # re-orthogonalise: X, then Cholesky-QR
        Z = Z - X @ (X.T @ Z)
        G = sym(Z.T @ Z)
        try:
            L = np.linalg.cholesky(G)
        except np.linalg.LinAlgError:
            mu, V = robust_eigh(G, what="Gram matrix of the search directions")
            k = mu > drop**2 * mu[-1]
            Z = Z @ (V[:, k] / np.sqrt(mu[k]))
            continue
        Z = np.linalg.solve(L, Z.T).T
    return Z


def lobpcg_trace_max(
    apply_A: Callable[[np.ndarray], np.ndarray],
    X0: np.ndarray,
    n_components: int,
    *,
    tol: float = 1e-12,
    max_iter: int = 1000,
    callback: Callable[[int, np.ndarray, float], Any] | None = None,
    verbose: int = 0,
) -> StiefelResult:
    """Maximise ``Tr(X^T A X)`` over ``X^T X = I_s`` by block Riemannian CG (LOBPCG).

    Minimises ``f(X) = -1/2 Tr(X^T A X)`` (eq. 8 / eq. 12) for a symmetric PSD ``A`` given
    only through products ``apply_A(Z) = A Z``. Each iteration is one Riemannian CG step
    with an exact line search (Knyazev 2001; Absil, Mahony & Sepulchre 2008, Sec. 4.6):

    1. ``R = A X - X (X^T A X)``: minus the Riemannian gradient of ``f`` at ``X``
       (``X`` holds Ritz vectors, so ``X^T A X = diag(theta)``);
    2. ``Z``: an orthonormal basis of ``[R, P]`` orthogonal to ``X`` (``P``: the previous
       step, the conjugate direction);
    3. Rayleigh-Ritz on ``S = [X, Z]``: the top ``b`` eigenpairs ``(theta, Y)`` of
       ``S^T A S`` give ``X <- S Y`` (the best point of the subspace, so the "line search"
       is exact and ``f`` never increases) and ``P <- Z Y_Z``.

    ``X0`` may carry more columns than ``n_components``: the extra *guard* columns are
    iterated along and make convergence depend on the gap to eigenvalue ``b + 1``
    instead of ``s + 1`` (SantaFe: lambda_144 / lambda_145 = 1.001). The result keeps the
    top ``n_components`` Ritz vectors.

    Stopping rule: relative Riemannian gradient of the kept columns
    ``||R_s||_F / ||A X_s||_F <= tol`` (the quantity :func:`cayley_adam` tests).

    Parameters
    ----------
    apply_A : callable
        ``apply_A(Z) -> A @ Z`` for ``Z`` of shape (n, k).
    X0 : ndarray of shape (n, b), ``n_components <= b <= n``
        Starting block; orthonormalised first.
    n_components : int
    tol : float
    max_iter : int
    callback : callable, optional
        ``callback(k, X, f)`` after each iteration; returning True stops.
    verbose : int
        If > 0, print ``(iteration, objective, relative Riemannian gradient)`` every
        iteration.

    Returns
    -------
    StiefelResult
        ``X`` (n, n_components): Ritz vectors in descending Ritz value order, so
        ``X^T A X`` is diagonal to rounding.
    """
    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter}")
    if not tol >= 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    X = _start_point(X0)
    s = int(n_components)
    b = X.shape[1]
    if not 1 <= s <= b:
        raise ValueError(f"n_components must be in [1, {b}], got {n_components}")
    X = orthonormalize(X)

    def ritz(S: np.ndarray, AS: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        T = S.T @ AS
        m = T.shape[0]
        theta, Y = robust_eigh(
            T, subset_by_index=(m - b, m - 1), what="Rayleigh-Ritz matrix S^T A S"
        )
        return theta[::-1], Y[:, ::-1]

    AX = apply_A(X)
    theta, Y = ritz(X, AX)
    X, AX = X @ Y, AX @ Y
    P: np.ndarray | None = None
    history: list = []
    converged = False
    f = rel = np.nan
    k = 0
    while True:
        R = AX - X * theta
        f = -0.5 * float(np.sum(theta[:s]))
        rel = float(np.linalg.norm(R[:, :s]) / max(np.linalg.norm(AX[:, :s]), np.finfo(float).tiny))
        if not (np.isfinite(f) and np.isfinite(rel)):
            raise ValueError(
                f"Stiefel optimisation produced a non-finite value at iteration "
                f"{k} (objective {f!r}); is the matrix finite?"
            )
        history.append((k, f, rel))
        if verbose:
            _report("lobpcg", k, f, rel)
        if rel <= tol:
            converged = True
            break
        if k >= int(max_iter):
            break
        if callback is not None and k > 0 and callback(k, X[:, :s], f):
            break
        k += 1
        # soft locking: columns whose residual is far below the tolerance stop searching
        # (they are still improved by every Rayleigh-Ritz step); saves products late on
        lock = 0.01 * tol * np.linalg.norm(AX[:, :s]) / np.sqrt(s)
        active = np.linalg.norm(R, axis=0) > lock
        W = R[:, active] if P is None else np.hstack([R[:, active], P[:, active]])
        Z = _orth_complement_basis(X, W)
        if Z.shape[1] == 0:  # range(X) is invariant: exact
            converged = True
            break
        AZ = apply_A(Z)
        theta, Y = ritz(np.hstack([X, Z]), np.hstack([AX, AZ]))
        P = Z @ Y[b:]
        X = X @ Y[:b] + P
        AX = AX @ Y[:b] + AZ @ Y[b:]
    if verbose:
        _report("lobpcg", k, f, rel, done=converged)
    return StiefelResult(
        X=X[:, :s], fun=f, n_iter=k, converged=converged, grad_norm=rel, history=history
    )


def stiefel_trace_max(
    A: Any,
    n_components: int,
    random_state: Any = None,
    X0: np.ndarray | None = None,
    *,
    optimizer: str = "lobpcg",
    n: int | None = None,
    n_guard: int | None = None,
    **kwargs: Any,
) -> StiefelResult:
    """Top invariant subspace of a symmetric PSD ``A`` on the Stiefel manifold (eq. 8 / 12).

    Minimises ``-1/2 Tr(X^T A X)`` over ``X^T X = I`` (n x ``n_components``). Any
    maximiser spans the top eigenspace; ``X^T A X`` is then the Lagrange multiplier Sigma
    (Corollary 3.4), diagonal for ``"lobpcg"`` (Ritz vectors), generally not for
    ``"cayley-adam"``.

    Parameters
    ----------
    A : ndarray (n, n) or callable
        The matrix, or ``A(Z) -> A @ Z`` (then ``n`` is required): e.g. ``C Z`` computed as
        ``Phi^T (Phi Z)`` or by a pass over feature chunks.
    n_components : int
    random_state : int, RandomState or None
        Seeds the Gaussian start (orthonormalised) unless ``X0`` is given.
    X0 : ndarray (n, n_components), optional
    optimizer : {"lobpcg", "cayley-adam"}
        :func:`lobpcg_trace_max` (block Riemannian CG) or :func:`cayley_adam` (the paper's).
    n : int, optional
        Size of ``A`` when it is a callable.
    n_guard : int or None
        ``"lobpcg"`` only: extra columns iterated along (default
        ``min(n - s, max(8, s // 8))``).
    **kwargs
        Passed to the optimiser (``tol``, ``max_iter``, ``verbose``, ``lr``, ...).
    """
    if optimizer not in STIEFEL_OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; use one of {STIEFEL_OPTIMIZERS}")
    if callable(A) and not isinstance(A, np.ndarray):
        if n is None:
            raise ValueError("n (the size of A) is required when A is a callable")
        apply_A = A
        n = int(n)
    else:
        M = np.asarray(A, dtype=np.float64)
        if M.ndim != 2 or M.shape[0] != M.shape[1]:
            raise ValueError(f"A must be square, got shape {M.shape}")
        n = M.shape[0]

        def apply_A(Z: np.ndarray) -> np.ndarray:
            return M @ Z

    s = int(n_components)
    if not 1 <= s <= n:
        raise ValueError(f"n_components must be in [1, {n}], got {n_components}")
    rng = check_random_state(random_state)
    if X0 is None:
        X0 = rng.standard_normal((n, s))
    start, cpu = time.perf_counter(), time.process_time()
    with serial_blas(n):  # threaded BLAS on small blocks is slower on shared cores
        res = _run_optimizer(apply_A, X0, s, n, rng, optimizer, n_guard, kwargs)
    res.seconds = time.perf_counter() - start
    res.cpu_seconds = time.process_time() - cpu
    return res


def _run_optimizer(
    apply_A: Callable[[np.ndarray], np.ndarray],
    X0: np.ndarray,
    s: int,
    n: int,
    rng: np.random.RandomState,
    optimizer: str,
    n_guard: int | None,
    kwargs: dict,
) -> StiefelResult:
    if optimizer == "cayley-adam":

        def fun_and_grad(X: np.ndarray) -> tuple[float, np.ndarray]:
            AX = apply_A(X)
            return -0.5 * float(np.sum(X * AX)), -AX

        res = cayley_adam(fun_and_grad, X0, **kwargs)
    else:
        g = min(n - s, max(8, s // 8)) if n_guard is None else int(n_guard)
        if not 0 <= g <= n - s:
            raise ValueError(f"n_guard must be in [0, {n - s}], got {n_guard}")
        X0 = np.asarray(X0, dtype=np.float64)
        if g:
            X0 = np.hstack([X0, rng.standard_normal((n, g))])
        res = lobpcg_trace_max(apply_A, X0, s, **kwargs)
    return res

"""Reference solvers for the MVML-SVM g-step, kept for the tests and the benchmark only.

These are the pure-Python dual coordinate descent solvers (Hsieh et al. 2008) that
:mod:`mvkernels.mvml._hinge` used before the g-step moved to scikit-learn's liblinear:
:func:`linear_svm_dual_cd` (features), :func:`kernel_svm_dual_cd` (precomputed Gram
matrix), :func:`reference_hinge_gstep` (the g-step on top of them, with warm starts) and
:func:`hinge_dual` with a free constant (``0.5`` is the constant printed in eq. 7 of the
paper, tested to leave a duality gap). :class:`ReferenceMVMLSVC` is
:class:`~mvkernels.MVMLSVC` with this g-step and the dense reference A-step, i.e. the
estimator as it was before the compiled solver (for side-by-side comparisons).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from mvkernels import MVMLSVC
from mvkernels._linalg import robust_eigh
from mvkernels.mvml._hinge import dual_from_primal, linear_svm, svm_c_prime
from mvkernels.mvml._hinge_loss import HingeLoss


@dataclass
class DualCDResult:
    """Result of a dual coordinate descent run.

    Attributes
    ----------
    dual_coef : ndarray of shape (n_samples, n_problems)
        Standard-SVM multipliers ``a`` in ``[0, C']``; the paper's ``alpha = 2 lambda a``.
    coef : ndarray of shape (n_problems, n_features) or None
        ``v = sum_i a_i y_i x_i`` (linear solver only).
    n_epochs : int
        Epochs run (passes over the active coordinates).
    converged : bool
        Whether the largest projected-gradient violation fell below ``tol``.
    max_violation : float
        Largest projected-gradient violation ``max_i |PG_i|`` at the last full check.
    """

    dual_coef: np.ndarray
    coef: np.ndarray | None
    n_epochs: int
    converged: bool
    max_violation: float


def _check_problems(Y: np.ndarray, n: int) -> np.ndarray:
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2 or Y.shape[0] != n:
        raise ValueError(f"Y must have shape (n,) or (n, K) with n={n}, got {Y.shape}")
    if not np.all(np.abs(Y) == 1.0):
        raise ValueError("labels must be -1 or +1")
    return Y


def _box(C: Any, K: int) -> np.ndarray:
    Cb = np.broadcast_to(np.asarray(C, dtype=np.float64), (K,)).copy()
    if not np.all(Cb > 0) or not np.all(np.isfinite(Cb)):
        raise ValueError(f"C must be positive and finite, got {C!r}")
    return Cb


def _coordinate_descent(
    n: int,
    K: int,
    Y: np.ndarray,
    Cb: np.ndarray,
    a: np.ndarray,
    diag: np.ndarray,
    grad_fn: Callable[[int], np.ndarray],
    update_fn: Callable[[int, np.ndarray], None],
    tol: float,
    max_epochs: int,
    shrinking: bool,
    rng: np.random.RandomState,
) -> tuple[int, bool, float]:
    """Shared Hsieh et al. (2008) loop; ``grad_fn(i) -> G_i (K,)``, ``update_fn(i, delta)``.

    Minimises ``1/2 a^T Q a - sum a`` over ``0 <= a <= C`` for each problem. ``diag`` is
    ``Q_ii`` of shape (n, K). Shrinking (optional) removes coordinate i while it sits at a
    bound with a gradient pushing outwards beyond last epoch's extreme projected
    gradients, for every problem at once; the active set is reset before stopping.
    """
    active = np.arange(n)
    inf = np.inf
    pg_max_old = np.full(K, inf)
    pg_min_old = np.full(K, -inf)
    violation = inf
    epoch = 0
    at_zero_tol = 0.0
    while epoch < max_epochs:
        epoch += 1
        order = active[rng.permutation(active.size)]
        pg_max = np.full(K, -inf)
        pg_min = np.full(K, inf)
        keep = np.ones(active.size, dtype=bool)
        pos = {int(i): j for j, i in enumerate(order)} if shrinking else None
        for i in order:
            G = grad_fn(i)
            ai = a[i]
            lo = ai <= at_zero_tol
            hi = ai >= Cb
            PG = np.where(lo, np.minimum(G, 0.0), np.where(hi, np.maximum(G, 0.0), G))
            if shrinking:
                shrink = (lo & (G > pg_max_old)) | (hi & (G < pg_min_old))
                if shrink.all():
                    keep[pos[int(i)]] = False
                    continue
            np.maximum(pg_max, PG, out=pg_max)
            np.minimum(pg_min, PG, out=pg_min)
            if not np.any(PG != 0.0):
                continue
            qii = diag[i]
            new = np.where(
                qii > 0,
                np.clip(ai - G / np.where(qii > 0, qii, 1.0), 0.0, Cb),
                np.where(G < 0, Cb, 0.0),
            )
            delta = new - ai
            if np.any(delta != 0.0):
                a[i] = new
                update_fn(i, delta * Y[i])
        violation = float(max(np.max(pg_max), -np.min(pg_min), 0.0))
        if shrinking:
            active = np.sort(order[keep])
        if violation <= tol:
            if active.size == n:
                return epoch, True, violation
            # converged on the shrunk problem: re-check every coordinate
            active = np.arange(n)
            pg_max_old = np.full(K, inf)
            pg_min_old = np.full(K, -inf)
            continue
        pg_max_old = np.where(pg_max > 0, pg_max, inf)
        pg_min_old = np.where(pg_min < 0, pg_min, -inf)
    return epoch, False, violation


def _cd_single(
    X: np.ndarray,
    y: np.ndarray,
    C: float,
    a: np.ndarray,
    tol: float,
    max_epochs: int,
    shrinking: bool,
    rng: np.random.RandomState,
) -> tuple[np.ndarray, int, bool, float]:
    """One problem, shared features: the same algorithm as :func:`_coordinate_descent`
    with scalar Python arithmetic and BLAS ``ddot``/``daxpy`` on the rows (about 1 us
    per coordinate instead of ~10 us of NumPy call overhead). Returns ``v``."""
    from scipy.linalg.blas import daxpy, ddot

    n = X.shape[0]
    rows = list(X)
    yl = y.tolist()
    al = a.tolist()
    ql = np.einsum("id,id->i", X, X).tolist()
    v = np.ascontiguousarray((a * y) @ X)
    inf = float("inf")
    pg_max_old, pg_min_old = inf, -inf
    active = list(range(n))
    violation = inf
    epoch = 0
    while epoch < max_epochs:
        epoch += 1
        perm = rng.permutation(len(active))
        order = [active[j] for j in perm]
        pg_max, pg_min = -inf, inf
        kept = []
        for i in order:
            yi = yl[i]
            G = yi * ddot(rows[i], v) - 1.0
            ai = al[i]
            if ai <= 0.0:
                if shrinking and G > pg_max_old:
                    continue
                PG = G if G < 0.0 else 0.0
            elif ai >= C:
                if shrinking and G < pg_min_old:
                    continue
                PG = G if G > 0.0 else 0.0
            else:
                PG = G
            kept.append(i)
            if PG > pg_max:
                pg_max = PG
            if PG < pg_min:
                pg_min = PG
            if PG != 0.0:
                qii = ql[i]
                if qii > 0.0:
                    new = ai - G / qii
                    new = 0.0 if new < 0.0 else (C if new > C else new)
                else:
                    new = C if G < 0.0 else 0.0
                delta = new - ai
                if delta != 0.0:
                    al[i] = new
                    v = daxpy(rows[i], v, a=delta * yi)
        violation = max(pg_max, -pg_min, 0.0)
        if shrinking:
            active = sorted(kept)
        if violation <= tol:
            if len(active) == n:
                return np.asarray(al), epoch, True, violation
            active = list(range(n))
            pg_max_old, pg_min_old = inf, -inf
            continue
        pg_max_old = pg_max if pg_max > 0 else inf
        pg_min_old = pg_min if pg_min < 0 else -inf
    return np.asarray(al), epoch, False, violation


def linear_svm_dual_cd(
    X: np.ndarray,
    Y: np.ndarray,
    C: float | np.ndarray,
    *,
    tol: float = 1e-4,
    max_epochs: int = 1000,
    shrinking: bool = True,
    dual_coef_init: np.ndarray | None = None,
    random_state: Any = None,
) -> DualCDResult:
    """Bias-free L1-loss linear SVM(s) by dual coordinate descent (Hsieh et al. 2008).

    Solves, for each problem ``k``,

        min_v 1/2 ||v||^2 + C_k sum_i max(0, 1 - Y_ik <x_ik, v>)

    through its dual ``min_a 1/2 a^T Q a - sum a``, ``0 <= a <= C_k``,
    ``Q_ij = Y_ik Y_jk <x_ik, x_jk>``, keeping ``v = sum_i a_i Y_ik x_ik`` up to date so
    that each coordinate costs O(d): an epoch is O(n d K), no n x n matrix is formed.
    This is the MVML-SVM g-step (eq. 7-8) on ``x_i = F^T z_i`` with ``C_k = C / (2 lambda)``
    (see the module docstring and :func:`svm_c_prime`).

    Parameters
    ----------
    X : ndarray of shape (n, d) or (n, K, d)
        Features shared by every problem, or one feature vector per sample and problem.
    Y : ndarray of shape (n,) or (n, K)
        Labels in {-1, +1}.
    C : float or ndarray of shape (K,)
        Box bound of each problem (> 0).
    tol : float
        Stop when every projected gradient is at most ``tol`` in absolute value (the
        KKT conditions of the dual to ``tol``; gradients are margins minus 1).
    max_epochs : int
    shrinking : bool
        Hsieh et al.'s shrinking heuristic (same solution, fewer coordinate visits).
    dual_coef_init : ndarray of shape (n, K), optional
        Warm start (clipped to the box); used across MVML-SVM outer iterations.
    random_state : int, RandomState or None
        Seeds the coordinate order.

    Returns
    -------
    DualCDResult
        ``dual_coef`` (n, K) and ``coef`` ``v`` (K, d).
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim not in (2, 3):
        raise ValueError(f"X must be 2-D (n, d) or 3-D (n, K, d), got shape {X.shape}")
    n = X.shape[0]
    Y = _check_problems(Y, n)
    K = Y.shape[1]
    shared = X.ndim == 2
    if not shared and X.shape[1] != K:
        raise ValueError(f"X has {X.shape[1]} problems but Y has {K}")
    Cb = _box(C, K)
    rng = check_random_state(random_state)
    X = np.ascontiguousarray(X)
    if shared:
        diag = np.repeat(np.einsum("id,id->i", X, X)[:, None], K, axis=1)
    else:
        diag = np.einsum("ikd,ikd->ik", X, X)
    if dual_coef_init is None:
        a = np.zeros((n, K))
    else:
        a = np.clip(np.asarray(dual_coef_init, dtype=np.float64).reshape(n, K), 0.0, Cb)
    if shared and K == 1 and X.shape[1] > 0:
        a1, n_epochs, converged, viol = _cd_single(
            X, Y[:, 0], float(Cb[0]), a[:, 0], tol, max_epochs, shrinking, rng
        )
        a = a1[:, None]
        return DualCDResult(a, (a * Y).T @ X, n_epochs, converged, viol)
    AY = a * Y
    if shared:
        V = AY.T @ X
    else:
        V = np.einsum("ik,ikd->kd", AY, X)

    if shared:

        def grad_fn(i):
            return Y[i] * (V @ X[i]) - 1.0

        def update_fn(i, step):
            V[:] += step[:, None] * X[i]
    else:

        def grad_fn(i):
            return Y[i] * np.einsum("kd,kd->k", V, X[i]) - 1.0

        def update_fn(i, step):
            V[:] += step[:, None] * X[i]

    n_epochs, converged, viol = _coordinate_descent(
        n, K, Y, Cb, a, diag, grad_fn, update_fn, tol, max_epochs, shrinking, rng
    )
    # recompute v from a to remove the drift of incremental updates
    AY = a * Y
    V = AY.T @ X if shared else np.einsum("ik,ikd->kd", AY, X)
    return DualCDResult(a, V, n_epochs, converged, viol)


def kernel_svm_dual_cd(
    Q: np.ndarray,
    Y: np.ndarray,
    C: float | np.ndarray,
    *,
    tol: float = 1e-4,
    max_epochs: int = 1000,
    shrinking: bool = True,
    dual_coef_init: np.ndarray | None = None,
    random_state: Any = None,
) -> DualCDResult:
    """Full-kernel variant of :func:`linear_svm_dual_cd` on a precomputed Gram matrix.

    ``Q`` is the n x n Gram matrix ``<x_i, x_j>`` of the problem features, i.e. for
    MVML-SVM with full kernels ``W H A H W^T`` (``(n, n)`` shared or ``(K, n, n)``, one
    per problem). The gradient ``G = Y * (Q (a * Y)) - 1`` is kept up to date at O(n K)
    per coordinate. Returns ``dual_coef`` (n, K) and ``coef=None``.
    """
    Q = np.asarray(Q, dtype=np.float64)
    if Q.ndim == 2:
        Q = Q[None]
    if Q.ndim != 3 or Q.shape[1] != Q.shape[2]:
        raise ValueError(f"Q must have shape (n, n) or (K, n, n), got {Q.shape}")
    n = Q.shape[1]
    Y = _check_problems(Y, n)
    K = Y.shape[1]
    if Q.shape[0] not in (1, K):
        raise ValueError(f"Q has {Q.shape[0]} problems but Y has {K}")
    Q = np.ascontiguousarray(np.broadcast_to(Q, (K, n, n)).transpose(1, 0, 2))  # (n, K, n)
    Cb = _box(C, K)
    rng = check_random_state(random_state)
    diag = np.ascontiguousarray(np.einsum("iki->ik", Q))
    if dual_coef_init is None:
        a = np.zeros((n, K))
    else:
        a = np.clip(np.asarray(dual_coef_init, dtype=np.float64).reshape(n, K), 0.0, Cb)
    # R[k, j] = sum_i a_ik Y_ik Q_k[i, j]
    R = np.einsum("ik,ikj->kj", a * Y, Q)

    def grad_fn(i):
        return Y[i] * R[:, i] - 1.0

    def update_fn(i, step):
        R[:] += step[:, None] * Q[i]

    n_epochs, converged, viol = _coordinate_descent(
        n, K, Y, Cb, a, diag, grad_fn, update_fn, tol, max_epochs, shrinking, rng
    )
    return DualCDResult(a, None, n_epochs, converged, viol)


def hinge_dual(alpha: np.ndarray, Qy: np.ndarray, lam: float, *, constant: float = 0.25) -> float:
    """Dual objective of the g-step, ``sum alpha - constant/lambda alpha^T Qy alpha``.

    ``Qy_ij = y_i y_j phi_i^T A phi_j``. ``constant=0.25`` is the correct dual of
    ``C sum hinge + lambda <g, A^+ g>`` (see the module docstring); ``0.5`` is the constant
    printed in eq. 7 of the paper. For tests and diagnostics on small problems only (it
    takes the n x n matrix).
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    return float(alpha.sum() - constant / lam * alpha @ Qy @ alpha)


@dataclass
class ReferenceGStepResult:
    """MVML-SVM g-step (eq. 7-8) for one or several problems.

    Attributes
    ----------
    coef : ndarray of shape (K, D)
        ``g_k = 1/(2 lambda) A_k sum_i alpha_ik y_ik phi_i`` (eq. 8).
    alpha : ndarray of shape (n, K)
        The paper's multipliers, ``0 <= alpha <= C`` (``= 2 lambda`` times the standard
        SVM multipliers).
    reg : ndarray of shape (K,)
        ``<g_k, A_k^+ g_k>`` (computed as ``||v_k||^2``, no pseudo-inverse).
    min_eig : ndarray of shape (K,)
        Smallest eigenvalue of each ``A_k`` (the g-step uses the positive part).
    solver : DualCDResult
    """

    coef: np.ndarray
    alpha: np.ndarray
    reg: np.ndarray
    min_eig: np.ndarray
    solver: DualCDResult


def reference_hinge_gstep(
    Phi: np.ndarray,
    Y: np.ndarray,
    A: np.ndarray | None,
    lam: float,
    C: float,
    *,
    factors: list[np.ndarray] | None = None,
    method: str = "linear",
    tol: float = 1e-4,
    max_epochs: int = 1000,
    shrinking: bool = True,
    alpha_init: np.ndarray | None = None,
    random_state: Any = None,
    eig_floor: float = 1e-12,
) -> ReferenceGStepResult:
    """Solve the MVML-SVM g-step (paper eq. 7-8, dual constant 1/(4 lambda)).

    Minimises ``C sum_i max(0, 1 - y_ik <phi_i, g_k>) + lambda <g_k, A_k^+ g_k>`` over
    ``g_k`` in ``range(A_k)`` for every problem ``k`` (one-vs-all classes).

    Parameters
    ----------
    Phi : ndarray of shape (n, D)
        ``phi_i``: Nystrom features ``z_i = D_w u(x_i)`` (``D = v p``), or with full
        kernels the rows of ``W H`` (``D = n v``).
    Y : ndarray of shape (n,) or (n, K)
        Labels in {-1, +1}.
    A : ndarray of shape (D, D) or (K, D, D), or None
        Metric (symmetric; indefinite parts are clipped, see :func:`psd_factor`).
    factors : list of ndarray of shape (D, r_k), optional
        Instead of ``A``: factors with ``A_k = F_k F_k^T`` (e.g. the Cholesky factor
        kept by the MVML loop); one shared or one per problem. ``min_eig`` is then NaN.
    lam : float
        ``lambda`` (> 0).
    C : float
        Weight of the hinge loss (the paper: ``1/n``).
    method : {"linear", "kernel"}
        ``"linear"``: dual CD on the features ``F_k^T phi_i`` (O(n D) per epoch, no n x n
        matrix). ``"kernel"``: dual CD on the n x n Gram matrix ``Phi A_k Phi^T``
        (full-kernel variant, for small n).
    tol, max_epochs, shrinking, random_state
        Passed to the coordinate descent.
    alpha_init : ndarray of shape (n, K), optional
        Warm start in the paper's scaling.

    Returns
    -------
    GStepResult
    """
    Phi = np.asarray(Phi, dtype=np.float64)
    n, D = Phi.shape
    Y = _check_problems(Y, n)
    K = Y.shape[1]
    Cp = svm_c_prime(C, lam)
    a0 = None if alpha_init is None else np.asarray(alpha_init, dtype=np.float64) / (2 * lam)
    if method not in ("linear", "kernel"):
        raise ValueError(f"method must be 'linear' or 'kernel', got {method!r}")
    factors, min_eig = metric_factors(A, factors, D, K, eig_floor)
    feats = [Phi @ F for F in factors]  # x_i = F_k^T phi_i, so <x_i, x_j> = phi_i^T A_k+ phi_j
    opts = dict(
        tol=tol,
        max_epochs=max_epochs,
        shrinking=shrinking,
        dual_coef_init=a0,
        random_state=random_state,
    )
    if method == "linear":
        if len(feats) == 1:
            X = feats[0]
        else:
            X = np.zeros((n, K, max(Xk.shape[1] for Xk in feats)))
            for k, Xk in enumerate(feats):
                X[:, k, : Xk.shape[1]] = Xk
        res = linear_svm_dual_cd(X, Y, Cp, **opts)
        V = [res.coef[k, : factors[min(k, len(factors) - 1)].shape[1]] for k in range(K)]
    else:
        Q = np.stack([Xk @ Xk.T for Xk in feats])
        res = kernel_svm_dual_cd(Q, Y, Cp, **opts)
        AY = res.dual_coef * Y
        V = [feats[min(k, len(feats) - 1)].T @ AY[:, k] for k in range(K)]
    G = np.empty((K, D))
    reg = np.empty(K)
    for k in range(K):
        G[k] = factors[min(k, len(factors) - 1)] @ V[k]
        reg[k] = V[k] @ V[k]
    return ReferenceGStepResult(G, 2 * lam * res.dual_coef, reg, min_eig, res)


class ReferenceHingeLoss(HingeLoss):
    """The hinge loss with the reference g-step (Python dual coordinate descent,
    warm-started across outer iterations) and never the structured path: the dense
    reference A-step runs, as the estimator did before the compiled solver."""

    def structured_applies(self, problem):
        return False

    def g_step(self, problem, t, factor, w, state):
        y = problem.Y[:, t]
        Phi = self.phi(problem, w)
        C = self.hinge_weight(problem)
        g_old = state.g
        ref = None
        if g_old is not None:
            ref = self.data_loss(problem, t, g_old, w) + self.alpha * factor.quad(g_old)
        tol = float(self.svm_tol)
        if state.rng is None:
            seed = int(self.random_state) if isinstance(self.random_state, Integral) else 0
            state.rng = np.random.RandomState((seed * 1009 + t) % (2**32))
        while True:
            res = reference_hinge_gstep(
                Phi,
                y,
                None,
                self.alpha,
                C,
                factors=[factor.F],
                tol=tol,
                max_epochs=int(self.svm_max_epochs),
                alpha_init=state.dual,
                random_state=state.rng,
            )
            state.dual = res.alpha
            state.epochs += res.solver.n_epochs
            g = res.coef[0]
            if ref is None or tol <= 1e-8:
                break
            new = self.data_loss(problem, t, g, w) + self.alpha * float(res.reg[0])
            if new <= ref + 1e-12 * abs(ref):
                break
            tol *= 0.1
        state.g = g
        state.converged = res.solver.converged
        return g


class ReferenceMVMLSVC(MVMLSVC):
    """MVMLSVC with the reference hinge loss (:class:`ReferenceHingeLoss`): the estimator
    as it was before the compiled solver."""

    def _make_loss(self):
        return ReferenceHingeLoss(self)


def final_dual_objectives(est, Xs, y):
    """The paper's dual (eq. 7, constant 1/(4 lambda)) of a fitted MVMLSVC's final g-step
    at its ``dual_coef_``, one value per one-vs-all problem (takes n x n matrices)."""
    if est.mode_ == "nystrom":
        U = est.nystrom_.transform(Xs)

        def phi(t):
            return U * np.repeat(est._weights[t], est.n_landmarks_)
    else:
        Ks = [k(X, X) for k, X in zip(est.kernels_, Xs)]

        def phi(t):
            return np.hstack([wl * K for wl, K in zip(est._weights[t], Ks)])

    Y = MVMLSVC._encode_targets(np.searchsorted(est.classes_, y), len(est.classes_))
    alpha = est.dual_coef_.reshape(len(y), -1)
    metrics = est.metric_
    if metrics.ndim == 2:  # one problem (two classes)
        metrics = metrics[None]
    out = []
    for t in range(Y.shape[1]):
        P = phi(t)
        Qy = Y[:, t, None] * Y[None, :, t] * (P @ metrics[t] @ P.T)
        out.append(hinge_dual(alpha[:, t], Qy, est.alpha))
    return np.array(out)


# ---------------------------------------------------------------------------- the g-step alone
# Test and benchmark helpers (moved from mvkernels.mvml._hinge, which the estimators do not
# need them in): the metric's factors, the primal objective and the one-shot g-step.


def psd_factor(A: np.ndarray, eig_floor: float = 1e-12) -> tuple[np.ndarray, float]:
    """Factor ``F`` with ``F F^T = A_+`` (negative eigenvalues clipped) and ``min eig(A)``.

    ``A = V diag(s) V^T`` (``eigh``); columns with ``s <= eig_floor * max(s)`` are dropped,
    so ``F`` has shape ``(d, rank)``. A learned block-sparse metric may be indefinite
    (see the MVML page): the g-step then uses its positive part, and the minimum eigenvalue is
    returned so that the caller can report it.

    Returns
    -------
    F : ndarray of shape (d, rank)
    min_eig : float
        Smallest eigenvalue of the symmetrised ``A``.
    """
    A = 0.5 * (A + A.T)
    s, V = robust_eigh(A, what="metric")
    top = s[-1] if s.size else 0.0
    if not top > 0:
        raise ValueError("the metric A has no positive eigenvalue")
    keep = s > eig_floor * top
    return V[:, keep] * np.sqrt(s[keep]), float(s[0])


def metric_factors(
    A: np.ndarray | None,
    factors: list[np.ndarray] | None,
    D: int,
    K: int,
    eig_floor: float = 1e-12,
) -> tuple[list[np.ndarray], np.ndarray]:
    """Factors ``F_k`` (``A_k = F_k F_k^T``) of one shared or ``K`` metrics of size ``D``
    from ``A`` (:func:`psd_factor`) or as given, and each metric's smallest eigenvalue
    (NaN when the factors were given)."""
    if factors is None:
        A = np.asarray(A, dtype=np.float64)
        if A.ndim == 2:
            A = A[None]
        if A.shape[1:] != (D, D) or A.shape[0] not in (1, K):
            raise ValueError(f"A must have shape ({D}, {D}) or ({K}, {D}, {D}), got {A.shape}")
        out, mins = [], []
        for Ak in A:
            F, m = psd_factor(Ak, eig_floor)
            out.append(F)
            mins.append(m)
        return out, np.broadcast_to(np.asarray(mins), (K,)).copy()
    out = [np.asarray(F, dtype=np.float64) for F in factors]
    if len(out) not in (1, K) or any(F.ndim != 2 or F.shape[0] != D for F in out):
        raise ValueError(f"factors must be 1 or {K} matrices with {D} rows")
    return out, np.full(K, np.nan)


def hinge_primal(margins: np.ndarray, reg: float, C: float) -> float:
    """``C sum_i max(0, 1 - m_i) + reg``, ``m_i = y_i f(x_i)``, ``reg = lambda <g, A^+ g>``."""
    return float(C * np.maximum(0.0, 1.0 - np.asarray(margins)).sum() + reg)


@dataclass
class GStepResult:
    """MVML-SVM g-step (eq. 7-8) for one or several problems.

    Attributes
    ----------
    coef : ndarray of shape (K, D)
        ``g_k = F_k v_k`` (``= 1/(2 lambda) A_k sum_i alpha_ik y_ik phi_i``, eq. 8).
    alpha : ndarray of shape (n, K) or None
        The paper's multipliers, ``0 <= alpha <= C`` (``2 lambda`` times the standard
        SVM multipliers), recovered by :func:`dual_from_primal` (``return_dual=True``).
    reg : ndarray of shape (K,)
        ``||v_k||^2`` (``= <g_k, A_k^+ g_k>`` at the optimum; no pseudo-inverse).
    min_eig : ndarray of shape (K,)
        Smallest eigenvalue of each ``A_k`` (NaN when factors were given).
    n_iter : ndarray of int, shape (K,)
        liblinear iterations per problem.
    converged : bool
        Whether every problem stopped on ``tol``.
    """

    coef: np.ndarray
    alpha: np.ndarray | None
    reg: np.ndarray
    min_eig: np.ndarray
    n_iter: np.ndarray
    converged: bool


def hinge_gstep(
    Phi: np.ndarray,
    Y: np.ndarray,
    A: np.ndarray | None,
    lam: float,
    C: float,
    *,
    factors: list[np.ndarray] | None = None,
    tol: float = 1e-3,
    max_iter: int = 1000,
    random_state: Any = None,
    return_dual: bool = True,
    eig_floor: float = 1e-12,
) -> GStepResult:
    """Solve the MVML-SVM g-step (paper eq. 7-8, dual constant 1/(4 lambda)).

    Minimises ``C sum_i max(0, 1 - y_ik <phi_i, g_k>) + lambda <g_k, A_k^+ g_k>`` over
    ``g_k`` in ``range(A_k)`` for every problem ``k`` (one-vs-all classes): liblinear
    (:func:`linear_svm`) on the features ``x_i = F_k^T phi_i`` with ``C' = C / (2 lambda)``.

    Parameters
    ----------
    Phi : ndarray of shape (n, D)
        ``phi_i``: Nystrom features ``z_i = D_w u(x_i)`` (``D = v p``), or with full
        kernels the rows of ``W H`` (``D = n v``).
    Y : ndarray of shape (n,) or (n, K)
        Labels in {-1, +1}.
    A : ndarray of shape (D, D) or (K, D, D), or None
        Metric (symmetric; indefinite parts are clipped, see :func:`psd_factor`).
    lam : float
        ``lambda`` (> 0).
    C : float
        Weight of the hinge loss (the paper: ``1/n``).
    factors : list of ndarray of shape (D, r_k), optional
        Instead of ``A``: factors with ``A_k = F_k F_k^T`` (one shared or one per problem).
    tol, max_iter, random_state
        Passed to :func:`linear_svm`.
    return_dual : bool
        Recover the multipliers (:func:`dual_from_primal`; an extra least-squares solve).

    Returns
    -------
    GStepResult

    Examples
    --------
    >>> import numpy as np
    >>> from _reference_svm import hinge_gstep
    >>> rng = np.random.RandomState(0)
    >>> Z = rng.randn(30, 4)
    >>> y = np.where(Z[:, 0] > 0, 1.0, -1.0)
    >>> res = hinge_gstep(Z, y, np.eye(4), lam=0.01, C=1 / 30, tol=1e-8, random_state=0)
    >>> res.coef.shape, bool(np.all((0 <= res.alpha) & (res.alpha <= 1 / 30 + 1e-12)))
    ((1, 4), True)
    """
    Phi = np.asarray(Phi, dtype=np.float64)
    n, D = Phi.shape
    Y = _check_problems(Y, n)
    K = Y.shape[1]
    Cp = svm_c_prime(C, lam)
    factors, min_eig = metric_factors(A, factors, D, K, eig_floor)
    rng = check_random_state(random_state)
    G = np.empty((K, D))
    reg = np.empty(K)
    n_iter = np.empty(K, dtype=int)
    alpha = np.empty((n, K)) if return_dual else None
    converged = True
    X = Phi @ factors[0] if len(factors) == 1 else None
    for k in range(K):
        F = factors[min(k, len(factors) - 1)]
        Xk = X if X is not None else Phi @ F  # x_i = F_k^T phi_i
        res = linear_svm(Xk, Y[:, k], Cp, tol=tol, max_iter=max_iter, random_state=rng)
        G[k] = F @ res.coef
        reg[k] = res.coef @ res.coef
        n_iter[k] = res.n_iter
        converged &= res.converged
        if alpha is not None:
            alpha[:, k] = 2.0 * lam * dual_from_primal(Xk, Y[:, k], res.coef, Cp)
    return GStepResult(G, alpha, reg, min_eig, n_iter, bool(converged))

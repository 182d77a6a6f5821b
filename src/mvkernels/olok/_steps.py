"""Solver steps of OLOK: one block of rows of Algorithm 1, on a kernel expansion or in an
explicit feature space.

Both models are ``f_t = c_t g_t`` with the running scale ``c_t = prod_{u <= t} (1 - eta_u
lambda)`` (lazy decay) and ``g_t`` either a kernel expansion ``sum_i K(., x_i) beta_i``
(:class:`SupportExpansion`) or ``phi(.)^T V B`` (:class:`FeatureExpansion`). A block of
``b`` rows needs, for each row ``j``, the contribution ``old_j`` of the model stored before
the block and the in-block kernel ``Kin[j, l] = K(x_j, x_l)``; then the rows are resolved
by the same forward recursion (:func:`block_recursion`, or :func:`block_solve_squared` as
triangular solves) whatever the model: in feature space ``K(x_j, x_l) = phi(x_j)^T phi(x_l)
B`` and storing the block is ``V += Phi_b^T beta_b``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from scipy.linalg import solve_triangular

from .._linalg import robust_eigh
from ..operator_kernels import DecomposableKernel, OperatorKernel
from ._features import FeatureMap
from ._support import SupportBuffer

#: predictions are computed in row chunks of about this many kernel entries
_PREDICT_ENTRIES = 2**22


class OutputBasis:
    """Eigendecomposition ``B = V diag(s) V^T`` with the outputs grouped by equal eigenvalue
    (the paper's ``J`` has two distinct eigenvalues: two triangular solves per block instead
    of ``d``)."""

    def __init__(self, B: np.ndarray):
        s, V = robust_eigh(B, what="output kernel B")
        self.V = V
        self.groups: list[tuple[float, np.ndarray]] = []
        done = np.zeros(s.size, dtype=bool)
        tol = 1e-12 * max(float(np.abs(s).max()), 1e-300)
        for k in range(s.size):
            if done[k]:
                continue
            idx = np.flatnonzero(~done & (np.abs(s - s[k]) <= max(tol, 1e-12 * abs(s[k]))))
            done[idx] = True
            self.groups.append((float(s[idx].mean()), idx))


@dataclass
class BlockInputs:
    """What both block solvers read: the in-block kernel ``Kin``, the predictions ``old``
    of the support before the block, the targets ``Yb``, the step sizes ``eta``, the
    scales ``c_{t+j-1}`` / ``c_{t+j}`` before and after each row, and the first in-block
    row ``lstarts[j]`` inside row ``j``'s truncation window."""

    Kin: np.ndarray
    old: np.ndarray
    Yb: np.ndarray
    eta: np.ndarray
    c_before: np.ndarray
    c_after: np.ndarray
    lstarts: np.ndarray


def block_recursion(
    blk: BlockInputs,
    B: np.ndarray | None,
    grad: Callable[..., np.ndarray],
    epsilon: float,
    Pout: np.ndarray,
) -> np.ndarray:
    """Rows of a block one after the other (any loss, any operator kernel): row ``j``'s
    prediction uses the in-block coefficients ``lstarts[j] <= l < j`` found before it,
    ``u_j = old_j + sum_l K(x_j, x_l) beta_l``, ``f_{t+j-1}(x_j) = c_{t+j-1} u_j`` (times
    ``B`` for a decomposable kernel, ``Kin`` then scalar), ``beta_j = alpha_{j,j} /
    c_{t+j}``."""
    Kin, old, Yb, eta, lstarts = blk.Kin, blk.old, blk.Yb, blk.eta, blk.lstarts
    c_before, c_after = blk.c_before, blk.c_after
    b, d = old.shape
    beta_blk = np.empty((b, d))
    for j in range(b):
        lstart = int(lstarts[j])
        if j > lstart:
            if B is not None:
                u = old[j] + Kin[j, lstart:j] @ beta_blk[lstart:j]
            else:
                u = old[j] + np.einsum("lab,lb->a", Kin[j, lstart:j], beta_blk[lstart:j])
        else:
            u = old[j]
        p = c_before[j] * (u @ B if B is not None else u)
        Pout[j] = p
        beta_blk[j] = (-eta[j] / c_after[j]) * grad(p, Yb[j], epsilon)
    return beta_blk


def block_solve_squared(
    blk: BlockInputs, B: np.ndarray, basis: OutputBasis, Pout: np.ndarray
) -> np.ndarray:
    """The same recursion for the squared loss and ``K = k B``, as triangular solves.

    With ``a_j = eta_j / c_{t+j}``, ``g_j = a_j c_{t+j-1}`` and ``L`` the strictly lower
    triangular in-block scalar kernel matrix (entries outside the truncation window
    zeroed), the recursion ``beta_j = -a_j (c_{t+j-1} (old_j + L_j beta) B - y_j)`` reads
    ``beta + diag(g) L beta B = diag(a) Y - diag(g) old B``. In the eigenbasis of
    ``B = V diag(s) V^T`` it splits into unit lower-triangular systems
    ``(I + s_k diag(g) L) beta'_k = r'_k``, one per distinct eigenvalue ``s_k`` (forward
    substitution: the same sums as the per-sample algorithm, in a different order)."""
    Kin, old, Yb, lstarts, c_before = blk.Kin, blk.old, blk.Yb, blk.lstarts, blk.c_before
    b = old.shape[0]
    a = blk.eta / blk.c_after
    g = a * c_before
    L = np.tril(Kin, -1)
    if lstarts.any():
        L[np.arange(b)[None, :] < lstarts[:, None]] = 0.0
    oldB = old @ B
    Rr = (a[:, None] * Yb - g[:, None] * oldB) @ basis.V
    gL = g[:, None] * L
    beta_r = np.empty_like(Rr)
    for s, idx in basis.groups:
        M = s * gL
        M.flat[:: b + 1] = 1.0
        beta_r[:, idx] = solve_triangular(
            M, Rr[:, idx], lower=True, unit_diagonal=True, check_finite=False
        )
    beta_blk = beta_r @ basis.V.T
    Pout[:b] = c_before[:, None] * (oldB + (L @ beta_blk) @ B)
    return beta_blk


class SupportExpansion:
    """``g = sum_i K(., x_i) beta_i`` over the live window of a :class:`SupportBuffer`."""

    def __init__(self, kernel: OperatorKernel, n_inputs: int, n_outputs: int, capacity: int):
        self.kernel = kernel
        self.B = cast(DecomposableKernel, kernel).B if kernel.decomposable else None
        self.support = SupportBuffer(n_inputs, n_outputs, capacity)

    def block_inputs(
        self, Xb: np.ndarray, t0: int, w_before: np.ndarray | None
    ) -> tuple[np.ndarray, Any, np.ndarray]:
        """``old`` (b, d), the in-block kernel and ``lstarts`` of the rows of ``Xb`` (times
        ``t0 + 1 ...``); ``w_before[j]``: samples of time ``<= w_before[j]`` are truncated
        when row ``j`` is predicted (None: no truncation)."""
        K, B = self.kernel, self.B
        b, d = Xb.shape[0], self.support.beta.shape[1]
        if len(self.support):
            Xsup, bsup = self.support.live()
            gsup = self.support.times()
            mask = w_before is not None and w_before[-1] >= gsup[0]
            if B is not None:
                S = cast(DecomposableKernel, K).scalar(Xb, Xsup)
                if mask:
                    S = S * (gsup[None, :] > w_before[:, None])
                old = S @ bsup
            else:
                G = K.blocks(Xb, Xsup)
                if mask:
                    G = G * (gsup[None, :] > w_before[:, None])[:, :, None, None]
                old = np.einsum("jiab,ib->ja", G, bsup)
        else:
            old = np.zeros((b, d))
        Kin = cast(DecomposableKernel, K).scalar(Xb, Xb) if B is not None else K.blocks(Xb, Xb)
        if w_before is None:
            lstarts = np.zeros(b, dtype=np.int64)
        else:  # row j sees the in-block coefficients l >= lstarts[j] (truncation window)
            lstarts = np.maximum(0, w_before.astype(np.int64) - t0)
        return old, Kin, lstarts

    def store(self, Xb: np.ndarray, beta: np.ndarray, w_after: int | None) -> None:
        self.support.append(Xb, beta)
        if w_after is not None:
            self.support.truncate(w_after)

    def rescale(self, c: float) -> None:
        self.support.rescale(c)

    def decision(self, X: np.ndarray) -> np.ndarray:
        """``g(X)``, shape (n, d)."""
        out = np.zeros((X.shape[0], self.support.beta.shape[1]))
        if len(self.support):
            Xsup, bsup = self.support.live()
            step = max(1, _PREDICT_ENTRIES // len(self.support))
            for a in range(0, X.shape[0], step):
                out[a : a + step] = self.kernel.apply(X[a : a + step], Xsup, bsup)
        return out

    def nbytes(self) -> int:
        return int(self.support.X.nbytes + self.support.beta.nbytes)


class FeatureExpansion:
    """``g = phi(.)^T V B`` with an explicit feature map ``phi`` (``V``: D x d)."""

    def __init__(self, fmap: FeatureMap, B: np.ndarray, n_outputs: int):
        self.fmap = fmap
        self.B = B
        self.V = np.zeros((fmap.n_features, n_outputs))
        self._Phi: np.ndarray | None = None

    @classmethod
    def from_support(cls, expansion: SupportExpansion) -> FeatureExpansion:
        """Nystrom features on the stored samples as landmarks, with the same function:
        ``V = phi(L)^T beta``, so ``phi(x)^T V = k(x, L) k(L, L)^+ k(L, L) beta``, which is
        ``k(x, L) beta`` when ``k(L, L)`` is non-singular."""
        L, beta = expansion.support.live()
        kernel = cast(DecomposableKernel, expansion.kernel)
        fmap = FeatureMap("nystrom", kernel.scalar_kernel, L.shape[1], L.shape[0], landmarks=L)
        out = cls(fmap, expansion.B, beta.shape[1])
        out.V = fmap.transform(L).T @ beta
        return out

    def block_inputs(
        self, Xb: np.ndarray, t0: int, w_before: np.ndarray | None
    ) -> tuple[np.ndarray, Any, np.ndarray]:
        Phi = self.fmap.transform(Xb)
        self._Phi = Phi
        return Phi @ self.V, Phi @ Phi.T, np.zeros(Xb.shape[0], dtype=np.int64)

    def store(self, Xb: np.ndarray, beta: np.ndarray, w_after: int | None) -> None:
        Phi = self._Phi if self._Phi is not None else self.fmap.transform(Xb)
        self.V += Phi.T @ beta
        self._Phi = None

    def rescale(self, c: float) -> None:
        self.V *= c

    def decision(self, X: np.ndarray) -> np.ndarray:
        out = np.empty((X.shape[0], self.V.shape[1]))
        step = max(1, _PREDICT_ENTRIES // max(self.fmap.n_features, 1))
        VB = self.V @ self.B
        for a in range(0, X.shape[0], step):
            out[a : a + step] = self.fmap.transform(X[a : a + step]) @ VB
        return out

    def nbytes(self) -> int:
        return int(self.V.nbytes)

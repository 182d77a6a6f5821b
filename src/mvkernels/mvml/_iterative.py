"""Iterative g-step of the square loss in block Nystrom mode (``solver="cg"``).

The direct solvers factor the ``d x d`` statistics ``M = D_w C D_w`` (``d = v p``): forming
``C = U^T U`` costs ``O(n d^2)`` and factoring it ``O(d^3)``, too much when ``d`` is in the
thousands (landmarks that grow with ``n``). In the style of Falkon (Rudi, Carratino &
Rosasco, NeurIPS 2017) this module solves the g-step of eq. (15),

    (M + alpha A^{-1}) g = b,    M = D_w U_c^T U_c D_w,  b = D_w U_c^T y,

by preconditioned conjugate gradient (CG) with matrix-free products ``M x = D_w U_c^T
(U_c (D_w x))`` streamed over row chunks (:class:`DesignOperator`: ``O(n d)`` per product,
the Nystrom normalisers applied on the vector side, ``U_l x_l = K_l (S_l x_l)``; the
kernel blocks ``K_l`` of the training rows are kept between products when they fit in
:data:`CACHE_BYTES`), or on the statistics ``C`` when the problem has them (Dask views,
the Cov metric, one-vs-one). ``U_c`` is the design centred by the training mean on a
problem with an intercept (:meth:`MVMLProblem.centred`), applied per chunk.

Preconditioner (:class:`CGStep`): the same g-step with ``M`` replaced by its estimate
``M_S = (n / m) D_w U_S^T U_S D_w`` from ``m`` uniformly subsampled rows
(:func:`preconditioner_rows`, seeded), solved exactly in the eigenbasis of ``M_S`` (or of
``F^T M_S F`` for a fixed metric ``A = F F^T``) by the structured solver's Woodbury form
(:func:`~mvkernels.mvml._lowrank._g_step_rows`): ``O(m d^2 + d^3)`` once per fit and
``O(d r)`` per application. The CG runs in that basis, so the learned dense metric
``A = s I + W W^T`` of :func:`~mvkernels.mvml._square_paths.dense_metric_path` (its A-steps
only need ``g``, ``A^{-1} g`` and ``W^T W``, which are basis-invariant) takes the CG as its
g-step unchanged (``gstep=``); the identity and the fixed (Cov) metrics need one solve.
Every target column (one-vs-all class) is a column of one batched CG: a product with the
data serves them all.

Stopping rule: relative residual ``||b - (M + alpha A^{-1}) g|| <= CG_TOL ||b||``
(:data:`CG_TOL`), at most :data:`CG_MAX_ITER` iterations (a
:class:`~sklearn.exceptions.ConvergenceWarning` otherwise); each outer iteration of the
learned metric starts from the previous ``g``. The data term of the objective,
``y^T y - 2 b^T g + g^T M g``, takes ``g^T M g = g^T (b - r) - alpha g^T A^{-1} g`` from
the CG's final residual ``r`` (no extra product).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._linalg import robust_eigh, sym
from ..nystrom._missing import block_mask
from ._lowrank import _g_step_rows, _solve_spd
from ._problem import FeatureRows, NystromProblem, NystromStatistics

__all__ = [
    "CG_TOL",
    "CG_MAX_ITER",
    "CACHE_BYTES",
    "DesignOperator",
    "CGStep",
    "batched_pcg",
    "preconditioner_rows",
    "row_statistics_problem",
]

#: relative residual at which the conjugate gradient stops
CG_TOL = 1e-8
#: most conjugate-gradient iterations per g-step
CG_MAX_ITER = 300
#: the training rows' kernel blocks are kept between products up to this many bytes
CACHE_BYTES = 512 * 2**20
#: rows of the preconditioner's subsample: ``max(PRECONDITIONER_MIN_ROWS,
#: PRECONDITIONER_ROWS_PER_FEATURE * d)`` (all rows when ``n`` is smaller)
PRECONDITIONER_ROWS_PER_FEATURE = 2
PRECONDITIONER_MIN_ROWS = 1000
#: a row chunk of the products holds about this many numbers (2 MiB: its second read, by
#: ``U^T (U x)``, then comes from the processor's cache; the products are bound by memory)
CHUNK_ELEMENTS = 2**18
#: seed of the preconditioner's subsample (it changes the iterations, not the solution)
SUBSAMPLE_SEED = 0


def preconditioner_rows(n_samples: int, dim: int) -> int:
    """Rows ``m`` of the preconditioner's subsample (see :data:`PRECONDITIONER_MIN_ROWS`)."""
    return int(min(n_samples, max(PRECONDITIONER_MIN_ROWS, PRECONDITIONER_ROWS_PER_FEATURE * dim)))


# ------------------------------------------------------------------------------ row chunks
class _FeatureChunk:
    """Rows of the features ``U`` (missing views completed, or materialised features)."""

    def __init__(self, U: np.ndarray):
        self.U = U

    def matvec(self, X: np.ndarray) -> np.ndarray:
        return self.U @ X

    def rmatvec(self, R: np.ndarray) -> np.ndarray:
        return self.U.T @ R


class _KernelChunk:
    """Rows of ``U = [K_1 S_1, ..., K_v S_v]`` kept as the kernel blocks ``K_l`` (rows x p):
    the normalisers ``S_l`` (p x p) act on the vector side, ``O(rows p)`` per column."""

    def __init__(self, Ks: list[np.ndarray], normalizers: list[np.ndarray]):
        self.Ks, self.S = Ks, normalizers

    def matvec(self, X: np.ndarray) -> np.ndarray:
        p = self.S[0].shape[0]
        out = self.Ks[0] @ (self.S[0] @ X[:p])
        for l in range(1, len(self.Ks)):
            out += self.Ks[l] @ (self.S[l] @ X[l * p : (l + 1) * p])
        return out

    def rmatvec(self, R: np.ndarray) -> np.ndarray:
        return np.concatenate([S.T @ (K.T @ R) for K, S in zip(self.Ks, self.S)])


def _row_chunks(
    nys: Any, Xs: Any, U: np.ndarray | None, chunk_size: int | None = None
) -> Iterator[tuple[slice, Any]]:
    """``(rows, chunk)`` over the training rows: materialised features ``U``, else the
    kernel blocks of complete rows and the completed features of rows with a missing view."""
    n = Xs[0].shape[0] if U is None else U.shape[0]
    dim = nys.n_views_ * nys.n_landmarks_
    step = chunk_size or max(16, CHUNK_ELEMENTS // dim)
    precomputed = nys.kernels_[0].precomputed
    for start in range(0, n, step):
        rows = slice(start, min(n, start + step))
        if U is not None:
            yield rows, _FeatureChunk(U[rows])
            continue
        blocks = [Xv[rows] for Xv in Xs]
        if not precomputed and block_mask(blocks) is not None:
            yield rows, _FeatureChunk(nys.features(blocks))
        else:
            Ks = [nys.kernel_block(B, l) for l, B in enumerate(blocks)]
            yield rows, _KernelChunk(Ks, nys.normalizers_)


class DesignOperator:
    """Products with ``M = D_w U_c^T U_c D_w`` (the weighted, possibly centred, design).

    Parameters
    ----------
    problem : MVMLProblem
        Nystrom mode. With statistics (``problem.stats.gram``) the products are ``D_w C D_w x``
        (``O(d^2)``); otherwise they stream the training rows (``O(n d)``), centred by
        ``problem.feature_mean`` when set.
    w : ndarray (v,)
        View weights.
    cache_bytes : int
        Keep the row chunks between products when ``8 n d`` is at most this.

    Attributes
    ----------
    n_products : int
        Products computed (each a pass over the rows in row mode).
    """

    def __init__(self, problem: NystromProblem, w: np.ndarray, cache_bytes: int = CACHE_BYTES):
        self.problem = problem
        self.weights = problem.weight_vector(w)
        self.n_products = 0
        self.from_statistics = problem.stats.gram is not None
        if not self.from_statistics and problem.row_data.U is None:
            problem.data.refuse(
                "solver='cg' on Dask views needs the sufficient statistics (gram) of the problem",
                views_only=True,
            )
        self._keep = 8 * problem.n_samples * problem.dim <= cache_bytes
        self._chunks: list | None = None

    def _iter_chunks(self) -> Iterator[tuple[slice, Any]]:
        if self._chunks is not None:
            return iter(self._chunks)
        rd = self.problem.row_data
        it = _row_chunks(rd.feature_map, rd.Xs, rd.U)
        if not self._keep:
            return it
        self._chunks = list(it)
        return iter(self._chunks)

    def apply(self, X: np.ndarray) -> np.ndarray:
        """``M X`` for ``X`` of shape (d, k)."""
        self.n_products += 1
        d = self.weights[:, None]
        DX = d * X
        if self.from_statistics:
            return d * (self.problem.stats.gram @ DX)
        mean = self.problem.feature_mean
        out = np.zeros_like(DX)
        for _, chunk in self._iter_chunks():
            Y = chunk.matvec(DX)
            if mean is not None:  # centred rows: (U - 1 m^T) x
                Y -= mean @ DX
                out -= np.outer(mean, Y.sum(axis=0))
            out += chunk.rmatvec(Y)
        return d * out


def row_statistics_problem(nys: Any, Xs: Any, Y: np.ndarray) -> NystromProblem:
    """A Nystrom-mode problem without ``C``: ``sum u``, ``c = U^T Y``, ``sum y`` and
    ``y^T y`` from one pass over the rows (``O(n d T)``), for ``solver="cg"``."""
    Y = np.asarray(Y, dtype=np.float64)
    n, T = Y.shape
    dim = nys.n_views_ * nys.n_landmarks_
    total, cross = np.zeros(dim), np.zeros((dim, T))
    for rows, chunk in _row_chunks(nys, Xs, None):
        UR = chunk.rmatvec(np.column_stack([np.ones(rows.stop - rows.start), Y[rows]]))
        total += UR[:, 0]
        cross += UR[:, 1:]
    return NystromProblem(
        n,
        int(nys.n_views_),
        int(nys.n_landmarks_),
        Y,
        statistics=NystromStatistics(
            cross=cross,
            feature_sum=total,
            target_sq=np.einsum("it,it->t", Y, Y),
            target_sum=Y.sum(axis=0),
        ),
        feature_rows=FeatureRows(nys, Xs=Xs),
    )


def subsample_features(problem: NystromProblem, m: int) -> tuple[np.ndarray, np.ndarray]:
    """``m`` uniformly drawn training rows' features (centred as the problem) and their
    indices (seeded by :data:`SUBSAMPLE_SEED`; all rows when ``m >= n``)."""
    n = problem.n_samples
    if m >= n:
        idx = np.arange(n)
    else:
        idx = np.sort(np.random.default_rng(SUBSAMPLE_SEED).choice(n, m, replace=False))
    rd = problem.row_data
    if rd.U is not None:
        US = np.asarray(rd.U[idx], dtype=np.float64)
    else:  # the rows on the client (Dask views: in one compute)
        US = rd.feature_map.features(problem.data.gather_rows(rd.Xs, idx))
    if problem.feature_mean is not None:
        US = US - problem.feature_mean
    return US, idx


# -------------------------------------------------------------------------- batched PCG
def batched_pcg(
    apply_K: Callable[[np.ndarray], np.ndarray],
    apply_P: Callable[[np.ndarray], np.ndarray],
    B: np.ndarray,
    X0: np.ndarray,
    tol: float = CG_TOL,
    max_iter: int = CG_MAX_ITER,
) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """Preconditioned conjugate gradient for a batch of SPD systems ``K_i x_i = b_i``.

    Parameters
    ----------
    apply_K, apply_P : callable
        ``(nb, k) -> (nb, k)``: row ``i`` is ``K_i x_i`` (resp. ``P_i^{-1} r_i``, the
        preconditioner's solve); one call serves the whole batch.
    B, X0 : ndarray (nb, k)
        Right-hand sides and starting points.
    tol, max_iter
        Row ``i`` stops when ``||b_i - K_i x_i|| <= tol ||b_i||``; at most ``max_iter``
        iterations.

    Returns
    -------
    X : ndarray (nb, k)
    KX : ndarray (nb, k)
        ``b - r``, the products ``K_i x_i`` up to the drift of the recursive residual.
    n_iter : int
    residual : ndarray (nb,)
        Final relative residuals.
    """
    X = np.array(X0, dtype=np.float64)
    R = B - apply_K(X)
    scale = np.linalg.norm(B, axis=1)
    done = np.linalg.norm(R, axis=1) <= tol * scale
    Z = apply_P(R)
    Pd = Z.copy()
    rz = np.einsum("ij,ij->i", R, Z)
    it = 0
    while not done.all() and it < max_iter:
        KP = apply_K(Pd)
        pKp = np.einsum("ij,ij->i", Pd, KP)
        live = ~done & (pKp > 0)
        a = np.zeros_like(rz)
        a[live] = rz[live] / pKp[live]
        X += a[:, None] * Pd
        R -= a[:, None] * KP
        it += 1
        done |= np.linalg.norm(R, axis=1) <= tol * scale
        done |= ~live  # a zero direction: nothing left to gain in exact arithmetic
        Z = apply_P(R)
        rz_new = np.einsum("ij,ij->i", R, Z)
        beta = np.zeros_like(rz)
        go = ~done & (rz > 0)
        beta[go] = rz_new[go] / rz[go]
        Pd = Z + beta[:, None] * Pd
        rz = rz_new
    with np.errstate(divide="ignore", invalid="ignore"):
        res = np.where(scale > 0, np.linalg.norm(R, axis=1) / scale, 0.0)
    return X, B - R, it, res


@dataclass
class CGStep:
    """The CG g-step in the eigenbasis ``V`` of the preconditioner (``V^T M_S V = diag(lam)``).

    ``g = V x``; the metric of problem ``i`` in that basis is ``s_i I + W_i W_i^T``
    (``W_i^T = diag(sc_i) WT_i``: the identity, a fixed metric's ``F = V ...`` change of
    variable, or the learned dense metric of
    :func:`~mvkernels.mvml._square_paths.dense_metric_path`).
    :meth:`solve` is the ``gstep`` of that path.

    Attributes
    ----------
    V : ndarray (d, k)
    lam : ndarray (k,)
    operator : DesignOperator
    n_iter : list of int
        CG iterations of each solve.
    max_residual : float
        Largest final relative residual.
    """

    V: np.ndarray
    lam: np.ndarray
    operator: DesignOperator
    tol: float = CG_TOL
    max_iter: int = CG_MAX_ITER

    def __post_init__(self) -> None:
        self.n_iter: list[int] = []
        self.max_residual = 0.0
        self._last: np.ndarray | None = None

    @classmethod
    def build(
        cls,
        problem: NystromProblem,
        w: np.ndarray,
        F: np.ndarray | None = None,
        n_rows: int | None = None,
        **kwargs: Any,
    ) -> CGStep:
        """The operator of ``problem`` and the preconditioner from ``n_rows`` subsampled
        rows (:func:`preconditioner_rows` by default); ``F``: a fixed metric's factor
        (None: the identity and the learned dense metric, ``V`` orthonormal)."""
        n = problem.n_samples
        m = preconditioner_rows(n, problem.dim) if n_rows is None else int(n_rows)
        US, idx = subsample_features(problem, m)
        US *= problem.weight_vector(w)
        MS = sym((n / idx.size) * (US.T @ US))
        if F is not None:
            MS = sym(F.T @ MS @ F)
        lam, R = robust_eigh(MS, what="subsampled weighted feature Gram matrix")
        V = R if F is None else F @ R
        return cls(V=V, lam=np.maximum(lam, 0.0), operator=DesignOperator(problem, w), **kwargs)

    def apply_M(self, X: np.ndarray) -> np.ndarray:
        """``V^T M V x`` for the rows ``x`` of ``X``."""
        return (self.V.T @ self.operator.apply(self.V @ X.T)).T

    def solve(
        self,
        idx: Any,
        s: np.ndarray,
        WT: np.ndarray,
        sc: np.ndarray,
        alpha: np.ndarray,
        Bb: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The g-steps of the problems ``idx`` (rows of ``Bb``): ``g``, ``W^T A^{-1} g``,
        ``A^{-1} g`` and ``g^T M g`` (the arguments of
        :func:`~mvkernels.mvml._lowrank._g_step_rows`, whose exact solve with ``lam`` is
        the preconditioner)."""
        Wt = sc[:, :, None] * WT  # rows: the columns of W
        r = Wt.shape[1]
        Ga = np.matmul(Wt, np.swapaxes(Wt, 1, 2))

        def ainv(X: np.ndarray) -> np.ndarray:  # Woodbury: (x - W (sI + W^T W)^{-1} W^T x) / s
            if r == 0:
                return X / s[:, None]
            y = _solve_spd(Ga + s[:, None, None] * np.eye(r), np.einsum("brk,bk->br", Wt, X))
            return (X - np.einsum("brk,br->bk", Wt, y)) / s[:, None]

        def apply_K(X: np.ndarray) -> np.ndarray:
            return self.apply_M(X) + alpha[:, None] * ainv(X)

        def apply_P(R: np.ndarray) -> np.ndarray:
            return _g_step_rows(self.lam, s, WT, sc, alpha, R)[0]

        if self._last is None:
            self._last = np.zeros((Bb.shape[0], Bb.shape[1]))
            X0 = apply_P(Bb)
        else:
            X0 = self._last[idx]
        X, KX, it, res = batched_pcg(apply_K, apply_P, Bb, X0, self.tol, self.max_iter)
        self.n_iter.append(it)
        self.max_residual = max(self.max_residual, float(res.max(initial=0.0)))
        if it >= self.max_iter and np.any(res > self.tol):
            warnings.warn(
                f"solver='cg': the conjugate gradient stopped after {it} iterations with a "
                f"relative residual of {res.max():.3g} (tolerance {self.tol:g}); the "
                "preconditioner is poor for this alpha: raise alpha or use solver='auto'",
                ConvergenceWarning,
                stacklevel=2,
            )
        self._last[idx] = X
        Q = ainv(X)
        gMg = np.einsum("bk,bk->b", X, KX) - alpha * np.einsum("bk,bk->b", X, Q)
        return X, np.einsum("brk,bk->br", Wt, Q), Q, gMg

"""The square loss's structured path: Algorithm 1 with the low-rank dense metric for a
batch of problems (eq. 15-16), run by the one driver loop
(:func:`~mvkernels.mvml._driver.run_paths`).

:func:`dense_metric_path` runs a batch of problems sharing one eigendecomposition of
``M = D_w C D_w`` (or one spectrum per problem), the metric ``s I + W W^T`` of each a
:class:`~mvkernels.mvml._lowrank.LowRankMetrics` row; its loop body is
:class:`SquarePaths` (g-step: :class:`ExactGStep`, or the conjugate-gradient
:class:`~mvkernels.mvml._iterative.CGStep`), its result a :class:`LowRankPath`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._linalg import robust_eigh, sym
from ._driver import PathState, _HistoryArrays, run_paths
from ._lowrank import LowRankMetrics, _frob2, _g_step_rows

__all__ = ["LowRankPath", "SquarePaths", "dense_metric_path", "ExactGStep"]


@dataclass
class LowRankPath:
    """Result of :func:`dense_metric_path` for a batch of ``n`` problems (eigenbasis).

    Attributes
    ----------
    G : ndarray (n, d)
        Final ``g`` (after the final g-step), in the eigenbasis of ``M``.
    s : ndarray (n,)
    W : ndarray (n, d, r)
        The metric is ``A~ = Q (s I + W W^T) Q^T``.
    history : sequence of ndarray
        Objective per recorded step, per problem (each array made when read).
    n_iter : ndarray of int (n,)
    converged : ndarray of bool (n,)
    path : ndarray (n, max_iter, d) or None
        ``path[:, k]``: the g-step solution for the metric after ``k + 1`` outer
        iterations, i.e. the final ``g`` of a fit with ``max_iter = k + 1`` and
        ``tol=None`` (only when requested).
    """

    G: np.ndarray
    s: np.ndarray
    W: np.ndarray
    history: Any
    n_iter: np.ndarray
    converged: np.ndarray
    path: np.ndarray | None = None

    def metric(self, Q: np.ndarray, i: int) -> np.ndarray:
        """Dense ``A~`` of problem ``i`` in the original basis."""
        QW = Q @ self.W[i]
        return sym(self.s[i] * np.eye(Q.shape[0]) + QW @ QW.T)

    def min_eigenvalue(self, i: int) -> float:
        """Smallest eigenvalue of ``s I + W W^T``: ``s`` when ``W`` (d x r) has fewer columns
        than rows, else ``s + lambda_min(W W^T)``. (``W W^T``, not ``W^T W``: for ``r > d``,
        e.g. one landmark per view, ``W^T W`` has ``r - d`` zero eigenvalues that are not
        eigenvalues of the metric.)"""
        d, r = self.W.shape[1:]
        if r < d:
            return float(self.s[i])
        G = self.W[i] @ self.W[i].T
        return float(self.s[i] + robust_eigh(G, eigvals_only=True, what="W W^T")[0])


def dense_metric_path(
    lam: np.ndarray,
    Bb: np.ndarray,
    yy: np.ndarray,
    alpha: np.ndarray,
    eta: np.ndarray,
    *,
    max_iter: int,
    n_a_steps: int = 1,
    tol: float | None = None,
    step_size: float | str = "auto",
    record_path: bool = False,
    dim: int | None = None,
    gstep: Any = None,
) -> LowRankPath:
    """Algorithm 1 with the dense metric (eq. 15-16) for a batch of problems.

    Parameters
    ----------
    lam : ndarray (d,) or (n, d)
        Eigenvalues of ``M = D_w C D_w``: shared by the batch, or one spectrum per
        problem (each problem in its own eigenbasis, e.g. the class pairs of a one-vs-one
        fit, each on its own rows; a spectrum with fewer than ``d`` eigenvalues padded with
        zeros, whose entries of ``Bb`` are zero: those coordinates then stay zero).
    Bb : ndarray (n, d)
        ``Q^T b`` per problem.
    yy : ndarray (n,)
        ``y^T y`` per problem (for the objective).
    alpha, eta : ndarray (n,)
        Per-problem regularisation (``alpha > 0``, ``eta > 0``).
    max_iter, n_a_steps, tol, step_size
        As the estimators' parameters (``tol=None``: run ``max_iter`` iterations).
    record_path : bool
        Keep the g-step solution of every outer iteration (``LowRankPath.path``).
    dim : int, optional
        Dimension of the feature space when ``Q`` holds only the eigenvectors of the
        nonzero eigenvalues of ``M`` (``d < dim``, :meth:`SharedSpectrum.from_rows`): every
        ``b``, hence every ``g`` and ``q = A^{-1} g``, lies in their span, so the path runs
        in that basis and the metric is ``s I`` on the null space of ``M``, whose
        ``dim - d`` directions still count in ``||A||_F^2``. None: ``d``.
    gstep : object, optional
        The g-step: ``gstep.solve(idx, s, WT, sc, alpha, Bb)`` returns ``g``, ``W^T A^{-1}
        g``, ``A^{-1} g`` and ``g^T M g`` for the problems ``idx`` (as
        :class:`ExactGStep`, the default: the exact solve with ``lam``);
        :class:`~mvkernels.mvml._iterative.CGStep` solves it by conjugate gradient, ``lam``
        then being its preconditioner's spectrum.

    Notes
    -----
    The metrics are a :class:`LowRankMetrics` batch; an outer iteration reads ``W``
    about four times. The loop body is :class:`SquarePaths`, run by
    :func:`~mvkernels.mvml._driver.run_paths`.
    """
    lam = np.asarray(lam, dtype=np.float64)
    Bb = np.asarray(Bb, dtype=np.float64)
    n, d = Bb.shape
    alpha, eta, yy = (
        np.broadcast_to(np.asarray(x, dtype=np.float64), (n,)).copy() for x in (alpha, eta, yy)
    )
    body = SquarePaths(
        mets=LowRankMetrics.identity(n, d, max_iter * n_a_steps, full_dim=dim),
        step=ExactGStep(lam) if gstep is None else gstep,
        Bb=Bb,
        yy=yy,
        alpha=alpha,
        eta=eta,
        n_a_steps=n_a_steps,
        step_size=step_size,
    )
    return run_paths(body, PathState.start(n, d, max_iter, record_path), max_iter, tol)


@dataclass
class ExactGStep:
    """The structured path's exact g-step in the eigenbasis of ``M`` (eigenvalues ``lam``,
    shared (d,) or one row per problem (n, d)):
    :func:`~mvkernels.mvml._lowrank._g_step_rows`, ``g^T M g = sum lam g^2``."""

    lam: np.ndarray

    def solve(
        self,
        idx: Any,
        s: np.ndarray,
        WT: np.ndarray,
        sc: np.ndarray,
        alpha: np.ndarray,
        Bb: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if self.lam.ndim == 1:
            g, v, z = _g_step_rows(self.lam, s, WT, sc, alpha, Bb)
            return g, v, z, (g * g) @ self.lam
        lam = self.lam[idx]
        g, v, z = _g_step_rows(lam, s, WT, sc, alpha, Bb)
        return g, v, z, np.einsum("bd,bd->b", g * g, lam)


@dataclass(eq=False)
class SquarePaths:
    """The body of Algorithm 1's outer iteration on the square loss's structured path
    (a :class:`~mvkernels.mvml._driver.PathBody`): a batch of problems in the eigenbasis
    of ``M``, each with the metric ``s I + W W^T`` (``mets``), the g-step ``step``
    (:class:`ExactGStep` or :class:`~mvkernels.mvml._iterative.CGStep`), ``Q^T b``
    (``Bb``), ``y^T y`` (``yy``) and its ``alpha`` and ``eta``.

    An iteration is the g-step (:meth:`g_steps`), ``n_a_steps`` A-steps (:meth:`a_steps`;
    the first one reads ``W^T A^{-1} g`` and ``A^{-1} g`` from the g-step), and the
    objective ``||y - U D_w g||^2 + alpha <g, A^{-1} g> + eta ||A||_F^2``
    (:meth:`objective`); :meth:`finish` runs the final g-step of every problem.
    """

    mets: LowRankMetrics
    step: Any
    Bb: np.ndarray
    yy: np.ndarray
    alpha: np.ndarray
    eta: np.ndarray
    n_a_steps: int
    step_size: float | str
    #: what the last g-step hands to the A-steps and the objective: ``s`` before the
    #: A-steps, ``W^T A^{-1} g``, ``A^{-1} g``, ``g^T M g``; then the metric part
    _last: tuple = field(default=(), repr=False)
    _s_obj: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)

    def g_steps(self, it: int, idx: Any) -> np.ndarray:
        """The g-steps of the problems ``idx`` (``it``: every iteration alike)."""
        mets = self.mets
        r = mets.r
        sa = mets.s[idx]
        g, v, z, gMg = self.step.solve(
            idx, sa, mets.WT[idx, :r], mets.sc[idx, :r], self.alpha[idx], self.Bb[idx]
        )
        self._last = (sa, v, z, gMg)
        return g

    def a_steps(self, idx: Any, G: np.ndarray) -> None:
        """``n_a_steps`` A-steps of the problems ``idx`` (the metrics updated in place)."""
        mets = self.mets
        sa, v, z, _ = self._last
        alpha, eta = self.alpha[idx], self.eta[idx]
        s_obj = np.zeros(G.shape[0])
        for step in range(self.n_a_steps):
            if step == 0:  # q = A^{-1} g = z, W^T q = v, W^T g = s v + W^T W v (g-step)
                Ga = mets.gram[idx, : mets.r, : mets.r]
                q, Wq = z, v
                xg = sa[:, None] * v + np.matmul(Ga, v[:, :, None])[:, :, 0]
            else:
                q, Wq, xg = mets.solve(idx, G)
            s_obj = mets.a_step(idx, G, q, Wq, xg, alpha, eta, self.step_size)
        self._s_obj = s_obj

    def objective(self, idx: Any, G: np.ndarray) -> np.ndarray:
        """The data term of the g-step plus the metric part after the A-steps."""
        return _data_term(self.Bb[idx], self.yy[idx], G, self._last[3]) + self._s_obj

    def finish(self, run: PathState) -> LowRankPath:
        """The final g-step of every problem (``G`` is the exact minimiser for the
        returned metric), its objective, and the path."""
        mets, Bb, alpha = self.mets, self.Bb, self.alpha
        n = Bb.shape[0]
        r = mets.r
        WT, sc, gram = mets.WT[:, :r], mets.sc[:, :r], mets.gram[:, :r, :r]
        s = mets.s
        G, _, Z, gMg = self.step.solve(slice(None), s, WT, sc, alpha, Bb)
        if run.path is not None:
            run.path[np.arange(n), run.n_iter - 1] = G
        W = np.swapaxes(WT * sc[:, :, None], 1, 2)  # (n, d, r)
        quad = np.einsum("bd,bd->b", G, Z)  # <g, A^{-1} g> with A^{-1} g = z
        obj = _data_term(Bb, self.yy, G, gMg) + alpha * quad + self.eta * _frob2(s, gram, mets.dim)
        run.finish_all(obj)
        return LowRankPath(
            G=G,
            s=s,
            W=W,
            history=_HistoryArrays(run),
            n_iter=run.n_iter,
            converged=run.converged,
            path=run.path,
        )


def _data_term(Bb: np.ndarray, yy: np.ndarray, G: np.ndarray, gMg: np.ndarray) -> np.ndarray:
    """``||y - U D_w g||^2 = y^T y - 2 b^T g + g^T M g`` (clipped at 0), stacked."""
    return np.maximum(yy - 2.0 * np.einsum("bd,bd->b", Bb, G) + gMg, 0.0)

"""Structured MVML solver for the square loss in block Nystrom mode.

With fixed view weights ``w`` the data enter Algorithm 1 only through
``M = D_w C D_w`` and ``b = D_w c`` (``C = sum_i u_i u_i^T``, ``c = sum_i u_i y_i``,
``D_w = blockdiag(w_l I_p)``; eq. 15). This module factors ``M = Q diag(lam) Q^T``
once (one symmetric eigendecomposition per fit) and reuses it for every target column
(one-vs-all class), every regularisation value ``alpha`` / ``eta`` and every outer
iteration. All vectors are kept in the eigenbasis of ``M`` (``b_bar = Q^T b``); the
Frobenius norms and inner products that the A-step needs are invariant under that
rotation.

Dense metric (eq. 16). From ``A~_0 = I`` the update ``A+ = (1 - 2 mu eta) A + mu alpha q q^T``
keeps ``A~ = s I + W W^T`` with a scalar ``s > 0`` and ``W`` of one column per A-step
(rank ``r <= max_iter * n_a_steps``). Then

* g-step (eq. 15, push-through form ``g = A (M A + alpha I)^{-1} b``):
  ``M A + alpha I = D + diag(lam) W W^T`` with ``D = diag(s lam + alpha)``, inverted by
  the Woodbury identity with the ``r x r`` matrix ``I + W^T diag(lam / (s lam + alpha)) W``;
* ``A^{-1} v = (v - W (s I + W^T W)^{-1} W^T v) / s`` (Woodbury again), and
  ``||A||_F^2 = s^2 d + 2 s tr(W^T W) + ||W^T W||_F^2``; every quantity of the backtracking
  test of :func:`mvkernels.mvml.metric_step` is a combination of these.

So an outer iteration costs ``O(d r^2 + r^3)`` instead of ``O(d^3)`` (``d = v p``), and the
problems of a batch (classes x alphas x etas) run together as stacked arrays. The
iterates, step sizes, accept/reject decisions and objective values are those of the dense
reference path (:func:`mvkernels.mvml._driver.reference_paths`), up to rounding
(tested to 1e-8 relative).

Fixed metrics (``"identity"``, ``"cov"``) with fixed weights need one g-step:
``g = F (F^T M F + alpha I)^{-1} F^T b`` for ``A~ = F F^T``; ``F^T M F`` is factored once
and shared by every target and every ``alpha``.

Storage: one metric ``s I + V V^T`` is a :class:`LowRankMetric` (a
:class:`~mvkernels.mvml._metric.Metric`, the interface every path hands its metrics on
through), a batch of them moved together a :class:`LowRankMetrics`
(:meth:`LowRankMetrics.take` gives one out), and the fitted model's metrics a
:class:`MetricStack` (:meth:`MetricStack.from_metrics`: each metric in its most compact
form, whatever its storage).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._linalg import robust_eigh, sym
from .._packing import PackedState, pack, unpack
from ._metric import (
    MAX_BACKTRACK,
    DenseMetric,
    MatrixMetric,
    Metric,
    MetricKind,
    backtrack,
    dense_step_cap,
    first_step_size,
    learned_kind,
    next_step_size,
    sufficient_decrease,
)
from ._metric_algebra import PSDFactor

__all__ = [
    "SharedSpectrum",
    "row_gram_spectrum",
    "LowRankMetric",
    "row_gram_spectra",
    "LowRankMetrics",
    "MetricStack",
    "fixed_metric_solve",
]


@dataclass
class SharedSpectrum:
    """``M = Q diag(lam) Q^T``: the eigendecomposition shared by a batch of problems."""

    Q: np.ndarray
    lam: np.ndarray

    @classmethod
    def from_matrix(cls, M: np.ndarray) -> SharedSpectrum:
        lam, Q = robust_eigh(M, what="weighted feature Gram matrix D_w C D_w")
        return cls(Q=Q, lam=np.maximum(lam, 0.0))

    @classmethod
    def from_rows(cls, R: np.ndarray) -> SharedSpectrum:
        """The spectrum of ``M = R^T R`` from the rows ``R`` (n x d, ``n < d``) by the
        n x n side: ``R R^T = V diag(s) V^T`` gives ``M``'s nonzero eigenvalues ``s`` and
        eigenvectors ``R^T V diag(s)^{-1/2}``. Only the eigenvalues above ``n eps
        max(s)`` are kept (the others are rounding of zero), so ``Q`` is d x k with
        ``k <= n``: an ``O(n^2 d + n^3)`` instead of ``O(d^3)`` factorisation, for
        :func:`dense_metric_path` with ``dim=d``."""
        s, V = row_gram_spectrum(R @ R.T)
        return cls(Q=(R.T @ V) / np.sqrt(s), lam=s)

    def rotate(self, B: np.ndarray) -> np.ndarray:
        """``Q^T b`` for each row ``b`` of ``B`` (shape (k, d))."""
        return B @ self.Q

    def unrotate(self, Bbar: np.ndarray) -> np.ndarray:
        """``Q b_bar`` for each row of ``Bbar`` (shape (..., d))."""
        return Bbar @ self.Q.T


def row_gram_spectrum(RRt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The nonzero eigenpairs ``(s, V)`` of a row Gram matrix ``R R^T`` (n x n): those
    above ``n eps max(s)`` (the others are rounding of zero). ``M = R^T R`` then has the
    eigenvalues ``s`` and the eigenvectors ``R^T V diag(s)^{-1/2}``
    (:meth:`SharedSpectrum.from_rows`)."""
    s, V = robust_eigh(RRt, what="weighted row Gram matrix")
    return _nonzero_pairs(s, V)


def _nonzero_pairs(s: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The eigenpairs of an ``n x n`` row Gram matrix above ``n eps max(s)``."""
    keep = s > V.shape[0] * np.finfo(float).eps * max(float(s[-1]), 0.0)
    return s[keep], V[:, keep]


def row_gram_spectra(blocks: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`row_gram_spectrum` of each of several row Gram matrices (e.g. the class
    pairs of a one-vs-one fold), those of one size in one stacked eigendecomposition
    (of their symmetric parts): the same eigenpairs to rounding, without a call per
    matrix. A size met once, or a stack whose decomposition fails or is not finite,
    goes matrix by matrix (:func:`~mvkernels._linalg.robust_eigh`'s fallbacks).

    Examples
    --------
    >>> import numpy as np
    >>> R = np.random.default_rng(0).normal(size=(3, 4, 6))
    >>> blocks = [r @ r.T for r in R]
    >>> (s, V), = row_gram_spectra(blocks[:1])
    >>> s2, V2 = row_gram_spectra(blocks)[0]
    >>> bool(np.allclose(s, s2) and np.allclose(V * s @ V.T, V2 * s2 @ V2.T))
    True
    """
    out: list[Any] = [None] * len(blocks)
    by_size: dict[int, list[int]] = {}
    for i, B in enumerate(blocks):
        by_size.setdefault(B.shape[0], []).append(i)
    for idx in by_size.values():
        stacked = None
        if len(idx) > 1 and blocks[idx[0]].shape[0] > 0:
            A = np.stack([np.asarray(blocks[i], dtype=np.float64) for i in idx])
            if np.all(np.isfinite(A)):
                try:
                    w, V = np.linalg.eigh(0.5 * (A + np.swapaxes(A, 1, 2)))
                except np.linalg.LinAlgError:
                    pass
                else:
                    if np.all(np.isfinite(w)) and np.all(np.isfinite(V)):
                        stacked = (w, V)
        for j, i in enumerate(idx):
            if stacked is None:
                out[i] = row_gram_spectrum(blocks[i])
            else:
                out[i] = _nonzero_pairs(stacked[0][j], stacked[1][j])
    return out


#: step sizes the batched A-step tests per problem in one call (:func:`halvings_ahead`):
#: on the first call (most steps are accepted at once or after one halving: the next
#: try is twice the last accepted step), then on each later call (the few problems left)
HALVINGS_FIRST, HALVINGS_LATER = 2, 4
#: on a later call the problems left test more halvings at once, up to this many (problem,
#: step) pairs in all: a call costs a dozen NumPy operations whatever its size, and the
#: problems still halving after two calls (a few in a batch) often need many more
HALVINGS_BUDGET = 2048


def halvings_ahead(
    evaluate: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, tuple]],
    commit: Callable[[np.ndarray, tuple], None],
    n: int,
    first: int | None = None,
    later: int | None = None,
    max_halvings: int = MAX_BACKTRACK,
    budget: int | None = None,
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """An ``attempt`` for :func:`~mvkernels.mvml._metric.backtrack` on a batch of ``n``
    problems that tests several halvings of a problem's step in one call.

    ``evaluate(pi, mu)`` tests the steps ``mu`` of the problems ``pi`` (a problem may
    appear several times, with different steps) and returns which pass and the values
    an accepted step keeps (arrays aligned with ``pi``); ``commit(p, values)`` keeps
    them for the problems ``p``. At the ``c``-th call of the halving loop every pending
    problem has been halved ``c`` times, so the steps ``mu, mu/2, ..., mu/2^(J-1)`` are
    the ones the loop would try at its calls ``c, ..., c + J - 1``: a problem's first
    passing step among them is committed at once and reported when the loop gets
    there, and calls that the tests already answered cost nothing. ``evaluate`` reads
    each problem's own values only, so the accepted steps and their values are those of
    one halving per call (the steps are halved by the same exact multiplications); the
    loop's calls (each a dozen NumPy operations on a few problems) drop from the most
    halvings any problem needs to about two. ``J`` is ``first`` at the first call,
    ``later`` after (None: :data:`HALVINGS_FIRST`, :data:`HALVINGS_LATER`), or more on a
    later call with few problems left (up to ``budget`` tested steps in all; None:
    :data:`HALVINGS_BUDGET`), never past ``max_halvings``.
    """
    return _HalvingsAhead(
        evaluate,
        commit,
        n,
        HALVINGS_FIRST if first is None else first,
        HALVINGS_LATER if later is None else later,
        max_halvings,
        HALVINGS_BUDGET if budget is None else budget,
    )


class _HalvingsAhead:
    """The ``attempt`` that :func:`halvings_ahead` returns: called as ``attempt(pi, mu)``
    by :func:`~mvkernels.mvml._metric.backtrack`, which also reads its ``settled`` and
    ``max_halvings``."""

    def __init__(
        self,
        evaluate: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, tuple]],
        commit: Callable[[np.ndarray, tuple], None],
        n: int,
        first: int,
        later: int,
        max_halvings: int,
        budget: int,
    ) -> None:
        self.evaluate, self.commit = evaluate, commit
        self.first, self.later, self.budget = first, later, budget
        self.max_halvings = max_halvings
        self.acc_at = np.full(n, -1)  # the call at which a problem's step passes (-1: not known)
        self.upto = np.zeros(n, dtype=int)  # the calls whose test of a problem is known
        self.calls = 0
        self.fresh = False  # tested since settled last looked

    def __call__(self, pi: np.ndarray, mu: np.ndarray) -> np.ndarray:
        c = self.calls
        self.calls += 1
        todo = self.upto[pi] <= c
        if todo.any():
            self.fresh = True
            n_todo = int(todo.sum())
            J = self.first if c == 0 else max(self.later, self.budget // n_todo)
            J = max(1, min(J, self.max_halvings - c))
            p, steps = pi[todo], np.empty((J, n_todo))
            steps[0] = mu[todo]
            for j in range(1, J):
                steps[j] = steps[j - 1] * 0.5
            ok, values = self.evaluate(np.tile(p, J), steps.ravel())
            ok = np.asarray(ok, dtype=bool).reshape(J, p.size)
            hit = ok.any(axis=0)
            j_first = np.argmax(ok, axis=0)[hit]
            at = j_first * p.size + np.flatnonzero(hit)
            self.commit(p[hit], tuple(np.asarray(v)[at] for v in values))
            self.acc_at[p[hit]] = c + j_first
            self.upto[p] = c + J
        return self.acc_at[pi] == c

    def settled(self, pi: np.ndarray) -> np.ndarray | None:
        """The call at which each problem of ``pi`` is accepted (``max_halvings``: never)
        when every one is known from the tests so far, else None (for
        :func:`~mvkernels.mvml._metric.backtrack`, which then ends its loop; nothing is
        known anew after a call that tested nothing)."""
        if not self.fresh:
            return None
        self.fresh = False
        at = self.acc_at[pi]
        if np.any((at < 0) & (self.upto[pi] < self.max_halvings)):
            return None
        return np.where(at < 0, self.max_halvings, at)


def _solve_spd(K: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Solve stacked SPD systems ``K[i] y[i] = x[i]`` by one LU solve each (partial
    pivoting, backward stable): numpy has no stacked triangular solve, so a Cholesky
    factor would be followed by two LU solves of the triangles, 2-3x the time of one
    at these sizes (``r <= max_iter * n_a_steps``, hundreds of systems a call)."""
    if K.shape[-1] == 0:
        return np.zeros_like(x)
    return np.linalg.solve(K, x[..., None])[..., 0]


def _frob2(s: np.ndarray, gram: np.ndarray, d: int) -> np.ndarray:
    """``||s I + W W^T||_F^2`` from ``gram = W^T W`` (stacked)."""
    if gram.shape[-1] == 0:
        return s**2 * d
    return (
        s**2 * d + 2.0 * s * np.trace(gram, axis1=1, axis2=2) + np.einsum("bij,bij->b", gram, gram)
    )


def fixed_metric_solve(
    M: np.ndarray, F: np.ndarray, B: np.ndarray, alpha: np.ndarray
) -> np.ndarray:
    """g-steps for a fixed metric ``A~ = F F^T``: ``g = F (F^T M F + alpha I)^{-1} F^T b``.

    Parameters
    ----------
    M : ndarray (d, d)
        ``D_w C D_w``.
    F : ndarray (d, k)
        Factor of the metric (``I`` for MVML_I).
    B : ndarray (T, d)
        Rows ``b_t = D_w c_t``.
    alpha : ndarray (m,)
        Regularisation values.

    Returns
    -------
    G : ndarray (m, T, d)
    """
    S = sym(F.T @ M @ F)
    theta, R = robust_eigh(S, what="metric-weighted Gram matrix F^T M F")
    theta = np.maximum(theta, 0.0)
    FR = F @ R
    proj = B @ FR  # (T, k)
    out = proj[None, :, :] / (theta[None, None, :] + np.asarray(alpha)[:, None, None])
    return out @ FR.T


class LowRankMetric(Metric):
    """A :class:`~mvkernels.mvml._metric.Metric` stored as ``A = s I + V V^T``.

    The learned dense metric of the structured paths (one problem of a
    :class:`LowRankMetrics` batch, :meth:`LowRankMetrics.take`) and the identity
    (:meth:`identity`: ``s = 1``, no column): ``O(d r)`` numbers instead of ``d^2``.

    Parameters
    ----------
    s : float
        The scale of the identity part, > 0.
    V : ndarray of shape (d, r)
        One column per A-step.
    min_eig : float or None, default=None
        The smallest eigenvalue when the path that made the metric computed it (None:
        computed on demand, ``s`` unless ``V`` has ``r >= d`` columns).

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.mvml._lowrank import LowRankMetric
    >>> m = LowRankMetric(0.5, np.array([[1.0], [2.0], [0.0]]))
    >>> m.dense()
    array([[1.5, 2. , 0. ],
           [2. , 4.5, 0. ],
           [0. , 0. , 0.5]])
    >>> m.matvec(np.array([1.0, 0.0, 0.0])), m.min_eigenvalue()
    (array([1.5, 2. , 0. ]), 0.5)
    """

    def __init__(self, s: float, V: np.ndarray, min_eig: float | None = None):
        self.s = float(s)
        self.V = V
        self.dim = int(V.shape[0])
        self._min_eig = min_eig
        self._factor: PSDFactor | None = None

    @classmethod
    def identity(cls, d: int) -> LowRankMetric:
        """``A = I_d``."""
        return cls(1.0, np.zeros((d, 0)), min_eig=1.0)

    def dense(self) -> np.ndarray:
        # the diagonal set, then V V^T added: the numbers of MetricStack.toarray
        out = np.zeros((self.dim, self.dim))
        out[np.diag_indices(self.dim)] = self.s
        if self.V.shape[1]:
            out += sym(self.V @ self.V.T)
        return out

    def matvec(self, x: np.ndarray) -> np.ndarray:
        return self.s * x + self.V @ (self.V.T @ x)

    @property
    def factor(self) -> PSDFactor:
        if self._factor is None:
            self._factor = (
                PSDFactor.identity(self.dim) if self.is_identity() else PSDFactor(self.dense())
            )
        return self._factor

    def penalty(self, kind: MetricKind, n_views: int) -> float:
        if isinstance(kind, DenseMetric):  # ||s I + V V^T||_F^2 from V^T V
            return float(_frob2(np.array([self.s]), (self.V.T @ self.V)[None], self.dim)[0])
        return super().penalty(kind, n_views)

    def min_eigenvalue(self) -> float:
        if self._min_eig is None:
            r = self.V.shape[1]
            if r < self.dim:
                self._min_eig = self.s
            else:
                G = self.V @ self.V.T
                self._min_eig = self.s + float(robust_eigh(G, eigvals_only=True, what="V V^T")[0])
        return self._min_eig

    def max_abs(self) -> float:
        return float(np.abs(self.s + (self.V**2).sum(axis=1)).max()) if self.dim else 0.0

    def is_identity(self) -> bool:
        return self.s == 1.0 and not np.any(self.V)

    def low_rank_form(self) -> tuple[float, np.ndarray] | None:
        return self.s, self.V

    def a_step(
        self,
        g: np.ndarray,
        alpha: float,
        eta: float,
        kind: str | MetricKind,
        n_views: int,
        mu0: float,
        *,
        threshold: str = "mu_eta",
        eig_floor: float = 1e-10,
    ) -> tuple[Metric, float]:
        """The step of a kind that keeps ``s I + V V^T`` (:attr:`MetricKind.low_rank`: the
        dense step) keeps the storage (a :class:`LowRankMetrics` batch of one, the
        structured paths' step); another step runs on the dense matrix
        (:class:`~mvkernels.mvml._metric.MatrixMetric`)."""
        if not learned_kind(kind).low_rank:
            return MatrixMetric(self.dense(), eig_floor=eig_floor).a_step(
                g, alpha, eta, kind, n_views, mu0, threshold=threshold, eig_floor=eig_floor
            )
        batch = LowRankMetrics.from_metric(self)
        batch.mu_next[0] = float(mu0)
        q, Wq, xg = batch.solve([0], g[None])
        batch.a_step([0], g[None], q, Wq, xg, np.array([alpha]), np.array([eta]), float(mu0))
        if batch.sc[0, batch.r - 1] == 0.0:  # rejected: a zero column
            return self, 0.0
        return batch.take(0), 0.5 * float(batch.mu_next[0])  # the next try is twice the step


@dataclass
class MetricStack(PackedState):
    """The fitted metrics of ``T`` problems in the most compact form the solver has.

    ``A_t = s_t I + V_t V_t^T`` (structured dense metric, ``V_t = Q W_t`` of shape (d, r):
    ``O(T d r)`` numbers instead of ``T d^2``), one ``shared`` matrix for every problem
    (a fit's fixed metric: identity, Cov), the identity of every problem (``scale`` only)
    or the ``dense`` (T, d, d) stack (reference path, sparse metric, learned weights, the
    one-vs-one pairs' own Cov metrics). :meth:`toarray` builds the dense metrics on
    demand (the estimators' ``metric_``), so a pickled model stays small; a pickle stores
    an exactly symmetric ``shared`` / ``dense`` metric as one triangle
    (:class:`~mvkernels._packing.PackedState`).

    The problems may differ in size (one-vs-one's pairs in full-kernel mode, ``v n_ij``
    each): ``dims`` then holds every size and ``factors`` / ``dense`` are lists, one
    array a problem (``dim`` is the largest size).

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.mvml._lowrank import LowRankMetric, MetricStack
    >>> pairs = [LowRankMetric(0.5, np.ones((2, 1))), LowRankMetric(1.0, np.ones((3, 1)))]
    >>> st = MetricStack.from_metrics(pairs, fixed=False)
    >>> st.dims.tolist(), [A.shape for A in st.toarray()], st.max_abs()
    ([2, 3], [(2, 2), (3, 3)], 2.0)
    """

    dim: int
    n_problems: int
    scale: np.ndarray | None = None
    factors: Any = None
    shared: np.ndarray | None = None
    dense: Any = None
    #: the size of every problem where they differ (``factors`` / ``dense``: lists)
    dims: np.ndarray | None = None

    @classmethod
    def from_metrics(cls, metrics: list[Metric], fixed: bool) -> MetricStack:
        """The store of the fitted metrics ``metrics`` (:class:`~mvkernels.mvml._metric.Metric`,
        one per problem) in their most compact form: a fixed metric (``fixed``) shared by
        every problem once (the identity as its size only), fixed metrics that are all
        the identity as their sizes, metrics that know their form ``s I + V V^T``
        (:meth:`~mvkernels.mvml._metric.Metric.low_rank_form`) as ``(s_t, V_t)``, others
        as the dense stack (one store whatever the problems: one-vs-one's pairs, each
        with its own metric and, in full-kernel mode, its own size, included)."""
        first, n = metrics[0], len(metrics)
        sizes = [m.dim for m in metrics]
        ragged = len(set(sizes)) > 1
        dims = np.array(sizes) if ragged else None
        dim = max(sizes)
        if fixed and all(m is first for m in metrics):
            if first.is_identity():
                return cls(dim, n, scale=np.ones(n))
            return cls(dim, n, shared=first.dense())
        if fixed and all(m.is_identity() for m in metrics):
            return cls(dim, n, scale=np.ones(n), dims=dims)
        forms = [None if fixed else m.low_rank_form() for m in metrics]
        if all(f is not None for f in forms):
            lowrank = [f for f in forms if f is not None]
            scale = np.array([float(sv[0]) for sv in lowrank])
            if ragged:
                return cls(dim, n, scale=scale, factors=[V for _, V in lowrank], dims=dims)
            r = max(sv[1].shape[1] for sv in lowrank)  # problems may stop early (tol)
            factors = np.zeros((n, dim, r))
            for t, (_, V) in enumerate(lowrank):  # zero columns where a problem stopped
                factors[t, :, : V.shape[1]] = V
            return cls(dim, n, scale=scale, factors=factors)
        dense = [m.dense() for m in metrics]
        return cls(dim, n, dense=dense if ragged else np.stack(dense), dims=dims)

    def size(self, t: int) -> int:
        """The size ``d_t`` of problem ``t``'s metric."""
        return self.dim if self.dims is None else int(self.dims[t])

    def take(self, t: int) -> Metric:
        """Problem ``t``'s metric as a :class:`~mvkernels.mvml._metric.Metric` in its
        stored form (no dense matrix built for ``s I + V V^T`` or the identity)."""
        if self.dense is not None:
            return MatrixMetric(self.dense[t])
        if self.shared is not None:
            return MatrixMetric(self.shared)
        V = np.zeros((self.size(t), 0)) if self.factors is None else self.factors[t]
        return LowRankMetric(float(np.asarray(self.scale)[t]), V)

    def toarray(self) -> Any:
        """The dense metrics, shape (T, d, d) (problems of different sizes: a list)."""
        if self.dims is not None:
            return [self._one(t) for t in range(self.n_problems)]
        if self.dense is not None:
            return self.dense
        if self.shared is not None:
            return np.repeat(self.shared[None], self.n_problems, axis=0)
        out = np.zeros((self.n_problems, self.dim, self.dim))
        out[:, np.arange(self.dim), np.arange(self.dim)] = np.asarray(self.scale)[:, None]
        if self.factors is not None:
            for t, V in enumerate(self.factors):
                out[t] += sym(V @ V.T)
        return out

    def _one(self, t: int) -> np.ndarray:
        """Problem ``t``'s dense metric (the numbers of :meth:`toarray`)."""
        if self.dense is not None:
            return self.dense[t]
        d = self.size(t)
        out = np.zeros((d, d))
        out[np.diag_indices(d)] = float(np.asarray(self.scale)[t])
        if self.factors is not None:
            out += sym(self.factors[t] @ self.factors[t].T)
        return out

    def max_abs(self) -> float:
        """``max |A_ij|`` over the stack (a PSD matrix's largest entry is on its diagonal)."""
        if self.dims is not None:  # problems of different sizes
            return max(float(np.abs(self._one(t)).max()) for t in range(self.n_problems))
        if self.dense is not None:
            return float(np.abs(self.dense).max())
        if self.shared is not None:
            return float(np.abs(self.shared).max())
        diag = np.asarray(self.scale)[:, None] * np.ones((1, self.dim))
        if self.factors is not None:
            diag = diag + (self.factors**2).sum(axis=2)
        return float(np.abs(diag).max())

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        for key in ("factors", "dense"):  # problems of different sizes: each array packed
            if isinstance(state[key], list):
                state[key] = [pack(A) for A in state[key]]
        return state

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for key in ("factors", "dense"):
            if isinstance(self.__dict__.get(key), list):
                self.__dict__[key] = [unpack(A) for A in self.__dict__[key]]


def _g_step_rows(
    lam: np.ndarray,
    s: np.ndarray,
    WT: np.ndarray,
    sc: np.ndarray,
    alpha: np.ndarray,
    Bb: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Eq. (15) for ``A = s I + W W^T`` with ``W^T = diag(sc) WT`` (rows of ``WT`` are the
    raw columns of ``W``). Returns ``(g, v)`` with ``z = (diag(lam) A + alpha I)^{-1} b``,
    ``g = A z`` and ``v = W^T z``.

    Woodbury: ``z = t - (lam / D) (.) W v`` with ``t = b / D``, ``D = s lam + alpha`` and
    ``(I + W^T diag(lam / D) W) v = W^T t``; then ``W^T z = v`` exactly, so
    ``g = s z + W v`` needs a single product with ``W``. Also returns ``z = A^{-1} g``.
    ``lam``: the eigenvalues (d,) shared by the rows, or one row per problem (n, d).
    """
    lam = lam[None, :] if lam.ndim == 1 else lam
    D = s[:, None] * lam + alpha[:, None]
    t = Bb / D
    r = WT.shape[1]
    if r == 0:
        return s[:, None] * t, np.zeros((Bb.shape[0], 0)), t
    ld = lam / D
    E = np.matmul(WT * ld[:, None, :], np.swapaxes(WT, 1, 2))
    E *= sc[:, :, None] * sc[:, None, :]
    E += np.eye(r)
    u = sc * np.matmul(WT, t[:, :, None])[:, :, 0]
    v = _solve_spd(E, u)
    Wv = np.matmul((sc * v)[:, None, :], WT)[:, 0, :]
    z = t - ld * Wv
    return s[:, None] * z + Wv, v, z


@dataclass
class LowRankMetrics:
    """A batch of metrics ``A_i = s_i I + W_i W_i^T`` moved by the dense A-step (eq. 16).

    From ``A_0 = I`` every A-step ``A+ = (1 - 2 mu eta) A + mu alpha q q^T``
    (``q = A^{-1} g``) scales ``W`` and appends one column, so the metric stays
    ``s I + W W^T`` (a rejected step appends a zero column). The step, its backtracking
    test and its objective value only need ``g``, ``q``, ``W^T q``, ``W^T g`` and
    ``W^T W``: they do not depend on the loss, and both the square loss (in the
    eigenbasis of ``M``, :func:`dense_metric_path`) and the hinge loss (in the feature
    basis, :class:`~mvkernels.MVMLSVC`) use this class.

    ``W`` is stored as raw rows ``WT`` (one per A-step, written once) with a per-column
    scale ``sc`` (an accepted step multiplies every existing column by
    ``sqrt(1 - 2 mu eta)``), and ``W^T W`` is updated in ``O(r)`` per step.
    """

    s: np.ndarray
    WT: np.ndarray
    sc: np.ndarray
    gram: np.ndarray
    r: int
    mu_next: np.ndarray
    #: dimension of the metrics when the vectors live in a basis of a subspace holding
    #: every ``g`` and ``q`` (a truncated eigenbasis): the metric is ``s I`` on the rest,
    #: which counts in ``||A||_F^2``; None: the basis is the whole space
    full_dim: int | None = None

    @classmethod
    def identity(cls, n: int, d: int, max_rank: int, full_dim: int | None = None) -> LowRankMetrics:
        """``n`` identity metrics of size ``d`` (``full_dim`` when ``d`` is the dimension
        of a subspace basis) with room for ``max_rank`` A-steps."""
        return cls(
            s=np.ones(n),
            WT=np.zeros((n, max_rank, d)),
            sc=np.zeros((n, max_rank)),
            gram=np.zeros((n, max_rank, max_rank)),
            r=0,
            # NaN: no accepted step yet ("None" in metric_step's caller)
            mu_next=np.full(n, np.nan),
            full_dim=full_dim,
        )

    @classmethod
    def from_metric(cls, metric: LowRankMetric, room: int = 1) -> LowRankMetrics:
        """A batch of one: ``metric`` with room for ``room`` more A-steps."""
        V = metric.V
        r = V.shape[1]
        out = cls.identity(1, metric.dim, r + room)
        out.s[0] = metric.s
        out.WT[0, :r] = V.T
        out.sc[0, :r] = 1.0
        out.gram[0, :r, :r] = V.T @ V
        out.r = r
        return out

    def take(self, i: int, Q: np.ndarray | None = None) -> LowRankMetric:
        """Metric ``i`` of the batch as a :class:`LowRankMetric` (``V = Q W`` when the
        batch lives in the basis ``Q``), with its smallest eigenvalue."""
        W = self.columns(i)
        return LowRankMetric(
            float(self.s[i]), W if Q is None else Q @ W, min_eig=self.min_eigenvalue(i)
        )

    @property
    def dim(self) -> int:
        """Dimension of the metrics (``full_dim`` when set, else the basis')."""
        return self.WT.shape[2] if self.full_dim is None else int(self.full_dim)

    def columns(self, i: int) -> np.ndarray:
        """``W`` of metric ``i``, shape (d, r)."""
        return (self.WT[i, : self.r] * self.sc[i, : self.r, None]).T

    def min_eigenvalue(self, i: int) -> float:
        """Smallest eigenvalue of ``s I + W W^T`` (``s`` unless ``W`` has full row rank)."""
        if self.r < self.dim:
            return float(self.s[i])
        G = self.gram[i, : self.r, : self.r]
        return float(self.s[i] + robust_eigh(G, eigvals_only=True, what="W^T W")[0])

    def frob2(self, idx: Any = slice(None)) -> np.ndarray:
        """``||A||_F^2`` of the metrics ``idx``."""
        return _frob2(self.s[idx], self.gram[idx, : self.r, : self.r], self.dim)

    def solve(self, idx: Any, g: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``q = A^{-1} g``, ``W^T q`` and ``W^T g`` for the metrics ``idx`` (rows of ``g``).

        Woodbury: ``A^{-1} g = (g - W (s I + W^T W)^{-1} W^T g) / s``.
        """
        r = self.r
        sa = self.s[idx]
        Ga = self.gram[idx, :r, :r]
        xg = np.matmul(self.WT[idx, :r], g[:, :, None])[:, :, 0] * self.sc[idx, :r]
        y = _solve_spd(Ga + sa[:, None, None] * np.eye(r), xg)
        q = (g - np.matmul((self.sc[idx, :r] * y)[:, None, :], self.WT[idx, :r])[:, 0, :]) / sa[
            :, None
        ]
        Wq = (xg - np.matmul(Ga, y[:, :, None])[:, :, 0]) / sa[:, None]
        return q, Wq, xg

    def a_step(
        self,
        idx: Any,
        g: np.ndarray,
        q: np.ndarray,
        Wq: np.ndarray,
        xg: np.ndarray,
        alpha: np.ndarray,
        eta: np.ndarray,
        step_size: float | str = "auto",
    ) -> np.ndarray:
        """One dense A-step (eq. 16) with backtracking for the metrics ``idx``.

        ``g`` (rows), ``q = A^{-1} g``, ``W^T q`` and ``W^T g`` as from :meth:`solve`;
        ``alpha``, ``eta`` per metric of ``idx``. The step size's cap
        (:func:`~mvkernels.mvml._metric.dense_step_cap`), the sufficient-decrease test
        (:func:`~mvkernels.mvml._metric.sufficient_decrease`) and the halving
        (:func:`~mvkernels.mvml._metric.backtrack`) are those of
        :func:`mvkernels.mvml.metric_step`. Returns ``alpha <g, A+^{-1} g> + eta ||A+||_F^2``
        for the new metrics (the objective without the data term).
        """
        a, e = alpha, eta
        r, d = self.r, self.dim
        sa = self.s[idx]
        Ga = self.gram[idx, :r, :r]
        m = sa.shape[0]
        gg = np.einsum("bd,bd->b", g, g)
        normA2 = _frob2(sa, Ga, d)
        gq = np.einsum("bd,bd->b", g, q)
        s0 = a * gq + e * normA2
        qq = np.einsum("bd,bd->b", q, q)
        qAq = sa * qq + np.einsum("bi,bi->b", Wq, Wq)
        mu = self.mu_next[idx].copy()
        if isinstance(step_size, str) and step_size == "auto":
            grad2 = a**2 * qq**2 - 4.0 * a * e * qAq + 4.0 * e**2 * normA2
            gn = np.sqrt(np.maximum(grad2, 0.0))
            first = np.isnan(mu)
            mu[first] = first_step_size(np.sqrt(normA2[first]), gn[first], e[first])
        else:
            mu[np.isnan(mu)] = float(step_size)
        mu = dense_step_cap(mu, e)
        s_new_acc = s0.copy()
        c1_acc = np.ones(m)
        ma_acc = np.zeros(m)
        # The tested metric's K' = s' I + W'^T W' (W' = [sqrt(c1) W, sqrt(mu alpha) q],
        # s' = c1 s) has the leading block c1 K with K = s I + W^T W, and K^{-1} W^T g =
        # W^T q (:meth:`solve`), so the block (Schur) form of W'^T g's quadratic form in
        # K'^{-1} needs, per metric, three numbers known before any step is tried:
        # g^T W K^{-1} W^T g, g^T q - |W^T q|^2 and q^T q - q^T W K^{-1} W^T q (= s q^T
        # A^{-1} q > 0): each tested step costs O(1), not an (r + 1)-system solve
        Wq2 = np.einsum("bi,bi->b", Wq, Wq)
        gWKWg = np.einsum("bi,bi->b", xg, Wq)
        qWKWq = np.einsum("bi,bi->b", Wq, _solve_spd(Ga + sa[:, None, None] * np.eye(r), Wq))
        cross0 = gq - Wq2
        schur0 = qq - qWKWq

        def evaluate(pi: np.ndarray, m_: np.ndarray) -> tuple[np.ndarray, tuple]:
            a_, e_ = a[pi], e[pi]
            c1 = 1.0 - 2.0 * m_ * e_
            ma = m_ * a_
            s_c = c1 * sa[pi]
            xKx = gWKWg[pi] + ma * cross0[pi] ** 2 / (s_c + ma * schur0[pi])
            quad = (gg[pi] - xKx) / s_c
            qq_, qAq_, nA_ = qq[pi], qAq[pi], normA2[pi]
            newA2 = c1**2 * nA_ + 2.0 * c1 * ma * qAq_ + ma**2 * qq_**2
            s_new = a_ * quad + e_ * newA2
            lin = -a_ * (-2.0 * m_ * e_ * qAq_ + ma * qq_**2) + 2.0 * e_ * (
                -2.0 * m_ * e_ * nA_ + ma * qAq_
            )
            DD = 4.0 * m_**2 * e_**2 * nA_ - 4.0 * m_ * e_ * ma * qAq_ + ma**2 * qq_**2
            ok = s_c > 0
            # Woodbury's quad loses about log10(gg / (s' quad)) digits to cancellation: a
            # step to a near-singular metric whose quad keeps fewer than 6 of them is halved
            ok &= quad > 1e-10 * gg[pi] / s_c
            ok &= sufficient_decrease(s_new, s0[pi], lin, DD, m_)
            return ok, (s_new, c1, ma)

        def commit(acc: np.ndarray, values: tuple) -> None:
            s_new_acc[acc], c1_acc[acc], ma_acc[acc] = values

        accepted, mu = backtrack(mu, halvings_ahead(evaluate, commit, m))
        # apply: accepted -> scale and append sqrt(mu alpha) q; rejected -> zero column
        if r == self.WT.shape[1]:
            raise ValueError("LowRankMetrics: no room left for another A-step")
        sq = np.sqrt(c1_acc)
        self.WT[idx, r] = q
        scn = self.sc[idx]
        scn[:, :r] *= sq[:, None]
        scn[:, r] = np.sqrt(ma_acc)
        self.sc[idx] = scn
        Gn = self.gram[idx]
        Gn[:, :r, :r] *= c1_acc[:, None, None]
        cross = (sq * np.sqrt(ma_acc))[:, None] * Wq
        Gn[:, :r, r] = cross
        Gn[:, r, :r] = cross
        Gn[:, r, r] = ma_acc * qq
        self.gram[idx] = Gn
        self.s[idx] = sa * c1_acc
        self.r = r + 1
        self.mu_next[idx] = next_step_size(accepted, mu, self.mu_next[idx])
        return s_new_acc

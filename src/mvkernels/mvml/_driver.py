"""Algorithm 1's outer loop: the g-step, the w-step and the A-steps, alternated.

One loop, :func:`alternate`, with one bookkeeping (:class:`PathState`: objective
histories, iteration counts, the stopping rule and the recorded path along the
iterations), run by the three paths, which supply only the body of an outer iteration
(their g-steps, w-steps and A-steps) and their final g-step:

* :func:`reference_paths`: the dense reference path, any loss
  (:class:`~mvkernels.mvml._losses.Loss`: its g-step, data term and w-step) and any
  metric (dense matrices, :func:`~mvkernels.mvml._metric.metric_step`), the target
  columns as one batch: g-steps shared while the targets share the metric and the
  weights (the first one always), A-steps and w-steps per target
  (:func:`reference_path`: one target);
* :func:`dense_metric_path`: the square loss's structured path, a batch of problems with
  the low-rank dense metric ``s I + W W^T`` (:mod:`mvkernels.mvml._lowrank`) and one
  shared eigendecomposition;
* the hinge loss's low-rank path (``HingeLoss.dense_paths`` in
  :mod:`mvkernels.mvml._hinge_loss`), whose g-steps are SVM solves, on :class:`PathState`.

Every path stops a problem when the relative decrease of its objective falls below
``tol``, ``|h[-2] - h[-1]| <= tol max(|h[-2]|, tiny)`` (the one stopping rule,
:meth:`PathState.record`), and ends with a final g-step, so that ``coef_`` is the exact
minimiser for the returned metric and weights.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._linalg import robust_eigh, sym
from ._lowrank import LowRankMetrics, _frob2, _g_step_rows
from ._metric import Metric, first_step_size, next_step_size
from ._problem import MVMLProblem

__all__ = [
    "alternate",
    "PathState",
    "LowRankPath",
    "dense_metric_path",
    "reference_path",
    "reference_paths",
    "objective",
    "initial_step",
    "ExactGStep",
]


# ---------------------------------------------------------------------------- bookkeeping
class _Histories:
    """The objective histories of a :class:`PathState` as a read-only sequence of lists
    (``histories[i]``: problem ``i``'s objectives in order)."""

    def __init__(self, state: PathState) -> None:
        self._state = state

    def __len__(self) -> int:
        return int(self._state.lengths.shape[0])

    def __getitem__(self, i: int) -> list[float]:
        return self._state.history(i).tolist()

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))


class _HistoryArrays(_Histories):
    """The objective histories of a :class:`PathState` as a read-only sequence of arrays
    (``histories[i]``: a copy of problem ``i``'s, :meth:`PathState.history`), each made
    when read: a batch's paths (e.g. the CV's fold paths) whose histories nobody reads
    copy none of them."""

    def __getitem__(self, i: int) -> np.ndarray:  # type: ignore[override]
        return self._state.history(i)


@dataclass
class PathState:
    """The bookkeeping of Algorithm 1's outer loop for a batch of problems, shared by every
    path (the dense reference path, one problem; the square loss's structured path; the
    hinge loss's low-rank path): objective histories, iteration counts, the stopping rule
    (:meth:`record`: the last relative decrease of the objective at most ``tol``) and the
    recorded g-step path.
    ``idx``: the problems still running (a slice while all are).

    ``path[i, k]`` is problem ``i``'s g-step solution for the metric after ``k + 1``
    outer iterations, i.e. the final ``g`` of a fit with ``max_iter = k + 1`` and
    ``tol=None``: iteration ``k + 1`` writes ``path[:, k]`` (:meth:`record`) and the
    final g-step writes ``path[i, n_iter[i] - 1]`` (:meth:`finish`).

    The histories are one array (``values[i, :lengths[i]]``: problem ``i``'s objectives),
    written and tested for convergence a batch at a time: the same values and stopping
    decisions as a list per problem tested one at a time (the same floating-point
    operations; ``tests/mvml/test_driver.py`` compares them).
    """

    values: np.ndarray
    lengths: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    path: np.ndarray | None
    idx: Any = field(default_factory=lambda: slice(None))

    @classmethod
    def start(cls, n: int, d: int, max_iter: int, record_path: bool) -> PathState:
        return cls(
            values=np.empty((n, max_iter + 1)),  # max_iter records, then the final one
            lengths=np.zeros(n, dtype=int),
            n_iter=np.zeros(n, dtype=int),
            converged=np.zeros(n, dtype=bool),
            path=np.zeros((n, max_iter, d)) if record_path else None,
        )

    @property
    def histories(self) -> _Histories:
        """Problem ``i``'s objective history as a list: ``histories[i]``."""
        return _Histories(self)

    def history(self, i: int) -> np.ndarray:
        """Problem ``i``'s objective history (a copy)."""
        return self.values[i, : self.lengths[i]].copy()

    def _append(self, rows: Any, obj: np.ndarray) -> np.ndarray:
        """Append ``obj`` to the histories of ``rows``; returns their earlier lengths."""
        at = self.lengths[rows]
        if at.size and int(at.max()) >= self.values.shape[1]:  # room for more
            self.values = np.concatenate([self.values, np.empty_like(self.values)], axis=1)
        self.values[rows, at] = obj
        self.lengths[rows] = at + 1
        return at

    def record(self, it: int, g: np.ndarray, obj: np.ndarray, tol: float | None) -> None:
        """Iteration ``it`` of the running problems: g-step ``g``, objective ``obj``."""
        idx = self.idx
        self.n_iter[idx] = it + 1
        if self.path is not None and it > 0:
            self.path[idx, it - 1] = g
        rows = np.arange(self.lengths.shape[0]) if isinstance(idx, slice) else idx
        obj = np.asarray(obj, dtype=np.float64).reshape(-1)
        at = self._append(rows, obj)
        if tol is not None:
            # the stopping rule on each history: |h[-2] - h[-1]| <= tol max(|h[-2]|, tiny)
            prev = self.values[rows, np.maximum(at - 1, 0)]
            bound = tol * np.maximum(np.abs(prev), np.finfo(float).tiny)
            with np.errstate(invalid="ignore"):
                done = (at >= 1) & (np.abs(prev - obj) <= bound)
            self.converged[rows[done]] = True
            if self.converged.any():
                self.idx = np.flatnonzero(~self.converged)

    def finish(self, i: int, g: np.ndarray, obj: float) -> None:
        """Problem ``i``'s final g-step and its objective."""
        if self.path is not None:
            self.path[i, self.n_iter[i] - 1] = g
        self._append(np.array([i]), np.array([float(obj)]))

    def finish_all(self, obj: np.ndarray) -> None:
        """The final objective of every problem (their final g-steps: the caller's)."""
        self._append(np.arange(self.lengths.shape[0]), np.asarray(obj, dtype=np.float64))


def alternate(
    run: PathState,
    max_iter: int,
    tol: float | None,
    iteration: Callable[[int, Any], tuple[np.ndarray, np.ndarray]],
) -> None:
    """Algorithm 1's outer loop, the one every path runs.

    ``iteration(it, idx)`` performs outer iteration ``it`` of the problems ``idx`` still
    running (``run.idx``: a slice while all are, else their indices): the g-step, the
    w-step and the A-steps of that path, and returns the g-step solutions (one row per
    problem) and the objective after the A-steps. :meth:`PathState.record` keeps them and
    applies the stopping rule; the loop ends after ``max_iter`` iterations or when every
    problem has stopped. The final g-step is the caller's (:meth:`PathState.finish`).
    """
    for it in range(max_iter):
        idx = run.idx
        if not isinstance(idx, slice) and idx.size == 0:
            break
        g, obj = iteration(it, idx)
        run.record(it, g, obj, tol)


# ------------------------------------------------------------------- square loss, structured
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
    about four times.
    """
    lam = np.asarray(lam, dtype=np.float64)
    Bb = np.asarray(Bb, dtype=np.float64)
    n, d = Bb.shape
    alpha, eta, yy = (
        np.broadcast_to(np.asarray(x, dtype=np.float64), (n,)).copy() for x in (alpha, eta, yy)
    )
    mets = LowRankMetrics.identity(n, d, max_iter * n_a_steps, full_dim=dim)
    state = PathState.start(n, d, max_iter, record_path)
    step = ExactGStep(lam) if gstep is None else gstep

    def iteration(it: int, idx: Any) -> tuple[np.ndarray, np.ndarray]:
        g, gMg, s_obj = _outer_iteration(
            mets, step, Bb[idx], idx, alpha[idx], eta[idx], n_a_steps, step_size
        )
        return g, _data_term(Bb[idx], yy[idx], g, gMg) + s_obj

    alternate(state, max_iter, tol, iteration)
    return _final_path(mets, step, Bb, yy, alpha, eta, state)


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


def _data_term(Bb: np.ndarray, yy: np.ndarray, G: np.ndarray, gMg: np.ndarray) -> np.ndarray:
    """``||y - U D_w g||^2 = y^T y - 2 b^T g + g^T M g`` (clipped at 0), stacked."""
    return np.maximum(yy - 2.0 * np.einsum("bd,bd->b", Bb, G) + gMg, 0.0)


def _outer_iteration(
    mets: LowRankMetrics,
    gstep: Any,
    Bb: np.ndarray,
    idx: Any,
    alpha: np.ndarray,
    eta: np.ndarray,
    n_a_steps: int,
    step_size: float | str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One outer iteration of the problems ``idx``: the g-step, then ``n_a_steps``
    A-steps (the metrics updated in place). Returns ``g``, ``g^T M g`` and the metric
    part of the objective."""
    r = mets.r
    sa = mets.s[idx]
    g, v, z, gMg = gstep.solve(idx, sa, mets.WT[idx, :r], mets.sc[idx, :r], alpha, Bb)
    s_obj = np.zeros(g.shape[0])
    for step in range(n_a_steps):
        if step == 0:  # q = A^{-1} g = z, W^T q = v, W^T g = s v + W^T W v (g-step)
            Ga = mets.gram[idx, : mets.r, : mets.r]
            q, Wq = z, v
            xg = sa[:, None] * v + np.matmul(Ga, v[:, :, None])[:, :, 0]
        else:
            q, Wq, xg = mets.solve(idx, g)
        s_obj = mets.a_step(idx, g, q, Wq, xg, alpha, eta, step_size)
    return g, gMg, s_obj


def _final_path(
    mets: LowRankMetrics,
    step: Any,
    Bb: np.ndarray,
    yy: np.ndarray,
    alpha: np.ndarray,
    eta: np.ndarray,
    state: PathState,
) -> LowRankPath:
    """The final g-step of every problem (``G`` is the exact minimiser for the returned
    metric), its objective, and the path."""
    n, d = Bb.shape
    r = mets.r
    WT, sc, gram = mets.WT[:, :r], mets.sc[:, :r], mets.gram[:, :r, :r]
    s = mets.s
    G, _, Z, gMg = step.solve(slice(None), s, WT, sc, alpha, Bb)
    if state.path is not None:
        state.path[np.arange(n), state.n_iter - 1] = G
    W = np.swapaxes(WT * sc[:, :, None], 1, 2)  # (n, d, r)
    quad = np.einsum("bd,bd->b", G, Z)  # <g, A^{-1} g> with A^{-1} g = z
    obj = _data_term(Bb, yy, G, gMg) + alpha * quad + eta * _frob2(s, gram, mets.dim)
    state.finish_all(obj)
    return LowRankPath(
        G=G,
        s=s,
        W=W,
        history=_HistoryArrays(state),
        n_iter=state.n_iter,
        converged=state.converged,
        path=state.path,
    )


# ---------------------------------------------------------------------------- reference path
def objective(
    loss: Any,
    problem: MVMLProblem,
    t: int,
    metric: Metric,
    g: np.ndarray,
    w: np.ndarray,
) -> float:
    """Algorithm 1's objective for target column ``t`` (``loss``: a
    :class:`~mvkernels.mvml._losses.Loss`): the loss's data term plus
    ``alpha <g, A^+ g>`` plus ``eta R(A)`` for a learned metric."""
    val = loss.data_loss(problem, t, g, w) + loss.alpha * metric.factor.quad(g)
    if loss.metric_kind.learned:
        val += loss.eta * metric.penalty(loss.metric_kind, problem.n_views)
    return val


def initial_step(loss: Any, metric: Metric, g: np.ndarray) -> float:
    """``step_size="auto"``: the first A-step moves A by at most ``||A||_F``.

    ``mu0 = ||A||_F / ||grad||_F`` with ``grad`` the gradient of the smooth part
    (capped by :func:`~mvkernels.mvml._metric.dense_step_cap` in the dense case, inside
    :func:`~mvkernels.mvml._metric.metric_step`).
    """
    if not (isinstance(loss.step_size, str) and loss.step_size == "auto"):
        return float(loss.step_size)
    A = metric.dense()
    q = metric.factor.solve(g)
    grad = -loss.alpha * np.outer(q, q) + loss.metric_kind.smooth_gradient(A, loss.eta)
    return float(first_step_size(float(np.linalg.norm(A)), float(np.linalg.norm(grad)), loss.eta))


def reference_path(
    loss: Any,
    problem: MVMLProblem,
    t: int,
    metric0: Metric,
    record_path: bool = False,
) -> dict:
    """Algorithm 1 for target column ``t`` alone: :func:`reference_paths` with one
    target (the same result as that target's entry of a batch, to rounding)."""
    return reference_paths(loss, problem, metric0, [t], record_path)[0]


@dataclass
class _Target:
    """The running state of one target column at one ``(alpha, eta)`` on the dense
    reference path (``loss``: the loss at that pair, shared by its targets)."""

    loss: Any
    t: int
    metric: Metric
    w: np.ndarray
    state: Any
    g: np.ndarray
    path_w: list = field(default_factory=list)
    mu_next: float | None = None


def _shared_g_steps(problem: MVMLProblem, runs: list[_Target]) -> np.ndarray:
    """The g-steps of the runs ``runs`` (one row each), batched where they share the
    metric and the view weights (the same objects: every run before its first
    A-step and w-step, and all of them throughout with a fixed metric and fixed
    weights), in first-appearance order.

    Within such a group each ``(alpha, target)`` is solved once (the runs at the ``eta``
    of one ``alpha`` share their first g-step; a run of a loss with solver state, the
    hinge loss, gets a copy of the solver's state, which the same g-steps on the same
    data made equal): one :meth:`Loss.g_steps` call per ``alpha`` (all its targets on
    one factorisation), or, for a loss without solver state and several ``alpha``, one
    :meth:`Loss.g_steps_path` call for every ``alpha``."""
    groups: dict[tuple[int, int], list[int]] = {}
    for j, r in enumerate(runs):
        groups.setdefault((id(r.metric), id(r.w)), []).append(j)
    G = np.empty((len(runs), runs[0].g.shape[0]))
    for js in groups.values():
        r0 = runs[js[0]]
        first: dict[tuple[float, int], int] = {}  # (alpha, target) -> the run solving it
        for j in js:
            first.setdefault((float(runs[j].loss.alpha), runs[j].t), j)
        by_alpha: dict[float, list[int]] = {}
        for (a, _), k in first.items():
            by_alpha.setdefault(a, []).append(k)
        if r0.state is None and len(by_alpha) > 1:
            targets = list(dict.fromkeys(runs[k].t for k in first.values()))
            X = r0.loss.g_steps_path(
                problem, targets, r0.metric.factor, r0.w, np.array(list(by_alpha))
            )
            for i, ks in enumerate(by_alpha.values()):
                for k in ks:
                    G[k] = X[i, targets.index(runs[k].t)]
        else:
            for ks in by_alpha.values():
                G[ks] = runs[ks[0]].loss.g_steps(
                    problem,
                    [runs[k].t for k in ks],
                    r0.metric.factor,
                    r0.w,
                    [runs[k].state for k in ks],
                )
        for j in js:
            k = first[(float(runs[j].loss.alpha), runs[j].t)]
            if k != j:
                G[j] = G[k]
                if runs[k].state is not None:
                    runs[j].state = copy.deepcopy(runs[k].state)
    return G


#: the most bytes of metrics and factors (two ``d x d`` arrays a run) that a
#: regularisation path holds at once: a larger grid runs in chunks (:func:`_grid_chunks`)
GRID_BYTES = 256 * 2**20


def _grid_chunks(grid: list, pair_bytes: int) -> list[list]:
    """``grid`` cut into consecutive chunks of at most :data:`GRID_BYTES` (a pair's runs
    taking ``pair_bytes``), whole ``alpha`` blocks together where they fit (their runs
    share their first g-step), one pair at least."""
    per_chunk = max(1, GRID_BYTES // max(pair_bytes, 1))
    blocks: list[list] = []
    for pair in grid:
        if blocks and blocks[-1][0][0] == pair[0] and len(blocks[-1]) < per_chunk:
            blocks[-1].append(pair)
        else:
            blocks.append([pair])
    chunks: list[list] = []
    for block in blocks:
        if chunks and len(chunks[-1]) + len(block) <= per_chunk:
            chunks[-1].extend(block)
        else:
            chunks.append(list(block))
    return chunks


def reference_paths(
    loss: Any,
    problem: MVMLProblem,
    metric0: Metric,
    targets: Any = None,
    record_path: bool = False,
    grid: Any = None,
) -> list[dict]:
    """Alternate g-, w- and A-steps for the target columns ``targets`` (Algorithm 1).

    The dense reference path: any loss, any metric (``metric0``: its initial value ``A0``
    with its factorisation, as the metric kind builds it,
    :meth:`~mvkernels.mvml._metric.MetricKind.initial_metric`; a dense ``A0 = I`` tracks
    ``s I + V V^T`` under the dense A-steps, so that the fitted model stores ``V``, not
    ``A``: see ``MetricStack.from_metrics``), learned or fixed weights; the hyperparameters are the
    loss's (the estimator's, copied). A fixed metric with fixed weights needs one g-step.
    With ``record_path``, ``path[k]`` is the g-step solution for the metric after ``k + 1``
    outer iterations (the final ``g`` of a fit with ``max_iter = k + 1``, ``tol=None``),
    with its weights ``path_w[k]``.

    The targets are independent problems run as one batch of :func:`alternate` (one
    :class:`PathState`): their g-steps are batched while they share the metric and the
    weights (:meth:`~mvkernels.mvml._losses.Loss.g_steps`: every target's first g-step,
    whose ``A0`` and ``w = 1/v`` are common, and every g-step of a fixed metric with
    fixed weights, e.g. full-kernel MVML_I / MVML_Cov: one factorisation, all right-hand
    sides at once); their w-steps and A-steps, on metrics that differ after the first
    step, run one target at a time. Each target's result is the one of a run on it
    alone, to rounding. ``targets``: None, every column of ``problem``.

    ``grid``: a regularisation path, ``(alpha, eta)`` pairs (None: the loss's own
    pair). Every target runs at every pair, in the same batch (the loss at each pair:
    :meth:`~mvkernels.mvml._losses.Loss.at`); the results are pair-major (pair ``p``,
    target ``i``: entry ``p * len(targets) + i``), each the one of a run at that pair
    alone, to rounding. The pairs share what ``A0`` makes common (:func:`_shared_g_steps`):
    the first g-step of an ``alpha`` is computed once for all its ``eta`` (the same
    ``A0`` and ``w``), the first g-steps of every ``alpha`` in one call
    (:meth:`~mvkernels.mvml._losses.Loss.g_steps_path`; the square loss forms the
    products with the factor of ``A0`` once, then factors ``S + alpha I`` per
    ``alpha``, or, for many, decomposes ``S`` once), and the first w-step of a target
    once per ``alpha``.
    """
    targets = list(range(problem.n_targets) if targets is None else targets)
    if grid is not None:
        chunks = _grid_chunks(list(grid), len(targets) * 16 * metric0.dim**2)
        if len(chunks) > 1:
            return [
                r
                for chunk in chunks
                for r in reference_paths(loss, problem, metric0, targets, record_path, chunk)
            ]
    losses = [loss] if grid is None else [loss.at(a, e) for a, e in grid]
    n, v, d = len(losses) * len(targets), problem.n_views, metric0.dim
    kind = loss.metric_kind
    learned = kind.learned
    alternates = learned or loss.learn_weights
    w0 = np.full(v, 1.0 / v)
    runs = [
        _Target(loss=lp, t=t, metric=metric0, w=w0, state=lp.new_state(), g=np.zeros(d))
        for lp in losses
        for t in targets
    ]
    run = PathState.start(n, d, loss.max_iter, record_path)

    def a_steps(r: _Target) -> None:
        lp = r.loss
        for _ in range(lp.n_a_steps):
            mu0 = initial_step(lp, r.metric, r.g) if r.mu_next is None else r.mu_next
            r.metric, mu = r.metric.a_step(
                r.g,
                lp.alpha,
                lp.eta,
                kind,
                v,
                mu0,
                threshold=lp.sparse_threshold,
                eig_floor=lp.eig_floor,
            )
            r.mu_next = next_step_size(mu > 0, mu, r.mu_next)

    def iteration(it: int, idx: Any) -> tuple[np.ndarray, np.ndarray]:
        rows = range(n) if isinstance(idx, slice) else idx
        live = [runs[i] for i in rows]
        G = _shared_g_steps(problem, live)
        obj = np.empty(len(live))
        # runs whose g-step was shared (one alpha and target, the same factor and
        # weights, no solver state) share their w-step too
        w_steps: dict[tuple, np.ndarray] = {}
        for j, r in enumerate(live):
            key = (id(r.metric), id(r.w), float(r.loss.alpha), r.t)
            r.g = G[j]
            if it > 0:
                r.path_w.append(r.w)
            if loss.learn_weights:
                if r.state is not None or key not in w_steps:
                    w_steps[key] = r.loss.w_step(problem, r.t, r.g, r.w)
                r.w = w_steps[key]
            if learned:
                a_steps(r)
            obj[j] = objective(r.loss, problem, r.t, r.metric, r.g, r.w)
        return G, obj

    # a fixed metric with fixed weights: one g-step is the minimiser
    alternate(run, loss.max_iter if alternates else 1, loss.tol, iteration)
    if alternates:  # final g-step: coef_ is the exact minimiser for the metric and weights
        G = _shared_g_steps(problem, runs)
        for i, r in enumerate(runs):
            r.g = G[i]
            run.finish(i, r.g, objective(r.loss, problem, r.t, r.metric, r.g, r.w))
    elif run.path is not None:
        run.path[:, 0] = [r.g for r in runs]
    out: list[dict] = []
    for i, r in enumerate(runs):
        r.path_w.append(r.w)
        n_iter = int(run.n_iter[i])
        res = dict(
            metric=r.metric,
            g=r.g,
            w=r.w,
            history=run.history(i),
            n_iter=n_iter,
            converged=bool(run.converged[i]) or not alternates,
            state=r.state,
        )
        if run.path is not None:
            res["path"] = run.path[i, :n_iter].copy()
            res["path_w"] = np.asarray(r.path_w)
        out.append(res)
    return out

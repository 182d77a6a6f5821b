"""Algorithm 1's outer loop: the g-step, the w-step and the A-steps, alternated.

One loop, :func:`alternate`, with one bookkeeping (:class:`PathState`: objective
histories, iteration counts, the stopping rule and the recorded path along the
iterations). A path supplies only the body of an outer iteration, declared by
:class:`PathBody` (``g_steps``, ``a_steps`` (the w-steps and A-steps), ``objective``,
and ``finish``: the final g-steps and the results), and :func:`run_paths` runs it. The
bodies, each in its loss's module:

* :func:`reference_paths`: the dense reference path, any loss
  (:class:`~mvkernels.mvml._losses.Loss`: its g-step, data term and w-step) and any
  metric (dense matrices, :func:`~mvkernels.mvml._metric.metric_step`), the target
  columns as one batch: g-steps shared while the targets share the metric and the
  weights (the first one always), A-steps and w-steps per target;
* :class:`~mvkernels.mvml._square_paths.SquarePaths`: the square loss's structured path
  (:func:`~mvkernels.mvml._square_paths.dense_metric_path`), a batch of problems with the
  low-rank dense metric ``s I + W W^T`` (:mod:`mvkernels.mvml._lowrank`) and one shared
  eigendecomposition;
* :class:`~mvkernels.mvml._hinge_paths.HingePaths`: the hinge loss's low-rank path
  (``HingeLoss.dense_paths``), whose g-steps are SVM solves.

Every path stops a problem when the relative decrease of its objective falls below
``tol``, ``|h[-2] - h[-1]| <= tol max(|h[-2]|, tiny)`` (the one stopping rule,
:meth:`PathState.record`), and ends with a final g-step, so that ``coef_`` is the exact
minimiser for the returned metric and weights.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np

from ._metric import Metric, first_step_size, next_step_size
from ._problem import MVMLProblem

__all__ = [
    "alternate",
    "PathBody",
    "run_paths",
    "PathState",
    "PathResult",
    "reference_paths",
    "ReferencePaths",
    "objective",
    "initial_step",
]


# ---------------------------------------------------------------------------- results
@dataclass
class PathResult:
    """The result of Algorithm 1 for one problem (a target column, at one ``(alpha,
    eta)``), as every path returns it (:meth:`PathBody.finish`: the dense reference path,
    the square loss's and the hinge loss's structured paths, a fixed metric's single
    g-step).

    Attributes
    ----------
    metric : Metric
        The final metric (:class:`~mvkernels.mvml._metric.Metric`, in its stored form).
    g : ndarray of shape (d,)
        The final g-step's solution (the exact minimiser for ``metric`` and ``w``).
    w : ndarray of shape (n_views,)
        The final view weights.
    history : ndarray
        The objective after every outer iteration, then after the final g-step.
    n_iter : int
        Outer iterations run.
    converged : bool
        Whether the stopping rule stopped it (True for a fixed metric and weights).
    state : object or None
        The loss's solver state (the hinge loss's
        :class:`~mvkernels.mvml._hinge_state.HingeState`; None for the square loss).
    path, path_w : ndarray or None
        With a recorded path: ``path[k]`` the g-step solution for the metric after
        ``k + 1`` outer iterations, with its weights ``path_w[k]``.
    intercept : float
        The offset (set by the estimator from ``g`` and ``w``; 0 without an intercept).
    cg_iter, cg_products : int or None
        ``solver="cg"``: conjugate-gradient iterations and products with the data.
    """

    metric: Metric
    g: np.ndarray
    w: np.ndarray
    history: np.ndarray
    n_iter: int
    converged: bool
    state: Any = None
    path: np.ndarray | None = None
    path_w: np.ndarray | None = None
    intercept: float = 0.0
    cg_iter: int | None = None
    cg_products: int | None = None


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


_R_co = TypeVar("_R_co", covariant=True)
_R = TypeVar("_R")


class PathBody(Protocol[_R_co]):
    """The body of Algorithm 1's outer iteration for one path (a loss's batched solver),
    which :func:`run_paths` runs inside :func:`alternate`.

    ``idx`` is :attr:`PathState.idx`, the problems still running (a slice while all are,
    else their indices). An iteration is :meth:`g_steps`, then :meth:`a_steps`, then
    :meth:`objective`; after the loop, :meth:`finish` runs the final g-steps, records
    their objectives (:meth:`PathState.finish` / :meth:`PathState.finish_all`) and
    returns the path's results.
    """

    def g_steps(self, it: int, idx: Any) -> np.ndarray:
        """Iteration ``it``'s g-steps of the problems ``idx``: one row of ``g`` each."""
        ...

    def a_steps(self, idx: Any, G: np.ndarray) -> None:
        """The w-steps and A-steps after the g-steps ``G`` (their metrics and weights
        updated)."""
        ...

    def objective(self, idx: Any, G: np.ndarray) -> np.ndarray:
        """Algorithm 1's objective of the problems ``idx`` after the steps, one each."""
        ...

    def finish(self, run: PathState) -> _R_co:
        """The final g-steps (``coef_`` the exact minimiser for the last metric and
        weights), their objectives recorded in ``run``, and the results."""
        ...


def run_paths(body: PathBody[_R], run: PathState, max_iter: int, tol: float | None) -> _R:
    """Algorithm 1 on the path ``body``: :func:`alternate` with its iteration
    (:meth:`PathBody.g_steps`, :meth:`PathBody.a_steps`, :meth:`PathBody.objective`),
    then :meth:`PathBody.finish`."""

    def iteration(it: int, idx: Any) -> tuple[np.ndarray, np.ndarray]:
        G = body.g_steps(it, idx)
        body.a_steps(idx, G)
        return G, body.objective(idx, G)

    alternate(run, max_iter, tol, iteration)
    return body.finish(run)


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
) -> list[PathResult]:
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
    d = metric0.dim
    w0 = np.full(problem.n_views, 1.0 / problem.n_views)
    runs = [
        _Target(loss=lp, t=t, metric=metric0, w=w0, state=lp.new_state(), g=np.zeros(d))
        for lp in losses
        for t in targets
    ]
    body = ReferencePaths(loss, problem, runs)
    run = PathState.start(len(runs), d, loss.max_iter, record_path)
    # a fixed metric with fixed weights: one g-step is the minimiser
    return run_paths(body, run, loss.max_iter if body.alternates else 1, loss.tol)


@dataclass(eq=False)
class ReferencePaths:
    """The body of Algorithm 1's outer iteration on the dense reference path (a
    :class:`PathBody`), for the runs ``runs`` (one target column at one ``(alpha, eta)``
    each, :class:`_Target`) of ``problem``; ``loss``: the loss of the path (its metric
    kind, ``learn_weights``, ``n_a_steps``...; each run's ``alpha`` and ``eta`` are its
    own loss's).

    An iteration is the g-steps, batched where the runs share the metric and the weights
    (:meth:`g_steps`, :func:`_shared_g_steps`), each run's w-step (shared by the runs
    whose g-step was shared) and A-steps (:meth:`a_steps`), and Algorithm 1's objective
    (:meth:`objective`); :meth:`finish` runs the final g-steps (when the path
    alternates) and returns one result per run."""

    loss: Any
    problem: MVMLProblem
    runs: list[_Target]

    def __post_init__(self) -> None:
        self.kind = self.loss.metric_kind
        #: whether anything is learned (else one g-step is the minimiser)
        self.alternates = bool(self.kind.learned or self.loss.learn_weights)

    def _live(self, idx: Any) -> list[_Target]:
        rows = range(len(self.runs)) if isinstance(idx, slice) else idx
        return [self.runs[i] for i in rows]

    def g_steps(self, it: int, idx: Any) -> np.ndarray:
        """The g-steps of the running runs (shared where they share the metric and the
        weights); the weights of the previous iterate recorded."""
        live = self._live(idx)
        G = _shared_g_steps(self.problem, live)
        for j, r in enumerate(live):
            r.g = G[j]
            if it > 0:
                r.path_w.append(r.w)
        return G

    def a_steps(self, idx: Any, G: np.ndarray) -> None:
        """Each running run's w-step (learned weights; runs whose g-step was shared, of
        one ``alpha`` and target with the same factor and weights and no solver state,
        share it) and its A-steps (a learned metric)."""
        live = self._live(idx)
        if self.loss.learn_weights:
            w_steps: dict[tuple, np.ndarray] = {}
            keys = [(id(r.metric), id(r.w), float(r.loss.alpha), r.t) for r in live]
            for r, key in zip(live, keys):
                if r.state is not None or key not in w_steps:
                    w_steps[key] = r.loss.w_step(self.problem, r.t, r.g, r.w)
                r.w = w_steps[key]
        if self.kind.learned:
            for r in live:
                self._metric_steps(r)

    def _metric_steps(self, r: _Target) -> None:
        """Run ``r``'s ``n_a_steps`` A-steps (:meth:`~mvkernels.mvml._metric.Metric.a_step`),
        its step size carried from one to the next."""
        lp = r.loss
        for _ in range(lp.n_a_steps):
            mu0 = initial_step(lp, r.metric, r.g) if r.mu_next is None else r.mu_next
            r.metric, mu = r.metric.a_step(
                r.g,
                lp.alpha,
                lp.eta,
                self.kind,
                self.problem.n_views,
                mu0,
                threshold=lp.sparse_threshold,
                eig_floor=lp.eig_floor,
            )
            r.mu_next = next_step_size(mu > 0, mu, r.mu_next)

    def objective(self, idx: Any, G: np.ndarray) -> np.ndarray:
        """Algorithm 1's objective of each running run (:func:`objective`)."""
        return np.array(
            [objective(r.loss, self.problem, r.t, r.metric, r.g, r.w) for r in self._live(idx)]
        )

    def finish(self, run: PathState) -> list[PathResult]:
        """The final g-steps (``coef_`` the exact minimiser for the metric and weights)
        when the path alternates, and one result per run."""
        runs, problem = self.runs, self.problem
        if self.alternates:
            G = _shared_g_steps(problem, runs)
            for i, r in enumerate(runs):
                r.g = G[i]
                run.finish(i, r.g, objective(r.loss, problem, r.t, r.metric, r.g, r.w))
        elif run.path is not None:
            run.path[:, 0] = [r.g for r in runs]
        out: list[PathResult] = []
        for i, r in enumerate(runs):
            r.path_w.append(r.w)
            n_iter = int(run.n_iter[i])
            recorded = run.path is not None
            out.append(
                PathResult(
                    metric=r.metric,
                    g=r.g,
                    w=r.w,
                    history=run.history(i),
                    n_iter=n_iter,
                    converged=bool(run.converged[i]) or not self.alternates,
                    state=r.state,
                    path=run.path[i, :n_iter].copy() if recorded else None,
                    path_w=np.asarray(r.path_w) if recorded else None,
                )
            )
        return out

"""The hinge loss's low-rank dense path: the body of Algorithm 1's outer iteration for a
batch of hinge-loss problems, run by :func:`~mvkernels.mvml._driver.run_paths`.

:class:`HingePaths` is one batch: every ``(eta, target)`` pair of one ``alpha``
(``eta``-major), each with the metric ``A = s I + W W^T``
(:class:`~mvkernels.mvml._lowrank.LowRankMetrics`, the square loss's structured A-step)
and the g-step of MVML-SVM (eq. 7-8): a bias-free linear SVM with box ``C' s`` on the
features ``x_i / sqrt(s) = [phi_i, W^T phi_i / sqrt(s)]`` (``C' = C / (2 alpha)``;
with ``fit_intercept`` the offset's constant column last), solved by
:meth:`HingeLoss.svm_g <mvkernels.mvml._hinge_loss.HingeLoss.svm_g>` (warm-started
from the previous exact solution; the warm starts of all paths in one batch,
:meth:`HingeLoss.warm_g_steps <mvkernels.mvml._hinge_loss.HingeLoss.warm_g_steps>`).
Its parts, as :class:`~mvkernels.mvml._driver.PathBody` declares them:

* :meth:`HingePaths.g_steps`: the first g-step (``A = I``, the same for every ``eta``)
  solved once per target, for all targets at once (:meth:`HingeLoss.first_g_steps
  <mvkernels.mvml._hinge_loss.HingeLoss.first_g_steps>`), and shared by every ``eta``
  with a copy of its solver state; the later ones warm-started in lockstep;
* :meth:`HingePaths.a_steps`: ``n_a_steps`` low-rank A-steps of the running paths;
* :meth:`HingePaths.objective`: the hinge loss of the g-step's margins (with the
  offset's penalty) plus the metric part of the objective;
* :meth:`HingePaths.finish`: the final g-steps and the results
  (:class:`HingePathResults`).

The state is typed: the targets (:class:`~mvkernels.mvml._hinge_state._Targets`), the
metrics, the solver states (:class:`~mvkernels.mvml._hinge_state.HingeState`), the
boxes ``C'`` at ``A = I`` and the feature buffer (``X``: ``phi_i`` written once, the
metric's columns rewritten per g-step); what one g-step hands to the SVM solver beside its
features is a :class:`_GStep` (the objective under the current metric, the previous
solution's value, ``g`` from ``v`` and the features rebuilt for the final multipliers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ._driver import PathResult, PathState, run_paths
from ._hinge import svm_c_prime
from ._hinge_active import FirstSolutions
from ._hinge_state import HingeState, RowSubsets, _Targets
from ._lowrank import LowRankMetrics
from ._problem import MVMLProblem

__all__ = ["HingePaths", "HingePathResults", "hinge_dense_paths"]


class _HingeSolver(Protocol):
    """What the path reads of its loss (a :class:`~mvkernels.mvml._hinge_loss.HingeLoss`
    at the path's ``alpha``; not imported here: that module runs this one)."""

    alpha: float
    max_iter: int
    n_a_steps: int
    tol: float | None
    step_size: Any
    fit_intercept: bool

    def hinge_weight(self, problem: MVMLProblem) -> float: ...

    def offset_column(self, box: float) -> float | None: ...

    def offset_penalty(self, problem: MVMLProblem, b: float) -> float: ...

    def hinge_from_margins(self, problem: MVMLProblem, m: np.ndarray) -> float: ...

    def margin_loss(self, problem: MVMLProblem, state: HingeState) -> float: ...

    def first_g_steps(
        self, problem: MVMLProblem, X: np.ndarray, states: list, *a: Any, **k: Any
    ) -> None: ...

    def warm_g_steps(
        self,
        problem: MVMLProblem,
        Phi: np.ndarray,
        mets: LowRankMetrics,
        states: list,
        paths: list,
        *a: Any,
    ) -> None: ...

    def svm_g(
        self,
        problem: MVMLProblem,
        t: int,
        X: np.ndarray,
        state: HingeState,
        value: Any,
        objective: Any,
        ref: Any,
        c_scale: float = 1.0,
        rebuild: Any = None,
    ) -> np.ndarray: ...


@dataclass
class HingePathResults:
    """What :meth:`HingePaths.finish` returns.

    Attributes
    ----------
    results : list of PathResult
        One result per ``(eta, target)`` pair, ``eta``-major, with its recorded path.
    first_margins : list of ndarray
        Per target, the margins of its first g-step (``A = I``), e.g. to choose the
        working set of the next ``alpha``'s.
    first_solutions : FirstSolutions or None
        The first g-steps solved exactly here (without row subsets), which the next
        larger box's first g-steps start from.
    """

    results: list[PathResult]
    first_margins: list[np.ndarray]
    first_solutions: FirstSolutions | None = None


@dataclass(frozen=True)
class _Features:
    """The features of path ``b``'s g-step, ``x_i / sqrt(s) = [phi_i, W^T phi_i /
    sqrt(s), c]`` on the rows ``Phi`` (``W``: the metric's columns at the g-step,
    ``col``: the offset's column or None), written in a buffer of ``width`` columns."""

    Phi: np.ndarray
    W: np.ndarray
    sq: float
    col: float | None
    d: int
    width: int

    def value(self, vv: np.ndarray) -> np.ndarray:
        """``g = F v`` with ``v = vv / sqrt(s)`` (``F = [sqrt(s) I, W]``)."""
        d, r = self.d, self.W.shape[1]
        return vv[:d] + self.W @ (vv[d : d + r] / self.sq)

    def write(self, X: np.ndarray) -> None:
        """The metric's columns and the offset's column into the buffer ``X`` (whose
        first ``d`` columns hold ``Phi``)."""
        d, r = self.d, self.W.shape[1]
        if r:
            X[:, d : d + r] = (self.Phi @ self.W) / self.sq
        if self.col is not None:
            X[:, -1] = self.col

    def buffer(self) -> np.ndarray:
        """A new buffer with every row's features."""
        X = np.zeros((self.Phi.shape[0], self.width))
        X[:, : self.d] = self.Phi
        self.write(X)
        return X

    def rebuild(self, rows: np.ndarray) -> np.ndarray:
        """The features of ``rows``, for the final multipliers (read at the end of the
        fit only: the buffer holds another metric's columns by then)."""
        Xb = np.zeros((rows.size, self.width))
        Xb[:, : self.d] = self.Phi[rows]
        Xb[:, self.d : self.d + self.W.shape[1]] = (self.Phi[rows] @ self.W) / self.sq
        if self.col is not None:
            Xb[:, -1] = self.col
        return Xb


@dataclass(frozen=True)
class _GStep:
    """What :meth:`HingeLoss.svm_g` reads of path ``b``'s g-step beside its features:
    the objective of a candidate under the current metric and the previous solution's
    (``g_old``, its margins and offset; read only after an inexact solve)."""

    paths: HingePaths
    b: int
    problem: MVMLProblem
    g_old: np.ndarray | None
    m_old: np.ndarray | None
    off_old: float

    def ref(self) -> float | None:
        """The objective of the previous ``g`` under the current metric (None: none);
        its margins do not depend on the metric (fixed weights)."""
        if self.g_old is None:
            return None
        p = self.paths
        q_old = p.mets.solve([self.b], self.g_old[None])[0][0]
        return (
            p.loss.hinge_from_margins(self.problem, self.m_old)
            + p.loss.offset_penalty(self.problem, self.off_old)
            + p.alpha * float(self.g_old @ q_old)
        )

    def objective(self, g: np.ndarray, m: np.ndarray) -> float:
        """The hinge loss of the margins ``m`` plus ``alpha <g, A^{-1} g>``."""
        p = self.paths
        q = p.mets.solve([self.b], g[None])[0][0]
        return p.loss.hinge_from_margins(self.problem, m) + p.alpha * float(g @ q)


@dataclass(eq=False)
class HingePaths:
    """The low-rank dense paths of every ``(eta, target)`` pair at the loss's ``alpha``
    (``eta``-major: path ``b`` is target ``b mod T`` at ``etas[b // T]``); see the module
    docstring and :meth:`HingeLoss.dense_paths
    <mvkernels.mvml._hinge_loss.HingeLoss.dense_paths>` for the parameters.

    Attributes
    ----------
    targets : _Targets
        The targets (``problem``'s columns, or one problem per row subset).
    mets : LowRankMetrics
        Every path's metric ``s I + W W^T``.
    states : list of HingeState
        Every path's solver state.
    boxes : ndarray of shape (T,)
        Each target's box ``C'`` at ``A = I`` (``C' s`` at the metric's ``s``).
    X : ndarray
        Without row subsets, the feature buffer of width ``d + max_iter n_a_steps (+ 1)``
        shared by the paths' g-steps (``Phi`` itself with subsets, each of which builds
        its own).
    G : ndarray of shape (B, d)
        The last g-step of every path.
    """

    loss: _HingeSolver
    problem: MVMLProblem
    Phi: np.ndarray
    w: np.ndarray
    etas: list[float]
    subsets: RowSubsets | None = None
    gram: np.ndarray | None = None
    targets: _Targets = field(init=False)
    mets: LowRankMetrics = field(init=False)
    states: list[HingeState] = field(init=False)
    boxes: np.ndarray = field(init=False)
    X: np.ndarray = field(init=False)
    G: np.ndarray = field(init=False)
    first_margins: list[np.ndarray] = field(init=False, default_factory=list)
    first_solutions: FirstSolutions | None = field(init=False, default=None)
    _s_obj: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        loss = self.loss
        self.targets = tg = _Targets(self.problem, self.subsets)
        self.alpha = float(loss.alpha)
        T, d = tg.T, self.problem.dim
        self.T, self.d, self.B = T, d, len(self.etas) * T
        R = loss.max_iter * loss.n_a_steps
        self.mets = LowRankMetrics.identity(self.B, d, R)
        self.states = [HingeState() for _ in range(self.B)]
        self.boxes = np.array(
            [svm_c_prime(loss.hinge_weight(tg.of(t)[0]), self.alpha) for t in range(T)]
        )
        self.width = d + R + bool(loss.fit_intercept)
        if self.gram is None and self.Phi.shape[0] <= self.Phi.shape[1]:
            self.gram = self.Phi @ self.Phi.T  # (the active sets' free rows' Gram matrices)
        self.G = np.zeros((self.B, d))
        self.al = np.full(self.B, self.alpha)
        self.et = np.repeat(np.asarray(self.etas, dtype=np.float64), T)

    # ------------------------------------------------------------------ start
    def start(
        self,
        seed_margins: Any = None,
        seed_solutions: FirstSolutions | None = None,
        fold_seeds: list | None = None,
    ) -> None:
        """The seeds of the first g-steps, and the first g-steps solved for every target
        at once (exactly where the active set succeeds; :meth:`HingeLoss.svm_g` takes
        those as they are)."""
        loss, T, d = self.loss, self.T, self.d
        if seed_margins is not None:
            for t in range(T):
                self.states[t].margins = np.asarray(seed_margins[t], dtype=np.float64)
        if self.subsets is not None:
            self.X = self.Phi  # (unused: each subset's g-step has its own features)
            loss.first_g_steps(self.problem, self.Phi, self.states[:T], self.targets, self.boxes)
            return
        # features x_i / sqrt(s) = [phi_i, W^T phi_i / sqrt(s)] (the problem with C' s):
        # phi_i written once; liblinear skips the zero columns of the A-steps to come.
        # fit_intercept: the offset's constant column last (its value set per g-step)
        self.X = np.zeros((self.Phi.shape[0], self.width))
        self.X[:, :d] = self.Phi
        if loss.fit_intercept:
            self.X[:, -1] = loss.offset_column(self.boxes[0])
        # (an offset column changes X X^T: formed by the active set then)
        g0 = None if loss.fit_intercept else self.gram
        loss.first_g_steps(
            self.problem,
            self.X,
            self.states[:T],
            seeds=seed_solutions,
            gram=g0,
            fold_seeds=fold_seeds,
        )
        self.first_solutions = FirstSolutions(
            float(self.boxes[0]), [st.cold for st in self.states[:T]]
        )

    # ------------------------------------------------------------------ one g-step
    def features(self, b: int) -> _Features:
        """Path ``b``'s g-step features at its current metric (on its subset's rows)."""
        t = b % self.T
        s = self.mets.s[b]
        Phi = self.Phi if self.subsets is None else self.Phi[self.subsets.rows[t]]
        return _Features(
            Phi=Phi,
            W=self.mets.columns(b),
            sq=np.sqrt(s),
            col=self.loss.offset_column(self.boxes[t] * s),
            d=self.d,
            width=self.width,
        )

    def g_step(self, b: int) -> np.ndarray:
        """Path ``b``'s g-step (:meth:`HingeLoss.svm_g`); returns ``g``."""
        t = b % self.T
        sub, col_t = self.targets.of(t)
        state = self.states[b]
        feats = self.features(b)
        if self.subsets is None:
            X = self.X
            if state.polished is None:  # (the solution needs no features)
                feats.write(X)
        elif state.polished is None and state.cold is None:  # the subset's rows alone
            X = feats.buffer()
        else:
            X = feats.Phi  # (not read: solved before)
        step = _GStep(self, b, sub, state.g, state.margins, state.offset)
        return self.loss.svm_g(
            sub,
            col_t,
            X,
            state,
            feats.value,
            step.objective,
            step.ref,
            c_scale=float(self.mets.s[b]),
            rebuild=feats.rebuild,
        )

    # ------------------------------------------------------------------ the loop body
    def g_steps(self, it: int, idx: Any) -> np.ndarray:
        """Iteration ``it``'s g-steps of the running paths: the first shared by every
        ``eta`` of a target (a copy of its state), the later ones warm-started together."""
        active = np.arange(self.B)[idx]
        T, states, G = self.T, self.states, self.G
        if it > 0:
            self.loss.warm_g_steps(
                self.problem,
                self.Phi,
                self.mets,
                states,
                active.tolist(),
                self.targets,
                self.boxes,
                self.gram,
            )
        for b in active.tolist():
            if it == 0 and b >= T:  # A = I for every eta: share the first g-step
                G[b] = G[b % T]
                states[b] = states[b % T].copy()
            else:
                G[b] = self.g_step(int(b))
            if it == 0 and b < T:
                self.first_margins.append(states[b].margins)
        return G[active]

    def a_steps(self, idx: Any, G: np.ndarray) -> None:
        """``n_a_steps`` low-rank A-steps of the running paths (their metric part of the
        objective kept for :meth:`objective`)."""
        active = np.arange(self.B)[idx]
        mets, Ga = self.mets, self.G
        s_obj = np.zeros(active.size)
        for _ in range(self.loss.n_a_steps):
            q, Wq, xg = mets.solve(active, Ga[active])
            s_obj = mets.a_step(
                active,
                Ga[active],
                q,
                Wq,
                xg,
                self.al[active],
                self.et[active],
                self.loss.step_size,
            )
        self._s_obj = s_obj

    def objective(self, idx: Any, G: np.ndarray) -> np.ndarray:
        """The hinge loss of each running path's margins (with the offset's penalty)
        plus its metric part."""
        active = np.arange(self.B)[idx]
        hinge = np.array([self._margin_loss(b) for b in active])
        return hinge + self._s_obj

    def _margin_loss(self, b: int) -> float:
        return self.loss.margin_loss(self.targets.of(b % self.T)[0], self.states[b])

    def finish(self, run: PathState) -> HingePathResults:
        """The final g-steps (warm-started together), their objectives and the
        results."""
        B, w = self.B, self.w
        self.loss.warm_g_steps(
            self.problem,
            self.Phi,
            self.mets,
            self.states,
            list(range(B)),
            self.targets,
            self.boxes,
            self.gram,
        )
        final = np.array([self.g_step(b) for b in range(B)])  # (B, d): the final g-steps
        every = np.arange(B)
        quad = np.einsum("bd,bd->b", final, self.mets.solve(every, final)[0])  # <g, A^-1 g>
        frob = self.mets.frob2(every)
        out: list[PathResult] = []
        for b in range(B):
            g = final[b]
            obj = self._margin_loss(b) + self.alpha * float(quad[b])
            obj += self.et[b] * float(frob[b])
            run.finish(b, g, obj)
            n_iter = int(run.n_iter[b])
            out.append(
                PathResult(
                    # kept structured: A = s I + W W^T (the estimator's MetricStack builds
                    # the dense metric on access; the CV's paths never need it)
                    metric=self.mets.take(b),
                    g=g,
                    w=w,
                    history=np.asarray(run.histories[b]),
                    n_iter=n_iter,
                    converged=bool(run.converged[b]),
                    state=self.states[b],
                    path=run.path[b, :n_iter].copy(),
                    path_w=np.tile(w, (n_iter, 1)),
                )
            )
        return HingePathResults(out, self.first_margins, self.first_solutions)


def hinge_dense_paths(
    loss: _HingeSolver,
    problem: MVMLProblem,
    Phi: np.ndarray,
    w: np.ndarray,
    etas: list[float],
    seed_margins: Any = None,
    subsets: RowSubsets | None = None,
    seed_solutions: FirstSolutions | None = None,
    gram: np.ndarray | None = None,
    fold_seeds: list | None = None,
) -> HingePathResults:
    """:class:`HingePaths` built, started and run by
    :func:`~mvkernels.mvml._driver.run_paths` (the parameters: :meth:`HingeLoss.dense_paths
    <mvkernels.mvml._hinge_loss.HingeLoss.dense_paths>`)."""
    paths = HingePaths(loss, problem, Phi, w, list(etas), subsets, gram)
    paths.start(seed_margins, seed_solutions, fold_seeds)
    run = PathState.start(paths.B, paths.d, loss.max_iter, record_path=True)
    return run_paths(paths, run, loss.max_iter, loss.tol)

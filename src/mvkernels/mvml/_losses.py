"""The loss part of MVML's Algorithm 1: the data term and the g-step that minimises it.

Algorithm 1 alternates a g-step (the coefficients ``g`` for the current metric ``A`` and
view weights ``w``), an optional w-step and the A-steps of the metric. Only the g-step, the
w-step and the data term depend on the loss; everything else (kernels, block Nystrom
features, metrics and their A-steps, the stopping rule, one-vs-all, prediction) is shared.
A :class:`Loss` owns those three, whether the structured solver (all targets at once, with
a low-rank dense metric) applies, that solver itself, and its per-target solver state:

* :class:`SquareLoss` (MVML, Huusari et al. 2018, eq. 8 / 15): closed-form g-steps; the
  structured solver factors ``M = D_w C D_w`` once (:mod:`mvkernels.mvml._lowrank`). No
  solver state.
* :class:`~mvkernels.mvml._hinge_loss.HingeLoss` (MVML-SVM, eq. 7-8, in
  :mod:`mvkernels.mvml._hinge_loss`): the g-step is a bias-free linear SVM on the
  features ``F^T phi_i`` (``A = F F^T``), solved exactly by active sets or by liblinear
  (:mod:`mvkernels.mvml._hinge`); its state per target is a ``HingeState``.

An estimator builds its loss once per fit from its own parameters
(``_BaseMVML._make_loss``); the loss reads them as attributes of the same names. A new
loss is a subclass of :class:`Loss` implementing ``g_step``, ``data_loss`` and ``w_step``
(``structured_applies`` returns False by default, so the dense reference path,
:func:`~mvkernels.mvml._driver.reference_paths`, runs it with any metric; ``g_steps``
batches the g-steps of targets that share the metric, by default one ``g_step`` each),
returned by an estimator's ``_make_loss``.

The hooks that need the fit beyond the problem (``build_problem``, ``nystrom_problem``,
``fitted_attributes``, ``fold_paths``) take its
:class:`~mvkernels.mvml._fit_context.FitContext` (the estimator's problem builders,
Algorithm 1's path, the initial metric, the rows' loss weights, the row subsets), never
the estimator: a loss reads and sets no attribute of an estimator, and returns the fitted
attributes it adds.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

import numpy as np
from scipy import linalg

from .._linalg import robust_eigh
from .._threads import serial_blas
from ._data_part import DataPart
from ._driver import PathResult
from ._fit_context import FitContext, SolverPlan, solver_plan
from ._iterative import CGStep
from ._lowrank import (
    LowRankMetric,
    SharedSpectrum,
    fixed_metric_solve,
    row_gram_spectra,
)
from ._metric import Metric, MetricKind, metric_kind
from ._metric_algebra import PSDFactor, least_squares_weights
from ._problem import MVMLProblem, NystromProblem, feature_problem
from ._screen import ridge_solve
from ._square_paths import dense_metric_path

__all__ = ["Loss", "SquareLoss", "padded_path"]

_L = TypeVar("_L", bound="Loss")

#: the estimator parameters every loss reads
_COMMON_PARAMS = (
    "alpha",
    "eta",
    "metric",
    "learn_weights",
    "solver",
    "eig_floor",
    "sparse_threshold",
    "max_iter",
    "n_a_steps",
    "tol",
    "step_size",
    "fit_intercept",
)


#: :meth:`SquareLoss.g_steps_path` solves the first g-steps of this many ``alpha`` or more
#: from one eigendecomposition, fewer by one Cholesky factorisation each: ``eigh`` of a
#: ``d x d`` matrix costs 8 to 23 Cholesky factorisations at d = 60 to 400 (one BLAS
#: thread, measured on the 2-core machine of the benchmarks)
EIGH_PATH_MIN_ALPHAS = 16


def padded_path(path: np.ndarray, K: int) -> np.ndarray:
    """The first ``K`` points of a recorded path (rows: outer iterations), a path that
    stopped early continued by its last point (its final model for every longer fit)."""
    return np.concatenate([path, np.repeat(path[-1:], K - path.shape[0], axis=0)])[:K]


class Loss:
    """One loss of Algorithm 1 (see the module docstring).

    Parameters
    ----------
    params : estimator
        The estimator whose parameters (``alpha``, ``eta``, ``metric``, ...) the loss
        reads once, when it is built.
    """

    #: the estimator parameters this loss reads (copied as attributes of the same name)
    param_names: tuple[str, ...] = _COMMON_PARAMS

    alpha: float
    eta: float
    metric: str
    learn_weights: bool
    solver: str
    eig_floor: float
    sparse_threshold: str
    max_iter: int
    n_a_steps: int
    tol: float | None
    step_size: float | str
    fit_intercept: bool

    #: the g-step reads the training rows' features (``problem.row_data``), not
    #: only the sufficient statistics: on Dask input they are gathered to the client
    needs_rows: bool = False
    #: folds of a cross-validation may run in parallel threads
    thread_safe: bool = True

    #: the problem data of a fit are built on the fit's BLAS threads
    #: (:meth:`~mvkernels.mvml._data_part.DataPart.fit_threads`: one thread for the thin
    #: products of an in-memory fit), for a loss whose problem reads the rows
    builds_on_fit_threads: bool = False

    #: full mode with row weights ``s_i``: the problem holds the rows scaled by
    #: ``sqrt(s_i)`` (the weighted square loss), or as given (False: a loss that weighs
    #: each row itself, the hinge loss), see :class:`~mvkernels.mvml._problem.MVMLProblem`
    scales_rows: bool = True

    def __init__(self, params: Any):
        for name in self.param_names:
            setattr(self, name, getattr(params, name))
        self.metric_kind: MetricKind = metric_kind(self.metric)
        #: the ``solver`` parameter resolved once (the parts read this, not the string)
        self.solver_plan: SolverPlan = solver_plan(self.solver)

    # -- the ends of a fit (the estimator base calls these with its FitContext) -------
    def build_problem(self, ctx: FitContext, X: Any, Y: Any) -> MVMLProblem:
        """The problem of the fit of context ``ctx`` on views ``X`` and targets ``Y``:
        here its problem data as they are (``ctx.problem_data``: the views validated, the
        kernels or the Nystrom map fitted, then :meth:`nystrom_problem` of this loss). A
        loss that builds it otherwise (the hinge loss: on one BLAS thread, its rows
        gathered on Dask input) overrides this."""
        return ctx.problem_data(X, Y, ctx, self)

    def nystrom_problem(
        self,
        ctx: FitContext,
        nys: Any,
        Xs: list,
        Y: Any,
        complete: bool,
        sample_weight: np.ndarray | None,
        data: DataPart,
    ) -> MVMLProblem:
        """The Nystrom-mode problem of the fit of context ``ctx`` from its fitted map
        ``nys`` (with complete training rows, ``complete``, the map's missing-view
        statistics set too; ``sample_weight``: the rows' loss weights; ``data``: the
        fit's data part, decided once where the views were validated). Here the
        sufficient statistics of the square loss (``ctx.statistics_problem``: one
        chunked pass, a Dask reduction on Dask input; the features are not kept); a loss
        whose g-step reads the rows (:attr:`needs_rows`) overrides this."""
        return ctx.statistics_problem(nys, Xs, Y, complete, data)

    def fitted_attributes(
        self, ctx: FitContext, states: list, histories: list, n_samples: int
    ) -> dict[str, Any]:
        """The fitted attributes that this loss adds to the model of the fit of context
        ``ctx`` (name -> value; the estimator sets them), from the solver states
        ``states`` and objective histories ``histories`` of its targets and its number
        of training rows ``n_samples`` (called at the end of every fit, after the shared
        attributes). Here none."""
        return {}

    def with_intercept(self, problem: MVMLProblem) -> MVMLProblem:
        """The problem this loss's paths run on: ``problem`` itself, or, with
        ``fit_intercept``, the problem of the loss with an unpenalised offset per target
        (the offsets then follow from the solution by
        :meth:`~mvkernels.mvml._problem.MVMLProblem.intercepts`). The square loss
        centres the design and the targets (:meth:`MVMLProblem.centred`); a loss without
        an intercept raises."""
        if not self.fit_intercept:
            return problem
        raise ValueError(f"fit_intercept=True is not available for {type(self).__name__}")

    def intercepts(
        self, problem: MVMLProblem, coef: np.ndarray, basis: np.ndarray | None = None
    ) -> np.ndarray:
        """The offsets (..., T) of weighted coefficients ``w (.) g`` ``coef`` (..., T, k)
        solved on ``problem`` (the problem of :meth:`with_intercept`); ``basis`` (dim, k):
        the coefficients are ``basis @ coef`` (None: the feature basis). Here
        :meth:`MVMLProblem.intercepts <mvkernels.mvml._problem.MVMLProblem.intercepts>`
        (the centred problem's ``ybar - m^T (w (.) g)``, zeros without an intercept); a
        loss whose g-step fits its offsets itself overrides it."""
        return problem.intercepts(coef, basis)

    def new_state(self) -> Any:
        """The solver state of one target column, carried across its g-steps."""
        return None

    def g_step(
        self, problem: MVMLProblem, t: int, factor: PSDFactor, w: np.ndarray, state: Any
    ) -> np.ndarray:
        raise NotImplementedError

    def g_steps(
        self,
        problem: MVMLProblem,
        targets: list[int],
        factor: PSDFactor,
        w: np.ndarray,
        states: list,
    ) -> np.ndarray:
        """The g-steps of several target columns for one metric factor and one set of
        view weights (one row per target; ``states``: their solver states), as the
        reference path batches them (:func:`~mvkernels.mvml._driver.reference_paths`).
        Here :meth:`g_step` per target; a loss whose g-steps share work overrides it."""
        return np.stack([self.g_step(problem, t, factor, w, s) for t, s in zip(targets, states)])

    def g_steps_path(
        self,
        problem: MVMLProblem,
        targets: list[int],
        factor: PSDFactor,
        w: np.ndarray,
        alphas: np.ndarray,
    ) -> np.ndarray:
        """The g-steps of several target columns at several ``alphas`` for one metric
        factor and one set of view weights, shape ``(n_alpha, T, d)``, for a loss without
        solver state (the first g-steps of a regularisation path,
        :func:`~mvkernels.mvml._driver.reference_paths`). Here :meth:`g_steps` at each
        ``alpha``; a loss whose g-step shares a factorisation across ``alpha`` overrides
        it."""
        none = [None] * len(targets)
        return np.stack(
            [self.at(a, self.eta).g_steps(problem, targets, factor, w, none) for a in alphas]
        )

    def at(self: _L, alpha: float, eta: float) -> _L:
        """This loss at another ``(alpha, eta)`` (a shallow copy: every other parameter
        and cached quantity shared), for a run of a regularisation path."""
        out = copy.copy(self)
        out.alpha, out.eta = float(alpha), float(eta)
        return out

    def data_loss(self, problem: MVMLProblem, t: int, g: np.ndarray, w: np.ndarray) -> float:
        raise NotImplementedError

    def w_step(self, problem: MVMLProblem, t: int, g: np.ndarray, w: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def structured_applies(self, problem: MVMLProblem) -> bool:
        """Whether :meth:`fit_structured` runs this fit (else the dense reference path)."""
        return False

    def fit_structured(
        self, problem: MVMLProblem, metric0: Metric, record_path: bool = False
    ) -> list[PathResult]:
        """The structured solver on ``problem`` from the initial metric ``metric0``
        (:meth:`~mvkernels.mvml._metric.MetricKind.initial_metric`, with its factor)."""
        raise NotImplementedError

    def _fixed_results(
        self,
        metric: Metric,
        G: Any,
        w: np.ndarray,
        data: list,
        quad: Any,
        states: list | None = None,
    ) -> list[PathResult]:
        """The results of a fixed metric's single g-step ``G`` (T rows of ``d``) with data
        terms ``data`` (and, for a loss with solver state, each target's state); the
        targets share the one :class:`~mvkernels.mvml._metric.Metric` ``metric`` (the
        fit's initial metric)."""
        out: list[PathResult] = []
        for t in range(len(G)):
            g = G[t]
            obj = data[t] + self.alpha * quad(g)
            out.append(
                PathResult(
                    metric=metric,
                    g=g,
                    w=w,
                    history=np.array([obj]),
                    n_iter=1,
                    converged=True,
                    state=None if states is None else states[t],
                    path=g[None],
                    path_w=w[None],
                )
            )
        return out

    def subset_paths_apply(self) -> bool:
        """Whether :meth:`subset_fold_outputs` runs this loss's fold paths (the problems
        of a one-vs-one fold in one batch). Here False: one :meth:`fold_paths` per
        problem."""
        return False

    def row_gram(self, U: np.ndarray) -> np.ndarray:
        """The Gram matrix of feature rows that :meth:`subset_fold_outputs` reads."""
        raise NotImplementedError

    def row_subsets_apply(self, problem: MVMLProblem | None = None) -> bool:
        """Whether :meth:`fit_row_subsets` and :meth:`fold_row_subsets` fit problems on
        subsets of ``problem``'s rows (one-vs-one: the class pairs; None: a Nystrom-mode
        problem, the CV's folds) in batches. Here False: one fit per problem."""
        return False

    def fit_row_subsets(
        self, problem: MVMLProblem, subs: list[MVMLProblem], rows: list[np.ndarray]
    ) -> list[PathResult]:
        """The structured fits of the problems ``subs`` on the rows ``rows`` of
        ``problem`` in batches (see :meth:`HingeLoss.fit_row_subsets
        <mvkernels.mvml._hinge_loss.HingeLoss.fit_row_subsets>`)."""
        raise NotImplementedError

    def fold_row_subsets(self, *args: Any) -> tuple[np.ndarray, np.ndarray]:
        """The fold paths of problems on subsets of a fold's training rows in batches (see
        :meth:`HingeLoss.fold_row_subsets
        <mvkernels.mvml._hinge_loss.HingeLoss.fold_row_subsets>`)."""
        raise NotImplementedError

    def subset_fold_outputs(
        self,
        gram: np.ndarray,
        tr: np.ndarray,
        te: np.ndarray,
        subsets: list[tuple[np.ndarray, np.ndarray]],
        alphas: np.ndarray,
        etas: np.ndarray,
        n_views: int,
        dim: int,
    ) -> np.ndarray:
        """Held-out decision values of problems on subsets of a fold's training rows in
        one batch (see :meth:`SquareLoss.subset_fold_outputs`)."""
        raise NotImplementedError

    def fold_paths(
        self,
        ctx: FitContext,
        problem: MVMLProblem,
        Xtr: list,
        alphas: np.ndarray,
        etas: np.ndarray,
        K: int,
        rows: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The paths of every candidate of a cross-validation fold (the CV's one seam).

        Returns the weighted coefficients ``w (.) g`` of every ``(alpha, eta, iteration,
        target)``, shape ``(n_alpha, n_eta, K, T, d)``, and the basis they are expressed
        in (``Q``: the held-out decision values are ``(U Q) @ coef``; None: the feature
        basis). Here the fit context ``ctx`` (of the CV's base estimator, ``tol=None``)
        runs Algorithm 1 at every ``(alpha, eta)`` on the fold's ``problem``, recording
        the paths (``ctx.solve_path``: the dense reference path runs the whole grid as one
        batch, :func:`~mvkernels.mvml._driver.reference_paths`); a path that stopped
        early is continued by its last iterate. A loss with a batched solver overrides
        this for the variants it covers. ``Xtr``: the fold's training views (set on the
        problem for a loss that reads the rows); ``rows``: the fold's training features
        when it has fewer rows than features.
        """
        T, d = problem.n_targets, problem.dim
        out = np.zeros((alphas.size, etas.size, K, T, d))
        if self.needs_rows:
            problem = problem.with_views(Xtr)
        learned = self.metric_kind.learned
        grid = [(float(a), float(e) if learned else self.eta) for a in alphas for e in etas]
        for p, res in enumerate(ctx.solve_path(problem, grid, True)):
            ai, ei = divmod(p, etas.size)
            for t, r in enumerate(res):
                P, PW = padded_path(r.path, K), padded_path(r.path_w, K)
                out[ai, ei, :, t] = P * np.repeat(PW, problem.block_size, axis=1)
        return out, None


def _g_step_system(
    problem: MVMLProblem, cols: Any, factor: PSDFactor, w: np.ndarray
) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray, np.ndarray]:
    """The linear system of the square loss's g-step for the target columns ``cols`` (one
    index: vector right-hand sides), before ``alpha``: ``(F, PF, S, rhs)`` with ``F`` the
    metric factor (None for ``A0 = I``, left out of the products) and the problem's
    system ``(PF, S, rhs)`` (:meth:`~mvkernels.mvml._problem.MVMLProblem.ridge_system`:
    full mode eq. 8, ``g = F (P F)^T beta``; Nystrom mode eq. 15, ``g~ = F x``)."""
    F = None if factor.is_identity else factor.F
    PF, S, rhs = problem.ridge_system(cols, factor, w)
    return F, PF, S, rhs


class SquareLoss(Loss):
    """The square loss ``||y - W H g||^2`` of MVML (regression and one-vs-all +-1 targets).

    With ``fit_intercept`` the loss is ``||y - W H g - b 1||^2`` with an unpenalised
    ``b`` per target: every path runs on the centred problem
    (:meth:`~mvkernels.mvml._problem.MVMLProblem.centred`), whose data term is the
    loss minimised over ``b``.
    """

    def with_intercept(self, problem: MVMLProblem) -> MVMLProblem:
        return problem.centred() if self.fit_intercept else problem

    # -- hooks (square loss) ---------------------------------------------------
    def g_step(
        self, problem: MVMLProblem, t: int, factor: PSDFactor, w: np.ndarray, state: Any
    ) -> np.ndarray:
        """Square-loss g-step for target column ``t``: :meth:`g_steps` of one target."""
        return self.g_steps(problem, [t], factor, w, [state])[0]

    def g_steps(
        self,
        problem: MVMLProblem,
        targets: list[int],
        factor: PSDFactor,
        w: np.ndarray,
        states: list,
    ) -> np.ndarray:
        """Square-loss g-steps of the target columns ``targets`` for one metric factor
        and one set of view weights: one factorisation, every right-hand side at once.

        Full mode, eq. (8) by the push-through identity (an n x n solve):
        ``g = A P^T (P A P^T + alpha I_n)^{-1} y`` with ``P = W H``; with ``A = F F^T``
        this is ``g = F (P F)^T beta``, ``(P F)(P F)^T + alpha I`` factored by Cholesky.

        Nystrom mode, eq. (15) from the sufficient statistics:
        ``g~ = F (F^T M F + alpha I)^{-1} F^T b``, ``M = D_w C D_w``, ``b = D_w c``
        (valid for any factor ``A~ = F F^T``, also of a singular metric; ``O((vp)^3)``).
        Both forms are valid for a singular PSD ``A`` (``g`` then lies in its range).
        The factor of ``A0 = I`` (:meth:`PSDFactor.identity`) is left out of the
        products. Returns one row per target.
        """
        cols: Any = targets[0] if len(targets) == 1 else list(targets)  # one: vectors
        F, PF, S, rhs = _g_step_system(problem, cols, factor, w)
        S[np.diag_indices_from(S)] += self.alpha
        X = linalg.cho_solve(
            linalg.cho_factor(S, lower=True, check_finite=False), rhs, check_finite=False
        )
        if PF is not None:  # full mode: g = F (P F)^T beta
            X = PF.T @ X
        X = X if F is None else F @ X
        return X[None] if X.ndim == 1 else X.T

    def g_steps_path(
        self,
        problem: MVMLProblem,
        targets: list[int],
        factor: PSDFactor,
        w: np.ndarray,
        alphas: np.ndarray,
    ) -> np.ndarray:
        """:meth:`g_steps` at every ``alpha`` of ``alphas``, shape ``(n_alpha, T, d)``, the
        products with the factor formed once.

        Nystrom mode, eq. (15): ``S = F^T M F``; full mode, eq. (8): ``S = (P F)(P F)^T``
        (``n x n``). Below :data:`EIGH_PATH_MIN_ALPHAS` values, one Cholesky
        factorisation of ``S + alpha I`` per ``alpha`` (the numbers of :meth:`g_steps`);
        from there on one eigendecomposition ``S = R diag(theta) R^T`` for all, e.g.
        ``g~ = F R diag(1 / (theta + alpha)) R^T F^T b``
        (:func:`~mvkernels.mvml._lowrank.fixed_metric_solve`), the same to rounding."""
        alphas = np.asarray(alphas, dtype=np.float64)
        F, PF, S, rhs = _g_step_system(problem, list(targets), factor, w)
        rhs = np.asarray(rhs, dtype=np.float64)
        if alphas.size >= EIGH_PATH_MIN_ALPHAS:
            theta, R = robust_eigh(S, what="the first g-step's Gram matrix")
            theta = np.maximum(theta, 0.0)
            X = R @ ((R.T @ rhs)[None] / (theta[None, :, None] + alphas[:, None, None]))
        else:
            X = np.empty((alphas.size, *rhs.shape))
            for i, a in enumerate(alphas):
                Sa = S.copy()
                Sa[np.diag_indices_from(Sa)] += a
                X[i] = linalg.cho_solve(
                    linalg.cho_factor(Sa, lower=True, check_finite=False), rhs, check_finite=False
                )
        if PF is not None:  # full mode
            X = np.swapaxes(PF.T @ X, 1, 2)  # (m, T, k)
        else:
            X = np.swapaxes(X, 1, 2)
        return X if F is None else X @ F.T

    def data_loss(self, problem: MVMLProblem, t: int, g: np.ndarray, w: np.ndarray) -> float:
        """Square loss ``||y - W H g||^2`` (Nystrom: ``y^T y - 2 b^T g + g^T M g``)."""
        return problem.squared_residual(t, g, w)

    def w_step(self, problem: MVMLProblem, t: int, g: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Least-squares view weights with ``sum w = 1``, eq. (10) / (17) (see
        :func:`least_squares_weights` for why the scale is fixed)."""
        ZtZ, Zty = problem.view_moments(g, t)
        return least_squares_weights(ZtZ, Zty)

    def structured_applies(self, problem: MVMLProblem) -> bool:
        """Whether the structured solver (:mod:`mvkernels.mvml._lowrank`) runs this fit.

        It needs the square loss (no overridden ``g_step``), Nystrom mode, fixed view
        weights, and a dense learned metric started at ``A~ = I`` or a fixed metric.
        Other fits (sparse metric, learned weights, full kernels) take the dense reference
        path, which is also what ``solver="dense"`` forces; ``solver="cg"`` (the same
        structure with conjugate-gradient g-steps, :mod:`mvkernels.mvml._iterative`)
        raises on them. :class:`~mvkernels.MVMLSVC` overrides this test and
        :meth:`fit_structured` with its own low-rank path.
        """
        applies = problem.feature_space and not self.learn_weights and self.metric_kind.structured
        if self.solver_plan.conjugate_gradient and not applies:
            raise ValueError(
                "solver='cg' needs the Nystrom mode (n_landmarks not None), fixed view "
                "weights (learn_weights=False) and metric='dense', 'identity' or 'cov'; got "
                f"n_landmarks mode {problem.mode!r}, learn_weights={self.learn_weights}, "
                f"metric={self.metric!r}"
            )
        return self.solver_plan.structured and applies

    def fit_structured(
        self, problem: MVMLProblem, metric0: Metric, record_path: bool = False
    ) -> list[PathResult]:
        """All target columns at once with the shared factorisation (same results as
        :func:`~mvkernels.mvml._driver.reference_paths`, see :mod:`mvkernels.mvml._lowrank`)."""
        problem = feature_problem(problem)
        v, T = problem.n_views, problem.n_targets
        w = np.full(v, 1.0 / v)
        yy = np.asarray(problem.stats.target_sq, dtype=np.float64)
        if self.solver_plan.conjugate_gradient:
            return self._fit_cg(problem, metric0, w, yy, record_path)
        M, B = problem.weighted_statistics(w)
        if not self.metric_kind.learned:
            if self.metric_kind.identity:  # A = I: ridge on the weighted features
                G = ridge_solve(M, B, float(self.alpha))
                quad: Any = lambda g: float(g @ g)  # noqa: E731
            else:
                factor = metric0.factor
                G = fixed_metric_solve(M, factor.F, B, np.array([self.alpha]))[0]
                quad = factor.quad
            data = [self.data_loss(problem, t, G[t], w) for t in range(T)]
            return self._fixed_results(metric0, G, w, data, quad)
        spec = SharedSpectrum.from_matrix(M)
        path = dense_metric_path(
            spec.lam,
            spec.rotate(B),
            yy,
            np.full(T, float(self.alpha)),
            np.full(T, float(self.eta)),
            max_iter=self.max_iter,
            n_a_steps=self.n_a_steps,
            tol=self.tol,
            step_size=self.step_size,
            record_path=record_path,
        )
        return self._lowrank_results(path, spec, w, record_path)

    def _fit_cg(
        self,
        problem: NystromProblem,
        metric0: Metric,
        w: np.ndarray,
        yy: np.ndarray,
        record_path: bool,
    ) -> list[PathResult]:
        """:meth:`fit_structured` with conjugate-gradient g-steps
        (:class:`~mvkernels.mvml._iterative.CGStep`): the same path, the products with
        ``M`` streamed over the rows (or on the statistics when the problem has them)."""
        T = problem.n_targets
        kind = self.metric_kind
        factor = None if kind.learned or kind.identity else metric0.factor
        step = CGStep.build(problem, w, None if factor is None else factor.F)
        B = (problem.stats.cross * problem.weight_vector(w)[:, None]).T
        Bb = B @ step.V
        alpha = np.full(T, float(self.alpha))
        if kind.learned:
            path = dense_metric_path(
                step.lam,
                Bb,
                yy,
                alpha,
                np.full(T, float(self.eta)),
                max_iter=self.max_iter,
                n_a_steps=self.n_a_steps,
                tol=self.tol,
                step_size=self.step_size,
                record_path=record_path,
                gstep=step,
            )
            out = self._lowrank_results(
                path, SharedSpectrum(Q=step.V, lam=step.lam), w, record_path
            )
        else:
            k = step.V.shape[1]
            X, _, _, gMg = step.solve(
                slice(None), np.ones(T), np.zeros((T, 0, k)), np.zeros((T, 0)), alpha, Bb
            )
            data = np.maximum(yy - 2.0 * np.einsum("tk,tk->t", Bb, X) + gMg, 0.0)
            quad: Any = (lambda g: float(g @ g)) if factor is None else factor.quad
            out = self._fixed_results(metric0, X @ step.V.T, w, list(data), quad)
        for r in out:
            r.cg_iter = int(sum(step.n_iter))
            r.cg_products = int(step.operator.n_products)
        return out

    def fit_structured_subsets(
        self, problems: list[MVMLProblem], rows: list, record_path: bool = False
    ) -> list[PathResult]:
        """:meth:`fit_structured` of several one-target problems with a learned dense
        metric (:meth:`subset_paths_apply`; one-vs-one: the class pairs), each in its own
        eigenbasis, in one batched path (:func:`~mvkernels.mvml._square_paths.dense_metric_path`
        with one spectrum per problem; a shorter spectrum padded with inert zeros).
        ``rows``: per problem, its training features when it has fewer rows than
        features (the spectrum from the row side, :meth:`SharedSpectrum.from_rows`; the
        problem may then lack ``C``, :meth:`MVMLProblem.from_rows`), else None (from
        ``M = D_w C D_w``)."""
        stats = [feature_problem(problem) for problem in problems]
        v, dim = stats[0].n_views, stats[0].dim
        w = np.full(v, 1.0 / v)
        specs, Bbs = [], []
        for problem, R in zip(stats, rows):
            wv = problem.weight_vector(w)
            if R is None:
                M, B = problem.weighted_statistics(w)
                spec = SharedSpectrum.from_matrix(M)
            else:
                if problem.feature_mean is not None:
                    R = R - problem.feature_mean  # the centred problem's rows
                spec = SharedSpectrum.from_rows(R * wv)
                B = (problem.stats.cross * wv[:, None]).T
            specs.append(spec)
            Bbs.append(spec.rotate(B)[0])
        k = max(spec.lam.size for spec in specs)
        lam, Bb = np.zeros((len(specs), k)), np.zeros((len(specs), k))
        for p, spec in enumerate(specs):
            lam[p, : spec.lam.size], Bb[p, : spec.lam.size] = spec.lam, Bbs[p]
        path = dense_metric_path(
            lam,
            Bb,
            np.array([float(problem.stats.target_sq[0]) for problem in stats]),
            np.full(len(specs), float(self.alpha)),
            np.full(len(specs), float(self.eta)),
            max_iter=self.max_iter,
            n_a_steps=self.n_a_steps,
            tol=self.tol,
            step_size=self.step_size,
            record_path=record_path,
            dim=dim,
        )
        return self._lowrank_results(path, [spec.Q for spec in specs], w, record_path)

    def _lowrank_results(
        self, path: Any, spec: SharedSpectrum | list, w: np.ndarray, record_path: bool
    ) -> list[PathResult]:
        """The results of a learned dense metric's path (:class:`LowRankPath` in the basis
        ``spec.Q``, or one basis ``Q_t`` per problem: a list, the path's coordinates
        past ``Q_t``'s columns zero)."""
        T = path.G.shape[0]
        if isinstance(spec, SharedSpectrum):
            Qs, G = [spec.Q] * T, spec.unrotate(path.G)
        else:
            Qs = spec
            G = np.stack([path.G[t, : Q.shape[1]] @ Q.T for t, Q in enumerate(Qs)])
        out: list[PathResult] = [
            PathResult(
                # kept structured: s I + V V^T with V = Q W (see MetricStack.from_metrics)
                metric=LowRankMetric(
                    float(path.s[t]),
                    Qs[t] @ path.W[t, : Qs[t].shape[1]],
                    min_eig=path.min_eigenvalue(t),
                ),
                g=G[t],
                w=w,
                history=path.history[t],
                n_iter=int(path.n_iter[t]),
                converged=bool(path.converged[t]),
                state=None,
            )
            for t in range(T)
        ]
        if record_path:
            if isinstance(spec, SharedSpectrum):
                P = spec.unrotate(path.path)
            else:
                P = np.stack([path.path[t, :, : Q.shape[1]] @ Q.T for t, Q in enumerate(Qs)])
            for t in range(T):
                out[t].path = P[t, : out[t].n_iter]
                out[t].path_w = np.tile(w, (out[t].n_iter, 1))
        return out

    def fold_paths(
        self,
        ctx: FitContext,
        problem: MVMLProblem,
        Xtr: list,
        alphas: np.ndarray,
        etas: np.ndarray,
        K: int,
        rows: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`Loss.fold_paths` from the fold's sufficient statistics alone, with fixed
        weights and a dense, identity or Cov metric: ``D_w C D_w`` is factored once and
        shared by every target, ``alpha``, ``eta`` and iteration (the learned dense paths
        in one batch, :func:`~mvkernels.mvml._square_paths.dense_metric_path`; with ``rows``,
        in the span of the fold's rows, :meth:`SharedSpectrum.from_rows`). Other variants
        (sparse metric, learned weights) take the generic path."""
        if self.learn_weights or not self.metric_kind.structured:
            return super().fold_paths(ctx, problem, Xtr, alphas, etas, K, rows)
        problem = feature_problem(problem)
        T, d, v = problem.n_targets, problem.dim, problem.n_views
        out = np.zeros((alphas.size, etas.size, K, T, d))
        with serial_blas(d):
            w = np.full(v, 1.0 / v)
            M, B = problem.weighted_statistics(w)
            if not self.metric_kind.learned:
                F = ctx.initial_metric(problem).factor.F
                G = fixed_metric_solve(M, F, B, alphas)  # (n_alpha, T, d)
                out[:, 0, 0] = G * problem.weight_vector(w)
                return out, None
            if rows is not None and problem.feature_mean is not None:
                rows = rows - problem.feature_mean  # the centred problem's rows
            spec = (
                SharedSpectrum.from_matrix(M)
                if rows is None
                else SharedSpectrum.from_rows(rows * problem.weight_vector(w))
            )
            Bb = spec.rotate(B)
            a_g, e_g, t_g = np.meshgrid(alphas, etas, np.arange(T), indexing="ij")
            path = dense_metric_path(
                spec.lam,
                Bb[t_g.ravel()],
                problem.stats.target_sq[t_g.ravel()],
                a_g.ravel(),
                e_g.ravel(),
                max_iter=self.max_iter,
                n_a_steps=self.n_a_steps,
                tol=None,
                step_size=self.step_size,
                record_path=True,
                dim=d,
            )
            # uniform weights: w (.) g = g / v in any orthonormal basis (eigenbasis here)
            k = spec.Q.shape[1]
            P = path.path.reshape(alphas.size, etas.size, T, K, k).transpose(0, 1, 3, 2, 4)
            return P / v, spec.Q

    def subset_paths_apply(self) -> bool:
        """A learned dense metric with fixed view weights (the structured path)."""
        kind = self.metric_kind
        return not self.learn_weights and kind.structured and kind.learned

    def row_gram(self, U: np.ndarray) -> np.ndarray:
        """The Gram matrix ``U U^T`` of feature rows that :meth:`subset_fold_outputs`
        reads (with ``fit_intercept``, of the rows minus their mean: a common shift
        leaves every centred problem unchanged and keeps the entries small)."""
        if self.fit_intercept:
            U = U - U.mean(axis=0)
        with serial_blas(U.shape[1]):
            return U @ U.T

    def subset_fold_outputs(
        self,
        gram: np.ndarray,
        tr: np.ndarray,
        te: np.ndarray,
        subsets: list[tuple[np.ndarray, np.ndarray]],
        alphas: np.ndarray,
        etas: np.ndarray,
        n_views: int,
        dim: int,
    ) -> np.ndarray:
        """Held-out decision values of a batch of problems, each on a subset of the same
        training rows (one-vs-one: the class pairs of a fold, one target each;
        one-vs-rest: every training row, one target column per class), for every
        ``(alpha, eta, iteration)``, with a learned dense metric and uniform view weights
        (:meth:`subset_paths_apply`): the paths of every problem in one batch
        (:func:`~mvkernels.mvml._square_paths.dense_metric_path` with one spectrum per
        subset, shared by its targets), the same values as :meth:`fold_paths` with
        ``rows`` problem by problem.

        Subset ``p`` has the training rows ``U_p`` (fewer than features) and the
        targets ``Y_p``; with ``fit_intercept`` they are centred by their means ``m_p``,
        ``ybar_p``. With ``R_p = U_p / v`` (``D_w``, ``w_l = 1 / v``) its paths run in
        the eigenbasis ``Q = R_p^T V s^{-1/2}`` of ``M_p = R_p^T R_p`` taken from the row
        side, ``R_p R_p^T = V diag(s) V^T``
        (:meth:`~mvkernels.mvml._lowrank.SharedSpectrum.from_rows`), where
        ``Q^T D_w c_p = s^{1/2} (V^T y_p)`` for each target ``y_p`` and the held-out
        rows' coordinates are ``(U_te - m_p) Q = (U_te - m_p) R_p^T V s^{-1/2}``. Only
        Gram blocks of the rows enter (:meth:`row_gram`, once for every fold), then
        ``O(n_p^3)`` per subset; nothing of size ``dim x dim`` (no fold statistics
        ``C``, no basis ``Q`` of ``dim`` rows).

        Parameters
        ----------
        gram : ndarray (n, n)
            :meth:`row_gram` of the features of all the rows.
        tr, te : ndarray of int
            The fold's training and held-out rows (indices into ``gram``).
        subsets : list of (rows, Y)
            Per subset: indices into ``tr`` and its targets, ``(n_p,)`` (one problem)
            or ``(n_p, T_p)`` (``T_p`` problems on the same rows).
        alphas, etas : ndarray
            The grid.
        n_views, dim : int
            The number of views ``v`` (blocks of the features) and of features.

        Returns
        -------
        ndarray (n_alpha, n_eta, max_iter, n_te, n_problems)
            The decision values ``U_te (w (.) g) + b`` of each problem (subset by subset,
            its targets in order) after each outer iteration (as the final ``g`` of a
            fit with that ``max_iter`` and ``tol=None``).
        """
        v, K = n_views, self.max_iter
        G, Gt = gram[np.ix_(tr, tr)], gram[np.ix_(te, tr)]
        blocks, targets, outside, offsets = [], [], [], []
        for rows, Y in subsets:
            Gp, Ht = G[np.ix_(rows, rows)], Gt[:, rows]
            Y = np.asarray(Y, dtype=np.float64)
            Y = Y[:, None] if Y.ndim == 1 else Y
            ybar = np.zeros(Y.shape[1])
            if self.fit_intercept:  # (u_i - m)^T (u_j - m) and (x - m)^T (u_j - m)
                r = Gp.mean(axis=1)
                c = r.mean()
                Gp = Gp - r[:, None] - r[None, :] + c
                Ht = Ht - Ht.mean(axis=1)[:, None] - r[None, :] + c
                ybar = Y.mean(axis=0)
                Y = Y - ybar
            blocks.append(Gp / v**2)
            targets.append(Y)
            outside.append(Ht)
            offsets.append(ybar)
        spectra = []  # per subset: eigenvalues, rotated targets, y^T y, coordinates, offsets
        # the subsets' spectra, those of one size in one stacked eigendecomposition
        for (lam, V), Y, Ht, ybar in zip(row_gram_spectra(blocks), targets, outside, offsets):
            root = np.sqrt(lam)
            Bb = root * (V.T @ Y).T  # (T_p, k_p)
            spectra.append((lam, Bb, np.einsum("it,it->t", Y, Y), (Ht @ V) / (root * v), ybar))
        na, ne = alphas.size, etas.size
        k = max(1, max(sp[0].size for sp in spectra))
        n_t = sum(sp[1].shape[0] for sp in spectra)
        lam_all, Bb_all = np.zeros((n_t, k)), np.zeros((n_t, k))  # zero-padded: inert
        start = 0
        for lam, Bb, _, _, _ in spectra:
            lam_all[start : start + Bb.shape[0], : lam.size] = lam
            Bb_all[start : start + Bb.shape[0], : lam.size] = Bb
            start += Bb.shape[0]
        per = na * ne  # problems ordered (subset, target, alpha, eta)
        path = dense_metric_path(
            # one subset: its spectrum shared by the whole batch
            lam_all[0] if len(spectra) == 1 else np.repeat(lam_all, per, axis=0),
            np.repeat(Bb_all, per, axis=0),
            np.repeat(np.concatenate([sp[2] for sp in spectra]), per),
            np.tile(np.repeat(alphas, ne), n_t),
            np.tile(etas, n_t * na),
            max_iter=K,
            n_a_steps=self.n_a_steps,
            tol=None,
            step_size=self.step_size,
            record_path=True,
            dim=dim,
        )
        P = path.path.reshape(n_t, na, ne, K, k)
        out = np.empty((na, ne, K, te.size, n_t))
        start = 0
        for lam, Bb, _, Z, ybar in spectra:
            # uniform weights: w (.) g = g / v in any orthonormal basis
            for t in range(Bb.shape[0]):
                out[..., start + t] = P[start + t, ..., : lam.size] @ Z.T / v + ybar[t]
            start += Bb.shape[0]
        return out

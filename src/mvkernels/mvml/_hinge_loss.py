"""The hinge loss of MVML-SVM (Huusari, Kadri & Capponi, JdS 2018, eq. 6-8) as a
:class:`~mvkernels.mvml._losses.Loss`: the g-step is a bias-free linear SVM with
``C' = C / (2 alpha)`` on the features ``F^T phi_i`` (``A = F F^T``), solved exactly by
active sets (the first g-step of every target at once, the later ones warm-started in
lockstep) or, where these give up, by liblinear (:mod:`mvkernels.mvml._hinge`). The
hinge loss has no sufficient statistics: it reads the training rows' features
(:attr:`HingeLoss.needs_rows`).

With ``fit_intercept`` every g-step also fits an offset ``b`` per target: the
coefficient of a constant feature appended to the features, penalised lightly
(``C b^2 / (2 kappa)``, ``kappa =`` :data:`OFFSET_KAPPA`, see
:meth:`HingeLoss.offset_column`); the solvers need no change.

Row weights (``sample_weight`` times ``class_weight``, the problem's ``sample_weight``
``s_i``): the data term is ``C sum_i s_i max(0, 1 - y_i f(x_i))``, so every g-step's
SVM has the per-row box ``0 <= a_i <= s_i C'`` (:mod:`mvkernels.mvml._hinge`, "Row
weights"), and the objective, the offsets and the w-step's linear program weigh each
row's hinge by ``s_i``; the problem keeps the rows as given (``scale_rows=False``). With
``C=None`` the weight ``C`` is ``1 / sum_i s_i`` (``1 / n`` unweighted).
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np

from ._data_part import DataPart
from ._driver import PathResult
from ._fit_context import FitContext
from ._hinge import (
    COLD_MIN_BOX,
    PRESOLVE_TOL,
    LinearSVMResult,
    hinge_offsets,
    hinge_view_weights,
    linear_svm_polished,
    polish_applies,
    svm_c_prime,
)
from ._hinge_active import (
    COLD_ADD,
    WARM_BAND,
    WARM_ROUNDS,
    FirstSolutions,
    active_set_svm,
    polish_active_set,
    polish_active_sets,
    rebox_solutions,
    reseed_solutions,
)
from ._hinge_fit import hinge_attributes, hinge_nystrom_problem, hinge_problem
from ._hinge_paths import HingePathResults, hinge_dense_paths
from ._hinge_state import (
    ROW_SUBSET_BUDGET,
    ExactDual,
    HingeState,
    PrimalSolution,
    RowSubsets,
    _Targets,
    row_subset_batches,
)
from ._losses import _COMMON_PARAMS, Loss, padded_path
from ._lowrank import LowRankMetrics
from ._metric import Metric
from ._metric_algebra import PSDFactor
from ._problem import FeatureRows, MVMLProblem, NystromProblem

__all__ = ["HingeLoss", "OFFSET_KAPPA"]

#: ``fit_intercept``: the offset ``b`` of the hinge loss is penalised by
#: ``C b^2 / (2 kappa)``, ``kappa = OFFSET_KAPPA``, beside the data term
#: ``C sum_i max(0, 1 - y_i (f(x_i) + b))``. Measured (``docs/mvml_svm.md``, "The
#: intercept"): the offsets agree with the unpenalised bias of ``SVC`` within about
#: ``|b| / kappa``; larger values make the constant feature of the g-step's SVM larger
#: (``sqrt(kappa / C')``), the dual worse conditioned
OFFSET_KAPPA = 10.0


class HingeLoss(Loss):
    """The hinge loss ``C sum_i max(0, 1 - y_i w^T H_{x_i} g)`` of MVML-SVM (eq. 6-8).

    With ``fit_intercept``: ``C sum_i max(0, 1 - y_i (w^T H_{x_i} g + b)) + C b^2 /
    (2 kappa)`` with an offset ``b`` per target, fitted jointly with ``g`` by every
    g-step (:meth:`offset_column`).
    """

    param_names = (*_COMMON_PARAMS, "C", "svm_tol", "svm_max_epochs", "random_state")

    C: float | None
    svm_tol: float
    svm_max_epochs: int
    random_state: Any

    #: the g-step reads every row's features (no sufficient statistics), and liblinear's
    #: random number generator is process-wide: folds run one at a time
    needs_rows = True
    thread_safe = False

    #: weighted rows: the problem keeps them as given (the hinge weighs each row itself)
    scales_rows = False

    #: warm-start each g-step from the previous exact one (see :meth:`svm_g`); tests and
    #: the benchmark switch it off to compare with cold solves
    warm_start = True

    #: the CV's store of first g-step solutions across folds (set by
    #: :class:`~mvkernels.mvml._cv_engine.CVEngine`, one per search; None: none), keyed by
    #: ``(alpha, targets, features)``: :meth:`fold_paths` starts a fold's first ``alpha``
    #: from the previous fold's exact solutions there (the folds share each row's
    #: features), :func:`~mvkernels.mvml._hinge_active.reseed_solutions`
    fold_seeds: dict | None = None

    def __init__(self, params: Any):
        super().__init__(params)
        self._features: tuple | None = None  # the training features, once per fit

    def share_fold_seeds(self, store: dict) -> None:
        """Read and write :attr:`fold_seeds` in ``store`` (the CV engine's, one per search)."""
        self.fold_seeds = store

    def new_state(self) -> HingeState:
        return HingeState()

    # ------------------------------------------------------------------ fit's ends
    #: the features, thin products: on the fit's BLAS threads (DataPart.fit_threads)
    builds_on_fit_threads = True

    def build_problem(self, ctx: FitContext, X: Any, Y: Any) -> MVMLProblem:
        """The problem data on the fit's BLAS threads, the rows gathered on Dask input
        (:func:`~mvkernels.mvml._hinge_fit.hinge_problem`)."""
        return hinge_problem(self, ctx, X, Y)

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
        """The training features kept, no sufficient statistics
        (:func:`~mvkernels.mvml._hinge_fit.hinge_nystrom_problem`)."""
        return hinge_nystrom_problem(self, ctx, nys, Xs, Y, complete, sample_weight, data)

    def fitted_attributes(
        self, ctx: FitContext, states: list, histories: list, n_samples: int
    ) -> dict[str, Any]:
        """``C_``, ``dual_coef_``, ``svm_epochs_``, ``objective_increase_``
        (:func:`~mvkernels.mvml._hinge_fit.hinge_attributes`)."""
        return hinge_attributes(self, ctx, states, histories, n_samples)

    #: ``fit_intercept``: the offset's penalty is ``C b^2 / (2 offset_kappa)``
    offset_kappa = OFFSET_KAPPA

    def with_intercept(self, problem: MVMLProblem) -> MVMLProblem:
        """The hinge loss fits its offsets in the g-step itself: the problem as given."""
        return problem

    # ------------------------------------------------------------------ helpers
    def offset_column(self, box: float) -> float | None:
        """The value of the constant feature appended to the g-step's features for the
        offset (None without ``fit_intercept``), for an SVM of box ``C' = box``.

        The g-step with an offset, ``min C sum_i max(0, 1 - y_i (<phi_i, g> + b)) +
        alpha <g, A^+ g> + C b^2 / (2 kappa)``, is ``2 alpha`` times the bias-free SVM
        ``1/2 (||v||^2 + v_b^2) + C' sum_i max(0, 1 - y_i (<x_i, v> + c v_b))`` on the
        features ``[x_i, c]`` with ``c = sqrt(kappa / C')`` and ``b = c v_b``
        (``alpha b^2 / c^2 = C b^2 / (2 kappa)`` as ``2 alpha C' = C``): liblinear's
        augmented constant feature, penalised relative to the data term only (the same
        for every ``alpha``, metric and mode). The features scaled by ``1 / sqrt(s)``
        (the problem with box ``C' s``, :meth:`dense_paths`) take ``c / sqrt(s)``, which
        is this rule for their box. As ``kappa`` grows ``b`` tends to the unpenalised
        offset of the dual with ``sum_i a_i y_i = 0`` (libsvm's); ``kappa`` is
        :attr:`offset_kappa`.
        """
        if not self.fit_intercept:
            return None
        return float(np.sqrt(float(self.offset_kappa) / float(box)))

    def offset_penalty(self, problem: MVMLProblem, b: float) -> float:
        """``C b^2 / (2 kappa)`` (0 without ``fit_intercept``)."""
        if not self.fit_intercept:
            return 0.0
        return self.hinge_weight(problem) * float(b) ** 2 / (2.0 * float(self.offset_kappa))

    def hinge_weight(self, problem: MVMLProblem) -> float:
        """``C``: ``C`` as given, or ``1 / n`` (``1 / sum_i s_i`` with row weights)."""
        if self.C is not None:
            return float(self.C)
        if problem.sample_weight is None:
            return 1.0 / problem.n_samples
        return 1.0 / problem.total_weight

    @staticmethod
    def row_weight(problem: MVMLProblem) -> np.ndarray | None:
        """The rows' loss weights ``s_i`` (None: 1 each): row ``i``'s box is ``s_i C'``."""
        sw = problem.sample_weight
        return None if sw is None else np.asarray(sw, dtype=np.float64)

    def phi(self, problem: MVMLProblem, w: np.ndarray) -> np.ndarray:
        """Rows ``phi_i``: ``z_i = D_w u(x_i)`` (Nystrom) or the rows of ``W H`` (full).

        The Nystrom features ``U`` (n x vp) are computed once per fit (the hinge loss has
        no sufficient statistics) and kept until the end of ``fit``.
        """
        if not problem.feature_space:  # the full-kernel design W H
            return problem.design(w)
        cache = self._features
        if cache is None or cache[0] is not problem:
            cache = (problem, problem.features(), {})
            self._features = cache
        key = np.asarray(w, dtype=np.float64).tobytes()
        weighted = cache[2]
        if key not in weighted:
            weighted.clear()
            weighted[key] = cache[1] * problem.weight_vector(w)
        return weighted[key]

    def solver_rng(self, state: HingeState, t: int) -> np.random.RandomState:
        """liblinear's seed generator for target ``t``: seeded by ``random_state`` (an int;
        0 otherwise, so that fits are reproducible) and ``t``; kept across g-steps."""
        if state.rng is None:
            seed = int(self.random_state) if isinstance(self.random_state, Integral) else 0
            state.rng = np.random.RandomState((seed * 1009 + t) % (2**32))
        return state.rng

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
    ) -> np.ndarray:
        """The g-step of target ``t`` on the features ``X = F^T phi_i``; returns ``g``.

        ``value(v) -> g`` and ``objective(g, m)`` with ``m`` the margins
        ``y_i <x_i, v>`` of all rows (the hinge loss is ``C sum max(0, 1 - m)``). If an
        inexact ``g`` (liblinear's alone) does not improve the objective on ``ref()`` (the
        previous ``g`` under the current metric, or None; possible when the solver stops at
        ``svm_tol`` after an A-step), the tolerance is divided by 10 and the problem solved
        again, down to 1e-8. An exact solution (active set) is the minimiser: neither
        objective is computed then.

        A solution found beforehand is taken as it is: the first g-step's
        (``state.cold``, :meth:`first_g_steps`) or the warm start solved with the other
        targets (``state.polished``, :meth:`warm_g_steps`).

        Warm start: after an exact g-step (``state.exact``), the next one first solves
        the previous active set on the new features
        (:func:`~mvkernels.mvml._hinge.polish_active_set`, band
        :data:`~mvkernels.mvml._hinge.WARM_BAND`, at most
        :data:`~mvkernels.mvml._hinge.WARM_ROUNDS` corrections, each adding at most
        :data:`~mvkernels.mvml._hinge.COLD_ADD` rows to the free set, KKT-verified); liblinear does
        not run when that succeeds (counted in ``state.warm_starts``). Otherwise
        liblinear (which has no warm start) runs on a working set of rows chosen by the previous
        margins, with an exact check on all rows
        (:func:`~mvkernels.mvml._hinge.linear_svm_working_set`), at a loose tolerance
        whose active set is then solved exactly
        (:func:`~mvkernels.mvml._hinge.linear_svm_polished`; liblinear at ``svm_tol``
        when that fails).
        """
        y = problem.Y[:, t]
        # features given as x_i / sqrt(c_scale): the same problem with C' c_scale
        Cp = svm_c_prime(self.hinge_weight(problem), self.alpha) * c_scale
        col = self.offset_column(Cp)  # fit_intercept: X's last column, of this value

        def split(vv: np.ndarray) -> tuple[np.ndarray, float]:
            """``v`` without the offset's coordinate, and the offset ``b = c v_b``."""
            return (vv, 0.0) if col is None else (vv[:-1], col * float(vv[-1]))

        tol = float(self.svm_tol)
        sw = self.row_weight(problem)
        warm = cold = state.cold
        state.cold = None  # solved with the other targets (first g-step)
        polished = state.polished
        state.polished = None  # solved with the others: warm_g_steps
        if cold is None and polished is not None:
            warm = polished
        elif cold is None and self.warm_start_applies(state):
            # warm start: the previous exact g-step's active set (rows at the bound, on
            # the margin, inactive) solved on the new features, KKT-verified on every row
            warm = polish_active_set(
                X,
                y,
                Cp,
                state.margins,
                WARM_BAND,
                rounds=WARM_ROUNDS,
                max_add=COLD_ADD,
                weight=sw,
            )
        if warm is not None:
            v, dual, margins = warm
            res = LinearSVMResult(v, 0, True)
            vg, off = split(v)
            g = value(vg)
            if cold is None:
                state.warm_starts += 1
        while warm is None:
            res, margins, dual = linear_svm_polished(
                X,
                y,
                Cp,
                state.margins,
                tol=tol,
                max_iter=int(self.svm_max_epochs),
                random_state=self.solver_rng(state, t),
                # after one failed active-set solve (e.g. a noisy, low-dimensional
                # problem), this target's g-steps run liblinear at svm_tol directly
                presolve_tol=tol if state.no_polish else PRESOLVE_TOL,
                weight=sw,
            )
            state.no_polish = state.no_polish or dual is None
            state.epochs += res.n_iter
            vg, off = split(res.coef)
            g = value(vg)
            if dual is not None or tol <= 1e-8:
                break  # an exact solution (dual) is the minimiser: no tighter tolerance
            r = ref() if ref is not None else None
            obj = objective(g, margins) + self.offset_penalty(problem, off)
            if r is None or obj <= r + 1e-12 * abs(r):
                break
            tol *= 0.1
        state.g = g
        state.offset = off
        state.margins = margins
        state.exact = dual is not None
        state.converged = state.converged and res.converged
        if dual is not None:  # the multipliers of the exact solution
            state.last = ExactDual(dual, c_scale)
            return g
        # what the final multipliers need: the rows that can be support vectors (margin
        # <= 1 + band; the others have a_i = 0), or ``rebuild(rows)`` for a reused buffer
        band = max(tol, 1e-9)
        rows = np.flatnonzero(margins <= 1.0 + band)
        state.last = PrimalSolution(
            features=X[rows] if rebuild is None else rebuild,  # rebuilt at the end of fit only
            rows=rows,
            labels=y[rows],
            margins=margins[rows],
            weight=None if sw is None else sw[rows],
            coef=res.coef,
            box=Cp,
            band=band,
            c_scale=c_scale,
        )
        return g

    def g_step(
        self, problem: MVMLProblem, t: int, factor: PSDFactor, w: np.ndarray, state: HingeState
    ) -> np.ndarray:
        """Hinge-loss g-step (eq. 7-8) for target column ``t``, any metric factor.

        liblinear on the bias-free SVM with features ``F^T phi_i`` and
        ``C' = C / (2 alpha)`` (see :meth:`svm_g`); ``g = F v``. With ``fit_intercept``
        the features end with the offset's constant column (:meth:`offset_column`).
        """
        F = factor.F
        X = self.phi(problem, w) @ F
        col = self.offset_column(svm_c_prime(self.hinge_weight(problem), self.alpha))
        if col is not None:
            X = np.hstack([X, np.full((X.shape[0], 1), col)])
        g_old = state.g

        def ref() -> float | None:
            if g_old is None:
                return None
            return self.data_loss(problem, t, g_old, w) + self.alpha * factor.quad(g_old)

        def value(v: np.ndarray) -> np.ndarray:
            return F @ v

        def objective(g: np.ndarray, m: np.ndarray) -> float:
            return self.hinge_from_margins(problem, m) + self.alpha * factor.quad(g)

        return self.svm_g(problem, t, X, state, value, objective, ref)

    # ------------------------------------------------------------------ structured
    def structured_applies(self, problem: MVMLProblem) -> bool:
        """Low-rank path: fixed weights and a dense (from ``A = I``) or fixed metric, in
        both modes (the hinge g-step only needs the features), and this class's g-step
        and loss (a subclass that overrides them gets the dense reference path)."""
        plan, kind = self.solver_plan, self.metric_kind
        return plan.direct_structured and not self.learn_weights and kind.structured

    def fit_structured(
        self, problem: MVMLProblem, metric0: Metric, record_path: bool = False
    ) -> list[PathResult]:
        """Algorithm 1 with the hinge g-step and the low-rank dense A-step.

        The metric of every target is ``A = s I + W W^T``
        (:class:`~mvkernels.mvml._lowrank.LowRankMetrics`, the same A-step as the
        square-loss structured solver); with ``F = [sqrt(s) I, W]`` the g-step features
        are ``[sqrt(s) phi_i, W^T phi_i]`` (``O(n d r)`` per g-step) and
        ``<g, A^{-1} g>`` comes from the Woodbury identity. Same iterates as the dense
        path (:func:`~mvkernels.mvml._driver.reference_paths`) up to the dual solver's
        tolerance. Fixed metrics (identity, Cov) need one g-step.
        """
        v, T = problem.n_views, problem.n_targets
        w = np.full(v, 1.0 / v)
        Phi = self.phi(problem, w)
        states = [HingeState() for _ in range(T)]
        if not self.metric_kind.learned:
            factor = metric0.factor
            G, data = [], []
            for t in range(T):
                G.append(self.g_step(problem, t, factor, w, states[t]))
                data.append(self.data_loss(problem, t, G[t], w))
            return self._fixed_results(metric0, G, w, data, factor.quad, states)
        return self.dense_paths(problem, Phi, w, [float(self.eta)]).results

    #: one-vs-one: the pairs' structured paths in one batch (:meth:`fit_row_subsets`);
    #: tests switch it off to compare with one fit per pair
    batch_row_subsets = True

    def row_subsets_apply(self, problem: MVMLProblem | None = None) -> bool:
        """Whether :meth:`fit_row_subsets` (and :meth:`fold_row_subsets`) runs problems on
        subsets of ``problem``'s rows (one-vs-one's pairs; None: a Nystrom-mode problem)
        in batches: the learned dense metric's structured path (:meth:`dense_paths`), in
        Nystrom mode (the features of every row are shared)."""
        kind = self.metric_kind
        return (
            self.batch_row_subsets
            and (problem is None or problem.feature_space)
            and kind.learned
            and kind.low_rank
            and self.structured_applies(problem)
        )

    def fit_row_subsets(
        self, problem: MVMLProblem, subs: list[MVMLProblem], rows: list[np.ndarray]
    ) -> list[PathResult]:
        """:meth:`fit_structured` of the one-target problems ``subs``, problem ``k`` on the
        rows ``rows[k]`` of ``problem`` (one-vs-one: the class pairs), in one batch
        (:meth:`dense_paths` with :class:`RowSubsets`): the results of one fit per
        problem (the active-set solutions are exact, so to rounding), with their offsets
        (``intercept``, as ``_BaseMVML._solve_path`` sets them)."""
        w = np.full(problem.n_views, 1.0 / problem.n_views)
        Phi = self.phi(problem, w)
        results: dict[int, PathResult] = {}
        for group, subsets, Phi_g in row_subset_batches(subs, rows, Phi, ROW_SUBSET_BUDGET):
            paths = self.dense_paths(problem, Phi_g, w, [float(self.eta)], subsets=subsets)
            results.update(zip(group, paths.results))
        out = [results[k] for k in range(len(subs))]
        for r, sub in zip(out, subs):
            GW = (r.g * sub.weight_vector(r.w))[None]
            r.intercept = float(self.intercepts(sub, GW)[0])
        return out

    def dense_paths(
        self,
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
        """The low-rank dense path of every ``(eta, target)`` pair, ``eta``-major
        (:class:`~mvkernels.mvml._hinge_paths.HingePaths`, run by the one driver
        :func:`~mvkernels.mvml._driver.run_paths`).

        The first g-step (metric ``A = I``) does not depend on ``eta``: it is solved once
        per target and shared by every ``eta`` (with a copy of its solver state, so that
        each path continues exactly as a fit with that ``eta`` alone); it is solved for
        every target at once by the active set from scratch (:meth:`first_g_steps`).
        ``seed_margins`` (T, n), e.g. the first g-step's margins at a neighbouring
        ``alpha``, choose liblinear's working set of rows for a target where that gives up
        (the result is exact whatever they are, see
        :func:`~mvkernels.mvml._hinge.linear_svm_working_set`); the results'
        ``first_margins`` hold the margins of each target's first g-step.

        ``subsets``: the targets are problems on subsets of the rows of ``problem``
        (``Phi`` holds the features of all its rows), e.g. the class pairs of
        one-vs-one (:meth:`fit_row_subsets`, :meth:`fold_row_subsets`): their first
        g-steps and warm starts run in one batch on all the rows, a subset's rows of
        weight 0 off it (one product per correction for every pair, where one fit per
        pair reads its rows once per correction of its own), and their A-steps in one
        batch; every other step and each result are those of a fit on the subset alone.
        ``seed_margins`` is then a list, each subset's margins on its rows.

        ``seed_solutions``: the exact first g-steps of the same targets on the same
        features at a smaller box (:class:`FirstSolutions`, e.g. at the next larger
        ``alpha``; without ``subsets``), which :meth:`first_g_steps` starts from; the
        first g-steps solved exactly here are returned in the results'
        ``first_solutions`` (a :class:`FirstSolutions`). ``gram``: ``Phi Phi^T`` (the
        active sets read their free rows' Gram matrices from it when the rows are fewer
        than the features; formed here then if not given). ``fold_seeds``: the targets'
        first-g-step ``v`` on other rows with the same features (another CV fold), for
        :meth:`first_g_steps` without ``seed_solutions``.
        """
        return hinge_dense_paths(
            self,
            problem,
            Phi,
            w,
            etas,
            seed_margins,
            subsets,
            seed_solutions,
            gram,
            fold_seeds,
        )

    def warm_start_applies(self, state: HingeState) -> bool:
        """Whether a target's next g-step starts from its previous solution's sets: the
        warm start is on and that g-step was exact, with no failed active set before."""
        return bool(self.warm_start and state.exact and not state.no_polish)

    def warm_g_steps(
        self,
        problem: MVMLProblem,
        Phi: np.ndarray,
        mets: LowRankMetrics,
        states: list[HingeState],
        paths: list[int],
        targets: _Targets | None = None,
        Cp0: np.ndarray | None = None,
        gram: np.ndarray | None = None,
    ) -> None:
        """The warm starts of the next g-step of the ``paths`` (of :meth:`dense_paths`)
        solved together, before :meth:`svm_g` reads them.

        Path ``b`` (target ``t = b mod T``) has the features ``[phi_i, W_b^T phi_i /
        sqrt(s_b)]`` and the box ``C' s_b``; where its previous g-step was exact, the sets
        of that solution are corrected on the new features for every such path at once
        (:func:`~mvkernels.mvml._hinge.polish_active_sets`: the products with ``Phi`` of
        all paths' ``W_b`` and, per correction, of all their solutions are one product
        each, where one path at a time reads ``Phi`` for each). A solution is stored in
        ``state.polished``; a path whose sets do not settle here (every row is checked
        at every correction, where its own warm start checks the rows near its margin
        first) gets its own warm start in :meth:`svm_g`, then liblinear's path. ``targets``:
        the paths' targets (:class:`_Targets`; None: ``problem``'s columns), ``Cp0`` their
        boxes ``C'`` at ``A = I``, ``gram`` ``Phi Phi^T`` (None: formed where read).
        """
        warm = [b for b in paths if states[b].cold is None and self.warm_start_applies(states[b])]
        if not warm:
            return
        tg = _Targets(problem) if targets is None else targets
        if Cp0 is None:
            Cp0 = np.full(tg.T, svm_c_prime(self.hinge_weight(problem), self.alpha))
        T, r = tg.T, mets.r
        ts = [b % T for b in warm]
        sq = np.sqrt(mets.s[warm])
        Cp = Cp0[ts] * mets.s[warm]
        extras: list[np.ndarray] | None = None
        if r:
            W = np.hstack([mets.columns(b) / q for b, q in zip(warm, sq)])
            P = Phi @ W
            extras = [P[:, j * r : (j + 1) * r] for j in range(len(warm))]
        if self.fit_intercept:  # the offset's constant column last, of each path's value
            n = Phi.shape[0]
            cols = [np.full((n, 1), self.offset_column(c)) for c in Cp]
            extras = cols if extras is None else [np.hstack(p) for p in zip(extras, cols)]
        solved = polish_active_sets(
            Phi,
            tg.labels(ts),
            Cp,
            tg.margins(ts, [states[b].margins for b in warm]),
            WARM_BAND,
            extras=extras,
            rounds=WARM_ROUNDS,
            max_add=COLD_ADD,
            weight=tg.weights(self.row_weight, ts),
            gram=gram,
        )
        for b, t, res in zip(warm, ts, solved):
            if res is not None:
                states[b].polished = tg.local(t, res)

    def first_g_steps(
        self,
        problem: MVMLProblem,
        X: np.ndarray,
        states: list[HingeState],
        targets: _Targets | None = None,
        Cp0: np.ndarray | None = None,
        seeds: FirstSolutions | None = None,
        gram: np.ndarray | None = None,
        fold_seeds: list | None = None,
    ) -> None:
        """The first g-step (``A = I``, features ``X``) of every target at once.

        The targets' problems share their rows (one-vs-all): the exact active-set
        solutions grown from scratch (:func:`~mvkernels.mvml._hinge.active_set_svm`, all
        targets' margins from one product per correction) replace liblinear's loose run
        and the polish of :meth:`svm_g`, which reads them from ``state.cold``. Only
        where :meth:`svm_g` would polish (:func:`~mvkernels.mvml._hinge.polish_applies`),
        down to the smaller box :data:`~mvkernels.mvml._hinge.COLD_MIN_BOX`; a target whose
        active set fails takes the usual path. ``targets`` with row subsets (and ``Cp0``,
        each one's box ``C'``): ``X`` holds the features ``phi_i`` of all rows, and each
        subset is tried where a fit on its rows alone would try it. ``seeds``: the
        targets' exact first g-steps on the same features at a smaller box (the CV's
        next larger ``alpha``), without an offset column (whose value depends on the
        box): those still exact at this box are taken as they are, the others polished
        from their margins (:func:`~mvkernels.mvml._hinge_active.rebox_solutions`); the
        active set grows from scratch for the rest (the solutions are exact either way).
        ``gram``: ``X X^T`` where the caller has it. ``fold_seeds`` (without ``seeds``):
        the targets' ``v`` on other rows with the same features (the previous CV fold's),
        whose margins here guess the sets
        (:func:`~mvkernels.mvml._hinge_active.reseed_solutions`).
        """
        if targets is not None and targets.subsets is not None:
            self._first_subset_g_steps(X, states, targets, Cp0)
            return
        Cp = svm_c_prime(self.hinge_weight(problem), self.alpha)
        sw = self.row_weight(problem)
        if not polish_applies(X, Cp, float(self.svm_tol), min_box=COLD_MIN_BOX, weight=sw):
            return
        todo = list(range(len(states)))
        if fold_seeds is not None and seeds is None:
            reseeded = reseed_solutions(X, problem.Y, fold_seeds, Cp, weight=sw, gram=gram)
            for state, exact in zip(states, reseeded):
                state.cold = exact
            todo = [t for t, exact in enumerate(reseeded) if exact is None]
        elif seeds is not None and self.offset_column(Cp) is None:
            reboxed = rebox_solutions(X, problem.Y, seeds, Cp, weight=sw, gram=gram)
            for state, exact in zip(states, reboxed):
                state.cold = exact
            todo = [t for t, exact in enumerate(reboxed) if exact is None]
        if not todo:
            return
        Y = problem.Y if len(todo) == len(states) else problem.Y[:, todo]
        for t, exact in zip(todo, active_set_svm(X, Y, Cp, weight=sw, gram=gram)):
            if exact is not None:
                states[t].cold = exact

    def _first_subset_g_steps(
        self, Phi: np.ndarray, states: list[HingeState], tg: _Targets, Cp0: np.ndarray
    ) -> None:
        """:meth:`first_g_steps` of problems on row subsets: one :func:`active_set_svm`
        on all the rows ``Phi`` for every subset that its own fit would try there (on its
        features ``[phi_i, c]``, ``c`` the offset's column, an extra column of each), a
        subset's rows of weight 0 off it."""
        subsets = tg.subsets
        cols = [self.offset_column(c) for c in Cp0]
        tried = []
        for t, (sub, rows) in enumerate(zip(subsets.problems, subsets.rows)):
            Xt = Phi[rows]
            if cols[t] is not None:
                Xt = np.hstack([Xt, np.full((rows.size, 1), cols[t])])
            sw = self.row_weight(sub)
            if polish_applies(Xt, Cp0[t], float(self.svm_tol), min_box=COLD_MIN_BOX, weight=sw):
                tried.append(t)
        if not tried:
            return
        n = Phi.shape[0]
        extras = None if cols[0] is None else [np.full((n, 1), cols[t]) for t in tried]
        solved = active_set_svm(
            Phi,
            tg.labels(tried),
            Cp0[tried],
            weight=tg.weights(self.row_weight, tried),
            extras=extras,
        )
        for t, exact in zip(tried, solved):
            if exact is not None:
                states[t].cold = tg.local(t, exact)

    # ------------------------------------------------------------------ hooks
    def hinge_from_margins(self, problem: MVMLProblem, m: np.ndarray) -> float:
        """``C sum_i s_i max(0, 1 - m_i)`` for the margins ``m_i = y_i f(x_i)`` (``s_i``:
        the rows' weights, 1 without)."""
        sw = self.row_weight(problem)
        if sw is None:
            return float(self.hinge_weight(problem) * np.maximum(0.0, 1.0 - m).sum())
        return float(self.hinge_weight(problem) * (sw @ np.maximum(0.0, 1.0 - m)))

    def margin_loss(self, problem: MVMLProblem, state: HingeState) -> float:
        """The data term at a g-step's solution: the hinge loss of its margins (which
        include its offset) plus the offset's penalty."""
        return self.hinge_from_margins(problem, state.margins) + self.offset_penalty(
            problem, state.offset
        )

    def data_loss(self, problem: MVMLProblem, t: int, g: np.ndarray, w: np.ndarray) -> float:
        """Hinge loss ``C sum_i max(0, 1 - y_i w^T H_{x_i} g)`` (Nystrom: ``z_i^T g~``).

        With ``fit_intercept``: minimised over the offset ``b``, its penalty
        ``C b^2 / (2 kappa)`` included (:func:`~mvkernels.mvml._hinge.hinge_offsets`),
        a function of ``g`` and ``w`` alone, which the g-step's joint solution attains.
        """
        f = self.phi(problem, w) @ g
        if not self.fit_intercept:
            return self.hinge_from_margins(problem, problem.Y[:, t] * f)
        return self.offset_loss(problem, f, problem.Y[:, t])

    def offset_loss(self, problem: MVMLProblem, f: np.ndarray, y: np.ndarray) -> float:
        """``min_b C sum_i s_i max(0, 1 - y_i (f_i + b)) + C b^2 / (2 kappa)``."""
        sw = self.row_weight(problem)
        _, val = hinge_offsets(f[:, None], y[:, None], float(self.offset_kappa), sw)
        return self.hinge_weight(problem) * float(val[0])

    def intercepts(
        self, problem: MVMLProblem, coef: np.ndarray, basis: np.ndarray | None = None
    ) -> np.ndarray:
        """The offsets of weighted coefficients ``coef`` (..., T, k) (``basis``: as
        :meth:`MVMLProblem.intercepts <mvkernels.mvml._problem.MVMLProblem.intercepts>`):
        zeros without ``fit_intercept``; else the offset of each that minimises its
        training data term (:meth:`data_loss`; the g-step's own offset, as its joint
        solution is unique in ``b``), from the decision values on the training rows."""
        coef = np.asarray(coef, dtype=np.float64)
        if not self.fit_intercept:
            return np.zeros(coef.shape[:-1])
        T = problem.n_targets
        flat = coef.reshape(-1, coef.shape[-1])  # (m, k), target t = row mod T
        if basis is not None:
            flat = flat @ basis.T
        F = problem.training_outputs(flat)
        Y = np.asarray(problem.Y, dtype=np.float64)[:, np.arange(flat.shape[0]) % T]
        b, _ = hinge_offsets(F, Y, float(self.offset_kappa), self.row_weight(problem))
        return b.reshape(coef.shape[:-1])

    def w_step(self, problem: MVMLProblem, t: int, g: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Hinge-loss view weights over the simplex: the linear program of
        :func:`~mvkernels.mvml._hinge.hinge_view_weights` on the per-view outputs ``Z``
        (column ``l`` = ``K_l g_l`` or ``U_l g~_l``, as in eq. 10 / 17) with the rows'
        weights; with ``fit_intercept`` the losses compared are minimised over the
        offset (:meth:`data_loss`)."""
        y = problem.Y[:, t]
        offset_loss = None
        if self.fit_intercept:

            def offset_loss(f: np.ndarray) -> float:
                return self.offset_loss(problem, f, y)

        return hinge_view_weights(
            problem.view_outputs(g), y, w, self.row_weight(problem), offset_loss
        )

    def final_dual(self, state: HingeState) -> np.ndarray:
        """The paper's multipliers of the last g-step (KKT recovery from ``v``)."""
        if state.last is None:  # a g-step that keeps its own multipliers (a reference solver)
            return np.asarray(state.dual)[:, 0]
        last = state.last
        state.last = None
        a = last.multipliers(state.margins.shape[0])
        return 2.0 * self.alpha * a / last.c_scale

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
        """:meth:`~mvkernels.mvml._losses.Loss.fold_paths` (``rows`` unused: the hinge
        loss works in the feature basis); the learned dense metric runs every ``eta`` of
        an ``alpha`` as one batch (:meth:`dense_paths`), sharing the first g-step, the
        ``alpha`` from the largest down, each seeding the next one's working set with its
        first g-step's margins. Other variants (sparse metric, learned weights, fixed
        metrics) take the generic path on the same fold features."""
        if not (self.metric_kind.low_rank and self.structured_applies(problem)):
            return super().fold_paths(ctx, problem, Xtr, alphas, etas, K, rows)
        problem = problem.with_views(Xtr)  # (the generic path sets it too)
        T, d, v = problem.n_targets, problem.dim, problem.n_views
        w = np.full(v, 1.0 / v)
        Phi = self.phi(problem, w)
        out = np.zeros((alphas.size, etas.size, K, T, d))
        # warm start along alpha, largest first (the smallest C', the most support
        # vectors): the first g-step's margins choose the next alpha's working set
        # and its exact first g-steps (A = I: the same features at a larger box C') the
        # next one's first g-steps (FirstSolutions: at a larger box, most stay exact)
        seed, firsts = None, None
        gram = Phi @ Phi.T if Phi.shape[0] <= Phi.shape[1] else None  # (every alpha's)
        store = self.fold_seeds
        for ai in np.argsort(-alphas, kind="stable"):
            # the first alpha's first g-steps start from another fold's at this alpha
            key = (float(alphas[ai]), T, d)
            across = None if firsts is not None or store is None else store.get(key)
            res = self.at(float(alphas[ai]), self.eta).dense_paths(
                problem, Phi, w, [float(e) for e in etas], seed, None, firsts, gram, across
            )
            seed = np.stack(res.first_margins)
            firsts = res.first_solutions
            if store is not None and firsts is not None:
                store[key] = [None if s is None else s[0] for s in firsts.solutions]
            for ei in range(etas.size):
                for t in range(T):
                    P = res.results[ei * T + t].path
                    out[ai, ei, :, t] = padded_path(P, K) * problem.weight_vector(w)
        return out, None

    def fold_row_subsets(
        self,
        feature_map: Any,
        U: np.ndarray,
        rows: list[np.ndarray],
        labels: list[np.ndarray],
        sample_weight: np.ndarray | None,
        alphas: np.ndarray,
        etas: np.ndarray,
        K: int,
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`fold_paths` of one-target problems on subsets of a fold's training rows
        (one-vs-one: the pairs; :meth:`row_subsets_apply`) in batches
        (:meth:`dense_paths` with :class:`RowSubsets`, grouped by
        :func:`row_subset_groups`): problem ``k`` has the rows ``rows[k]`` of the
        training features ``U`` (``feature_map``'s), the labels ``labels[k]`` and the
        rows' weights ``sample_weight[rows[k]]``. Returns the weighted coefficients of
        every candidate ``(n_alpha * n_eta * K, P, d)`` (the candidates in the order of
        :meth:`fold_paths`) and their offsets ``(n_alpha * n_eta * K, P)``: those of one
        :meth:`fold_paths` per problem on its rows (to rounding)."""
        v, p = int(feature_map.n_views_), int(feature_map.n_landmarks_)
        subs: list[MVMLProblem] = [
            NystromProblem(
                r.size,
                v,
                p,
                np.asarray(y, dtype=np.float64).reshape(-1, 1),
                feature_rows=FeatureRows(feature_map, U=U[r]),
                sample_weight=None if sample_weight is None else sample_weight[r],
            )
            for r, y in zip(rows, labels)
        ]
        d = subs[0].dim
        w = np.full(v, 1.0 / v)
        wv = subs[0].weight_vector(w)
        Phi = U * wv
        out = np.zeros((alphas.size, etas.size, K, len(subs), d))
        for group, subsets, Phi_g in row_subset_batches(subs, rows, Phi, ROW_SUBSET_BUDGET):
            seed: list | None = None  # as fold_paths: alpha from the largest down
            for ai in np.argsort(-alphas, kind="stable"):
                res = self.at(float(alphas[ai]), self.eta).dense_paths(
                    subs[group[0]], Phi_g, w, [float(e) for e in etas], seed, subsets
                )
                T = len(group)
                seed = res.first_margins
                for ei in range(etas.size):
                    for t, k in enumerate(group):
                        P = res.results[ei * T + t].path
                        out[ai, ei, :, k] = padded_path(P, K) * wv
        GW = out.reshape(-1, len(subs), d)
        b = np.concatenate(
            [self.intercepts(sub, GW[:, k : k + 1]) for k, sub in enumerate(subs)], axis=1
        )
        return GW, b

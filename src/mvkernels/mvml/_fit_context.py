"""What a loss reads of the fit it serves: :class:`FitContext`, one typed, frozen object.

A :class:`~mvkernels.mvml._losses.Loss` owns the g-step, the data term, the w-step, its
structured solver and solver state, and the two ends of a fit (the problem data it reads,
the fitted attributes it adds). At those ends and in a cross-validation fold it needs a few
things that belong to the estimator (its problem builders, its Algorithm-1 driver, its
initial metric, the rows' loss weights, the one-vs-one row subsets): the estimator hands
them over in a :class:`FitContext` (``_BaseMVML._fit_context``, once per fit; the CV's
engine, :class:`~mvkernels.mvml._cv_engine.CVEngine`, once per fold call), and the loss
hooks take that context, never the estimator. So a loss reads no attribute of an
estimator and sets none: the attributes a loss adds to a fitted model are returned by
:meth:`Loss.fitted_attributes <mvkernels.mvml._losses.Loss.fitted_attributes>` and set
by the estimator.

The estimators' ``solver`` parameter is resolved once, when a loss is built from the
parameters, into a :class:`SolverPlan` (:func:`solver_plan`): whether the structured path
may run (or the dense reference path is forced) and whether its g-steps are direct
factorisations or conjugate gradient. The parts (the losses, the problem builders, the
one-vs-one batches) read the plan, never the parameter's string.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ._data_part import DataPart
    from ._driver import PathResult
    from ._metric import Metric
    from ._problem import MVMLProblem

__all__ = ["FitContext", "GStepMethod", "SolverPlan", "column_rows", "solver_plan"]


class GStepMethod(Enum):
    """How the structured path's g-steps are solved."""

    #: one factorisation (Cholesky / eigendecomposition) of the system
    DIRECT = "direct"
    #: preconditioned conjugate gradient (:mod:`mvkernels.mvml._iterative`)
    CONJUGATE_GRADIENT = "cg"


@dataclass(frozen=True)
class SolverPlan:
    """The ``solver`` parameter of a fit, resolved once (:func:`solver_plan`).

    Attributes
    ----------
    structured : bool
        Whether the structured path (all targets on one factorisation and a low-rank
        metric, :mod:`mvkernels.mvml._lowrank`) runs where it applies (``"auto"``,
        ``"cg"``); False: the dense reference path always (``"dense"``).
    g_step : GStepMethod
        The structured path's g-steps: direct (``"auto"``) or conjugate gradient
        (``"cg"``, which the square loss requires to apply, else a ``ValueError``).

    Examples
    --------
    >>> plan = solver_plan("cg")
    >>> plan.structured, plan.conjugate_gradient, plan.direct_structured
    (True, True, False)
    >>> solver_plan("dense").structured
    False
    """

    structured: bool
    g_step: GStepMethod = GStepMethod.DIRECT

    @property
    def conjugate_gradient(self) -> bool:
        """Whether the g-steps are solved by conjugate gradient (``solver="cg"``): the
        structured path is then required, not only preferred."""
        return self.g_step is GStepMethod.CONJUGATE_GRADIENT

    @property
    def direct_structured(self) -> bool:
        """The structured path with direct g-steps (``solver="auto"``): the paths that
        have no conjugate-gradient form (the hinge loss's, the one-vs-one batches) run
        only then."""
        return self.structured and not self.conjugate_gradient


#: the plan of each value of the ``solver`` parameter (validated by the estimators'
#: ``_parameter_constraints``)
SOLVER_PLANS = {
    "auto": SolverPlan(structured=True),
    "dense": SolverPlan(structured=False),
    "cg": SolverPlan(structured=True, g_step=GStepMethod.CONJUGATE_GRADIENT),
}


def solver_plan(solver: str) -> SolverPlan:
    """The :class:`SolverPlan` of the ``solver`` parameter ``"auto"``, ``"dense"`` or
    ``"cg"`` (see :class:`SolverPlan`)."""
    try:
        return SOLVER_PLANS[solver]
    except (KeyError, TypeError):
        raise ValueError(f"solver must be one of {sorted(SOLVER_PLANS)}, got {solver!r}") from None


def column_rows(cols: list[np.ndarray]) -> np.ndarray:
    """Per-problem row vectors as an ``(n, T)`` array, every problem on all the rows (the
    default :attr:`FitContext.rows_to_columns`)."""
    return np.column_stack(cols)


def no_row_subsets() -> None:
    """Every problem of the fit is on all the training rows (the default
    :attr:`FitContext.row_subsets`)."""
    return None


@dataclass(frozen=True)
class FitContext:
    """What the loss hooks of one fit (or of one cross-validation fold) read.

    Parameters
    ----------
    name : str
        The estimator's class name, for messages and warnings.
    problem_data : callable
        ``problem_data(X, Y, context, loss)``: the views validated, the kernels or the
        Nystrom map fitted, the problem of the fit's ``loss`` built (the loss that asks:
        its ``build_problem`` passes itself; the Nystrom-mode problem through its
        ``nystrom_problem`` hook, with this context).
    statistics_problem : callable
        ``statistics_problem(nys, Xs, Y, complete, data)``: the Nystrom-mode problem of
        the square loss's sufficient statistics (one chunked pass, a Dask reduction on
        Dask input; with ``complete`` training rows the map's missing-view statistics
        too), with the fit's data part ``data``
        (:class:`~mvkernels.mvml._data_part.DataPart`).
    solve_path : callable
        ``solve_path(problem, grid, record_path)``: Algorithm 1 on ``problem`` at every
        ``(alpha, eta)`` of ``grid`` (eq. 7 / 11), one list of per-target results per
        pair.
    initial_metric : callable
        ``initial_metric(problem)``: the initial metric ``A0`` as a
        :class:`~mvkernels.mvml._metric.Metric` with its factorisation.
    loss_weight : ndarray of shape (n_samples,) or None, default=None
        The rows' loss weights ``s_i`` (``sample_weight`` times ``class_weight``; None:
        all 1).
    row_subsets : callable, default=no_row_subsets
        ``row_subsets()``: after the fit's solve, the training rows of each problem
        solved on a subset of the rows (one-vs-one: each class pair's rows), None: every
        problem on all the rows.
    rows_to_columns : callable, default=column_rows
        ``rows_to_columns(cols)``: per-problem row vectors (e.g. the hinge loss's
        multipliers) as an ``(n, T)`` array, zero off each problem's rows.
    data : DataPart or None, default=None
        The fit's data part (:class:`~mvkernels.mvml._data_part.DataPart`), decided once
        at the estimator's entry from the views and targets given to ``fit`` (after
        :meth:`~mvkernels.mvml._data_part.DataPart.with_client_targets` where a weighted
        fit brings its targets to the client) and read by ``problem_data``; None: decided
        there, from the validated views and targets (a problem built outside a fit).

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels import MVMLClassifier
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(20, 3)), rng.normal(size=(20, 2))]
    >>> Y = np.where(rng.normal(size=(20, 1)) > 0, 1.0, -1.0)
    >>> est = MVMLClassifier(n_landmarks=None, metric="identity", joint_view=False)
    >>> ctx = est._fit_context()
    >>> problem = est._make_loss().build_problem(ctx, Xs, Y)
    >>> problem.n_samples, ctx.loss_weight is None, ctx.row_subsets() is None
    (20, True, True)
    """

    name: str
    problem_data: Callable[[Any, Any, FitContext, Any], MVMLProblem]
    statistics_problem: Callable[[Any, list, Any, bool, DataPart], MVMLProblem]
    solve_path: Callable[[MVMLProblem, Sequence | None, bool], list[list[PathResult]]]
    initial_metric: Callable[[MVMLProblem], Metric]
    loss_weight: np.ndarray | None = None
    row_subsets: Callable[[], list[np.ndarray] | None] = no_row_subsets
    rows_to_columns: Callable[[list[np.ndarray]], np.ndarray] = column_rows
    data: DataPart | None = None

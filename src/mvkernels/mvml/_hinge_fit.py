"""What the hinge loss changes at the two ends of a fit, outside Algorithm 1.

:class:`~mvkernels.mvml._hinge_loss.HingeLoss` plugs these into the estimator base
(``_BaseMVML``) through the :class:`~mvkernels.mvml._losses.Loss` hooks
``build_problem``, ``nystrom_problem`` and ``fitted_attributes``, which read the fit's
:class:`~mvkernels.mvml._fit_context.FitContext` (never the estimator):

* the problem data (:func:`hinge_problem`, :func:`hinge_nystrom_problem`): the hinge loss
  has no sufficient statistics, so in Nystrom mode the training features ``U`` (n x vp)
  are computed once and kept (every g-step reads them); only the Cov metric's initial
  metric and, with complete training rows, the map's missing-view statistics read
  moments, taken from ``U``. Up to :data:`~mvkernels._threads.SERIAL_BLAS_MAX_SIZE` rows
  the kernel rows, the features and their moments are thin products, built on one BLAS
  thread (measured 5-10x faster on 2 shared cores for the digits features).
* Dask input (Nystrom mode only): the dual solvers need random access to every row's
  features at every epoch, so ``U`` is computed on the workers and *gathered* to the
  client (one pass, as a NumPy array) when it fits in :data:`DASK_GATHER_MAX_BYTES`;
  above it the fit raises a ValueError that points to :class:`~mvkernels.MVMLClassifier`
  (square loss, one Dask reduction, any n).
* the fitted attributes of the final g-steps (:func:`hinge_attributes`): the hinge
  weight ``C_``, the paper's multipliers ``dual_coef_`` (eq. 7-8), the liblinear
  iterations ``svm_epochs_`` and ``objective_increase_``, with their
  ``ConvergenceWarning`` s.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._threads import serial_blas
from ..nystrom import FeatureMoments
from ..nystrom._missing import ConditionalViews
from ._data_part import DataPart
from ._fit_context import FitContext
from ._problem import FeatureRows, MVMLProblem, NystromProblem

__all__ = [
    "DASK_GATHER_MAX_BYTES",
    "hinge_problem",
    "hinge_nystrom_problem",
    "hinge_attributes",
]

#: largest training feature matrix (n x vp float64, plus the n x K targets) that
#: :class:`~mvkernels.MVMLSVC` gathers to the client on Dask input (2 GiB)
DASK_GATHER_MAX_BYTES = 2 * 1024**3


def hinge_problem(loss: Any, ctx: FitContext, X: Any, Y: Any) -> MVMLProblem:
    """The problem of the hinge-loss fit (of loss ``loss``) of context ``ctx`` on views
    ``X`` and targets ``Y``: its problem data (``ctx.problem_data``, built on the fit's
    BLAS threads, ``HingeLoss.builds_on_fit_threads``: one thread up to
    :data:`~mvkernels._threads.SERIAL_BLAS_MAX_SIZE` rows unless the targets are lazy);
    on Dask input (the problem's data part), with the training features ``U`` and ``Y``
    gathered to the client (see the module docstring)."""
    problem = ctx.problem_data(X, Y, ctx, loss)
    if not isinstance(problem, NystromProblem) or problem.data.in_memory:
        return problem
    n, dim, T = problem.n_samples, problem.dim, problem.n_targets
    size = 8 * n * (dim + T)
    if size > DASK_GATHER_MAX_BYTES:
        raise ValueError(
            f"{ctx.name} on Dask input gathers the training features on the "
            f"client (the hinge-loss dual solver needs random access to all rows): "
            f"n x v p = {n} x {dim} float64 is {size / 2**30:.1f} GiB, above "
            f"mvkernels.mvml._hinge_fit.DASK_GATHER_MAX_BYTES = "
            f"{DASK_GATHER_MAX_BYTES / 2**30:.1f} GiB. Use MVMLClassifier (square "
            "loss, fitted by one Dask reduction for any n), fewer landmarks, or a "
            "subsample."
        )
    rows = problem.row_data
    U, Yc = problem.data.compute(rows.feature_map.transform(rows.Xs), problem.Y)
    return problem.with_client_rows(
        np.asarray(U, dtype=np.float64), np.asarray(Yc, dtype=np.float64)
    )


def hinge_nystrom_problem(
    loss: Any,
    ctx: FitContext,
    nys: Any,
    Xs: list,
    Y: Any,
    complete: bool,
    sample_weight: np.ndarray | None,
    data: DataPart,
) -> MVMLProblem:
    """The Nystrom-mode problem of a hinge-loss fit from the fitted map ``nys``: on
    NumPy input the features ``U`` computed once and kept, no sufficient statistics
    except the moments that the Cov metric's initial metric (``loss.metric_kind``) and,
    with complete training rows (``complete``), the map's missing-view statistics read
    (from ``U``, weighted by the rows' loss weights ``sample_weight``, which the problem
    keeps). Dask input (the fit's data part ``data``): the statistics problem of the
    fit (``ctx.statistics_problem``), whose rows :func:`hinge_problem` then gathers."""
    if not data.in_memory:
        return ctx.statistics_problem(nys, Xs, Y, complete, data)
    Xs = nys.check_views(Xs)
    Y = np.asarray(Y, dtype=np.float64)
    U = nys.features(Xs)
    n, v, p = U.shape[0], int(nys.n_views_), int(nys.n_landmarks_)
    sw = sample_weight
    stats = loss.metric_kind.needs_statistics  # the Cov metric's A0
    if complete or stats:
        # the target moments only for the Cov metric's problem (the missing-view model
        # reads the feature moments alone)
        mom = FeatureMoments.from_features(U, Y.reshape(n, -1) if stats else None, sw)
        if complete:
            nys.set_missing_model(ConditionalViews.from_moments(mom, v, p))
        if stats:
            return MVMLProblem.from_moments(mom, nys, Y, Xs=Xs, U=U, sample_weight=sw, data=data)
    return NystromProblem(
        n, v, p, Y, feature_rows=FeatureRows(nys, Xs=Xs, U=U), sample_weight=sw, data=data
    )


def _largest_increases(histories: list) -> np.ndarray:
    """Per target, the largest relative increase between consecutive entries of its
    objective history (0 when it is non-increasing)."""
    incr: list[float] = []
    for h in histories:
        h = np.asarray(h)
        rel = (h[1:] - h[:-1]) / np.maximum(np.abs(h[:-1]), np.finfo(float).tiny)
        incr.append(float(max(rel.max(initial=0.0), 0.0)))
    return np.asarray(incr)


def hinge_attributes(
    loss: Any, ctx: FitContext, states: list, histories: list, n: int
) -> dict[str, Any]:
    """The hinge loss's fitted attributes of the fit of context ``ctx`` (name -> value),
    from its targets' solver states ``states``
    (:class:`~mvkernels.mvml._hinge_state.HingeState`, released here), objective
    ``histories`` and ``n`` training rows: ``C_`` (``C``, or ``1 / n``, ``1 / sum_i s_i``
    with the rows' loss weights ``ctx.loss_weight``; one-vs-one: per pair over its own
    rows, ``ctx.row_subsets()``), ``dual_coef_`` (the paper's
    multipliers of the final g-step, :meth:`HingeLoss.final_dual
    <mvkernels.mvml._hinge_loss.HingeLoss.final_dual>`; one-vs-one: zero off each pair's
    rows), ``svm_epochs_`` and ``objective_increase_``. Warns (``ConvergenceWarning``)
    when an objective increased by more than 1e-6 relative or liblinear reached
    ``svm_max_epochs``."""
    lw = ctx.loss_weight
    rows = None if loss.C is not None else ctx.row_subsets()
    C: float | np.ndarray
    if loss.C is not None:
        C = float(loss.C)
    elif rows is not None:  # each pair's own rows: 1 / n_ij (1 / their weight sum)
        sums = [r.size if lw is None else float(np.sum(np.asarray(lw)[r])) for r in rows]
        C = 1.0 / np.asarray(sums, dtype=np.float64)
    else:
        C = 1.0 / n if lw is None else 1.0 / float(np.sum(lw))
    with serial_blas(n):
        duals = ctx.rows_to_columns([loss.final_dual(s) for s in states])
    for s in states:
        s.release()
    epochs = np.array([s.epochs for s in states])
    increases = _largest_increases(histories)
    single = duals.shape[1] == 1
    name = ctx.name
    if np.any(increases > 1e-6):
        warnings.warn(
            f"{name}: the primal objective increased between outer iterations (largest "
            f"relative increase {increases.max():.3g}); the dual solver may have stopped "
            "early (svm_max_epochs) - see objective_ and objective_increase_",
            ConvergenceWarning,
            stacklevel=4,
        )
    if not all(s.converged for s in states):
        warnings.warn(
            f"{name}: the dual solver (liblinear) reached svm_max_epochs="
            f"{loss.svm_max_epochs} before svm_tol={loss.svm_tol}",
            ConvergenceWarning,
            stacklevel=4,
        )
    return {
        "C_": C,
        "dual_coef_": duals[:, 0] if single else duals,
        "svm_epochs_": int(epochs[0]) if single else epochs,
        "objective_increase_": float(increases[0]) if single else increases,
    }

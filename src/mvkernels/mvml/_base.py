"""The shared machinery of the MVML estimators (:class:`_BaseMVML`): validated views to
problem data (kernels or block Nystrom features and their statistics), the choice of path
for Algorithm 1, the fitted attributes and the row-wise output function used at
prediction; the default landmark budget and the parameter constraints. The public
estimators are in :mod:`._estimators`."""

from __future__ import annotations

import warnings
from contextlib import nullcontext
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._arrays import (
    MIN_OBSERVED_ROWS,
    check_known_lengths,
    compute_if_dask,
)
from .._kernel_families import kernel_takes_sparse, names_precomputed
from .._linalg import sym as _sym
from .._packing import pack, unpack
from .._threads import serial_blas
from .._validation import (
    check_precomputed_kernel,
    check_views,
    observed_mask,
    take_rows,
    validate_array_input,
)
from .._weights import check_sample_weight, class_weight_of_rows, positive_rows
from ..kernels import make_view_kernels
from ..nystrom import (
    BlockNystrom,
    resolve_n_landmarks,
)
from ..nystrom._landmarks import (
    check_landmark_count,
    check_landmark_indices,
    is_index_landmarks,
)
from ..nystrom._map import fit_validated_views, weight_missing_model
from ..nystrom._missing import ConditionalViews
from ..nystrom._moments import FeatureMoments
from ._bandwidth import resolve_bandwidths
from ._cv_engine import CVEngine
from ._data_part import DataPart, data_part
from ._driver import PathResult, reference_paths
from ._fit_context import FitContext, column_rows, solver_plan
from ._fitted_mode import FITTED_MODE_NAMES, FITTED_MODES, _MVMLOutputs
from ._iterative import preconditioner_rows, row_statistics_problem, subsample_features
from ._joint import (
    JOINT_AUTO,
    JOINT_ONLY,
    fitted_joint_view,
    joint_kernel_spec,
    joint_only_kernel_spec,
    joint_views,
)
from ._losses import Loss, SquareLoss
from ._lowrank import MetricStack
from ._metric import METRICS, Metric, metric_kind
from ._problem import MVMLProblem
from ._reduced import reduced_outputs
from ._relevance import FEATURE_RELEVANCE, resolve_feature_relevance, scale_views

#: ``n_landmarks="auto"``: landmarks per view ``p = min(n, ceil(AUTO_FEATURE_BUDGET / v))``,
#: i.e. about 600 Nystrom features in all (``v p``) whatever the number of views
AUTO_FEATURE_BUDGET = 600


def auto_n_landmarks(n_samples: int, n_views: int, budget: int = AUTO_FEATURE_BUDGET) -> int:
    """Landmarks per view chosen by ``n_landmarks="auto"``.

    ``p = min(n, ceil(budget / v))`` (``budget = 600`` by default): every sample is a
    landmark while ``n <= budget / v`` (the Nystrom map is then exact, ``U_l U_l^T = K_l``
    up to the eigenvalue floor), else a budget of about ``budget`` features in all, so that
    a fit costs one ``O(n (vp)^2)`` pass over the data and one ``(vp) x (vp)``
    eigendecomposition whatever ``n`` is.

    Parameters
    ----------
    n_samples : int
        Number of training samples ``n``.
    n_views : int
        Number of views ``v``.
    budget : int, default=600
        Total number of Nystrom features aimed at (``AUTO_FEATURE_BUDGET``; the hinge-loss
        estimators use ``HINGE_FEATURE_BUDGET``).

    Returns
    -------
    int
    """
    return int(min(n_samples, -(-int(budget) // max(1, n_views))))


def grown_n_landmarks(n_samples: int, n_views: int, budget: int = AUTO_FEATURE_BUDGET) -> int:
    """Landmarks per view chosen by ``n_landmarks="grow"``: capacity that grows with ``n``.

    ``p = min(n, max(ceil(budget / v), ceil(sqrt(n))))``: the count of
    :func:`auto_n_landmarks` while ``sqrt(n) <= budget / v`` (e.g. up to 40,000 rows for
    three views), then ``sqrt(n)`` per view, the number of Nystrom centres with which
    kernel ridge regression keeps its optimal learning rate (Rudi, Camoriano & Rosasco,
    NeurIPS 2015), as in Falkon. A fit then costs ``O(n^2 v^2)`` to form ``C`` (direct
    solvers) or ``O(n^{3/2} v)`` per conjugate-gradient pass (``solver="cg"``).

    Parameters
    ----------
    n_samples : int
        Number of training samples ``n``.
    n_views : int
        Number of views ``v``.
    budget : int, default=600
        As :func:`auto_n_landmarks`.

    Returns
    -------
    int

    Examples
    --------
    >>> from mvkernels.mvml import grown_n_landmarks
    >>> grown_n_landmarks(20_000, 3), grown_n_landmarks(200_000, 3), grown_n_landmarks(10**6, 3)
    (200, 448, 1000)
    """
    root = int(np.ceil(np.sqrt(n_samples)))  # <= n_samples for n_samples >= 1
    return max(auto_n_landmarks(n_samples, n_views, budget), min(n_samples, root))


def named_n_landmarks(name: str, n_samples: int, n_views: int, budget: int) -> int:
    """The landmarks per view of ``n_landmarks="auto"`` or ``"grow"``."""
    rule = grown_n_landmarks if name == "grow" else auto_n_landmarks
    return rule(n_samples, n_views, budget)


def mvml_constraints() -> dict:
    return {
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "eta": [Interval(Real, 0, None, closed="left")],
        "metric": [StrOptions(set(METRICS))],
        "learn_weights": ["boolean"],
        "n_landmarks": [
            StrOptions({"auto", "grow"}),
            None,
            Interval(Integral, 1, None, closed="left"),
            Interval(Real, 0, 1, closed="right"),
        ],
        "landmarks": [StrOptions({"uniform", "kmeans++", "leverage"}), "array-like"],
        "kernel": [str, callable, list, tuple],
        "kernel_params": [dict, list, tuple, None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "step_size": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "n_a_steps": [Interval(Integral, 1, None, closed="left")],
        "sparse_threshold": [StrOptions({"mu_eta", "eta"})],
        "eig_floor": [Interval(Real, 0, 1, closed="left")],
        "chunk_size": [Interval(Integral, 1, None, closed="left"), None],
        "views": "no_validation",
        "random_state": ["random_state"],
        "solver": [StrOptions({"auto", "dense", "cg"})],
        "bandwidth_factor": [Interval(Real, 0, None, closed="neither")],
        "joint_view": ["boolean", StrOptions({JOINT_ONLY, JOINT_AUTO})],
        "feature_relevance": [StrOptions(set(FEATURE_RELEVANCE)), list],
        "fit_intercept": ["boolean"],
    }


def landmarks_of_rows(landmarks: Any, rows: np.ndarray | None, n_in: int | None) -> Any:
    """``landmarks`` for the rows kept (``rows`` of ``n_in``; None: all): row indices are
    rows of the ``X`` given to ``fit``, renumbered among the rows of positive weight (a
    landmark row of zero weight is an error); a strategy name is returned as is."""
    if rows is None or not is_index_landmarks(landmarks):
        return landmarks
    idx = check_landmark_indices(landmarks, int(n_in))
    pos = np.minimum(np.searchsorted(rows, idx), rows.size - 1)
    dropped = idx[rows[pos] != idx]
    if dropped.size:
        raise ValueError(
            f"landmarks: rows {dropped[:5].tolist()} have sample_weight 0 (rows of zero "
            "weight are dropped before the landmarks are taken)"
        )
    return pos


def weighted_input(
    X: Any, y: Any, sample_weight: Any, views: Any
) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray | None]:
    """The views, targets and weights of a weighted fit, checked once (the plain
    estimators' :meth:`_BaseMVML._weighted_rows` and the CV's weighted data): the views
    validated (Dask views stay lazy), the targets and the weights, one value per row,
    brought to the client, their lengths checked against the views, the weights validated
    (:func:`~mvkernels._weights.check_sample_weight`). Returns ``(Xs, y, w, rows)``,
    ``rows`` the rows of positive weight (None: every row)."""
    check_known_lengths(X)
    Xs = check_views(X, views=views, ensure_min_samples=2, allow_missing=True)
    n = Xs[0].shape[0]
    y, sample_weight = np.asarray(compute_if_dask(y)), compute_if_dask(sample_weight)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} samples but the views have {n}")
    w = check_sample_weight(sample_weight, n)
    return Xs, y, w, positive_rows(w, n)


def refuse_dropped_rows_of_kernels(kernel: Any) -> None:
    """Rows of zero weight are dropped before a fit; precomputed kernels cannot drop them
    (their columns are rows too): a clear error instead (a per-view list of them too)."""
    if names_precomputed(kernel):
        raise ValueError(
            "sample_weight with zero weights is not supported with "
            "kernel='precomputed': drop those rows and columns of the kernels"
        )


# ============================================================================ estimators
class _BaseMVML(BaseEstimator):
    """Shared MVML machinery (Algorithm 1 of the paper, both versions a and b).

    Subclasses choose the targets (regression: y; classification: one-vs-all +-1
    columns) and the loss, through ``_make_loss``: a :class:`~mvkernels.mvml._losses.Loss`
    (square loss here, :class:`~mvkernels.mvml._losses.SquareLoss`) owns the g-step, the
    data term, the w-step, the structured solver and its solver state
    (:mod:`mvkernels.mvml._losses`). The A-step (:func:`metric_step`), the metric variants
    and the stopping rule do not depend on the loss and are reused unchanged.
    """

    #: total Nystrom features aimed at by ``n_landmarks="auto"`` (:func:`auto_n_landmarks`)
    _auto_feature_budget: int = AUTO_FEATURE_BUDGET

    def __init__(
        self,
        alpha: float = 1.0,
        eta: float = 1.0,
        metric: str = "dense",
        learn_weights: bool = False,
        n_landmarks: int | float | str | None = "auto",
        landmarks: str = "uniform",
        kernel: Any = "rbf",
        kernel_params: Any = None,
        max_iter: int = 10,
        tol: float | None = None,
        step_size: float | str = "auto",
        n_a_steps: int = 1,
        sparse_threshold: str = "mu_eta",
        eig_floor: float = 1e-10,
        chunk_size: int | None = None,
        views: Any = None,
        random_state: Any = None,
        solver: str = "auto",
        bandwidth_factor: float = 4.0,
        joint_view: bool | str = False,
        fit_intercept: bool = False,
        feature_relevance: Any = "none",
    ):
        self.alpha = alpha
        self.eta = eta
        self.metric = metric
        self.learn_weights = learn_weights
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.max_iter = max_iter
        self.tol = tol
        self.step_size = step_size
        self.n_a_steps = n_a_steps
        self.sparse_threshold = sparse_threshold
        self.eig_floor = eig_floor
        self.chunk_size = chunk_size
        self.views = views
        self.random_state = random_state
        self.solver = solver
        self.bandwidth_factor = bandwidth_factor
        self.joint_view = joint_view
        self.fit_intercept = fit_intercept
        self.feature_relevance = feature_relevance

    _parameter_constraints: dict = mvml_constraints()

    #: fitted arrays stored compactly and exactly in a pickle (:func:`~mvkernels._packing.pack`,
    #: e.g. ``MVMLSVC``'s mostly-zero ``dual_coef_``); a model in memory is unchanged
    _packed_attributes: tuple[str, ...] = ()

    def __getstate__(self) -> dict:
        state = dict(super().__getstate__())
        for name in self._packed_attributes:
            if name in state:
                state[name] = pack(state[name])
        return state

    def __setstate__(self, state: dict) -> None:
        """Restore a pickled model, the :attr:`_packed_attributes` bit for bit as fitted.

        A model pickled before its mode's prediction part existed (``_fitted_mode``,
        :mod:`._fitted_mode`) gets the part of its fitted ``mode_`` ("full" or
        "nystrom"), as the fit chooses it."""
        state = {**state, **{k: unpack(state[k]) for k in self._packed_attributes if k in state}}
        if "_fitted_mode" not in state and "mode_" in state:
            state["_fitted_mode"] = FITTED_MODE_NAMES[state["mode_"]]
        super().__setstate__(state)

    # ------------------------------------------------------------------ tags
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = names_precomputed(self.kernel)
        tags.input_tags.sparse = kernel_takes_sparse(self.kernel)
        return tags

    # ------------------------------------------------------------------ params
    def _check_params(self) -> None:
        """Checks that the declarative constraints cannot express (run once, at fit,
        after :meth:`_validate_params`)."""
        if metric_kind(self.metric).learned and not self.eta > 0:
            raise ValueError(
                f"eta must be > 0 for a learned metric (metric={self.metric!r}), got {self.eta!r}"
            )
        for name in ("alpha", "eta", "tol", "eig_floor", "step_size"):
            val = getattr(self, name)
            if isinstance(val, Real) and not isinstance(val, bool) and not np.isfinite(float(val)):
                raise ValueError(f"{name} must be finite, got {val!r}")

    def _joint_view(self) -> bool | str:
        """The fitted model's joint view: ``joint_view`` with ``"auto"`` resolved at fit
        (:func:`~mvkernels.mvml._joint.fitted_joint_view`)."""
        return self.__dict__.get("_joint_view_fitted", self.joint_view)

    # ------------------------------------------------------------------ fitting
    def _fit_context(self, data: DataPart | None = None) -> FitContext:
        """What the loss hooks of this fit read (:class:`~._fit_context.FitContext`): the
        problem builders, Algorithm 1's path, the initial metric, the rows' loss weights
        (``_loss_weight``), the row subsets of the problems solved and the fit's data part
        ``data`` (decided once at the estimator's entry; None: where the views are
        validated, :meth:`_problem_data`)."""
        return FitContext(
            name=type(self).__name__,
            problem_data=self._problem_data,
            statistics_problem=self._nystrom_problem,
            solve_path=self._solve_path,
            initial_metric=self._initial_metric,
            loss_weight=self.__dict__.get("_loss_weight"),
            row_subsets=self._row_subsets,
            rows_to_columns=self._rows_to_columns,
            data=data,
        )

    def _row_subsets(self) -> list[np.ndarray] | None:
        """The training rows of each problem solved on a subset of the rows (None: every
        problem on all the rows; one-vs-one overrides it)."""
        return None

    def _rows_to_columns(self, cols: list[np.ndarray]) -> np.ndarray:
        """Per-problem row vectors as an ``(n, T)`` array (one-vs-one overrides it)."""
        return column_rows(cols)

    def _build_problem(
        self,
        X: Any,
        Y: np.ndarray,
        context: FitContext | None = None,
        loss: Loss | None = None,
    ) -> MVMLProblem:
        """The problem of a fit, built by the fit's ``loss`` (None: :meth:`_make_loss`;
        :meth:`Loss.build_problem <mvkernels.mvml._losses.Loss.build_problem>`, by
        default :meth:`_problem_data`) with the fit's ``context`` (None:
        :meth:`_fit_context`)."""
        ctx = self._fit_context() if context is None else context
        return (self._make_loss() if loss is None else loss).build_problem(ctx, X, Y)

    def _fold_problem(
        self,
        X: Any,
        Y: np.ndarray,
        loss_weight: np.ndarray | None,
        loss: Loss | None = None,
    ) -> MVMLProblem:
        """:meth:`_build_problem` of a cross-validation fold, whose rows' loss weights are
        ``loss_weight`` (None: unweighted), the fit's ``_loss_weight``; ``loss``: the
        fold's loss (None: :meth:`_make_loss`)."""
        self._loss_weight = loss_weight
        return self._build_problem(X, Y, loss=loss)

    def _problem_data(self, X: Any, Y: np.ndarray, context: FitContext, loss: Loss) -> MVMLProblem:
        """Validate the views, fit kernels / Nystrom map, build the problem data of the
        fit's ``loss`` (the loss whose :meth:`Loss.build_problem
        <mvkernels.mvml._losses.Loss.build_problem>` asks for them; the Nystrom-mode
        problem: its :meth:`Loss.nystrom_problem
        <mvkernels.mvml._losses.Loss.nystrom_problem>`, with the fit's ``context``).
        The data part is the context's (``context.data``, decided at the estimator's
        entry), else decided here, once, from the validated views and ``Y``.

        Dask views and/or targets (Nystrom mode only): the Nystrom map is fitted from
        sampled rows and ``C``, ``c``, ``y^T y`` come from one Dask reduction
        (:meth:`BlockNystrom.moments`); ``Y`` stays lazy. The rows' loss weights are
        ``self._loss_weight`` (set by :meth:`_weighted_rows`; None: unweighted): the
        weighted statistics (Nystrom) or the rows scaled by their square roots (full
        mode), see :class:`MVMLProblem`.
        """
        check_known_lengths(X)
        Xs = check_views(X, views=self.views, ensure_min_samples=2, allow_missing=True)
        n = Xs[0].shape[0]
        # the one in-memory / Dask decision of the fit: at its entry, or here
        part = data_part(Xs, Y) if context.data is None else context.data
        # the observed rows of each view (Dask views: one pass over their blocks)
        mask = observed_mask(Xs, min_observed=MIN_OBSERVED_ROWS)
        part.check_targets(Y, n)
        # a loss whose problem data are thin products of the rows (the hinge loss's
        # features) builds them on the fit's BLAS threads (DataPart.fit_threads)
        with part.fit_threads(n) if loss.builds_on_fit_threads else nullcontext():
            return self._validated_problem_data(Xs, Y, mask, part, loss, context)

    def _validated_problem_data(
        self,
        Xs: Any,
        Y: Any,
        mask: np.ndarray | None,
        part: DataPart,
        loss: Loss,
        context: FitContext,
    ) -> MVMLProblem:
        """:meth:`_problem_data` after the views' validation: ``Xs`` validated, ``mask``
        their observed rows (None: complete), ``part`` the fit's data part, ``loss`` the
        fit's loss."""
        sw = self.__dict__.get("_loss_weight")
        n = Xs[0].shape[0]
        if self.n_landmarks is not None:  # a count beside landmark indices must agree
            n_in = self.__dict__.get("_n_rows_in") or n  # rows given to fit
            check_landmark_count(self.n_landmarks, self.landmarks, n_in)
        self.feature_relevance_ = resolve_feature_relevance(
            self.feature_relevance, Xs, Y, mask, self.kernel, self.random_state
        )
        Xs = scale_views(Xs, self.feature_relevance_)
        n_input_views = len(Xs)
        self._input_view_widths = [int(Xv.shape[1]) for Xv in Xs]
        kernel, kernel_params = self.kernel, self.kernel_params
        # "auto": the joint view with 2 or more views and one kernel (kept: _joint_view)
        self._joint_view_fitted = fitted_joint_view(self.joint_view, n_input_views, kernel)
        if self._joint_view_fitted:  # one more view: all views together (see _joint.py)
            Xs = joint_views(Xs, kernel, part)
            kernel, kernel_params = joint_kernel_spec(kernel, kernel_params, n_input_views)
            if mask is not None:  # the joint view is observed where every view is
                mask = np.column_stack([mask, mask.all(axis=1)])
            if self._joint_view_fitted == JOINT_ONLY:  # the joint view alone
                if mask is not None and not mask[:, -1].all():
                    rows = np.flatnonzero(~mask[:, -1])[:5].tolist()
                    raise ValueError(
                        f"joint_view='only' needs every view observed (the joint view is "
                        f"missing where any view is): rows {rows} miss a view; drop them, "
                        "or use joint_view=True"
                    )
                Xs = Xs[-1:]
                kernel, kernel_params = joint_only_kernel_spec(
                    self.kernel, self.kernel_params, n_input_views
                )
                mask = None if mask is None else mask[:, -1:]
        v = len(Xs)
        bw = self.__dict__.get("_bandwidth_weight")  # frequency weights (no class weight)
        kernel_params = resolve_bandwidths(
            kernel,
            kernel_params,
            Xs if mask is None else [Xv[mask[:, l]] for l, Xv in enumerate(Xs)],
            self.bandwidth_factor,
            self.random_state,
            sample_weight=(
                None
                if bw is None
                else (bw if mask is None else [bw[mask[:, l]] for l in range(len(Xs))])
            ),
        )
        self.kernel_params_ = kernel_params
        self._completion: tuple[BlockNystrom, np.ndarray] | None = None
        if self.n_landmarks is None and mask is not None:
            return self._completed_full_problem(Xs, Y, mask, kernel, kernel_params, part, loss)
        if self.n_landmarks is None:
            kernels = make_view_kernels(kernel, kernel_params, v)
            part.refuse(
                f"{type(self).__name__}: Dask input needs the Nystrom mode; "
                "n_landmarks=None is the full-kernel mode, which builds the n x n "
                "kernel matrices in memory. Set n_landmarks (e.g. 200 or 0.1)."
            )
            if kernels[0].precomputed:
                Xs = [check_precomputed_kernel(K, i) for i, K in enumerate(Xs)]
            rng = check_random_state(self.random_state)
            for Xv, kern in zip(Xs, kernels):
                kern.fit(Xv, random_state=rng)
            Ks = [Xv if kern.precomputed else kern(Xv, Xv) for Xv, kern in zip(Xs, kernels)]
            Ks = [_sym(K) for K in Ks]
            self.kernels_ = kernels
            self.X_fit_ = None if kernels[0].precomputed else Xs
            self.nystrom_ = None
            self.n_features_view_ = [Xv.shape[1] for Xv in Xs]
            self.n_landmarks_ = None
            return MVMLProblem.full(Ks, Y, sw, scale_rows=loss.scales_rows)
        n_landmarks = self.n_landmarks
        if isinstance(n_landmarks, str):  # "auto" / "grow" (validated by the constraints)
            n_landmarks = named_n_landmarks(
                n_landmarks, n, n_input_views, self._auto_feature_budget
            )
        nys = BlockNystrom(
            kernel=kernel,
            kernel_params=kernel_params,
            n_landmarks=n_landmarks,
            landmarks=self._fit_landmarks(),
            eig_floor=self.eig_floor,
            chunk_size=self.chunk_size,
            views=None,
            random_state=self.random_state,
        )
        with serial_blas(resolve_n_landmarks(n_landmarks, n)):  # p x p eighs
            fit_validated_views(nys, Xs, mask)
        if mask is not None and sw is not None:
            weight_missing_model(nys, Xs, sw)
        self.nystrom_ = nys
        self.n_landmarks_ = int(nys.n_landmarks_)
        self.kernels_ = nys.kernels_
        self.X_fit_ = None
        self.n_features_view_ = list(nys.n_features_view_)
        return loss.nystrom_problem(context, nys, Xs, Y, mask is None, sw, part)

    # ------------------------------------------------------------------ weights
    def _weighted_rows(self, X: Any, y: Any, sample_weight: Any) -> tuple[Any, Any, Any]:
        """Validate ``sample_weight`` and drop the rows of zero weight (before anything
        else, :mod:`mvkernels._weights`). Returns the views (validated when weighted), the
        targets of the rows kept and their weights (None: all 1). Sets ``_fit_rows`` (the
        rows kept, None: all), ``_bandwidth_weight`` (the frequency weights, which the
        default bandwidths take) and ``_loss_weight`` (the same; a classifier multiplies
        it by ``class_weight`` once its classes are known)."""
        self._fit_rows = None
        self._bandwidth_weight = self._loss_weight = None
        if sample_weight is None:
            return X, y, None
        # Dask views stay lazy (the rows of zero weight are a lazy row selection, the
        # weighted statistics one pass over the blocks)
        Xs, y, w, rows = weighted_input(X, y, sample_weight, self.views)
        n = Xs[0].shape[0]
        if rows is not None:
            refuse_dropped_rows_of_kernels(self.kernel)
            if rows.size < 2:
                raise ValueError(
                    f"only {rows.size} sample has a positive weight; at least 2 are needed"
                )
            self._fit_rows = rows
            self._n_rows_in = n
            Xs, y, w = take_rows(Xs, rows), y[rows], w[rows]
        if (w == 1.0).all():  # unit weights: the unweighted fit, exactly
            w = None
        self._bandwidth_weight = self._loss_weight = w
        return Xs, y, w

    def _fit_landmarks(self) -> Any:
        """``landmarks`` for the rows kept (:func:`landmarks_of_rows`)."""
        return landmarks_of_rows(
            self.landmarks, self.__dict__.get("_fit_rows"), self.__dict__.get("_n_rows_in")
        )

    def _apply_class_weight(self, yi: np.ndarray, labels_seen: np.ndarray | None) -> None:
        """Multiply the rows' loss weights by their class's ``class_weight``."""
        cw = class_weight_of_rows(
            getattr(self, "class_weight", None),
            self.classes_,
            yi,
            self.__dict__.get("_bandwidth_weight"),
            labels_seen,
        )
        if cw is None or (cw == 1.0).all():
            return
        w = self.__dict__.get("_loss_weight")
        w = cw if w is None else w * cw
        if not (w > 0).any():
            raise ValueError("class_weight gives every sample a zero weight")
        # a class weight 0 leaves rows of loss weight 0 in the problem: they add nothing
        # to the statistics or the loss (the data choices were made with them)
        self._loss_weight = w

    def _nystrom_problem(
        self, nys: BlockNystrom, Xs: list, Y: Any, complete: bool, part: DataPart
    ) -> MVMLProblem:
        """Nystrom-mode problem from the fitted map: the sufficient statistics in one
        chunked pass (a Dask reduction on Dask input); the features are not kept. With
        complete training rows (``complete``) the same moments give the map's missing-view
        statistics (:meth:`BlockNystrom.set_missing_model`). ``part``: the fit's data
        part, which the problem keeps.

        ``solver="cg"`` on in-memory views with a metric that needs no statistics
        (identity, dense) and one-vs-all targets: ``C`` is not formed
        (:func:`~mvkernels.mvml._iterative.row_statistics_problem`, one ``O(n d T)``
        pass); the missing-view model then comes from the moments of the CG
        preconditioner's subsample of rows."""
        if self._cg_without_statistics(part):
            problem = row_statistics_problem(nys, Xs, Y)
            if complete:
                m = preconditioner_rows(problem.n_samples, problem.dim)
                US, _ = subsample_features(problem, m)
                nys.set_missing_model(
                    ConditionalViews.from_moments(
                        FeatureMoments.from_features(US), int(nys.n_views_), int(nys.n_landmarks_)
                    )
                )
            return problem
        mom = self._training_moments(nys, Xs, Y)
        if complete:
            nys.set_missing_model(
                ConditionalViews.from_moments(mom, int(nys.n_views_), int(nys.n_landmarks_))
            )
        return MVMLProblem.from_moments(
            mom, nys, Y, Xs=Xs, sample_weight=self.__dict__.get("_loss_weight"), data=part
        )

    def _cg_without_statistics(self, part: DataPart) -> bool:
        """Whether this fit (of data part ``part``) builds its problem without ``C`` (see
        :meth:`_nystrom_problem`)."""
        return (
            solver_plan(self.solver).conjugate_gradient
            and part.in_memory
            and not metric_kind(self.metric).needs_statistics
            and not self.learn_weights
            and not self.__dict__.get("_ovo_pairs")
        )

    def _training_moments(self, nys: BlockNystrom, Xs: list, Y: Any) -> Any:
        """The training rows' :class:`~mvkernels.nystrom.FeatureMoments` with targets
        (weighted by the rows' loss weights)."""
        sw = self.__dict__.get("_loss_weight")
        return nys.moments(Xs, Y) if sw is None else nys.moments(Xs, Y, sample_weight=sw)

    def _completed_full_problem(
        self,
        Xs: list,
        Y: np.ndarray,
        mask: np.ndarray,
        kernel: Any,
        kernel_params: list,
        part: DataPart,
        loss: Loss,
    ) -> MVMLProblem:
        """Full-kernel mode with missing views: the completed low-rank kernels (``part``:
        the fit's data part, ``loss``: the fit's loss, whose ``scales_rows`` the problem
        follows).

        Each view's kernel is replaced by ``K^_l = U^_l U^_l^T``, with ``U^`` the block
        Nystrom features (``n_landmarks="auto"`` budget, landmarks from the rows where the
        view is observed) whose missing blocks are completed by their conditional
        expectation (:class:`~mvkernels.nystrom.BlockNystrom`); test kernel rows are
        ``u^_l(x) U^_l^T``. The n x n problem is then solved as in full mode.
        """
        part.refuse(f"{type(self).__name__}: Dask input needs the Nystrom mode; set n_landmarks")
        n, v = Xs[0].shape[0], len(Xs)
        nys = BlockNystrom(
            kernel=kernel,
            kernel_params=kernel_params,
            n_landmarks=auto_n_landmarks(n, v),
            landmarks=self.landmarks,
            eig_floor=self.eig_floor,
            chunk_size=self.chunk_size,
            random_state=self.random_state,
        )
        fit_validated_views(nys, Xs, mask)  # (missing rows: mask is not None)
        sw = self.__dict__.get("_loss_weight")
        if sw is not None:
            weight_missing_model(nys, Xs, sw)
        U = nys.transform(Xs)
        p = nys.n_landmarks_
        Ks = [_sym(U[:, l * p : (l + 1) * p] @ U[:, l * p : (l + 1) * p].T) for l in range(v)]
        self._completion = (nys, U)
        self.kernels_ = nys.kernels_
        self.X_fit_ = None
        self.nystrom_ = None
        self.n_features_view_ = list(nys.n_features_view_)
        self.n_landmarks_ = None
        return MVMLProblem.full(Ks, Y, sw, scale_rows=loss.scales_rows)

    def _initial_metric(self, problem: MVMLProblem) -> Metric:
        """``A0`` as a :class:`~mvkernels.mvml._metric.Metric` with its factorisation:
        identity for learned and identity metrics, the Cov metric for "cov"
        (:meth:`MetricKind.initial_metric
        <mvkernels.mvml._metric.MetricKind.initial_metric>`), from the data as given (a
        centred problem's ``uncentred`` one). Built once per fit and handed to every
        path (every ``(alpha, eta)`` of a grid), which read its factor."""
        return metric_kind(self.metric).initial_metric(
            problem.uncentred or problem, eig_floor=self.eig_floor
        )

    # -- algorithm 1 -------------------------------------------------------------
    def _make_loss(self) -> Loss:
        """The loss of this estimator, built from its parameters once per fit."""
        return SquareLoss(self)

    def _cv_engine(self) -> CVEngine:
        """What the cross-validated search reads of this estimator (its one seam,
        :class:`~._cv_engine.CVEngine`)."""
        return CVEngine(self)

    def _solve(
        self, problem: MVMLProblem, record_path: bool = False, loss: Loss | None = None
    ) -> list[PathResult]:
        """Run Algorithm 1 on ``problem`` for every target column with the fit's ``loss``
        (None: :meth:`_make_loss`); sets ``solver_``."""
        return self._solve_path(problem, None, record_path, loss)[0]

    def _solve_path(
        self,
        problem: MVMLProblem,
        grid: Any = None,
        record_path: bool = False,
        loss: Loss | None = None,
    ) -> list[list[PathResult]]:
        """:meth:`_solve` at every ``(alpha, eta)`` of ``grid`` (None: this estimator's
        own pair): one list of per-target results per pair. The dense reference path
        runs the whole grid as one batch (:func:`~._driver.reference_paths`, sharing
        the first g-steps); the structured solvers run one pair at a time. ``loss``: the
        fit's loss (None: :meth:`_make_loss`)."""
        loss = self._make_loss() if loss is None else loss
        pairs = [(loss.alpha, loss.eta)] if grid is None else list(grid)
        T = problem.n_targets
        with serial_blas(problem.dim):
            metric0 = self._initial_metric(problem)
            problem = loss.with_intercept(problem)
            if loss.structured_applies(problem):
                self.solver_ = "structured"
                per_pair = [
                    (loss if grid is None else loss.at(a, e)).fit_structured(
                        problem, metric0, record_path
                    )
                    for a, e in pairs
                ]
            else:
                self.solver_ = "dense"
                flat = reference_paths(loss, problem, metric0, record_path=record_path, grid=grid)
                per_pair = [flat[p * T : (p + 1) * T] for p in range(len(pairs))]
        for results in per_pair:
            GW = np.stack([r.g * problem.weight_vector(r.w) for r in results])
            for r, b in zip(results, loss.intercepts(problem, GW)):  # 0 without intercept
                r.intercept = float(b)
        return per_pair

    def _fit_targets(self, X: Any, Y: np.ndarray, part: DataPart | None = None) -> _BaseMVML:
        """Fit one independent MVML problem per column of ``Y`` (shared kernels / C);
        the rows' loss weights: ``_loss_weight`` (see :meth:`_weighted_rows`). ``part``:
        the fit's data part, decided at the estimator's entry (None: where the views are
        validated). One loss (:meth:`_make_loss`) serves the whole fit: its problem, its
        solve and its fitted attributes."""
        self._check_params()
        loss = self._make_loss()
        ctx = self._fit_context(part)
        problem = self._build_problem(X, Y, ctx, loss)
        results = self._solve(problem, loss=loss)
        with serial_blas(problem.dim):
            min_eigs = np.array([r.metric.min_eigenvalue() for r in results])
        learned = metric_kind(self.metric).learned or self.learn_weights
        if learned and self.tol is not None and not all(r.converged for r in results):
            warnings.warn(
                f"{type(self).__name__} stopped after max_iter={self.max_iter} outer "
                f"iterations before the relative objective decrease fell below tol={self.tol}",
                ConvergenceWarning,
                stacklevel=2,
            )
        self._metric_store = self._metric_stack(results)
        self._coefs = np.stack([r.g for r in results])
        self._intercepts = np.array([r.intercept for r in results])
        self._weights = np.stack([r.w for r in results])
        self._histories = [r.history for r in results]
        self._n_iters = np.array([r.n_iter for r in results])
        self._min_eigs = min_eigs
        self.n_views_ = problem.n_views
        self.mode_ = problem.mode
        self.n_samples_fit_ = problem.n_samples
        self._fit_states = [r.state for r in results]
        self._fitted_mode = FITTED_MODES[problem.feature_space]  # the mode's prediction part
        self._completed_outputs = self._fitted_mode.compact_missing_model(self)
        if np.any(self._min_eigs < -1e-8 * self._metric_store.max_abs()):
            warnings.warn(
                f"the learned metric is indefinite (smallest eigenvalue "
                f"{self._min_eigs.min():.3g}); see metric_min_eigenvalue_",
                RuntimeWarning,
                stacklevel=2,
            )
        self._set_public_attributes()
        # the loss's own attributes
        attrs = loss.fitted_attributes(ctx, self._fit_states, self._histories, self.n_samples_fit_)
        for name, value in attrs.items():
            setattr(self, name, value)
        return self

    def _metric_stack(self, results: list[PathResult]) -> Any:
        """The fitted metrics of ``results`` in their compact form (:class:`MetricStack`)."""
        return MetricStack.from_metrics(
            [r.metric for r in results], fixed=not metric_kind(self.metric).learned
        )

    def _set_public_attributes(self) -> None:
        single = self._coefs.shape[0] == 1
        self.coef_ = self._coefs[0] if single else self._coefs
        self.intercept_ = float(self._intercepts[0]) if single else self._intercepts.copy()
        self.weights_ = self._weights[0] if single else self._weights
        self.objective_ = self._histories[0] if single else list(self._histories)
        self.n_iter_ = int(self._n_iters[0]) if single else self._n_iters
        self.metric_min_eigenvalue_ = float(self._min_eigs[0]) if single else self._min_eigs

    @property
    def metric_(self) -> np.ndarray:
        """The fitted metric(s) ``A`` / ``A~``, built on access from the stored form.

        The structured solver keeps ``A~ = s I + V V^T`` (``V`` of one column per A-step)
        and fixed metrics are stored once, so a pickled model does not hold ``T`` dense
        ``d x d`` matrices; each access builds them (``O(T d^2)``).
        """
        store = self.__dict__.get("_metric_store")
        if store is None:
            raise AttributeError(f"{type(self).__name__} has no attribute 'metric_' (not fitted)")
        A = store.toarray()
        return A[0] if store.n_problems == 1 else A

    # ------------------------------------------------------------------ prediction
    def _decision_block(self, classes: np.ndarray | None = None) -> _MVMLOutputs:
        """The fitted model's row-wise output function (picklable, small)."""
        b = getattr(self, "_intercepts", None)
        offset = b if b is not None and np.any(b != 0) else None
        return self._fitted_mode.decision_block(self, classes, offset)

    def _check_test_views(self, X: Any) -> list:
        check_is_fitted(self, "_coefs")
        check_known_lengths(X)
        X = validate_array_input(self, X, reset=False)
        relevance = getattr(self, "feature_relevance_", None)
        if relevance is not None:  # the input views' columns scaled as at fit
            X = scale_views(
                check_views(
                    X,
                    views=self.views,
                    n_views=len(self._input_view_widths),
                    n_features=self._input_view_widths,
                    allow_missing=True,
                ),
                relevance,
            )
        joint = bool(self._joint_view())
        if self._joint_view() == JOINT_ONLY:  # the input views, then their joint view alone
            widths = None if self.kernels_[0].precomputed else self._input_view_widths
            Xs = check_views(
                X,
                views=self.views,
                n_views=len(self._input_view_widths),
                n_features=widths,
                allow_missing=self._fitted_mode.allow_missing,
            )
            return self._fitted_mode.joint_only_views(self, Xs)
        return self._fitted_mode.test_views(self, X, joint)

    def _input_widths(self) -> list | None:
        """Column counts of the input views (without the joint view), None if precomputed."""
        if self.kernels_[0].precomputed:
            return None
        if self._joint_view() == JOINT_ONLY:
            return list(self._input_view_widths)
        return list(self.n_features_view_[: self.n_views_ - bool(self._joint_view())])

    def _decision(self, X: Any, classes: np.ndarray | None = None) -> Any:
        """Outputs ``sum_l w_l f^l(x)`` for every target, shape (n_test, T).

        With ``classes``: the predicted labels instead, shape (n_test,). On Dask views
        (chunked by rows) the result is a lazy Dask array with the views' row chunks,
        computed block by block on the workers (:func:`mvkernels.nystrom.map_views`).
        """
        Xs = self._check_test_views(X)
        fn = self._decision_block(classes)
        part = data_part(Xs)  # decided from the test views, once
        # the reduced models of missing-view patterns: set by the CV estimators (_reduced.py)
        if part.in_memory and getattr(self, "reduced_models_", None):
            return reduced_outputs(self, Xs, fn, classes)
        if classes is None:
            return part.row_outputs(fn, Xs, n_out=self._coefs.shape[0])
        return part.row_outputs(fn, Xs, n_out=None, dtype=classes.dtype)

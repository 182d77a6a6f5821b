"""The MVML estimators: Algorithm 1 of the paper (:class:`_BaseMVML`),
:class:`MVMLRegressor` and :class:`MVMLClassifier`."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .._arrays import MIN_OBSERVED_ROWS, check_known_lengths, is_dask_collection, views_kind
from .._kernel_families import kernel_takes_sparse
from .._targets import one_vs_all_targets, predicted_classes
from .._threads import serial_blas
from .._validation import (
    check_precomputed_kernel,
    check_real_targets,
    check_targets_finite,
    check_views,
    observed_mask,
    take_rows,
    validate_array_input,
)
from .._weights import check_sample_weight, class_weight_of_rows, positive_rows
from ..kernels import make_view_kernels
from ..nystrom import (
    BlockNystrom,
    default_chunk_size,
    feature_moments,
    map_views,
    resolve_n_landmarks,
)
from ..nystrom._landmarks import check_landmark_indices, is_index_landmarks
from ..nystrom._missing import CompletedOutputs, ConditionalViews
from ..nystrom._moments import FeatureMoments
from ._bandwidth import resolve_bandwidths
from ._driver import reference_path
from ._iterative import preconditioner_rows, row_statistics_problem, subsample_features
from ._joint import JOINT_ONLY, joint_kernel_spec, joint_only_kernel_spec, joint_views
from ._losses import Loss, SquareLoss
from ._lowrank import MetricStack
from ._metric import (
    METRICS,
    _sym,
    metric_kind,
    min_eigenvalue,
)
from ._multiclass import (
    OneVsOneMixin,
    fit_pairwise_calibration,
    map_rows,
    multiclass_constraints,
    ovo_pairs,
    ovo_predicted_indices,
    ovo_vote_scores,
)
from ._proba import (
    ProbaMixin,
    cross_val_decisions,
    fit_softmax_calibration,
)
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
    grown = max(-(-int(budget) // max(1, n_views)), int(np.ceil(np.sqrt(n_samples))))
    return int(min(n_samples, grown))


def named_n_landmarks(name: str, n_samples: int, n_views: int, budget: int) -> int:
    """The landmarks per view of ``n_landmarks="auto"`` or ``"grow"``."""
    rule = grown_n_landmarks if name == "grow" else auto_n_landmarks
    return rule(n_samples, n_views, budget)


def _mvml_constraints() -> dict:
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
        "joint_view": ["boolean", StrOptions({JOINT_ONLY})],
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


def _weighted_missing_model(nys: BlockNystrom, Xs: list, sample_weight: np.ndarray) -> None:
    """Missing views: the completion statistics of ``nys`` from the weighted moments of
    the observed features (the map's own are unweighted)."""
    gram = feature_moments(
        nys._observed_features, Xs, chunk_size=nys.chunk_size, sample_weight=sample_weight
    ).gram
    nys.set_missing_model(
        ConditionalViews.from_augmented(gram, int(nys.n_views_), int(nys.n_landmarks_))
    )


# ============================================================================ estimators
def _dask_column(y: Any) -> Any:
    """A Dask target as 1-D (an (n, 1) column is raveled with sklearn's warning)."""
    if y.ndim == 2 and y.shape[1] == 1:
        from sklearn.exceptions import DataConversionWarning

        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the "
            "shape of y to (n_samples, ), for example using ravel().",
            DataConversionWarning,
            stacklevel=3,
        )
        return y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array, got a Dask array of shape {y.shape}")
    return y


def regression_targets(y: Any) -> tuple[Any, bool]:
    """Real targets as an (n, k) float64 array (NumPy or lazy Dask) and whether ``y`` was 1-D.

    ``y`` of shape (n,) is one problem; (n, k) is k problems (one per output) that share
    the kernels, the Nystrom map, ``C`` and its factorisation (as the one-vs-all classes).
    """
    if is_dask_collection(y):  # stays lazy; NaN/inf are caught block by block
        if y.ndim not in (1, 2):
            raise ValueError(f"y should be a 1d or 2d array, got a Dask array of shape {y.shape}")
        if not np.issubdtype(y.dtype, np.number) or np.issubdtype(y.dtype, np.complexfloating):
            raise ValueError(f"y must hold real numbers, got dtype {y.dtype}")
        y = y.astype(np.float64)
        return (y[:, None], True) if y.ndim == 1 else (y, False)
    y = check_real_targets(np.asarray(y))
    if y.ndim not in (1, 2):
        raise ValueError(f"y should be a 1d or 2d array, got an array of shape {y.shape}")
    if y.ndim == 2 and y.shape[1] == 0:
        raise ValueError("y has 0 outputs (shape (n, 0)); give at least one target column")
    check_targets_finite(y)
    return (y[:, None], True) if y.ndim == 1 else (y, False)


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

    _parameter_constraints: dict = _mvml_constraints()

    # ------------------------------------------------------------------ tags
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = isinstance(self.kernel, str) and self.kernel == "precomputed"
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

    # ------------------------------------------------------------------ fitting
    def _build_problem(self, X: Any, Y: np.ndarray) -> MVMLProblem:
        """Validate the views, fit kernels / Nystrom map, build the problem data.

        Dask views and/or targets (Nystrom mode only): the Nystrom map is fitted from
        sampled rows and ``C``, ``c``, ``y^T y`` come from one Dask reduction
        (:meth:`BlockNystrom.moments`); ``Y`` stays lazy. The rows' loss weights are
        ``self._loss_weight`` (set by :meth:`_weighted_rows`; None: unweighted): the
        weighted statistics (Nystrom) or the rows scaled by their square roots (full
        mode), see :class:`MVMLProblem`.
        """
        sw = self.__dict__.get("_loss_weight")
        check_known_lengths(X)
        Xs = check_views(X, views=self.views, ensure_min_samples=2, allow_missing=True)
        n = Xs[0].shape[0]
        dask_input = views_kind(Xs) == "dask" or is_dask_collection(Y)
        # the observed rows of each view (Dask views: one pass over their blocks)
        mask = observed_mask(Xs, min_observed=MIN_OBSERVED_ROWS)
        if is_dask_collection(Y) and np.isnan(Y.shape[0]):
            raise ValueError(
                "y is a Dask array with unknown chunk sizes; call y.compute_chunk_sizes() first"
            )
        if Y.shape[0] != n:
            raise ValueError(f"y has {Y.shape[0]} samples but the views have {n}")
        self.feature_relevance_ = resolve_feature_relevance(
            self.feature_relevance, Xs, Y, mask, self.kernel, self.random_state
        )
        Xs = scale_views(Xs, self.feature_relevance_)
        n_input_views = len(Xs)
        self._input_view_widths = [int(Xv.shape[1]) for Xv in Xs]
        kernel, kernel_params = self.kernel, self.kernel_params
        if self.joint_view:  # one more view: all views together (see _joint.py)
            Xs = joint_views(Xs, kernel)
            kernel, kernel_params = joint_kernel_spec(kernel, kernel_params, n_input_views)
            if mask is not None:  # the joint view is observed where every view is
                mask = np.column_stack([mask, mask.all(axis=1)])
            if self.joint_view == JOINT_ONLY:  # the joint view alone
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
            return self._completed_full_problem(Xs, Y, mask, kernel, kernel_params)
        if self.n_landmarks is None:
            kernels = make_view_kernels(kernel, kernel_params, v)
            if dask_input:
                raise ValueError(
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
            return MVMLProblem.full(Ks, Y, sw)
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
            nys._fit_views(Xs, mask, view_statistics=False)
        if mask is not None and sw is not None:
            _weighted_missing_model(nys, Xs, sw)
        self.nystrom_ = nys
        self.n_landmarks_ = int(nys.n_landmarks_)
        self.kernels_ = nys.kernels_
        self.X_fit_ = None
        self.n_features_view_ = list(nys.n_features_view_)
        return self._nystrom_problem(nys, Xs, Y, complete=mask is None)

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
        dask_views = is_dask_collection(X) or (
            isinstance(X, (list, tuple)) and any(is_dask_collection(Xv) for Xv in X)
        )
        if dask_views or is_dask_collection(y):
            raise ValueError(
                f"{type(self).__name__}: sample_weight is not supported on Dask input yet"
            )
        if not isinstance(self._make_loss(), SquareLoss):
            raise ValueError("sample_weight is not supported by the hinge loss yet")
        Xs = check_views(X, views=self.views, ensure_min_samples=2, allow_missing=True)
        n = Xs[0].shape[0]
        y = np.asarray(y)
        if y.shape[0] != n:
            raise ValueError(f"y has {y.shape[0]} samples but the views have {n}")
        w = check_sample_weight(sample_weight, n)
        rows = positive_rows(w, n)
        if rows is not None:
            if isinstance(self.kernel, str) and self.kernel == "precomputed":
                raise ValueError(
                    "sample_weight with zero weights is not supported with "
                    "kernel='precomputed': drop those rows and columns of the kernels"
                )
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
        if not isinstance(self._make_loss(), SquareLoss):
            raise ValueError("class_weight is not supported by the hinge loss yet")
        w = self.__dict__.get("_loss_weight")
        w = cw if w is None else w * cw
        if not (w > 0).any():
            raise ValueError("class_weight gives every sample a zero weight")
        # a class weight 0 leaves rows of loss weight 0 in the problem: they add nothing
        # to the statistics or the loss (the data choices were made with them)
        self._loss_weight = w

    def _nystrom_problem(self, nys: BlockNystrom, Xs: list, Y: Any, complete: bool) -> MVMLProblem:
        """Nystrom-mode problem from the fitted map: the sufficient statistics in one
        chunked pass (a Dask reduction on Dask input); the features are not kept. With
        complete training rows (``complete``) the same moments give the map's missing-view
        statistics (:meth:`BlockNystrom.set_missing_model`).

        ``solver="cg"`` on in-memory views with a metric that needs no statistics
        (identity, dense) and one-vs-all targets: ``C`` is not formed
        (:func:`~mvkernels.mvml._iterative.row_statistics_problem`, one ``O(n d T)``
        pass); the missing-view model then comes from the moments of the CG
        preconditioner's subsample of rows."""
        if self._cg_without_statistics(Xs, Y):
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
            mom, nys, Y, Xs=Xs, sample_weight=self.__dict__.get("_loss_weight")
        )

    def _cg_without_statistics(self, Xs: list, Y: Any) -> bool:
        """Whether this fit builds its problem without ``C`` (see :meth:`_nystrom_problem`)."""
        return (
            self.solver == "cg"
            and views_kind(Xs) != "dask"
            and not is_dask_collection(Y)
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
        self, Xs: list, Y: np.ndarray, mask: np.ndarray, kernel: Any, kernel_params: list
    ) -> MVMLProblem:
        """Full-kernel mode with missing views: the completed low-rank kernels.

        Each view's kernel is replaced by ``K^_l = U^_l U^_l^T``, with ``U^`` the block
        Nystrom features (``n_landmarks="auto"`` budget, landmarks from the rows where the
        view is observed) whose missing blocks are completed by their conditional
        expectation (:class:`~mvkernels.nystrom.BlockNystrom`); test kernel rows are
        ``u^_l(x) U^_l^T``. The n x n problem is then solved as in full mode.
        """
        if is_dask_collection(Y) or views_kind(Xs) == "dask":
            raise ValueError(
                f"{type(self).__name__}: Dask input needs the Nystrom mode; set n_landmarks"
            )
        n, v = Xs[0].shape[0], len(Xs)
        nys = BlockNystrom(
            kernel=kernel,
            kernel_params=kernel_params,
            n_landmarks=auto_n_landmarks(n, v),
            landmarks=self.landmarks,
            eig_floor=self.eig_floor,
            chunk_size=self.chunk_size,
            random_state=self.random_state,
        )._fit_views(Xs, mask)
        sw = self.__dict__.get("_loss_weight")
        if sw is not None:
            _weighted_missing_model(nys, Xs, sw)
        U = nys.transform(Xs)
        p = nys.n_landmarks_
        Ks = [_sym(U[:, l * p : (l + 1) * p] @ U[:, l * p : (l + 1) * p].T) for l in range(v)]
        self._completion = (nys, U)
        self.kernels_ = nys.kernels_
        self.X_fit_ = None
        self.nystrom_ = None
        self.n_features_view_ = list(nys.n_features_view_)
        self.n_landmarks_ = None
        return MVMLProblem.full(Ks, Y, sw)

    def _full_outputs(
        self,
        G: np.ndarray,
        classes: np.ndarray | None = None,
        offset: np.ndarray | None = None,
    ) -> _MVMLOutputs:
        """Full-mode output function for weighted coefficients ``G`` (T, v, n) and the
        offsets ``offset`` (T,) (None: none)."""
        completion = getattr(self, "_completion", None)
        if completion is None:
            return _MVMLOutputs(
                Gw=G, kernels=self.kernels_, X_fit=self.X_fit_, classes=classes, offset=offset
            )
        nys, U = completion  # kernel rows u^_l(x) U^_l^T: a Nystrom-space model
        p = nys.n_landmarks_
        Gw = np.hstack([G[:, l, :] @ U[:, l * p : (l + 1) * p] for l in range(G.shape[1])])
        return _MVMLOutputs(Gw=Gw, nystrom=nys, classes=classes, offset=offset)

    def _initial_metric(self, problem: MVMLProblem) -> np.ndarray:
        """``A0``: identity for learned and identity metrics, the Cov metric for "cov"
        (:meth:`MetricKind.initial <mvkernels.mvml._metric.MetricKind.initial>`), from
        the data as given (a centred problem's ``uncentred`` one)."""
        return metric_kind(self.metric).initial(problem.uncentred or problem)

    # -- algorithm 1 -------------------------------------------------------------
    def _make_loss(self) -> Loss:
        """The loss of this estimator, built from its parameters once per fit."""
        return SquareLoss(self)

    def _solve(self, problem: MVMLProblem, record_path: bool = False) -> list[dict]:
        """Run Algorithm 1 on ``problem`` for every target column; sets ``solver_``."""
        loss = self._make_loss()
        with serial_blas(problem.dim):
            A0 = self._initial_metric(problem)
            problem = loss.with_intercept(problem)
            if loss.structured_applies(problem):
                self.solver_ = "structured"
                results = loss.fit_structured(problem, A0, record_path)
            else:
                self.solver_ = "dense"
                results = [
                    reference_path(loss, problem, t, A0, record_path)
                    for t in range(problem.n_targets)
                ]
        GW = np.stack([r["g"] * problem.weight_vector(r["w"]) for r in results])
        for r, b in zip(results, loss.intercepts(problem, GW)):  # 0 without intercept
            r["intercept"] = float(b)
        return results

    def _fit_targets(self, X: Any, Y: np.ndarray) -> _BaseMVML:
        """Fit one independent MVML problem per column of ``Y`` (shared kernels / C);
        the rows' loss weights: ``_loss_weight`` (see :meth:`_weighted_rows`)."""
        self._check_params()
        problem = self._build_problem(X, Y)
        results = self._solve(problem)
        with serial_blas(problem.dim):
            min_eigs = np.array(
                [r["min_eig"] if "min_eig" in r else min_eigenvalue(r["A"]) for r in results]
            )
        learned = metric_kind(self.metric).learned or self.learn_weights
        if learned and self.tol is not None and not all(r["converged"] for r in results):
            warnings.warn(
                f"{type(self).__name__} stopped after max_iter={self.max_iter} outer "
                f"iterations before the relative objective decrease fell below tol={self.tol}",
                ConvergenceWarning,
                stacklevel=2,
            )
        self._metric_store = self._metric_stack(results)
        self._coefs = np.stack([r["g"] for r in results])
        self._intercepts = np.array([r["intercept"] for r in results])
        self._weights = np.stack([r["w"] for r in results])
        self._histories = [r["history"] for r in results]
        self._n_iters = np.array([r["n_iter"] for r in results])
        self._min_eigs = min_eigs
        self.n_views_ = problem.n_views
        self.mode_ = problem.mode
        self.n_samples_fit_ = problem.n_samples
        self._fit_states = [r["state"] for r in results]
        self._completed_outputs = self._compact_missing_model()
        if np.any(self._min_eigs < -1e-8 * self._metric_store.max_abs()):
            warnings.warn(
                f"the learned metric is indefinite (smallest eigenvalue "
                f"{self._min_eigs.min():.3g}); see metric_min_eigenvalue_",
                RuntimeWarning,
                stacklevel=2,
            )
        self._set_public_attributes()
        return self

    def _metric_stack(self, results: list[dict]) -> Any:
        """The fitted metrics of ``results`` in their compact form (:class:`MetricStack`)."""
        return MetricStack.from_results(
            [r["A"] for r in results],
            [r["metric_lowrank"] for r in results] if "metric_lowrank" in results[0] else None,
            fixed=not metric_kind(self.metric).learned,
        )

    def _compact_missing_model(self) -> CompletedOutputs | None:
        """Fitted on complete views, the map keeps instead of its ``v p x v p`` completion
        statistics the compact form of this model's outputs on rows with missing views
        (:meth:`BlockNystrom.compact_missing_model`; predictions the same to rounding)."""
        if self.mode_ != "nystrom":
            return None
        joint = self.joint_view and self.joint_view != JOINT_ONLY  # missing where any view is
        return self.nystrom_.compact_missing_model(
            self._decision_block().Gw, always_missing=self.n_views_ - 1 if joint else None
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
        T = self._coefs.shape[0]
        b = getattr(self, "_intercepts", None)
        offset = b if b is not None and np.any(b != 0) else None
        if self.mode_ == "nystrom":
            p = self.nystrom_.n_landmarks_
            Gw = self._coefs * np.repeat(self._weights, p, axis=1)  # (T, vp)
            completed = getattr(self, "_completed_outputs", None)
            return _MVMLOutputs(
                Gw=Gw, nystrom=self.nystrom_, classes=classes, offset=offset, completed=completed
            )
        n = self.n_samples_fit_
        G = self._coefs.reshape(T, self.n_views_, n) * self._weights[:, :, None]
        return self._full_outputs(G, classes, offset)

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
        joint = bool(self.joint_view)
        if self.joint_view == JOINT_ONLY:  # the input views, then their joint view alone
            widths = None if self.kernels_[0].precomputed else self._input_view_widths
            Xs = check_views(
                X,
                views=self.views,
                n_views=len(self._input_view_widths),
                n_features=widths,
                allow_missing=self.mode_ == "nystrom",
            )
            if self.X_fit_ is None and self.mode_ == "full":
                n = self.n_samples_fit_
                Xs = [
                    check_precomputed_kernel(K, i, n_train=n, square=False)
                    for i, K in enumerate(Xs)
                ]
            J = joint_views(Xs, self.kernel)[-1:]
            return self.nystrom_.check_views(J) if self.mode_ == "nystrom" else J
        if self.mode_ == "nystrom":  # the same container rules as at fit
            if not joint:
                return self.nystrom_.check_views(
                    check_views(X, views=self.views, allow_missing=True)
                )
            Xs = check_views(
                X,
                views=self.views,
                n_views=self.n_views_ - 1,
                n_features=self._input_widths(),
                allow_missing=True,
            )
            return self.nystrom_.check_views(joint_views(Xs, self.kernel))
        n_in = self.n_views_ - joint
        completion = getattr(self, "_completion", None)
        if completion is not None:
            Xs = check_views(X, views=self.views, n_views=n_in, allow_missing=True)
            return completion[0].check_views(joint_views(Xs, self.kernel) if joint else Xs)
        Xs = check_views(
            X,
            views=self.views,
            n_views=n_in,
            n_features=None if self.X_fit_ is None else self.n_features_view_[:n_in],
        )
        if self.X_fit_ is None:  # precomputed (Dask cross-kernels: shape checked only)
            n = self.n_samples_fit_
            out = []
            for i, K in enumerate(Xs):
                if is_dask_collection(K):
                    if K.shape[1] != n:
                        raise ValueError(
                            f"view {i}: precomputed test kernel must have one column per "
                            f"training sample ({n}), got shape {K.shape}"
                        )
                    out.append(K)
                else:
                    out.append(check_precomputed_kernel(K, i, n_train=n, square=False))
            Xs = out
        return joint_views(Xs, self.kernel) if joint else Xs

    def _input_widths(self) -> list | None:
        """Column counts of the input views (without the joint view), None if precomputed."""
        if self.kernels_[0].precomputed:
            return None
        if self.joint_view == JOINT_ONLY:
            return list(self._input_view_widths)
        return list(self.n_features_view_[: self.n_views_ - bool(self.joint_view)])

    def _decision(self, X: Any, classes: np.ndarray | None = None) -> Any:
        """Outputs ``sum_l w_l f^l(x)`` for every target, shape (n_test, T).

        With ``classes``: the predicted labels instead, shape (n_test,). On Dask views
        (chunked by rows) the result is a lazy Dask array with the views' row chunks,
        computed block by block on the workers (:func:`mvkernels.nystrom.map_views`).
        """
        Xs = self._check_test_views(X)
        fn = self._decision_block(classes)
        if views_kind(Xs) == "dask":
            if classes is None:
                return map_views(fn, Xs, n_out=self._coefs.shape[0])
            return map_views(fn, Xs, n_out=None, dtype=classes.dtype)
        if getattr(self, "reduced_models_", None):  # set by the CV estimators (_reduced.py)
            return reduced_outputs(self, Xs, fn, classes)
        return fn(Xs)


@dataclass
class _MVMLOutputs:
    """Row-wise output function of a fitted MVML model: ``(rows of each view) -> outputs``.

    Holds only what prediction needs (weighted coefficients, feature map or training
    views) so that it can be shipped once to Dask workers. ``Gw``: ``(T, vp)``
    ``g~_t * w`` (Nystrom) or ``(T, v, n)`` ``g_t,l * w_t,l`` (full). With ``classes``
    it returns labels (binary: ``classes[1]`` where the output is > 0; else argmax).
    ``offset``: (T,) the intercepts added to the outputs (None: bias-free).
    ``completed``: the outputs of rows with missing views when the map keeps no
    completion statistics (:meth:`BlockNystrom.compact_missing_model`).
    """

    Gw: np.ndarray
    nystrom: BlockNystrom | None = None
    kernels: list | None = None
    X_fit: list | None = None
    classes: np.ndarray | None = None
    offset: np.ndarray | None = None
    completed: CompletedOutputs | None = None

    handles_missing_views = True  # NaN rows: completed by the Nystrom map (see features)

    def outputs(self, blocks: list) -> np.ndarray:
        D = self._outputs(blocks)
        if self.offset is not None:
            D += self.offset
        return D

    def _outputs(self, blocks: list) -> np.ndarray:
        if self.nystrom is not None:
            return self.nystrom.linear_outputs(blocks, self.Gw, self.completed)
        m = blocks[0].shape[0]
        T = self.Gw.shape[0]
        out = np.empty((m, T))
        n = self.Gw.shape[2]
        chunk = default_chunk_size(n)
        for start in range(0, m, chunk):
            rows = slice(start, min(m, start + chunk))
            acc = np.zeros((rows.stop - rows.start, T))
            for l, (Xv, kern) in enumerate(zip(blocks, self.kernels)):
                Kt = Xv[rows] if self.X_fit is None else kern(Xv[rows], self.X_fit[l])
                acc += Kt @ self.Gw[:, l, :].T
            out[rows] = acc
        return out

    def __call__(self, blocks: list) -> np.ndarray:
        D = self.outputs(blocks)
        if self.classes is None:
            return D
        return predicted_classes(D, self.classes)


class MVMLRegressor(RegressorMixin, _BaseMVML):
    """Multi-view metric learning regressor (Huusari et al. 2018).

    Learns a vector-valued function ``f = (f^1, ..., f^v)`` with the multi-view kernel
    ``K = H A H`` and predicts ``sum_l w_l f^l(x)``; the metric ``A`` between and
    within views is learned (``metric="dense"`` / ``"sparse"``) or fixed
    (``"identity"`` = MVML_I, ``"cov"`` = MVML_Cov). See ``docs/mvml.md``.

    ``y`` of shape (n, k) fits k independent problems, one per output, that share the
    kernels, the Nystrom map and (structured solver) the factorisation of ``D_w C D_w``;
    each output's model is exactly the single-output fit on that column. ``predict``
    then returns (n, k) and ``score`` the uniform average of the per-output R^2.

    Parameters
    ----------
    alpha : float, default=1.0
        The paper's lambda: weight of ``<g, A^+ g>`` (ridge on g).
    eta : float, default=1.0
        Metric penalty: ``eta ||A||_F^2`` (dense) or ``eta * sum_groups ||A_gamma||_F``
        (sparse). Unused for fixed metrics.
    metric : {"dense", "sparse", "identity", "cov"}, default="dense"
        Learned dense A (eq. 9), learned block-sparse A (eq. 12), fixed ``A = I``
        (MVML_I) or fixed cross-covariance metric (MVML_Cov, :func:`cov_metric_full`).
        In Nystrom mode the metric is ``A~`` (vp x vp), e.g. ``A~ = I`` for "identity".
    learn_weights : bool, default=False
        Learn the view weights ``w`` (eq. 10 / 17); otherwise ``w = 1/v``.
    n_landmarks : "auto", "grow", None, int or float in (0, 1], default="auto"
        ``"auto"``: block Nystrom with ``p = min(n, ceil(600 / v))`` landmarks per view
        (:func:`~mvkernels.mvml.auto_n_landmarks`; every sample while ``n <= 600 / v``,
        where the map is exact). ``"grow"``: the same up to ``sqrt(n) = 600 / v``, then
        ``sqrt(n)`` per view (:func:`~mvkernels.mvml.grown_n_landmarks`; capacity that
        grows with the data, for large ``n``; ``solver="cg"`` avoids forming the
        ``vp x vp`` statistics). None: full kernels (``O((nv)^3)`` per iteration and
        class, for small n). Otherwise the block Nystrom approximation with this many
        landmarks (or fraction of n), fitted from sufficient statistics.
    landmarks : {"uniform", "kmeans++", "leverage"} or array-like of int, default="uniform"
        Landmark strategy (:func:`mvkernels.nystrom.select_landmarks`), or training row
        indices used as the landmarks (they override ``n_landmarks``; with missing views
        they must be rows where every view is observed; see
        :class:`~mvkernels.nystrom.BlockNystrom`). Unused with full kernels. The CV
        estimators fit one map on all their training rows, so the indices are rows of
        the ``X`` given to ``fit`` and every fold and candidate uses them.
    kernel : str, callable or list, default="rbf"
        One kernel for all views or one per view (:mod:`mvkernels.kernels`).
    kernel_params : dict, list of dict or None
        E.g. ``{"gamma": g}``; default Gaussian bandwidth = mean pairwise distance.
    max_iter : int, default=10
        Outer iterations of Algorithm 1 (g-step, w-step, A-steps).
    tol : float or None, default=None
        None: run exactly ``max_iter`` outer iterations (the early-stopped iterate is the
        model; ``max_iter`` and ``eta`` act as regularisers, chosen by
        :class:`~mvkernels.MVMLRegressorCV`). A number: stop when the relative decrease of
        the objective is below ``tol``, with a ``ConvergenceWarning`` if ``max_iter``
        comes first.
    step_size : "auto" or float, default="auto"
        Initial A-step size ``mu`` (then backtracked, see :func:`metric_step`).
    n_a_steps : int, default=1
        A-steps per outer iteration.
    sparse_threshold : {"mu_eta", "eta"}, default="mu_eta"
        Shrinkage threshold of the sparse proximal step (:func:`sparse_metric_update`).
    eig_floor : float, default=1e-10
        Relative eigenvalue floor for pseudo-inverses (Nystrom ``W^+`` and singular A).
    chunk_size : int or None
        Rows per chunk for Nystrom features and prediction.
    views : None or list
        How to cut a single 2-D array into views (:func:`mvkernels.check_views`).
    random_state : int, RandomState or None
        Landmarks and bandwidth subsampling.
    solver : {"auto", "dense", "cg"}, default="auto"
        ``"auto"``: the structured solver (:mod:`mvkernels.mvml._lowrank`: one
        eigendecomposition of ``D_w C D_w`` per fit, metric kept as ``s I + W W^T``) when
        the fit allows it (Nystrom mode, square loss, fixed weights, dense / identity / Cov
        metric), else the dense reference path; ``"dense"`` forces the reference path
        (``O((vp)^3)`` per outer iteration and class). Both give the same results to rounding.
        ``"cg"``: the structured solver's path with preconditioned conjugate-gradient
        g-steps (:mod:`mvkernels.mvml._iterative`; Nystrom mode, fixed weights, dense /
        identity / Cov metric, else a ValueError): products with the statistics streamed
        over the training rows, ``O(n vp)`` each, ``C`` never formed for the identity and
        dense metrics on in-memory views; the same results to the CG's relative residual
        ``1e-8`` (about 1e-6 relative on the coefficients). MVMLSVC: "auto" or "dense".
    bandwidth_factor : float, default=4.0
        Multiplies the data-driven bandwidth parameter of Gaussian / Laplacian views whose
        ``gamma`` is not given: ``gamma_l = f / (2 sigma_l^2)``, ``sigma_l`` the mean
        pairwise distance of view ``l`` (1 is the papers' setting; 4, of the order of
        scikit-learn's ``gamma="scale"``, is what cross-validation picks most often).
        Ignored for given ``gamma`` / ``sigma`` and other kernels. The default bandwidth
        follows each view's overall scale, not the ranges of its columns: scale the
        columns (e.g. ``StandardScaler`` in a pipeline) when they differ, as for ``SVC``
        (user guide, "Scaling the views").
    joint_view : bool or "only", default=False
        Append one view, all views together: the predictor ``sum_l w_l f^l(x_l)`` is
        additive over views (the metric couples the views' coefficients, not their
        inputs), the joint view's kernel on the concatenation (for Gaussian views a
        product of per-view kernels) models cross-view interactions. Its bandwidth comes
        from the same heuristic times ``bandwidth_factor``; it is the last view of the
        fitted model (``n_views_``, ``weights_``, ``kernel_params_``, the metric). A kernel
        list gives it ``"rbf"`` unless ``v + 1`` kernels are listed; precomputed kernels:
        the elementwise product of the view kernels (also at predict time). Needs at least
        2 views. Nystrom and full-kernel modes, NumPy and Dask views. ``"only"``: the
        joint view alone (one view, ``n_views_ == 1``; predict still takes the input
        views). In Nystrom mode with ``metric="identity"`` this is kernel ridge
        regression on the concatenated views with the Nystrom kernel, exactly
        ``KernelRidge(alpha=alpha)`` when every training row is a landmark (the g-step
        ``g = (U^T U + alpha I)^{-1} U^T y`` gives ``k(x, X) (K + alpha I)^{-1} y`` by
        the push-through identity); the CV estimators search it.
    feature_relevance : {"none", "ard"} or list of array-like, default="none"
        ``"ard"``: learn one scale per column of each input view (automatic relevance
        determination: the inverse length scales of a Gaussian kernel on all the views'
        columns, with the ridge, minimising the exact leave-one-out error of kernel
        ridge regression on a subsample of at most 500 + 500 complete rows, shrunk
        towards one flat scale by the leave-one-out error of the other half; flat
        when a half has fewer rows than there are columns;
        :mod:`mvkernels.mvml._relevance`) and multiply the columns by them before the
        views' kernels and bandwidths, at fit and predict time. A list of one array per
        input view fixes the scales (finite, ``>= 0``). ``"none"``: the views as given.
        Costs seconds whatever ``n`` is; helps when a few columns of many carry the
        signal (user guide, "Relevant columns inside a view"). Not for precomputed
        kernels.
    fit_intercept : bool, default=False
        Add an unpenalised offset ``b`` per output: the predictor is
        ``sum_l w_l f^l(x) + b``. The square loss then runs Algorithm 1 on the design and
        targets centred by their training means (the offset is not penalised, so for
        any ``g`` the best ``b`` is ``ybar - m^T (w (.) g)``, ``m`` the mean feature
        vector): the g-step, the w-step and the A-steps see the centred data, at the
        cost of the uncentred fit (user guide, "The intercept"). False is the papers'
        bias-free model.

    Attributes
    ----------
    metric_ : ndarray (nv, nv) or (vp, vp)
        Learned / fixed metric ``A`` (full) or ``A~`` (Nystrom).
    metric_min_eigenvalue_ : float
        Smallest eigenvalue of ``metric_`` (>= 0 up to rounding: every accepted A-step
        is positive (semi-)definite; a RuntimeWarning is raised otherwise).
    coef_ : ndarray (nv,) or (vp,)
        ``g`` (full) or ``g~`` (Nystrom), the exact g-step solution for ``metric_``.
    intercept_ : float or ndarray (k,)
        The offset ``b`` per output (0.0 with ``fit_intercept=False``).
    weights_ : ndarray (v,)
    n_iter_ : int
        Outer iterations run.
    objective_ : ndarray
        Objective after each outer iteration (and after the final g-step).
    n_outputs_ : int
        Number of target columns k (1 for a 1-D ``y``). With k > 1, ``metric_``,
        ``coef_``, ``weights_``, ``n_iter_``, ``metric_min_eigenvalue_`` are stacked per
        output and ``objective_`` is a list, as the classes of :class:`MVMLClassifier`.
    mode_ : {"full", "nystrom"}
    solver_ : {"structured", "dense"}
        The solver that ran (see ``solver``).
    n_landmarks_ : int or None
        Landmarks per view (None in full-kernel mode).
    kernel_params_ : list of dict or None
        The per-view kernel parameters used, with resolved bandwidths.
    feature_relevance_ : list of ndarray or None
        The scales that multiply each input view's columns (``"ard"``: normalised to a
        root mean square of 1 per view, a flat relevance being all ones); None for
        ``feature_relevance="none"``.
    nystrom_ : BlockNystrom or None
    kernels_ : list of ViewKernel
    n_views_ : int

    See Also
    --------
    MVMLRegressorCV : The same with built-in cross-validation of the hyperparameters.
    MVMLClassifier : MVML on one-vs-all +-1 targets.
    mvkernels.nystrom.BlockNystrom : The block Nystrom map of the default mode.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X1, X2 = rng.normal(size=(40, 3)), rng.normal(size=(40, 2))
    >>> y = X1[:, 0] + np.sin(X2[:, 1])
    >>> from mvkernels import MVMLRegressor
    >>> reg = MVMLRegressor(alpha=0.1).fit([X1, X2], y)
    >>> reg.predict([X1, X2]).shape
    (40,)
    >>> reg.mode_, reg.metric_.shape  # every sample a landmark: 2 views x 40
    ('nystrom', (80, 80))
    >>> far = [X1 + 50.0, X2 + 50.0]  # far from every training row
    >>> reg = MVMLRegressor(alpha=0.1, fit_intercept=True).fit([X1, X2], y + 100.0)
    >>> bool(np.allclose(reg.predict(far), reg.intercept_)), bool(reg.intercept_ > 90)
    (True, True)
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> MVMLRegressor:
        """Fit on views ``X`` (list of arrays, or one array cut by ``views``) and targets ``y``.

        ``sample_weight`` (n,): frequency weights of the rows (None: 1 each), for the
        weighted square loss ``sum_i s_i (y_i - f(x_i))^2``; rows of weight 0 are dropped
        first (user guide, "Sample and class weights").
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        X = validate_array_input(self, X, reset=True)
        X, y, _ = self._weighted_rows(X, y, sample_weight)
        Y, self._single_output = regression_targets(y)
        self.n_outputs_ = int(Y.shape[1])
        return self._fit_targets(X, Y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def predict(self, X: Any) -> Any:
        """Predictions ``sum_l w_l f^l(x)``: shape (n,) for a 1-D ``y``, else (n, k).

        A lazy Dask array on Dask views.
        """
        D = self._decision(X)
        return D[:, 0] if getattr(self, "_single_output", True) else D


class MVMLClassifier(OneVsOneMixin, ProbaMixin, ClassifierMixin, _BaseMVML):
    """Multi-view metric learning classifier: MVML on +-1 targets, one-vs-all or one-vs-one.

    Binary problems are one MVML problem (``+1`` = ``classes_[1]``). With K > 2 classes
    and ``multi_class="ovr"``, K independent one-vs-all problems that share the kernels
    and, in Nystrom mode, the sufficient statistic ``C`` (only ``c`` changes); prediction:
    the class with the largest output. With ``multi_class="ovo"``, K(K-1)/2 binary
    problems, one per pair of classes on the rows of those two classes, sharing the
    bandwidths, the kernels / Nystrom map and the per-class statistics; prediction: the
    class with the most pairwise votes (ties: the largest summed decision value), as
    scikit-learn's ``SVC`` (:mod:`mvkernels.mvml._multiclass`).

    Parameters
    ----------
    alpha : float, default=0.1
        As :class:`MVMLRegressor` (whose default is 1.0).
    bandwidth_factor : float, default=6.0
        As :class:`MVMLRegressor` (whose default is 4.0). The classifier's defaults
        ``alpha=0.1``, ``bandwidth_factor=6`` were chosen on the classification
        benchmark sets together (the user guide, "Defaults", and its generated table):
        within half a point of ``SVC()`` or above it on each; the former 1.0 and 4 lost
        to it on uWave.
    eta, metric, learn_weights, n_landmarks, landmarks, kernel, kernel_params, \
max_iter, tol, step_size, n_a_steps, sparse_threshold, eig_floor, chunk_size, views, \
random_state, solver, joint_view, fit_intercept, feature_relevance
        As :class:`MVMLRegressor` (same defaults). With ``fit_intercept`` every
        one-vs-all problem has its own offset.
    probability : bool, default=False
        Enable ``predict_proba`` / ``predict_log_proba``: calibrated probabilities
        ``softmax(a D(x))`` of the decision values, the slope ``a`` fitted on out-of-fold
        decision values of a stratified 5-fold cross-validation run inside ``fit``
        (5 extra fits, hence off by default, as ``SVC(probability=...)``). The most
        probable class is the predicted one. See ``docs/mvml.md``, "Probabilities".
        With ``multi_class="ovo"`` (K > 2): one Platt sigmoid per pair on the out-of-fold
        pairwise values, coupled by Wu, Lin & Weng's method 2, as ``SVC``; the most
        probable class then usually, not always, is the predicted one.
    multi_class : {"ovr", "ovo"}, default="ovr"
        K > 2 classes: one-vs-rest (K problems on all rows) or one-vs-one (K(K-1)/2
        problems, pair ``(i, j)``, ``i < j``, on the rows of classes ``i`` (target +1)
        and ``j`` (-1), in ``SVC``'s pair order). Each pair is its own MVML problem (its
        own metric and weights). Same as "ovr" for two classes. See ``docs/mvml.md``,
        "One-vs-one".
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        With ``multi_class="ovo"`` and K > 2: ``decision_function`` returns the
        (n, K(K-1)/2) pairwise values ("ovo") or per-class scores (n, K), the votes plus
        a bounded monotone transform of the summed pairwise values, whose argmax is the
        prediction ("ovr", as ``SVC``). Unused with ``multi_class="ovr"``.
    class_weight : None, "balanced" or dict, default=None
        Multiplies the loss weight of every row of a class, as in ``SVC``: a dict
        ``{label: weight}`` (other classes 1) or ``"balanced"``,
        ``n / (n_classes n_c)`` with ``n`` and ``n_c`` the total and the class's
        (``sample_weight``-weighted) row counts. The weighted square loss is
        ``sum_i s_i c_{y_i} (y_i - f(x_i))^2``; bandwidths and landmarks do not depend
        on it. See ``docs/mvml.md``, "Sample and class weights".

    Attributes
    ----------
    classes_ : ndarray (K,)
    calibration_ : SoftmaxCalibration or PairwiseCalibration
        With ``probability=True``: the fitted slope (``calibration_.scale``); one-vs-one:
        the pairs' sigmoids (``calibration_.slopes``, ``calibration_.intercepts``).
    metric_, coef_, intercept_, weights_, objective_, n_iter_, metric_min_eigenvalue_
        As :class:`MVMLRegressor` for a binary problem; with K > 2 classes, stacked
        per class: ``metric_`` (K, d, d), ``coef_`` (K, d), ``intercept_`` (K,),
        ``weights_`` (K, v),
        ``n_iter_`` and ``metric_min_eigenvalue_`` (K,), ``objective_`` a list of K arrays.
        One-vs-one: stacked per pair (K(K-1)/2 in place of K); in full-kernel mode
        ``coef_`` is zero off the pair's rows and ``metric_`` a list of the pairs'
        ``(v n_ij) x (v n_ij)`` metrics (the pair's rows only; stacked when every pair
        has as many rows).
    n_landmarks_, kernel_params_, nystrom_, kernels_, n_views_, mode_, solver_, \
feature_relevance_
        As :class:`MVMLRegressor`.

    See Also
    --------
    MVMLClassifierCV : The same with built-in cross-validation of the hyperparameters.
    MVMLSVC : MVML with the hinge loss.
    MVMLRegressor : The regression estimator (parameters and attributes).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X1, X2 = rng.normal(size=(40, 3)), rng.normal(size=(40, 2))
    >>> y = np.where(X1[:, 0] + X2[:, 0] > 0, "a", "b")
    >>> from mvkernels import MVMLClassifier
    >>> clf = MVMLClassifier(alpha=0.1).fit([X1, X2], y)
    >>> clf.classes_
    array(['a', 'b'], dtype='<U1')
    >>> clf.predict([X1, X2]).shape
    (40,)
    """

    def __init__(
        self,
        alpha: float = 0.1,
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
        bandwidth_factor: float = 6.0,
        joint_view: bool | str = False,
        fit_intercept: bool = False,
        probability: bool = False,
        multi_class: str = "ovr",
        decision_function_shape: str = "ovr",
        feature_relevance: Any = "none",
        class_weight: Any = None,
    ):
        super().__init__(
            alpha=alpha,
            eta=eta,
            metric=metric,
            learn_weights=learn_weights,
            n_landmarks=n_landmarks,
            landmarks=landmarks,
            kernel=kernel,
            kernel_params=kernel_params,
            max_iter=max_iter,
            tol=tol,
            step_size=step_size,
            n_a_steps=n_a_steps,
            sparse_threshold=sparse_threshold,
            eig_floor=eig_floor,
            chunk_size=chunk_size,
            views=views,
            random_state=random_state,
            solver=solver,
            bandwidth_factor=bandwidth_factor,
            joint_view=joint_view,
            fit_intercept=fit_intercept,
            feature_relevance=feature_relevance,
        )
        self.probability = probability
        self.multi_class = multi_class
        self.decision_function_shape = decision_function_shape
        self.class_weight = class_weight

    _parameter_constraints: dict = {
        **_mvml_constraints(),
        "probability": ["boolean"],
        **multiclass_constraints(),
        "class_weight": [StrOptions({"balanced"}), dict, None],
    }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> MVMLClassifier:
        """Fit on views ``X`` and class labels ``y``.

        ``sample_weight`` (n,): frequency weights of the rows (None: 1 each), multiplied
        by ``class_weight``; rows of weight 0 are dropped first (user guide, "Sample and
        class weights").
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        X = validate_array_input(self, X, reset=True)
        labels_seen = None
        if sample_weight is not None and not is_dask_collection(y):
            labels_seen = np.unique(column_or_1d(np.asarray(y)))
        X, y, _ = self._weighted_rows(X, y, sample_weight)
        self._labels_seen = labels_seen
        self._fit_labels(X, y)
        if self.probability:  # out-of-fold decision values -> calibration_ (5 extra fits)
            labels = np.asarray(y.compute() if is_dask_collection(y) else y)
            D, yi = cross_val_decisions(
                self, X, column_or_1d(labels), self.__dict__.get("_bandwidth_weight")
            )
            fit_calibration = (
                fit_pairwise_calibration if self._ovo_active() else fit_softmax_calibration
            )
            self.calibration_ = fit_calibration(D, yi, len(self.classes_))
        return self

    def _check_proba(self) -> None:
        if not self.probability:
            raise AttributeError(
                "predict_proba is not available when probability=False "
                "(fit with probability=True, or use MVMLClassifierCV)"
            )

    def _calibrated_decisions(self, X: Any) -> tuple[Any, Any]:
        check_is_fitted(self, "calibration_")
        return self.calibration_, self._decision(X)

    def _fit_labels(self, X: Any, y: Any) -> MVMLClassifier:
        """Encode the labels (``classes_``, +-1 columns) and fit the one-vs-all problems
        (or, ``multi_class="ovo"``, the one-vs-one problems: see :class:`OneVsOneMixin`)."""
        self._ovo_pairs = None
        dask_views = is_dask_collection(X) or (
            isinstance(X, (list, tuple)) and any(is_dask_collection(Xv) for Xv in X)
        )
        if self.multi_class == "ovo" and (is_dask_collection(y) or dask_views):
            raise ValueError(
                f"{type(self).__name__}(multi_class='ovo') does not support Dask input "
                "(the pairs' row subsets); use multi_class='ovr' (one Dask reduction)"
            )
        if is_dask_collection(y):
            # classes by a Dask reduction; the +-1 targets stay lazy (one-hot per block)
            from ..nystrom._dask import require_dask

            da = require_dask()
            y = _dask_column(y)
            self.classes_ = np.asarray(da.unique(y).compute())
            check_classification_targets(self.classes_)
            self._check_n_classes()
            if getattr(self, "class_weight", None) is not None:
                raise ValueError(
                    f"{type(self).__name__}: class_weight is not supported on Dask input yet"
                )
            Y = self._encode_targets_lazy(y, self.classes_)
            return self._fit_targets(X, Y)
        y = column_or_1d(np.asarray(y), warn=True)
        check_classification_targets(y)
        self.classes_, yi = np.unique(y, return_inverse=True)
        self._check_n_classes()
        if self.multi_class == "ovo" and len(self.classes_) > 2:
            self._ovo_pairs = ovo_pairs(len(self.classes_))
        self._apply_class_weight(yi, self.__dict__.get("_labels_seen"))
        Y = self._encode_targets(yi, len(self.classes_))
        return self._fit_targets(X, Y)

    def _check_n_classes(self) -> None:
        if len(self.classes_) == 0:
            raise ValueError(f"{type(self).__name__}: y is empty (0 samples)")
        if len(self.classes_) < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes; y has only "
                f"one class: {self.classes_[0]}"
            )

    @staticmethod
    def _encode_targets_lazy(y: Any, classes: np.ndarray) -> Any:
        """:meth:`_encode_targets` for a 1-D Dask ``y``: a lazy (n, 1) or (n, K) Dask array."""
        from ..nystrom._dask import require_dask

        da = require_dask()
        if len(classes) == 2:
            return da.where(y == classes[1], 1.0, -1.0)[:, None]
        return da.where(y[:, None] == classes[None, :], 1.0, -1.0)

    @staticmethod
    def _encode_targets(yi: np.ndarray, n_classes: int) -> np.ndarray:
        """+-1 targets: one column (binary, +1 = classes_[1]) or one per class."""
        return one_vs_all_targets(yi, n_classes)

    def decision_function(self, X: Any) -> Any:
        """Outputs: shape (n,) for binary (positive = ``classes_[1]``), else (n, K).

        One-vs-one (K > 2): the (n, K(K-1)/2) pairwise values (positive: the pair's
        first class) or, ``decision_function_shape="ovr"``, the (n, K) vote scores
        (:func:`~mvkernels.mvml._multiclass.ovo_vote_scores`). A lazy Dask array on
        Dask views.
        """
        D = self._decision(X)
        if self._ovo_active() and self.decision_function_shape == "ovr":
            K = len(self.classes_)
            return map_rows(D, lambda B: ovo_vote_scores(B, K), K)
        return D[:, 0] if D.shape[1] == 1 else D

    def predict(self, X: Any) -> Any:
        """Predicted class labels (a lazy Dask array on Dask views)."""
        check_is_fitted(self, "classes_")
        if self._ovo_active():  # votes, ties by the summed pairwise values (as SVC)
            K, classes = len(self.classes_), self.classes_
            fn = lambda B: classes[ovo_predicted_indices(B, K)]  # noqa: E731
            return map_rows(self._decision(X), fn, None, classes.dtype)
        return self._decision(X, classes=self.classes_)

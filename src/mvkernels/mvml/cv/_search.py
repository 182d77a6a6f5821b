"""The cross-validated search shared by the MVML CV estimators (:class:`_MVMLCVBase`)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from numbers import Integral
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, _fit_context, clone, is_classifier
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ..._arrays import MIN_OBSERVED_ROWS, check_known_lengths
from ..._kernel_families import kernel_takes_sparse, names_precomputed
from ..._targets import one_vs_all_targets
from ..._threads import serial_blas
from ..._validation import check_views, observed_mask, take_rows, validate_array_input
from ..._weights import class_weight_of_rows
from ...kernels import make_view_kernels, subsample_indices
from ...nystrom import check_landmark_count
from ...nystrom._landmarks import is_index_landmarks
from .._bandwidth import BANDWIDTH_KERNELS, resolve_bandwidths, scale_bandwidths
from .._base import (
    grown_n_landmarks,
    named_n_landmarks,
    refuse_dropped_rows_of_kernels,
    regression_targets,
    weighted_input,
)
from .._data_part import data_part
from .._estimators import MVMLRegressor, check_n_classes
from .._joint import (
    JOINT_ONLY,
    joint_candidates,
    joint_kernel_spec,
    joint_only_landmarks,
    joint_views,
)
from .._metric import metric_kind
from .._multiclass import fit_pairwise_calibration, ovo_pairs
from .._proba import BestOutOfFold, fit_softmax_calibration
from .._reduced import fit_reduced_models
from .._relevance import RELEVANCE_MAX_ROWS, resolve_feature_relevance_rows, scale_views
from ._folds import _FoldScoring
from ._grid import (
    LOSS_SEARCHES,
    PART_AXES,
    Axis,
    LossSearch,
    ScoreGrid,
    ScreenResult,
    SearchGrid,
    _cv_constraints,
    _CVSearch,
    part_axis,
    union_results,
)

__all__ = []


@dataclass(frozen=True)
class _SearchData:
    """The validated training data of one cross-validated search and its folds (shared by
    the searches of every loss)."""

    Xs: list
    y: Any
    mask: np.ndarray | None
    Y: Any
    y_score: np.ndarray
    splits: list
    scorer: Any
    #: the input views (``Xs`` are these with their columns scaled by ``relevance``)
    Xs_input: list
    relevance: list | None
    #: the rows' frequency weights and loss weights (times class weights; None: 1)
    sample_weight: np.ndarray | None = None
    loss_weight: np.ndarray | None = None
    #: with sample_weight: the views, labels and weights as given (the refit's input)
    given: tuple | None = None
    #: a search on a subsample of the rows (``max_search_rows``): the views and labels of
    #: all the rows, the refit's input
    full: tuple | None = None


@dataclass(frozen=True)
class _Run:
    """One run of the search at one value of each looped axis (``_looped_axes``)."""

    search: _CVSearch
    #: the screen of the (joint view, bandwidth factor) pairs, without its features
    #: (None: searched in full)
    screen: ScreenResult | None
    joints: tuple
    kernel: Any
    #: the landmark counts of the search (the joint-only candidate's second)
    n_landmarks: tuple
    #: the looped axes' values of this run
    looped: dict[str, Any]


def _itself(value: Any, data: Any) -> Any:
    """A part axis's value without an alias (:attr:`~._grid.PartAxis.alias`)."""
    return value


#: rows above which ``max_search_rows="auto"`` searches a subsample of this many rows
SEARCH_MAX_ROWS = 20_000
#: complete rows from which ``feature_relevance="auto"`` searches the learned relevance:
#: its full subsample (2 x RELEVANCE_MAX_ROWS) is then at most half the rows
RELEVANCE_MIN_ROWS = 4 * RELEVANCE_MAX_ROWS


def search_subsample(n: int, size: int, labels: np.ndarray | None, random_state: Any) -> np.ndarray:
    """Sorted indices of ``size`` of ``n`` rows drawn uniformly, stratified by ``labels``
    when given (each class its share of ``size``, largest remainders first, at least 2
    rows of a class that has them, taken from the largest classes' shares).

    Parameters
    ----------
    n : int
        Number of rows.
    size : int
        Number of rows to draw (``< n``).
    labels : ndarray of shape (n,) or None
        Class labels (classifiers), None for a uniform draw.
    random_state : int, RandomState or None

    Returns
    -------
    ndarray of int

    Examples
    --------
    >>> import numpy as np
    >>> y = np.repeat([0, 1, 2], [600, 300, 100])
    >>> rows = search_subsample(1000, 100, y, random_state=0)
    >>> np.bincount(y[rows]).tolist()
    [60, 30, 10]
    """
    rng = check_random_state(random_state)
    if labels is None:
        return subsample_indices(n, size, rng)
    _, yi, counts = np.unique(labels, return_inverse=True, return_counts=True)
    quota = counts * (size / n)
    take = np.floor(quota).astype(int)
    take[np.argsort(take - quota, kind="stable")[: size - int(take.sum())]] += 1
    take = np.minimum(np.maximum(take, np.minimum(counts, 2)), counts)
    for _ in range(int(take.sum()) - size):  # the rows added to small classes: from the largest
        take[np.argmax(take)] -= 1
    order = np.argsort(yi, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)])
    rows = [
        order[starts[c] : starts[c + 1]][subsample_indices(int(counts[c]), int(take[c]), rng)]
        for c in range(counts.size)
    ]
    return np.sort(np.concatenate(rows))


def _held_out_elsewhere(splits: list, rows: np.ndarray, n: int) -> list:
    """The folds with ``rows`` (those a learned relevance was fitted on) moved from every
    held-out part to its training part: each fold scores the other rows only. The folds
    as given when a held-out part would be left empty."""
    inside = np.zeros(n, dtype=bool)
    inside[rows] = True
    moved = [(np.sort(np.concatenate([tr, te[inside[te]]])), te[~inside[te]]) for tr, te in splits]
    return splits if any(te.size == 0 for _, te in moved) else moved


class _MVMLCVBase(_FoldScoring, BaseEstimator):
    """Shared cross-validation machinery (see the module docstring)."""

    #: the estimator searched for each loss this CV estimator offers
    _base_classes: dict[str, type[BaseEstimator]] = {"squared": MVMLRegressor}
    #: the loss this class searches when ``loss`` names it (others: a search apart each,
    #: :meth:`_part`)
    _native_loss: str = "squared"
    #: a part of a search along the part axes: its probability calibration is kept as a
    #: callable and fitted only for the part chosen (:meth:`_adopt_union`)
    _calibrate_later: bool = False
    # fitted attributes (declared for the type checker; set by fit)
    cv_results_: dict[str, Any]
    best_score_: float
    best_estimator_: Any
    n_splits_: int
    _part_values: dict[str, Any]
    _parameter_constraints: dict = _cv_constraints()

    def __init__(
        self,
        *,
        alphas: Any = None,
        etas: Any = None,
        bandwidth_factors: Any = None,
        cv: Any = 5,
        scoring: Any = None,
        n_jobs: int | None = None,
        refit: bool = True,
        metric: str = "dense",
        learn_weights: bool = False,
        n_landmarks: int | float | str | None = "auto",
        landmarks: str = "uniform",
        kernel: Any = "rbf",
        kernel_params: Any = None,
        max_iter: int = 10,
        step_size: float | str = "auto",
        n_a_steps: int = 1,
        sparse_threshold: str = "mu_eta",
        eig_floor: float = 1e-10,
        chunk_size: int | None = None,
        views: Any = None,
        random_state: Any = None,
        verbose: int = 0,
        joint_view: bool | str = "auto",
        search: str = "screen",
        n_finalists: int | None = None,
        missing_views: str = "reduced",
        loss: str = "squared",
        fit_intercept: bool = False,
        feature_relevance: Any = "auto",
        max_search_rows: int | str | None = "auto",
    ):
        self.alphas = alphas
        self.etas = etas
        self.bandwidth_factors = bandwidth_factors
        self.cv = cv
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.refit = refit
        self.metric = metric
        self.learn_weights = learn_weights
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.max_iter = max_iter
        self.step_size = step_size
        self.n_a_steps = n_a_steps
        self.sparse_threshold = sparse_threshold
        self.eig_floor = eig_floor
        self.chunk_size = chunk_size
        self.views = views
        self.random_state = random_state
        self.verbose = verbose
        self.joint_view = joint_view
        self.search = search
        self.n_finalists = n_finalists
        self.missing_views = missing_views
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.feature_relevance = feature_relevance
        self.max_search_rows = max_search_rows

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = names_precomputed(self.kernel)
        tags.input_tags.sparse = kernel_takes_sparse(self.kernel)
        return tags

    # ------------------------------------------------------------------ losses
    def _searched_losses(self) -> tuple[str, ...]:
        """The losses searched: ``loss``, or every loss of ``_base_classes`` for "auto"
        (the class's own loss first: ties go to it; :data:`PART_AXES`)."""
        return part_axis("loss").searched(self)

    def _current(self, name: str) -> Any:
        """The value of the part axis ``name`` (:data:`PART_AXES`) of the search being run
        (after ``fit``: of the best candidate; None: this estimator has no such
        parameter): a part's own (``_part_values``), else :meth:`PartAxis.unsplit`."""
        values = self.__dict__.get("_part_values", {})
        return values[name] if name in values else part_axis(name).unsplit(self)

    @property
    def _current_loss(self) -> str:
        """The loss of the search being run (after ``fit``: of the best candidate)."""
        return self._current("loss")

    @property
    def _base_class(self) -> type[BaseEstimator]:
        return self._base_classes[self._current_loss]

    @property
    def _loss_search(self) -> LossSearch:
        """Default grids and screen of the current loss (:data:`LOSS_SEARCHES`)."""
        return LOSS_SEARCHES[self._current_loss]

    def _search_parts(self) -> tuple[tuple[str, ...], list[dict[str, Any]]]:
        """The part axes this search reports (:data:`PART_AXES`) and, when it reports
        any, the values of every part (their product, in order); no reported axis: this
        estimator searches itself (one part, ``[{}]``)."""
        axes = [a for a in PART_AXES if a.searched(self)]
        reported = tuple(a.name for a in axes if a.reported(self))
        if not reported:
            return (), [{}]
        values = [a.searched(self) for a in axes]
        return reported, [
            {a.name: val for a, val in zip(axes, combo)} for combo in itertools.product(*values)
        ]

    def _part(self, values: dict[str, Any]) -> _MVMLCVBase:
        """A copy of this estimator searching one value of each part axis (``values``), on
        the same folds: each axis's parameter set to its value, and the parameters its
        :attr:`PartAxis.configure` gives (a loss other than the class's own: its
        :class:`LossSearch` path length and joint-view candidates)."""
        params = dict(values)
        for axis in PART_AXES:
            if axis.name in values and axis.configure is not None:
                params.update(axis.configure(values[axis.name], self))
        part = clone(self).set_params(**params)
        part._part_values = dict(values)
        for name in ("classes_", "n_features_in_", "feature_names_in_"):
            if hasattr(self, name):
                setattr(part, name, getattr(self, name))
        return part

    def _adopt_union(
        self, parts: list[_MVMLCVBase], names: tuple[str, ...], values: list[dict[str, Any]]
    ) -> None:
        """``cv_results_`` and the best candidate of a search along the part axes
        ``names``, from the searches of each part (:func:`union_results`): the best
        part's choices."""
        results, best, which = union_results(
            [p.cv_results_ for p in parts], names, [tuple(v[k] for k in names) for v in values]
        )
        winner = parts[which]
        if "_calibrate" in winner.__dict__:  # the calibration of the best part alone
            winner.calibration_ = winner.__dict__.pop("_calibrate")()
        for part in parts:
            part.__dict__.pop("_calibrate", None)
        self.cv_results_, self.best_index_, self._best_part_index = results, best, which
        self.best_params_ = dict(results["params"][best])
        self.best_score_ = winner.best_score_
        self._part_values = dict(winner._part_values)
        for name in (
            "best_kernel_params_",
            "best_joint_view_",
            "n_splits_",
            "calibration_",
            "_joints",
            "_search_kernel",
        ):
            if hasattr(winner, name):
                setattr(self, name, getattr(winner, name))

    def _search_part_axes(self, data: _SearchData) -> tuple[_MVMLCVBase, _SearchData]:
        """Search the part axes (:data:`PART_AXES`: the relevance, the loss, the
        decomposition) on ``data``'s folds and store the results here; return the
        estimator whose search holds the best candidate (this one, or the best part), the
        one to refit, and its search data. ``feature_relevance_`` is the best part's
        column scales."""
        names, values = self._search_parts()
        if not names:  # the class's own loss and decomposition: this estimator searches
            self._part_values = {a.name: a.searched(self)[0] for a in PART_AXES if a.searched(self)}
            self._search_and_store(data)
            return self, data
        # one search per part (their product) on the same folds, then their union; the
        # parts of one loss on the same views share its screen (_FoldScoring._screened_search);
        # where an axis abandons, each part's candidates are abandoned once they cannot
        # beat the earlier parts' best (_FoldScoring._hopeless), the folds run in the
        # order of that best's per-fold scores, worst first: the same choice
        axes = [a for a in PART_AXES if a.name in values[0]]
        abandon = any(a.abandon for a in PART_AXES if a.name in names)
        to_beat, order = self._to_beat, self._fold_order
        parts: list[_MVMLCVBase] = []
        datas: list[_SearchData] = []
        per_views: dict[tuple, tuple[_SearchData, dict]] = {}  # the data and screens of views
        for value in values:
            same = {a.name: (a.alias or _itself)(value[a.name], data) for a in axes}
            if same != value:  # the same search as an earlier part's: its candidates
                parts.append(parts[values.index(same)])
                datas.append(datas[values.index(same)])
                continue
            key = tuple(value[a.name] for a in axes if a.data is not None)
            if key not in per_views:
                part_data = data
                for a in axes:
                    if a.data is not None:
                        part_data = a.data(value[a.name], part_data)
                per_views[key] = (part_data, {})
            part_data, screens = per_views[key]
            part = self._part(value)
            self._say(", ".join(f"{k}={v!r}" for k, v in value.items() if k in names))
            part._to_beat = to_beat if abandon else None
            part._fold_order = order if abandon else None
            part._screen_cache = screens
            part._calibrate_later = True
            part._search_and_store(part_data)
            del part._screen_cache
            parts.append(part)
            datas.append(part_data)
            best = part.best_score_
            if abandon and np.isfinite(best) and (to_beat is None or best > to_beat):
                folds = [part.cv_results_[f"split{k}_test_score"] for k in range(part.n_splits_)]
                to_beat = best
                order = np.argsort([f[part.best_index_] for f in folds], kind="stable")
        self._adopt_union(parts, names, values)
        which = int(self._best_part_index)
        self.feature_relevance_ = datas[which].relevance
        return parts[which], datas[which]

    # ------------------------------------------------------------------ grids
    def _base_estimator(self) -> Any:
        names = (
            "metric",
            "learn_weights",
            "n_landmarks",
            "landmarks",
            "kernel",
            "kernel_params",
            "max_iter",
            "step_size",
            "n_a_steps",
            "sparse_threshold",
            "eig_floor",
            "chunk_size",
            "views",
            "random_state",
            "fit_intercept",
        )
        est = self._base_class(tol=None, **{k: getattr(self, k) for k in names})
        for axis in PART_AXES:  # the part axes that are the estimator's parameters too
            if axis.to_estimator and hasattr(self, axis.name):
                est.set_params(**{axis.name: self._current(axis.name)})
        return est

    @staticmethod
    def _grid(values: Any, default: tuple, name: str) -> np.ndarray:
        arr = np.asarray(default if values is None else values, dtype=np.float64).ravel()
        if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            raise ValueError(
                f"{name} must be a non-empty list of finite numbers > 0, got {values!r}"
            )
        return arr

    def _learned(self) -> bool:
        return metric_kind(self.metric).learned

    def _encode(self, y: Any) -> tuple[Any, Any, Any]:
        """``(Y, y_split, y_score)``: +-1 or real target columns, labels for the splitter,
        and the values scored against."""
        y = data_part(y=y).to_client(y)  # the labels / targets on the client
        if is_classifier(self):
            y = column_or_1d(np.asarray(y), warn=True)
            check_classification_targets(y)
            self.classes_, yi = np.unique(y, return_inverse=True)
            check_n_classes(self)  # the classifiers' check and messages
            Y = one_vs_all_targets(yi, len(self.classes_))
            return Y, y, y
        Y, single = regression_targets(y)
        return Y, None, Y[:, 0] if single else Y

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> _MVMLCVBase:
        """Cross-validate the grid on ``(X, y)`` and (with ``refit``) refit the best model.

        ``X``: a list of views, or one array cut by ``views``; NumPy or Dask arrays
        (Nystrom mode). Dask views: the held-out parts are read as Dask row selections and
        their statistics come from Dask reductions; the labels ``y`` are brought to the
        client (one value per row).

        ``sample_weight`` (n,): frequency weights of the rows (user guide, "Sample and
        class weights"). The folds are cut from the rows given (explicit ``cv`` indices
        name rows of ``X``), then the rows of zero weight are dropped from every fold;
        each fold's statistics and fits are weighted, its held-out score is the weighted
        accuracy / R^2 (a ``scoring`` is called with ``sample_weight``), the screen is the
        weighted leave-one-out error, and the refit is weighted. With missing views the
        completion statistics are weighted too, and so are the searches of the reduced
        models. The grid is the unweighted one (the joint view alone included: weighted
        kernel ridge on the concatenated views). Square loss; Dask views in Nystrom mode
        (weighted Dask reductions; the labels and weights come to the client).
        """
        t_start = time.perf_counter()
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        self.__dict__.pop("_part_values", None)  # the choices of an earlier fit
        X = validate_array_input(self, X, reset=True)
        self._base_estimator()._cv_engine().check_params()
        check_known_lengths(X)
        if sample_weight is not None or getattr(self, "class_weight", None) is not None:
            data = self._weighted_data(X, y, sample_weight)
        else:
            data = self._search_data(X, y)
        self.n_search_rows_ = int(data.Xs[0].shape[0])
        winner, data = self._search_part_axes(data)
        if self.refit:
            winner._refit(data)
            if winner is not self:
                self.best_estimator_ = winner.best_estimator_
            self.n_iter_ = self.best_estimator_.n_iter_
        else:
            self.n_iter_ = int(self.best_params_.get("max_iter", 1))
        self.cv_time_ = time.perf_counter() - t_start
        return self

    def _search_data(self, X: Any, y: Any) -> _SearchData:
        """The search's data without weights: the validated views, the encoded targets,
        the folds, the scorer and the learned column scales."""
        Xs = check_views(X, views=self.views, ensure_min_samples=2, allow_missing=True)
        n = Xs[0].shape[0]
        # every row kept (see _weighted_data)
        self._cv_rows: np.ndarray | None = None
        self._cv_n_in = n
        mask = observed_mask(Xs, min_observed=MIN_OBSERVED_ROWS)  # Dask: one pass
        Y, y_split, y_score = self._encode(y)
        if Y.shape[0] != n:
            raise ValueError(f"y has {Y.shape[0]} samples but the views have {n}")
        # large data: the search on a (stratified) subsample, the refit on every row
        full = None
        size = self._search_size(Xs, mask, n)
        if size is not None:
            rows = search_subsample(n, size, y_split, self.random_state)
            full = (Xs, y)
            Xs, y, n = take_rows(Xs, rows), np.asarray(y)[rows], size
            Y, y_score = Y[rows], y_score[rows]
            y_split = None if y_split is None else y_split[rows]
            self._cv_n_in = n
        splitter = check_cv(self.cv, y_split, classifier=is_classifier(self))
        splits = [
            (np.asarray(tr), np.asarray(te)) for tr, te in splitter.split(np.zeros((n, 1)), y_split)
        ]
        scorer = None if self.scoring is None else check_scoring(self, scoring=self.scoring)
        # the column scales, learned once (not per fold) on a subsample of at most half
        # the rows, before the search of every loss; the folds score the other rows only
        # (the subsample trains every fold), so that the scores of the scaled views are
        # not those of the rows the scales were fitted to
        spec = self.feature_relevance
        n_complete = n if mask is None else int(mask.all(axis=1).sum())
        if isinstance(spec, str) and spec == "auto":  # learned where there are columns
            few = n_complete < RELEVANCE_MIN_ROWS  # and rows to learn on and to score
            spec = "none" if few or names_precomputed(self.kernel) else "ard"
        self.feature_relevance_, learned_rows = resolve_feature_relevance_rows(
            spec,
            Xs,
            Y,
            mask,
            self.kernel,
            self.random_state,
            max_rows=max(1, min(RELEVANCE_MAX_ROWS, n_complete // 4)),
        )
        flat = all(np.all(r == 1.0) for r in self.feature_relevance_ or ())
        if not flat:
            splits = _held_out_elsewhere(splits, learned_rows, n)
        return _SearchData(
            scale_views(Xs, self.feature_relevance_),
            y,
            mask,
            Y,
            y_score,
            splits,
            scorer,
            Xs_input=Xs,
            relevance=self.feature_relevance_,
            full=full,
        )

    def _search_size(self, Xs: Any, mask: np.ndarray | None, n: int) -> int | None:
        """The rows of the search's subsample (``max_search_rows``), None to search every
        row: in-memory complete views, column inputs (no precomputed kernel) and no
        landmark indices (they name rows of all the data)."""
        limit = self.max_search_rows
        if isinstance(limit, str):  # "auto"
            limit = SEARCH_MAX_ROWS
        if (
            limit is None
            or n <= limit
            or mask is not None
            or not data_part(Xs).in_memory
            or names_precomputed(self.kernel)
            or is_index_landmarks(self.landmarks)
        ):
            return None
        return int(limit)

    def _weighted_data(self, X: Any, y: Any, sample_weight: Any) -> _SearchData:
        """The search's data with ``sample_weight`` or ``class_weight`` (see :meth:`fit`):
        the rows of positive weight, their weights and the folds renumbered among them;
        either loss, no learned column scales."""
        # Dask views stay lazy (the rows of zero weight dropped by a lazy row selection)
        Xs_in, y_in, w_in, rows = weighted_input(X, y, sample_weight, self.views)
        n = Xs_in[0].shape[0]
        y_split = column_or_1d(y_in) if is_classifier(self) else None
        splitter = check_cv(self.cv, y_split, classifier=is_classifier(self))
        splits = [
            (np.asarray(tr), np.asarray(te)) for tr, te in splitter.split(np.zeros((n, 1)), y_split)
        ]
        Xs, y_kept, w = Xs_in, y_in, w_in
        if w is not None and rows is None and (w == 1.0).all():
            w = None  # unit weights: the unweighted statistics
        labels_seen = np.unique(column_or_1d(y_in)) if is_classifier(self) else None
        if rows is not None:
            Xs, y_kept, w = take_rows(Xs_in, rows), y_in[rows], w_in[rows]
        # missing views: the observed rows of each view among the rows kept
        mask = observed_mask(Xs, min_observed=MIN_OBSERVED_ROWS)
        Y, _, y_score = self._encode(y_kept)  # classifiers: at least 2 classes kept
        if rows is not None:
            refuse_dropped_rows_of_kernels(self.kernel)
            new = np.full(n, -1)
            new[rows] = np.arange(rows.size)
            splits = [(new[tr][new[tr] >= 0], new[te][new[te] >= 0]) for tr, te in splits]
            if any(tr.size < 2 or te.size == 0 for tr, te in splits):
                raise ValueError(
                    "a fold has no held-out row or fewer than 2 training rows of positive "
                    "sample_weight"
                )
        self._cv_rows, self._cv_n_in = rows, n
        lw = w
        cw = None
        if is_classifier(self):
            yi = np.searchsorted(self.classes_, column_or_1d(y_kept))
            cw = class_weight_of_rows(
                getattr(self, "class_weight", None), self.classes_, yi, w, labels_seen
            )
        if cw is not None and not (cw == 1.0).all():
            lw = cw if w is None else cw * w
        scorer = None if self.scoring is None else check_scoring(self, scoring=self.scoring)
        if not (
            isinstance(self.feature_relevance, str) and self.feature_relevance in ("none", "auto")
        ):
            raise ValueError(
                f"{type(self).__name__}: feature_relevance with sample_weight or class_weight "
                "is not supported yet; use feature_relevance='none' (or 'auto', which then "
                "searches 'none' alone)"
            )
        self.feature_relevance_ = None
        return _SearchData(
            Xs,
            y_kept,
            mask,
            Y,
            y_score,
            splits,
            scorer,
            Xs_input=Xs,
            relevance=None,
            sample_weight=w,
            loss_weight=lw,
            given=(Xs_in, y_in, w_in),
        )

    def _looped_axes(self) -> tuple[Axis, ...]:
        """The product axes the search runs one value at a time (``Axis(batched=False)``:
        each sets the CV estimator's parameter of its name for its run and for the refit),
        outermost in the grid, before the axes the scoring steps batch over
        (:attr:`_CVSearch.grid`). None by default; a new such axis is declared here and
        nothing else changes (``tests/mvml/cv/test_cv_grid.py`` declares one)."""
        return ()

    @contextmanager
    def _axis_values(self, values: dict[str, Any]) -> Iterator[None]:
        """This estimator's parameters set to ``values`` (the looped axes) inside the block."""
        before = {name: getattr(self, name) for name in values}
        self.set_params(**values)
        try:
            yield
        finally:
            self.set_params(**before)

    def _search_and_store(self, data: _SearchData) -> None:
        """Run the search of this estimator's part (:meth:`_current`) on ``data``'s folds and
        store ``cv_results_``, the best candidate and (classifiers with ``refit``) the
        calibration of the best candidate's held-out decision values. The scores are a
        :class:`~._grid.ScoreGrid` over the looped axes (:meth:`_looped_axes`, one search
        each) and the axes of :attr:`_CVSearch.grid`."""
        looped = self._looped_axes()
        # classifiers keep the held-out decision values of the best candidate (calibration_)
        self._oof = BestOutOfFold() if is_classifier(self) and self.refit else None
        cache = self.__dict__.get("_screen_cache")
        runs: dict[tuple[int, ...], _Run] = {}
        scores: ScoreGrid | None = None
        for combo in itertools.product(*(range(a.size) for a in looped)):
            at = {a.name: a.values[i] for a, i in zip(looped, combo)}
            if cache is not None and looped:  # each looped value its own screen
                self._screen_cache = cache.setdefault(("looped", combo), {})
            with self._axis_values(at):
                S, dim, n_landmarks_pair = self._prepare_search(data)
                if scores is None:
                    scores = ScoreGrid.empty(SearchGrid((*looped, *S.grid.axes)), S.n_splits)
                block = scores.fix(**{a.name: i for a, i in zip(looped, combo)})
                if block.grid.shape != S.grid.shape:
                    raise ValueError(
                        f"{type(self).__name__}: the grid changes with the looped axes {at}"
                    )
                with serial_blas(dim):
                    screen = self._search(S, block)
            runs[combo] = _Run(S, screen, self._joints, self._search_kernel, n_landmarks_pair, at)
        if cache is not None:
            self._screen_cache = cache
        assert scores is not None
        best = self._store_results(scores, runs)
        # what the refit reads of the best candidate's run (not its search: it holds the data)
        self._refit_at = (best.n_landmarks, best.looped)
        oof, self._oof = self._oof, None
        if oof is not None and np.isfinite(self.best_score_):  # (else every one abandoned)
            if oof.score != self.best_score_:  # the search's and the keeper's best differ
                raise RuntimeError("internal: out-of-fold values kept for another candidate")
            # one-vs-one: the pairs' held-out values, one Platt sigmoid per pair (as the
            # estimator's own probability=True)
            fit = fit_pairwise_calibration if best.search.pairs else fit_softmax_calibration
            calibrate = partial(oof.calibration, data.y_score, self.classes_, fit)
            if self._calibrate_later:  # a part: only the best part's is fitted
                self._calibrate = calibrate  # (by _adopt_union)
            else:
                self.calibration_ = calibrate()

    def _prepare_search(self, data: _SearchData) -> tuple[_CVSearch, int, tuple]:
        """The search's declaration on ``data`` at this estimator's parameters (the
        candidates, the searched views and kernel, the base bandwidths), the feature
        dimension its BLAS threads follow, and the landmark counts of the search (the
        joint-only candidate's second)."""
        Xs, mask, Y, y_score = data.Xs, data.mask, data.Y, data.y_score
        splits, scorer = data.splits, data.scorer
        n, v = Xs[0].shape[0], len(Xs)
        part = data_part(Xs)  # (the targets are on the client)
        dask_input = not part.in_memory
        alphas = self._grid(self.alphas, self._loss_search.alphas, "alphas")
        etas = (
            self._grid(self.etas, self._loss_search.etas, "etas")
            if self._learned()
            else np.array([np.nan])
        )

        # joint-view candidates: the searched views are the input views, plus the joint
        # view when it is a candidate (the other candidate drops its block)
        # the joint-only candidate: Nystrom mode on complete in-memory views
        only_ok = (
            self._loss_search.joint_only
            and self.n_landmarks is not None
            and not dask_input
            and mask is None
            and not names_precomputed(self.kernel)
        )
        pairs = None
        if self._current("multi_class") == "ovo" and len(self.classes_) > 2:
            pairs = ovo_pairs(len(self.classes_))
            if dask_input:
                raise ValueError(
                    f"{type(self).__name__}(multi_class='ovo') does not support Dask input "
                    "(the pairs' row subsets); use multi_class='ovr'"
                )
        joints = joint_candidates(self.joint_view, v, joint_only=only_ok)
        self._joints = joints
        kernel, kernel_params = self.kernel, self.kernel_params
        Xs_search = Xs
        if joints[-1]:
            Xs_search = joint_views(Xs, kernel)
            kernel, kernel_params = joint_kernel_spec(kernel, kernel_params, v)
        self._search_kernel = kernel
        # per-view base kernel parameters, then the bandwidth grid
        kernels = make_view_kernels(kernel, kernel_params, len(Xs_search))
        has_bandwidth = any(k.name in BANDWIDTH_KERNELS for k in kernels)
        factors = (
            self._grid(
                self.bandwidth_factors, self._loss_search.bandwidth_factors, "bandwidth_factors"
            )
            if has_bandwidth
            else np.array([1.0])
        )
        bandwidth_weight: Any = data.sample_weight
        if mask is None:
            bandwidth_views = Xs_search
        else:  # each view's bandwidth from its observed rows (the joint view: complete rows)
            search_mask = mask
            if len(Xs_search) > v:
                search_mask = np.column_stack([mask, mask.all(axis=1)])
            bandwidth_views = [Xv[search_mask[:, l]] for l, Xv in enumerate(Xs_search)]
            if bandwidth_weight is not None:  # each view's observed rows' weights
                bandwidth_weight = [bandwidth_weight[m] for m in search_mask.T]
        # thin products: the fit's BLAS threads (DataPart.fit_threads, as MVMLSVC's fit)
        with part.fit_threads(n):
            base_params = resolve_bandwidths(
                kernel,
                kernel_params,
                bandwidth_views,
                1.0,
                self.random_state,
                sample_weight=bandwidth_weight,
            )

        if self.n_landmarks is None:
            if dask_input:
                raise ValueError(
                    f"{type(self).__name__}: Dask input needs the Nystrom mode; set n_landmarks"
                )
            n_landmarks: Any = None
        elif isinstance(self.n_landmarks, str):
            budget = self._base_estimator()._cv_engine().auto_feature_budget
            n_landmarks = named_n_landmarks(self.n_landmarks, n, v, budget)
        else:
            n_landmarks = self.n_landmarks
        if n_landmarks is not None and is_index_landmarks(self.landmarks):
            n_in = self.__dict__.get("_cv_n_in") or n  # rows given to fit (weights drop some)
            check_landmark_count(self.n_landmarks, self.landmarks, n_in)
            n_landmarks = int(np.asarray(self.landmarks).size)  # the indices fix the count
        K = self.max_iter if self._learned() or self.learn_weights else 1
        n_landmarks_only = None
        if JOINT_ONLY in joints:  # its own capacity under "auto" (joint_only_landmarks)
            n_landmarks_only = (
                joint_only_landmarks(n)
                if isinstance(self.n_landmarks, str) and not is_index_landmarks(self.landmarks)
                else n_landmarks
            )
        search = _CVSearch(
            Xs=Xs_search,
            Y=Y,
            y_score=y_score,
            splits=splits,
            base_params=base_params,
            factors=factors,
            alphas=alphas,
            etas=etas,
            K=K,
            n_landmarks=n_landmarks,
            scorer=scorer,
            joints=joints,
            v_in=v,
            n_landmarks_only=n_landmarks_only,
            missing=mask is not None,
            learned=self._learned(),
            sample_weight=data.sample_weight,
            loss_weight=data.loss_weight,
            pairs=pairs,
        )
        if n_landmarks is None:
            dim = v * n
        elif isinstance(n_landmarks, Integral):
            dim = v * int(n_landmarks)
        else:
            dim = v * max(1, round(float(n_landmarks) * n))
        return search, dim, (n_landmarks, n_landmarks_only)

    def _refit(self, data: _SearchData) -> None:
        """Refit the best candidate of this estimator's search on all the rows
        (``best_estimator_``; with missing views, the reduced models of the patterns), at
        the best candidate's values of the looped axes."""
        with self._axis_values(self._refit_at[1]):
            self._refit_best(data)

    def _refit_best(self, data: _SearchData) -> None:
        Xs, y, mask = data.Xs, data.y, data.mask
        dask_input = not data_part(Xs).in_memory
        n_landmarks, n_landmarks_only = self._refit_at[0]
        if data.full is not None and isinstance(self.n_landmarks, str):
            # searched on a subsample: capacity that grows with the rows of the refit
            # (never fewer than the search's; the joint-only candidate's count, bounded by
            # its cost, would shrink)
            n_all, v = data.full[0][0].shape[0], len(data.full[0])
            budget = self._base_estimator()._cv_engine().auto_feature_budget
            grown = grown_n_landmarks(n_all, v, budget)
            n_landmarks = max(grown, int(n_landmarks))
            if n_landmarks_only is not None:
                n_landmarks_only = max(grown, int(n_landmarks_only))
        best = self.best_params_
        est = self._base_estimator().set_params(
            alpha=best["alpha"],
            kernel_params=self.best_kernel_params_,
            n_landmarks=n_landmarks,
            joint_view=self.best_joint_view_,
        )
        if self.best_joint_view_ == JOINT_ONLY:  # kernel ridge on the joint view
            est.set_params(metric="identity", learn_weights=False, n_landmarks=n_landmarks_only)
        elif self._learned():
            est.set_params(eta=best["eta"])
        if "max_iter" in best:
            est.set_params(max_iter=best["max_iter"])
        if data.relevance is not None:  # fixed: the refitted model scales the input views
            est.set_params(feature_relevance=data.relevance)
        if data.given is not None:  # weighted: the rows as given, zero weights included
            if is_classifier(self):
                est.set_params(class_weight=getattr(self, "class_weight", None))
            Xs_in, y_in, w_in = data.given
            self.best_estimator_ = est.fit(Xs_in, y_in, sample_weight=w_in)
        elif data.full is not None:  # every row, the relevance fixed (scaled in the fit)
            self.best_estimator_ = est.fit(*data.full)
        else:
            self.best_estimator_ = est.fit(data.Xs_input, y)  # the views validated above
        for name in ("n_features_in_", "feature_names_in_"):  # what predict checks
            if hasattr(self, name):
                setattr(self.best_estimator_, name, getattr(self, name))
        if mask is not None and self.missing_views == "reduced" and not dask_input:
            self.best_estimator_.reduced_models_ = fit_reduced_models(
                self, Xs, y, mask, data.sample_weight
            )

    def _search(self, S: _CVSearch, scores: ScoreGrid) -> ScreenResult | None:
        """Fill ``scores`` (the axes of ``S.grid``); return the screen of the (joint
        view, bandwidth factor) pairs, without its features, when the grid was screened
        (None: searched in full)."""
        if self._hopeless(S, np.zeros((1, 0))).all():  # an earlier part scored 1
            self._say("abandoned: an earlier part of the search has the best possible score")
            return None
        if self._screens(S):
            return self._screened_search(S, scores)
        for fi, f in enumerate(S.factors):
            kp = S.kernel_params(self._search_kernel, f)
            self._say(f"bandwidth factor {f:g} ({fi + 1}/{len(S.factors)}), {S.n_splits} folds")
            if S.n_landmarks is None:  # one fit per joint-view candidate
                for ji, joint in enumerate(S.joints):
                    part = self._score_full(S, kp if joint else kp[: S.v_in], joint)
                    scores.put(part, joint_view=ji, bandwidth_factor=fi)
            else:
                scores.put(self._score_nystrom(S, kp), bandwidth_factor=fi)
                if JOINT_ONLY in S.joints:
                    self._score_joint_only(S, fi, np.ones(S.alphas.size, dtype=bool), scores)
        return None

    def _say(self, msg: str) -> None:
        if self.verbose:
            print(f"[{type(self).__name__}] {msg}")

    # ------------------------------------------------------------------ results
    def _store_results(self, scores: ScoreGrid, runs: dict[tuple[int, ...], _Run]) -> _Run:
        """``cv_results_`` and the best candidate, from the search's named axes
        (``scores.grid``: the looped axes, then :attr:`_CVSearch.grid`). Candidates left
        out by the screening have NaN split / mean / std scores and rank after every
        scored candidate; with screening, ``screen_score`` and ``screen_squared_error``
        hold the screening score of each candidate's (joint view, bandwidth factor) pair
        and its leave-one-out squared error (the tie-break). Returns the run of the best
        candidate."""
        grid = scores.grid
        looped = tuple(a.name for a in grid.axes if not a.batched)
        screens = {combo: run.screen for combo, run in runs.items() if run.screen is not None}
        extra = ScreenResult.columns(screens, grid, looped) if screens else None
        self.cv_results_, self.best_index_ = scores.results(extra)
        self.best_params_ = dict(self.cv_results_["params"][self.best_index_])
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        at = scores.position(self.best_index_)
        run = runs[tuple(at[name] for name in looped)]
        self._joints, self._search_kernel = run.joints, run.kernel
        base_params, joints = run.search.base_params, run.joints
        best_joint = joints[at["joint_view"]]
        self.best_joint_view_ = best_joint if best_joint == JOINT_ONLY else bool(best_joint)
        best_kp = scale_bandwidths(
            self._search_kernel, base_params, self.best_params_["bandwidth_factor"]
        )
        n_in = len(base_params) - bool(joints[-1])
        if self.best_joint_view_ == JOINT_ONLY:
            self.best_kernel_params_ = best_kp[-1:]
        else:
            self.best_kernel_params_ = best_kp if self.best_joint_view_ else best_kp[:n_in]
        self.n_splits_ = scores.n_splits
        return run

    # ------------------------------------------------------------------ prediction
    def _check_refit(self) -> Any:
        check_is_fitted(self, "cv_results_")
        if not self.refit:
            raise AttributeError(
                f"{type(self).__name__} was fitted with refit=False: no model to predict with"
            )
        return self.best_estimator_

    def predict(self, X: Any) -> Any:
        """Predictions of the refitted best model."""
        return self._check_refit().predict(X)

"""The cross-validated search shared by the MVML CV estimators (:class:`_MVMLCVBase`)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, _fit_context, is_classifier
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ..._arrays import check_known_lengths
from ..._kernel_families import kernel_takes_sparse, names_precomputed
from ..._targets import one_vs_all_targets
from ..._threads import serial_blas
from ..._validation import validate_array_input
from .._data_part import data_part
from .._estimators import MVMLRegressor, check_n_classes
from .._metric import metric_kind
from .._multiclass import fit_pairwise_calibration
from .._proba import BestOutOfFold, fit_softmax_calibration
from ._data import _SearchData, search_data, weighted_data
from ._folds import FoldScorer, progress_printer
from ._grid import (
    LOSS_SEARCHES,
    PART_AXES,
    Axis,
    LossSearch,
    ScoreGrid,
    SearchGrid,
    _cv_constraints,
    part_axis,
)
from ._parts import PartSplit, search_parts
from ._prepare import prepare_search
from ._refit import refit_best
from ._results import _Run, search_results
from ._steps import score_candidates

__all__ = []


class _MVMLCVBase(BaseEstimator):
    """Shared cross-validation machinery (see the module docstring)."""

    #: the estimator searched for each loss this CV estimator offers
    _base_classes: dict[str, type[BaseEstimator]] = {"squared": MVMLRegressor}
    #: the loss this class searches when ``loss`` names it (others: a search apart each,
    #: :func:`~._parts.part_estimator`)
    _native_loss: str = "squared"
    #: a part of a search along the part axes: its probability calibration is kept as a
    #: callable and fitted only for the part chosen (:func:`~._parts.search_parts`)
    _calibrate_later: bool = False
    #: the best mean score of the earlier parts of a search along the part axes (None:
    #: none, or an axis that does not abandon, :class:`~._grid.PartAxis`); a candidate
    #: of this search is chosen only if it scores more (:attr:`FoldScorer.to_beat`)
    _to_beat: float | None = None
    #: beside earlier parts (with ``_to_beat``): the folds in the order they are run,
    #: the earlier parts' best candidate's worst fold first (None: in order,
    #: :attr:`FoldScorer.fold_order`)
    _fold_order: np.ndarray | None = None
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
        fit_intercept: bool | str = False,
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

    def _learned(self) -> bool:
        return metric_kind(self.metric).learned

    def _encode(self, y: Any) -> tuple[Any, Any, Any]:
        """``(Y, y_split, y_score)``: +-1 or real target columns, labels for the splitter,
        and the values scored against."""
        part = data_part(y=y)  # decided once: the labels / targets on the client
        y = part.to_client(y)
        if is_classifier(self):
            y = column_or_1d(np.asarray(y), warn=True)
            check_classification_targets(y)
            self.classes_, yi = np.unique(y, return_inverse=True)
            check_n_classes(self)  # the classifiers' check and messages
            Y = one_vs_all_targets(yi, len(self.classes_))
            return Y, y, y
        Y, single = part.with_client_targets().regression_targets(y)
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
            data = weighted_data(self, X, y, sample_weight)
        else:
            data = search_data(self, X, y)
        # the rows of the input kept (the landmark indices name rows of the input)
        self._cv_rows, self._cv_n_in = data.rows, data.n_in
        self.feature_relevance_ = data.relevance
        self.n_search_rows_ = int(data.Xs[0].shape[0])
        split = PartSplit.of(self)
        if split.names:  # one search per part, on the same folds; the best part's choices
            union = search_parts(self, data, split)
            for name, value in union.attributes().items():
                setattr(self, name, value)
            winner, data = union.winner, union.data
        else:  # the class's own loss and decomposition: this estimator searches
            self._part_values = dict(split.values[0])
            self._search_and_store(data)
            winner = self
        if self.refit:
            winner._refit(data)
            if winner is not self:
                self.best_estimator_ = winner.best_estimator_
            self.n_iter_ = self.best_estimator_.n_iter_
        else:
            self.n_iter_ = int(self.best_params_.get("max_iter", 1))
        self.cv_time_ = time.perf_counter() - t_start
        return self

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
                prep = prepare_search(self, data)
                S, self._joints, self._search_kernel = prep.search, prep.joints, prep.kernel
                if scores is None:
                    scores = ScoreGrid.empty(SearchGrid((*looped, *S.grid.axes)), S.n_splits)
                block = scores.fix(**{a.name: i for a, i in zip(looped, combo)})
                if block.grid.shape != S.grid.shape:
                    raise ValueError(
                        f"{type(self).__name__}: the grid changes with the looped axes {at}"
                    )
                with serial_blas(prep.dim):
                    screen = score_candidates(self._fold_scorer(), S, block)
            runs[combo] = _Run(S, screen, prep.joints, prep.kernel, prep.n_landmarks, at)
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
                self._calibrate = calibrate  # (by search_parts)
            else:
                self.calibration_ = calibrate()

    def _refit(self, data: _SearchData) -> None:
        """Refit the best candidate of this estimator's search on all the rows
        (``best_estimator_``; with missing views, the reduced models of the patterns), at
        the best candidate's values of the looped axes."""
        with self._axis_values(self._refit_at[1]):
            self.best_estimator_ = refit_best(self, data, self._refit_at[0])

    def _fold_scorer(self) -> FoldScorer:
        """The scoring steps' view of this estimator's run (:class:`FoldScorer`): its
        parameters, the searched estimator's class and parameters, and the run's state
        (after :func:`~._prepare.prepare_search`)."""
        est = self._base_estimator()
        return FoldScorer(
            search=self.search,
            n_finalists=self.n_finalists,
            fit_intercept=self._current("fit_intercept"),
            landmarks=self.landmarks,
            kernel=self.kernel,
            search_kernel=self._search_kernel,
            eig_floor=self.eig_floor,
            chunk_size=self.chunk_size,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
            classes=getattr(self, "classes_", None),
            loss=self._current_loss,
            loss_search=self._loss_search,
            learned=self._learned(),
            estimator_class=type(est),
            estimator_params=est.get_params(deep=False),
            rows=self.__dict__.get("_cv_rows"),
            n_in=self.__dict__.get("_cv_n_in"),
            oof=self._oof,
            to_beat=self._to_beat,
            fold_order=self._fold_order,
            screen_cache=self.__dict__.get("_screen_cache"),
            screen_key=tuple(
                (a.name, self._current(a.name)) for a in PART_AXES if a.changes_screen
            ),
            say=progress_printer(type(self).__name__, self.verbose),
        )

    def _say(self, msg: str) -> None:
        progress_printer(type(self).__name__, self.verbose)(msg)

    # ------------------------------------------------------------------ results
    def _store_results(self, scores: ScoreGrid, runs: dict[tuple[int, ...], _Run]) -> _Run:
        """Store ``cv_results_`` and the best candidate (:func:`search_results`); return
        the run of the best candidate."""
        results = search_results(scores, runs)
        for name, value in results.attributes().items():
            setattr(self, name, value)
        self._joints, self._search_kernel = results.run.joints, results.run.kernel
        return results.run

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

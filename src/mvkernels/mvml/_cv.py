"""Built-in model selection for the MVML family: :class:`MVMLClassifierCV`,
:class:`MVMLRegressorCV` and :class:`MVMLSVCCV`.

Like scikit-learn's ``RidgeCV`` / ``LogisticRegressionCV``, these estimators choose their
hyperparameters by cross-validation on the training data and refit the best model. They
search

* ``alpha`` (the paper's lambda) and, for learned metrics, ``eta``: log-spaced grids over
  the papers' ranges (lambda in [1e-8, 10], eta in [1e-3, 100]);
* a bandwidth factor ``f`` on the per-view default (Gaussian: ``gamma_l = f / (2 sigma_l^2)``
  with ``sigma_l`` the mean pairwise distance of view ``l``; Laplacian likewise); kernels
  without a bandwidth (linear, polynomial, precomputed, callables) are not rescaled;
* the number of outer iterations ``max_iter`` (1 .. ``max_iter``) along Algorithm 1's path
  (``tol=None``): every outer iteration's g-step is the final model of a fit with that many
  iterations, so this axis costs nothing.

How the work is shared (block Nystrom mode, square loss). For each bandwidth factor one
Nystrom map is fitted on all training rows (the same landmarks for every factor and
fold: only unlabelled rows enter it). Each held-out part is read once: its features give
its decision values and its sufficient statistics ``C_k = sum u u^T``, ``c_k = sum u y^T``;
a fold's training statistics are the total minus the held-out part
(:func:`complement_moments`), so a whole cross-validation is one pass over the data per
bandwidth. Per fold, ``D_w C D_w`` is factored once (:class:`~._lowrank.SharedSpectrum`) and
shared by every class, ``alpha``, ``eta`` and iteration: the dense-metric problems of a fold
run as one batch (:func:`~._lowrank.dense_metric_path`). Variants that break that
structure (sparse metric, learned weights) run the reference solver on the same fold
statistics; the hinge loss runs on the fold's features, computed once per fold
(:class:`MVMLSVCCV`: the learned dense paths of all ``eta`` of an ``alpha`` in one batch).
Full-kernel mode (``n_landmarks=None``) re-fits an estimator per candidate and fold.
With ``joint_view="auto"`` the map is fitted once with the joint view (last block) and the
candidate without it uses the leading blocks of the same features and statistics
(:mod:`._joint`). The third candidate of ``"auto"``, the joint view alone with the identity
metric (kernel ridge on the concatenation, ``joint_view="only"``), has a capacity of its
own (:func:`~._joint.joint_only_landmarks`: every row a landmark up to 3000 rows) and is
cross-validated apart (:meth:`_MVMLCVBase._score_joint_only`).
By default (``search="screen"``) the search runs in two named steps: every
(joint view, bandwidth factor) pair is screened by the exact leave-one-out score of
MVML_I on all the rows (:mod:`._screen`), and the steps above run only for the best
pairs (:meth:`_MVMLCVBase._screened_search`; :class:`MVMLSVCCV`: the best pair, at every
``alpha``).
"""

from __future__ import annotations

import itertools
import time
from contextlib import nullcontext
from dataclasses import dataclass, replace
from numbers import Integral
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    RegressorMixin,
    _fit_context,
    is_classifier,
)
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .._arrays import MIN_OBSERVED_ROWS, check_known_lengths, is_dask_collection, views_kind
from .._sparse import kernel_takes_sparse
from .._targets import predicted_class_indices, predicted_classes
from .._threads import serial_blas
from .._validation import check_views, observed_mask, take_rows, validate_array_input
from ..kernels import make_view_kernels
from ..nystrom import BlockNystrom, FeatureMoments, default_chunk_size, resolve_n_landmarks
from ._bandwidth import BANDWIDTH_KERNELS, resolve_bandwidths, scale_bandwidths
from ._estimators import (
    MVMLClassifier,
    MVMLRegressor,
    _BaseMVML,
    _mvml_constraints,
    auto_n_landmarks,
    regression_targets,
)
from ._joint import (
    JOINT_ONLY,
    drop_joint_block,
    joint_candidates,
    joint_kernel_spec,
    joint_only_landmarks,
    joint_views,
    leading_moments,
)
from ._metric import LEARNED_METRICS
from ._proba import BestOutOfFold, ProbaMixin
from ._problem import MVMLProblem
from ._reduced import fit_reduced_models
from ._screen import (
    MISSING_FINALISTS_FACTOR,
    N_FINALISTS,
    alpha_window,
    best_index,
    finalists,
    kernel_ridge_fold_outputs,
    ridge_fold_outputs,
    ridge_loo_outputs,
)
from ._svm import MVMLSVC

__all__ = [
    "MVMLClassifierCV",
    "MVMLRegressorCV",
    "MVMLSVCCV",
    "complement_moments",
    "DEFAULT_ALPHAS",
    "DEFAULT_ETAS",
    "DEFAULT_BANDWIDTH_FACTORS",
]

#: default ``alpha`` grid (the paper's lambda, searched in [1e-8, 10])
DEFAULT_ALPHAS = tuple(float(a) for a in np.logspace(-4, 1, 6))
#: default ``eta`` grid (the paper's range is [1e-3, 100]; above ~10 the step cap
#: ``mu < 0.499 / eta`` already collapses the metric to its rank-one part in a few steps)
DEFAULT_ETAS = tuple(float(e) for e in np.logspace(-3, 1, 5))
#: default bandwidth factors on the per-view mean-distance heuristic
DEFAULT_BANDWIDTH_FACTORS = (1.0, 2.0, 4.0, 8.0, 16.0)
#: MVMLSVCCV's defaults (every candidate runs the dual solver: a grid sized for it)
SVC_DEFAULT_ALPHAS = (1e-5, 1e-4, 1e-3)
SVC_DEFAULT_ETAS = (1e-2, 1.0)
SVC_DEFAULT_BANDWIDTH_FACTORS = (2.0, 8.0)


def complement_moments(total: FeatureMoments, part: FeatureMoments) -> FeatureMoments:
    """Statistics of the rows in ``total`` but not in ``part`` (a fold's training rows).

    Sums, Gram matrices and cross moments subtract. The centred scatter follows from
    the pairwise update of Chan, Golub & LeVeque run backwards: with ``a`` the
    complement, ``S_total = S_a + S_part + (n_a n_part / n) (m_part - m_a)(m_part - m_a)^T``.

    Parameters
    ----------
    total : FeatureMoments
        Statistics of all the rows.
    part : FeatureMoments
        Statistics of a subset of them.

    Returns
    -------
    FeatureMoments
    """

    def sub(x: np.ndarray | None, z: np.ndarray | None) -> np.ndarray | None:
        return None if x is None or z is None else x - z

    n_a = total.n_samples - part.n_samples
    if n_a <= 0:
        raise ValueError("a training fold is empty: every row is held out")
    s_a = total.sum - part.sum
    scatter = None
    if total.scatter is not None and part.scatter is not None:
        scatter = total.scatter - part.scatter
        if part.n_samples > 0:
            delta = part.sum / part.n_samples - s_a / n_a
            scatter = scatter - np.outer(delta, delta) * (n_a * part.n_samples / total.n_samples)
    return FeatureMoments(
        n_a,
        s_a,
        total.gram - part.gram,
        sub(total.cross, part.cross),
        sub(total.target_sum, part.target_sum),
        sub(total.target_gram, part.target_gram),
        scatter,
    ).symmetrize()


class _FrozenOutputs(BaseEstimator):
    """Stand-in estimator that returns precomputed outputs, for scikit-learn scorers."""

    def __init__(self, outputs: np.ndarray, classes: np.ndarray | None = None):
        self.outputs = outputs
        self.classes = classes
        if classes is not None:
            self.classes_ = classes

    def decision_function(self, X: Any) -> np.ndarray:
        D = self.outputs
        return D[:, 0] if D.shape[1] == 1 else D

    def predict(self, X: Any) -> np.ndarray:
        D = self.outputs
        if self.classes is None:
            return D[:, 0] if D.shape[1] == 1 else D
        return predicted_classes(D, self.classes)


class _FrozenClassifier(ClassifierMixin, _FrozenOutputs):
    pass


class _FrozenRegressor(RegressorMixin, _FrozenOutputs):
    pass


def _cv_constraints() -> dict:
    base = _mvml_constraints()
    for name in ("alpha", "eta", "tol", "solver"):
        base.pop(name)
    base.update(
        {
            "joint_view": ["boolean", StrOptions({"auto"})],
            "alphas": ["array-like", None],
            "etas": ["array-like", None],
            "bandwidth_factors": ["array-like", None],
            "cv": ["cv_object"],
            "scoring": [str, callable, None],
            "n_jobs": [Integral, None],
            "refit": ["boolean"],
            "verbose": ["verbose"],
            "search": [StrOptions({"screen", "exhaustive"})],
            "missing_views": [StrOptions({"reduced", "complete"})],
        }
    )
    return base


def _score_outputs(
    D: np.ndarray, y_te: np.ndarray, classes: np.ndarray | None, scorer: Any
) -> float:
    """Score of one candidate's held-out outputs ``D`` (n_te, T)."""
    if scorer is not None:
        Frozen = _FrozenClassifier if classes is not None else _FrozenRegressor
        return float(scorer(Frozen(D, classes), np.zeros((D.shape[0], 1)), y_te))
    if classes is not None:
        return float(np.mean(_FrozenOutputs(D, classes).predict(None) == y_te))
    r = y_te.reshape(D.shape) - D
    return float(np.mean(_r2_from_sums((r * r).sum(axis=0), y_te)))


def _r2_from_sums(sse: np.ndarray, y_te: np.ndarray) -> np.ndarray:
    """R^2 per output from residual sums of squares ``sse`` (..., k) and the held-out targets
    (n,) or (n, k) (an output of zero variance scores 1 if predicted exactly, else 0)."""
    Yt = y_te.reshape(y_te.shape[0], -1)
    sst = ((Yt - Yt.mean(axis=0)) ** 2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sst > 0, 1.0 - sse / sst, np.where(sse == 0, 1.0, 0.0))


@dataclass
class _CVSearch:
    """What every step of one cross-validated search reads, built once by ``fit``."""

    #: the searched views (with the joint view last when it is a candidate)
    Xs: list
    #: target columns (+-1 one-vs-all or real), and the values scored against
    Y: Any
    y_score: np.ndarray
    splits: list
    #: per-view kernel parameters at bandwidth factor 1, and the grids
    base_params: list
    factors: np.ndarray
    alphas: np.ndarray
    etas: np.ndarray
    #: longest path searched (outer iterations 1 .. K)
    K: int
    n_landmarks: Any
    scorer: Any
    #: joint-view candidates (grid order) and the number of input views
    joints: tuple
    v_in: int
    #: landmarks of the joint-only candidate (None: not searched)
    n_landmarks_only: int | None = None
    #: some training views have missing rows (the screen then keeps more finalists)
    missing: bool = False

    @property
    def n_splits(self) -> int:
        return len(self.splits)

    @property
    def multi_view(self) -> np.ndarray:
        """Boolean mask of the joint-view candidates other than the joint view alone (the
        screen ranks these; the joint-only candidate is cross-validated apart)."""
        return np.array([joint != JOINT_ONLY for joint in self.joints])

    @property
    def score_shape(self) -> tuple[int, ...]:
        """``(n_joint, n_factor, n_alpha, n_eta, K, n_splits)``."""
        return (
            len(self.joints),
            len(self.factors),
            self.alphas.size,
            self.etas.size,
            self.K,
            self.n_splits,
        )

    def kernel_params(self, kernel: Any, factor: float) -> list:
        """Per-view kernel parameters at one bandwidth factor."""
        return scale_bandwidths(kernel, self.base_params, factor)


class _MVMLCVBase(BaseEstimator):
    """Shared cross-validation machinery (see the module docstring)."""

    _base_class: type[_BaseMVML] = MVMLRegressor
    _default_alphas: tuple = DEFAULT_ALPHAS
    _default_etas: tuple = DEFAULT_ETAS
    _default_factors: tuple = DEFAULT_BANDWIDTH_FACTORS
    #: (joint view, bandwidth factor) pairs cross-validated after the screening
    _n_finalists: int = N_FINALISTS
    #: the ``alpha`` values of the leave-one-out screen; None: the searched ``alphas``,
    #: each finalist then cross-validated at its screening-best ``alpha`` and the grid
    #: neighbours (:func:`alpha_window`); a tuple: the finalists keep every ``alpha``
    _screen_alphas: tuple | None = None
    #: ties of the screening score broken by the leave-one-out squared error (True), or
    #: every pair tied with the last finalist cross-validated too (False)
    _screen_tiebreak: bool = True
    #: ``joint_view="auto"`` also searches the joint view alone (kernel ridge on the
    #: concatenation, :meth:`_score_joint_only`)
    _joint_only: bool = True
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
        missing_views: str = "reduced",
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
        self.missing_views = missing_views

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = isinstance(self.kernel, str) and self.kernel == "precomputed"
        tags.input_tags.sparse = kernel_takes_sparse(self.kernel)
        return tags

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
        )
        return self._base_class(tol=None, **{k: getattr(self, k) for k in names})

    @staticmethod
    def _grid(values: Any, default: tuple, name: str) -> np.ndarray:
        arr = np.asarray(default if values is None else values, dtype=np.float64).ravel()
        if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            raise ValueError(
                f"{name} must be a non-empty list of finite numbers > 0, got {values!r}"
            )
        return arr

    def _learned(self) -> bool:
        return self.metric in LEARNED_METRICS

    def _encode(self, y: Any) -> tuple[Any, Any, Any]:
        """``(Y, y_split, y_score)``: +-1 or real target columns, labels for the splitter,
        and the values scored against."""
        if is_classifier(self):
            if is_dask_collection(y):
                y = np.asarray(y.compute())
            y = column_or_1d(np.asarray(y), warn=True)
            check_classification_targets(y)
            self.classes_, yi = np.unique(y, return_inverse=True)
            MVMLClassifier._check_n_classes(self)  # same check and messages
            Y = MVMLClassifier._encode_targets(yi, len(self.classes_))
            return Y, y, y
        if is_dask_collection(y):
            y = np.asarray(y.compute())
        Y, single = regression_targets(y)
        return Y, None, Y[:, 0] if single else Y

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None) -> _MVMLCVBase:
        """Cross-validate the grid on ``(X, y)`` and (with ``refit``) refit the best model.

        ``X``: a list of views, or one array cut by ``views``; NumPy or Dask arrays
        (Nystrom mode). Dask views: the held-out parts are read as Dask row selections and
        their statistics come from Dask reductions; the labels ``y`` are brought to the
        client (one value per row).
        """
        t_start = time.perf_counter()
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        X = validate_array_input(self, X, reset=True)
        check_known_lengths(X)
        Xs = check_views(X, views=self.views, ensure_min_samples=2, allow_missing=True)
        n, v = Xs[0].shape[0], len(Xs)
        mask = observed_mask(Xs, min_observed=MIN_OBSERVED_ROWS)  # Dask: one pass
        Y, y_split, y_score = self._encode(y)
        if Y.shape[0] != n:
            raise ValueError(f"y has {Y.shape[0]} samples but the views have {n}")
        alphas = self._grid(self.alphas, self._default_alphas, "alphas")
        etas = (
            self._grid(self.etas, self._default_etas, "etas")
            if self._learned()
            else np.array([np.nan])
        )
        splitter = check_cv(self.cv, y_split, classifier=is_classifier(self))
        splits = [
            (np.asarray(tr), np.asarray(te)) for tr, te in splitter.split(np.zeros((n, 1)), y_split)
        ]
        dask_input = views_kind(Xs) == "dask"
        scorer = None if self.scoring is None else check_scoring(self, scoring=self.scoring)

        # joint-view candidates: the searched views are the input views, plus the joint
        # view when it is a candidate (the other candidate drops its block)
        # the joint-only candidate: Nystrom mode on complete in-memory views
        only_ok = (
            self._joint_only
            and self.n_landmarks is not None
            and not dask_input
            and mask is None
            and not (isinstance(self.kernel, str) and self.kernel == "precomputed")
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
            self._grid(self.bandwidth_factors, self._default_factors, "bandwidth_factors")
            if has_bandwidth
            else np.array([1.0])
        )
        if mask is None:
            bandwidth_views = Xs_search
        else:  # each view's bandwidth from its observed rows (the joint view: complete rows)
            search_mask = mask
            if len(Xs_search) > v:
                search_mask = np.column_stack([mask, mask.all(axis=1)])
            bandwidth_views = [Xv[search_mask[:, l]] for l, Xv in enumerate(Xs_search)]
        # thin products: one BLAS thread up to SERIAL_BLAS_MAX_SIZE rows (as MVMLSVC's fit)
        with nullcontext() if dask_input else serial_blas(n):
            base_params = resolve_bandwidths(
                kernel, kernel_params, bandwidth_views, 1.0, self.random_state
            )

        if self.n_landmarks is None:
            if dask_input:
                raise ValueError(
                    f"{type(self).__name__}: Dask input needs the Nystrom mode; set n_landmarks"
                )
            n_landmarks: Any = None
        elif isinstance(self.n_landmarks, str):
            n_landmarks = auto_n_landmarks(n, v, self._base_class._auto_feature_budget)
        else:
            n_landmarks = self.n_landmarks
        K = self.max_iter if self._learned() or self.learn_weights else 1
        n_landmarks_only = None
        if JOINT_ONLY in joints:  # its own capacity under "auto" (joint_only_landmarks)
            n_landmarks_only = (
                joint_only_landmarks(n) if isinstance(self.n_landmarks, str) else n_landmarks
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
        )
        scores = np.full(search.score_shape, np.nan)
        if n_landmarks is None:
            dim = v * n
        elif isinstance(n_landmarks, Integral):
            dim = v * int(n_landmarks)
        else:
            dim = v * max(1, round(float(n_landmarks) * n))
        # classifiers keep the held-out decision values of the best candidate (calibration_)
        self._oof = BestOutOfFold() if is_classifier(self) and self.refit else None
        with serial_blas(dim):
            screen = self._search(search, scores)
        self._store_results(search, scores, screen)
        oof, self._oof = self._oof, None
        if oof is not None:
            if oof.score != self.best_score_:  # the search's and the keeper's best differ
                raise RuntimeError("internal: out-of-fold values kept for another candidate")
            self.calibration_ = oof.calibration(y_score, self.classes_)
        if self.refit:
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
            self.best_estimator_ = est.fit(Xs, y)  # the views validated above
            for name in ("n_features_in_", "feature_names_in_"):  # what predict checks
                if hasattr(self, name):
                    setattr(self.best_estimator_, name, getattr(self, name))
            if mask is not None and self.missing_views == "reduced" and not dask_input:
                self.best_estimator_.reduced_models_ = fit_reduced_models(self, Xs, y, mask)
            self.n_iter_ = self.best_estimator_.n_iter_
        else:
            self.n_iter_ = int(self.best_params_.get("max_iter", 1))
        self.cv_time_ = time.perf_counter() - t_start
        return self

    def _search(self, S: _CVSearch, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Fill ``scores`` (``S.score_shape``); return the screening scores and
        leave-one-out squared errors, each ``(n_joint, n_factor)``, when the grid was
        screened (None: searched in full)."""
        if self._screens(S):
            return self._screened_search(S, scores)
        for fi, f in enumerate(S.factors):
            kp = S.kernel_params(self._search_kernel, f)
            self._say(f"bandwidth factor {f:g} ({fi + 1}/{len(S.factors)}), {S.n_splits} folds")
            if S.n_landmarks is None:  # one fit per joint-view candidate
                for ji, joint in enumerate(S.joints):
                    scores[ji, fi] = self._score_full(S, kp if joint else kp[: S.v_in], joint)
            else:
                scores[:, fi] = self._score_nystrom(S, kp)
                if JOINT_ONLY in S.joints:
                    self._score_joint_only(S, fi, np.ones(S.alphas.size, dtype=bool), scores)
        return None

    def _say(self, msg: str) -> None:
        if self.verbose:
            print(f"[{type(self).__name__}] {msg}")

    # ------------------------------------------------------------------ screening
    def _screens(self, S: _CVSearch) -> bool:
        """Screening applies in Nystrom mode on in-memory views when the grid has more
        (joint view, bandwidth factor) pairs than finalists (the joint-only candidate's
        pairs not counted: it is cross-validated apart)."""
        n_pairs = int(S.multi_view.sum()) * len(S.factors)
        return (
            self.search == "screen"
            and S.n_landmarks is not None
            and views_kind(S.Xs) != "dask"
            and n_pairs > self._finalist_count(S)
        )

    def _finalist_count(self, S: _CVSearch) -> int:
        """Pairs kept by the screen: ``_n_finalists``, times ``MISSING_FINALISTS_FACTOR``
        when training views have missing rows (:mod:`._screen`)."""
        return self._n_finalists * (MISSING_FINALISTS_FACTOR if S.missing else 1)

    def _screened_search(self, S: _CVSearch, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Step 1: every (joint view, factor) pair scored by MVML_I's leave-one-out error
        on all the rows at every ``alpha`` (:mod:`._screen`); step 2: the
        ``_n_finalists`` best pairs (ties of the score broken by the smaller
        leave-one-out squared error, :func:`finalists`) cross-validated in full, each at its
        screening-best ``alpha`` and the grid neighbours (:func:`alpha_window`), or at
        every ``alpha`` when the screen has its own grid (``_screen_alphas``). The
        other candidates keep NaN scores."""
        own_grid = self._screen_alphas is not None
        n_keep = self._finalist_count(S)
        screen_alphas = np.asarray(self._screen_alphas) if own_grid else S.alphas
        screen = np.full((len(S.joints), len(S.factors)), -np.inf)
        # ties on the score (leave-one-out accuracy ties often) go to the smaller
        # leave-one-out squared error of the outputs
        closeness = np.full(screen.shape, -np.inf)
        tiebreak = closeness if self._screen_tiebreak else None
        best_alpha = np.zeros(screen.shape, dtype=int)
        kept: dict[int, tuple[BlockNystrom, np.ndarray]] = {}
        Y = np.asarray(S.Y)
        # the joint-only candidate is screened on the joint block of the same features
        # (its factor and alpha window), then cross-validated apart (_score_joint_only)
        only = ~S.multi_view
        for fi, f in enumerate(S.factors):
            nys = self._fit_map(S, S.kernel_params(self._search_kernel, f))
            U = nys.transform(S.Xs)
            d_in = S.v_in * nys.n_landmarks_
            for ji, joint in enumerate(S.joints):
                if joint == JOINT_ONLY:
                    Uj, n_blocks = U[:, d_in:], 1
                elif joint or len(S.Xs) == S.v_in:
                    Uj, n_blocks = U, len(S.Xs)
                else:
                    Uj, n_blocks = U[:, :d_in], S.v_in
                loo = ridge_loo_outputs(Uj, Y, screen_alphas, n_blocks)
                per_alpha = np.array([self._loo_score(D, S) for D in loo])
                per_alpha[~np.isfinite(per_alpha)] = -np.inf
                with np.errstate(invalid="ignore", over="ignore"):
                    close = -np.mean((loo - Y[None]) ** 2, axis=(1, 2))
                close[~np.isfinite(close)] = -np.inf
                best_alpha[ji, fi] = best_index(per_alpha, close)
                screen[ji, fi] = per_alpha[best_alpha[ji, fi]]
                closeness[ji, fi] = close[best_alpha[ji, fi]]
            self._say(f"screened bandwidth factor {f:g}: {screen[:, fi]}")
            kept[fi] = (nys, U)  # features of the factors that are finalists so far
            so_far = np.asarray(
                finalists(np.where(only[:, None], -np.inf, screen), n_keep, tiebreak).any(axis=0)
            )
            for k in [k for k in kept if not so_far[k]]:
                del kept[k]
        best = finalists(np.where(only[:, None], -np.inf, screen), n_keep, tiebreak)
        for fi in map(int, np.flatnonzero(best.any(axis=0))):
            sel = (
                np.ones(S.alphas.size, dtype=bool)
                if own_grid
                else alpha_window(S.alphas, best_alpha[best[:, fi], fi])
            )
            self._say(f"cross-validating bandwidth factor {S.factors[fi]:g}")
            part = self._score_nystrom(
                replace(S, alphas=S.alphas[sel]),
                S.kernel_params(self._search_kernel, S.factors[fi]),
                joint_mask=best[:, fi],
                fitted=kept[fi],
            )
            scores[:, fi][:, sel] = part
        for ji in map(int, np.flatnonzero(only)):
            fi = best_index(screen[ji], closeness[ji])
            self._say(f"cross-validating the joint view alone, bandwidth factor {S.factors[fi]:g}")
            self._score_joint_only(S, fi, alpha_window(S.alphas, best_alpha[ji, fi]), scores)
        return screen, -closeness

    def _score_joint_only(self, S: _CVSearch, fi: int, sel: np.ndarray, scores: np.ndarray) -> None:
        """Cross-validate the joint-only candidate (``joint_view="only"``, identity metric:
        kernel ridge on the concatenated views, :mod:`._joint`) at bandwidth factor
        ``S.factors[fi]`` and the ``alphas`` selected by ``sel``, on the search's folds.

        Its own Nystrom map of ``S.n_landmarks_only`` landmarks on the joint view (every
        row up to 3000 rows, then a cost-bounded count), fitted once on all rows as
        the other candidates' maps; per fold and ``alpha`` one Cholesky factorisation of
        the training Gram matrix (:func:`~._screen.ridge_fold_outputs`). The scores go to
        the first ``eta`` and iteration of its row of ``scores`` (the identity metric has
        neither); the other entries of that row stay NaN."""
        ji = S.joints.index(JOINT_ONLY)
        kernel = self._search_kernel
        kernel = kernel[-1] if isinstance(kernel, (list, tuple)) else kernel
        kernel_params = S.kernel_params(self._search_kernel, S.factors[fi])[-1:]
        Xj, Y, alphas = S.Xs[-1:], np.asarray(S.Y), S.alphas[sel]
        n = Xj[0].shape[0]
        if resolve_n_landmarks(S.n_landmarks_only, n) >= n:
            # every row a landmark: U U^T = K, so the kernel form (no factorisation of K)
            kern = make_view_kernels(kernel, kernel_params, 1)[0]
            kern.fit(Xj[0], random_state=check_random_state(self.random_state))
            outs = kernel_ridge_fold_outputs(kern(Xj[0], Xj[0]), Y, S.splits, alphas)
        else:
            nys = self._fit_map(S, kernel_params, Xj, kernel, S.n_landmarks_only)
            outs = ridge_fold_outputs(nys.transform(Xj), Y, S.splits, alphas)
        classes = getattr(self, "classes_", None)
        part = np.array(
            [
                [
                    _score_outputs(D[ai], S.y_score[te], classes, S.scorer)
                    for D, (_, te) in zip(outs, S.splits)
                ]
                for ai in range(alphas.size)
            ]
        )  # (n_alpha_sel, n_splits)
        block = scores[ji, fi, :, 0, 0]
        block[sel] = part
        if getattr(self, "_oof", None) is not None:
            self._oof.offer(part, lambda c: [(te, D[c]) for D, (_, te) in zip(outs, S.splits)])

    def _loo_score(self, D: np.ndarray, S: _CVSearch) -> float:
        """Score of the leave-one-out outputs ``D`` (n, T) of all the rows (-inf when a
        row has none)."""
        if not np.all(np.isfinite(D)):
            return -np.inf
        return _score_outputs(D, S.y_score, getattr(self, "classes_", None), S.scorer)

    # ------------------------------------------------------------------ scoring
    def _candidate_scores(
        self, U: Any, y_te: np.ndarray, GW: np.ndarray, scorer: Any
    ) -> np.ndarray:
        """Scores of every candidate on one held-out part.

        ``GW``: ``(n_cand, T, d)`` weighted coefficients ``w (.) g`` (decision values
        ``U @ GW[c].T``). Default scoring (accuracy / R^2) is accumulated over row
        chunks (Dask blocks run on the workers); a custom ``scoring`` materialises one
        candidate's outputs at a time.
        """
        n_cand, T, d = GW.shape
        classes = getattr(self, "classes_", None)
        if scorer is not None:
            if is_dask_collection(U):
                U = np.asarray(U.compute())
            return np.array(
                [_score_outputs(U @ GW[c].T, y_te, classes, scorer) for c in range(n_cand)]
            )
        flat = GW.reshape(n_cand * T, d).T

        def stats(Ub: np.ndarray, yb: np.ndarray) -> np.ndarray:
            D = (Ub @ flat).reshape(Ub.shape[0], n_cand, T)
            if classes is not None:
                pred = predicted_class_indices(D)
                yi = np.searchsorted(classes, yb)
                return (pred == yi[:, None]).sum(axis=0).astype(np.float64)
            r = yb.reshape(yb.shape[0], 1, -1) - D
            return (r * r).sum(axis=0)  # (n_cand, T)

        if is_dask_collection(U):
            import dask

            bounds = np.cumsum((0,) + U.chunks[0])
            parts = [
                dask.delayed(stats)(blk, y_te[bounds[i] : bounds[i + 1]])
                for i, blk in enumerate(U.to_delayed().ravel())
            ]
            acc = np.sum(dask.compute(*parts), axis=0)
        else:
            chunk = default_chunk_size(max(n_cand * T, d))
            acc = np.zeros(n_cand if classes is not None else (n_cand, T))
            for s in range(0, U.shape[0], chunk):
                acc += stats(U[s : s + chunk], y_te[s : s + chunk])
        m = y_te.shape[0]
        if classes is not None:
            return acc / m
        return _r2_from_sums(acc, y_te).mean(axis=1)  # uniform average over outputs

    # ------------------------------------------------------------------ Nystrom CV
    def _fit_map(
        self,
        S: _CVSearch,
        kernel_params: list,
        Xs: list | None = None,
        kernel: Any = None,
        n_landmarks: Any = None,
    ) -> BlockNystrom:
        """The Nystrom map of one bandwidth (all training rows, every fold); by default of
        the searched views with the search's kernel and landmark count."""
        nys = BlockNystrom(
            kernel=self._search_kernel if kernel is None else kernel,
            kernel_params=kernel_params,
            n_landmarks=S.n_landmarks if n_landmarks is None else n_landmarks,
            landmarks=self.landmarks,
            eig_floor=self.eig_floor,
            chunk_size=self.chunk_size,
            random_state=self.random_state,
        )
        nys._fit_views(S.Xs if Xs is None else Xs, view_statistics=False)
        return nys

    def _score_nystrom(
        self,
        S: _CVSearch,
        kernel_params: list,
        joint_mask: np.ndarray | None = None,
        fitted: tuple[BlockNystrom, np.ndarray] | None = None,
    ) -> np.ndarray:
        """Scores ``(n_joint, n_alpha, n_eta, K, n_splits)`` of one bandwidth. With a
        joint-view candidate ``S.Xs`` holds the joint view last; the candidate without it
        uses the same features minus the joint block (same landmarks, statistics
        restricted). ``joint_mask``: the joint-view candidates to score (others: NaN);
        ``fitted``: the map and the features of all rows, when already computed."""
        Xs, Y, y_score, splits = S.Xs, S.Y, S.y_score, S.splits
        alphas, etas, K, scorer, v_in = S.alphas, S.etas, S.K, S.scorer, S.v_in
        # the joint-only candidate is scored apart
        joint_mask = S.multi_view if joint_mask is None else joint_mask & S.multi_view
        nys, U_all = fitted if fitted is not None else (self._fit_map(S, kernel_params), None)
        dask_input = views_kind(Xs) == "dask"
        n = Xs[0].shape[0]
        if U_all is None and not dask_input:  # in memory: every row's features, once
            U_all = nys.transform(Xs)
        # held-out parts: features (for scoring) and statistics, each row read once
        test_U, test_mom = [], []
        for _, te in splits:
            if U_all is None:  # Dask views
                Xte = take_rows(Xs, te)
                test_U.append(nys.transform(Xte))
                test_mom.append(nys.moments(Xte, Y[te]).symmetrize())
            else:
                U = U_all[te]
                test_U.append(U)
                test_mom.append(FeatureMoments.from_features(U, Y[te]))
        all_te = np.sort(np.concatenate([te for _, te in splits]))
        partition = (
            all_te.size == n
            and np.array_equal(all_te, np.arange(n))
            and all(tr.size + te.size == n for tr, te in splits)
        )
        total = None
        if partition:
            total = test_mom[0]
            for mom in test_mom[1:]:
                total = total.merge(mom)
        out = np.full((len(S.joints), alphas.size, etas.size, K, len(splits)), np.nan)
        kept: list | None = [] if getattr(self, "_oof", None) is not None else None
        small = drop_joint_block(nys, v_in)
        d_in = v_in * int(nys.n_landmarks_)
        loss = self._base_estimator()._make_loss()

        def fold(k: int, tr: np.ndarray, te: np.ndarray) -> list[tuple]:
            """Scores of every candidate on fold ``k`` (and what the held-out keeper needs)."""
            if partition:
                mom_all = complement_moments(total, test_mom[k])
            else:
                mom_all = nys.moments(take_rows(Xs, tr), Y[tr]).symmetrize()
            results = []
            for ji, joint in enumerate(S.joints):
                if not joint_mask[ji]:
                    continue
                if joint or len(Xs) == v_in:
                    mom, nys_j, Xj, U_te = mom_all, nys, Xs, test_U[k]
                else:  # the same features without the joint block
                    mom, nys_j, Xj = leading_moments(mom_all, d_in), small, Xs[:v_in]
                    U_te = test_U[k][:, :d_in]
                problem = MVMLProblem.from_moments(mom, nys_j, Y[tr])
                Xtr = take_rows(Xj, tr)
                if loss.needs_rows and dask_input:  # e.g. the hinge loss: no statistics
                    problem.U = np.asarray(nys_j.transform(Xtr).compute())
                rows = None
                if U_all is not None and tr.size < U_te.shape[1]:  # fewer rows than features
                    rows = U_all[tr] if U_te.shape[1] == U_all.shape[1] else U_all[tr, :d_in]
                GW, basis = self._fold_paths(problem, nys_j, Xtr, alphas, etas, K, rows)
                U = U_te if basis is None else U_te @ basis
                GW = GW.reshape(-1, *GW.shape[-2:])
                sc = self._candidate_scores(U, y_score[te], GW, scorer)
                results.append((ji, sc.reshape(alphas.size, etas.size, K), (ji, te, U, GW)))
            return results

        # folds in parallel threads (n_jobs; BLAS is single-threaded inside the search);
        # Dask views keep one fold at a time (their work is already parallel), and so does
        # a loss whose solver is not thread-safe (the hinge loss: liblinear's random number
        # generator is process-wide, so threads would make its coordinate order, hence the
        # last digits, depend on scheduling)
        n_jobs = 1 if dask_input or not loss.thread_safe else self.n_jobs
        per_fold = Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(fold)(k, tr, te) for k, (tr, te) in enumerate(splits)
        )
        for k, results in enumerate(per_fold):
            for ji, sc, item in results:
                out[ji, ..., k] = sc
                if kept is not None:
                    kept.append(item)
        if kept is not None:  # held-out decision values of this block's best candidate
            per_joint = alphas.size * etas.size * K  # candidates are joint-major
            self._oof.offer(
                out.reshape(-1, len(splits)),
                lambda c: [
                    (te, U @ GW[c % per_joint].T) for ji, te, U, GW in kept if ji == c // per_joint
                ],
            )
        return out

    def _fold_paths(
        self,
        problem: MVMLProblem,
        nys: BlockNystrom,
        Xtr: list,
        alphas: np.ndarray,
        etas: np.ndarray,
        K: int,
        rows: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Weighted coefficients ``w (.) g`` of every candidate on one fold, shape
        ``(n_alpha, n_eta, K, T, d)``, and the basis they are expressed in: the one seam
        through which the estimator's loss supplies fold paths
        (:meth:`~mvkernels.mvml._losses.Loss.fold_paths`; ``nys``, the fold's map, is not
        read there). ``rows``: the fold's training features when it has fewer rows than
        features."""
        est = self._base_estimator()
        return est._make_loss().fold_paths(est, problem, Xtr, alphas, etas, K, rows)

    # ------------------------------------------------------------------ full-kernel CV
    def _score_full(self, S: _CVSearch, kernel_params: list, joint: bool = False) -> np.ndarray:
        """Full-kernel mode: per fold, the kernels are built once and every candidate
        runs the reference solver on them (its path scored at every iteration)."""
        Xs, Y, y_score, splits = S.Xs[: S.v_in], S.Y, S.y_score, S.splits
        alphas, etas, K, scorer = S.alphas, S.etas, S.K, S.scorer
        out = np.full((alphas.size, etas.size, K, len(splits)), np.nan)
        precomputed = isinstance(self.kernel, str) and self.kernel == "precomputed"
        classes = getattr(self, "classes_", None)
        kept: list | None = [] if getattr(self, "_oof", None) is not None else None
        for k, (tr, te) in enumerate(splits):
            if precomputed:
                Xtr = [Kv[np.ix_(tr, tr)] for Kv in Xs]
                Xte = [Kv[np.ix_(te, tr)] for Kv in Xs]
            else:
                Xtr, Xte = take_rows(Xs, tr), take_rows(Xs, te)
            if joint:
                Xte = joint_views(Xte, self.kernel)
            est = self._base_estimator().set_params(
                kernel_params=kernel_params, n_landmarks=None, views=None, joint_view=joint
            )
            est._check_params()
            problem = est._build_problem(Xtr, Y[tr])
            if kept is not None:
                kept.append((te, np.zeros((alphas.size, etas.size, K, te.size, Y.shape[1]))))
            for ai, a in enumerate(alphas):
                for ei, e in enumerate(etas):
                    est.set_params(alpha=float(a))
                    if self._learned():
                        est.set_params(eta=float(e))
                    res = est._solve(problem, record_path=True)
                    for it in range(K):
                        Gw = np.stack(
                            [
                                (
                                    r["path"][min(it, len(r["path"]) - 1)].reshape(
                                        problem.n_views, -1
                                    )
                                    * r["path_w"][min(it, len(r["path"]) - 1)][:, None]
                                )
                                for r in res
                            ]
                        )
                        D = est._full_outputs(Gw).outputs(Xte)
                        out[ai, ei, it, k] = _score_outputs(D, y_score[te], classes, scorer)
                        if kept is not None:
                            kept[-1][1][ai, ei, it] = D
        if kept is not None:
            self._oof.offer(
                out.reshape(-1, len(splits)),
                lambda c: [(te, D.reshape(-1, *D.shape[-2:])[c]) for te, D in kept],
            )
        return out

    # ------------------------------------------------------------------ results
    def _store_results(
        self, S: _CVSearch, scores: np.ndarray, screen: tuple[np.ndarray, np.ndarray] | None
    ) -> None:
        """``cv_results_`` and the best candidate. Candidates left out by the screening
        have NaN split / mean / std scores and rank after every scored candidate; with
        screening, ``screen_score`` and ``screen_squared_error`` hold the screening score
        of each candidate's (joint view, bandwidth factor) pair and its leave-one-out
        squared error (the tie-break)."""
        factors, alphas, etas, K, base_params = S.factors, S.alphas, S.etas, S.K, S.base_params
        learned = self._learned()
        n_splits = scores.shape[-1]
        joints = self._joints
        params: list[dict[str, Any]] = []
        cols: dict[str, list] = {"bandwidth_factor": [], "alpha": []}
        if len(joints) > 1:
            cols = {"joint_view": [], **cols}
        if learned:
            cols["eta"] = []
        if K > 1:
            cols["max_iter"] = []
        flat_scores = []
        screened: list[tuple[float, float]] = []
        for (ji, joint), (fi, f), (ai, a), (ei, e), it in itertools.product(
            enumerate(joints), enumerate(factors), enumerate(alphas), enumerate(etas), range(K)
        ):
            p: dict[str, Any] = {"bandwidth_factor": float(f), "alpha": float(a)}
            if len(joints) > 1:
                p = {"joint_view": joint if joint == JOINT_ONLY else bool(joint), **p}
            if learned:
                p["eta"] = float(e)
            if K > 1:
                p["max_iter"] = it + 1
            params.append(p)
            for key in cols:
                cols[key].append(p[key])
            flat_scores.append(scores[ji, fi, ai, ei, it])
            if screen is not None:
                screened.append((screen[0][ji, fi], screen[1][ji, fi]))
        Sc = np.asarray(flat_scores)  # (n_candidates, n_splits)
        mean = Sc.mean(axis=1)
        std = Sc.std(axis=1)
        finite = np.where(np.isfinite(mean), mean, -np.inf)
        order = np.argsort(-finite, kind="stable")
        rank = np.empty(len(mean), dtype=np.int32)
        # equal scores share a rank (as GridSearchCV)
        rank[order] = np.searchsorted(-finite[order], -finite[order], side="left") + 1
        results: dict[str, Any] = {"params": params}
        for key, vals in cols.items():
            results[f"param_{key}"] = np.ma.MaskedArray(vals, mask=False)
        for k in range(n_splits):
            results[f"split{k}_test_score"] = Sc[:, k]
        results["mean_test_score"] = mean
        results["std_test_score"] = std
        results["rank_test_score"] = rank
        if screen is not None:
            results["screen_score"] = np.array([s for s, _ in screened])
            results["screen_squared_error"] = np.array([e for _, e in screened])
        self.cv_results_ = results
        # ties: the first candidate in grid order wins (no joint view, smaller factor, then
        # smaller alpha, eta, fewer iterations). Preferring the larger alpha instead was
        # measured on 40-row sets (uWave and digits, 4 classes, 5-6 draws): +0.15 and -0.35
        # points, so grid order stays
        self.best_index_ = int(order[0])
        self.best_params_ = dict(params[self.best_index_])
        self.best_score_ = float(mean[self.best_index_])
        best_joint = self.best_params_.get("joint_view", joints[0])
        self.best_joint_view_ = best_joint if best_joint == JOINT_ONLY else bool(best_joint)
        best_kp = scale_bandwidths(
            self._search_kernel, base_params, self.best_params_["bandwidth_factor"]
        )
        n_in = len(base_params) - bool(joints[-1])
        if self.best_joint_view_ == JOINT_ONLY:
            self.best_kernel_params_ = best_kp[-1:]
        else:
            self.best_kernel_params_ = best_kp if self.best_joint_view_ else best_kp[:n_in]
        self.n_splits_ = n_splits

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


class MVMLRegressorCV(RegressorMixin, _MVMLCVBase):
    """:class:`~mvkernels.MVMLRegressor` with built-in cross-validation of ``alpha``,
    ``eta``, the bandwidth and the number of outer iterations.

    Multi-output ``y`` (n, k): one set of hyperparameters for all outputs, chosen on the
    uniform average over outputs of the held-out R^2 (per fold, then averaged over folds);
    the refitted model has one problem per output (see :class:`~mvkernels.MVMLRegressor`).

    Parameters
    ----------
    alphas : array-like or None, default=None
        Candidate ``alpha`` (the paper's lambda); None: ``logspace(-4, 1, 6)``.
    etas : array-like or None, default=None
        Candidate ``eta`` for learned metrics; None: ``logspace(-3, 1, 5)``.
    bandwidth_factors : array-like or None, default=None
        Factors on the per-view default bandwidth parameter (``gamma_l = f / (2 sigma_l^2)``
        for Gaussian kernels); None: ``(1, 2, 4, 8, 16)``. Ignored for kernels without
        a bandwidth.
    cv : int, splitter or iterable, default=5
        As :func:`sklearn.model_selection.check_cv` (``KFold`` for regression,
        ``StratifiedKFold`` for classification; not shuffled).
    scoring : str, callable or None, default=None
        None: R^2 (regressors) or accuracy (classifiers), computed from the statistics
        of the held-out outputs; otherwise a scikit-learn scorer evaluated per candidate.
    n_jobs : int or None, default=None
        Number of threads for the cross-validation folds of the Nystrom-mode search
        (:class:`joblib.Parallel` with threads, ``None``: one, ``-1``: all cores; BLAS
        runs single-threaded inside the search, so the folds are what runs in parallel).
        The full-kernel search, Dask views and :class:`MVMLSVCCV` (liblinear's random
        number generator is process-wide) run one fold at a time. Results do not depend
        on it.
    refit : bool, default=True
        Refit the best candidate on all the data (``best_estimator_``).
    metric, learn_weights, n_landmarks, landmarks, kernel, kernel_params, max_iter, \
step_size, n_a_steps, sparse_threshold, eig_floor, chunk_size, views, random_state
        As :class:`~mvkernels.MVMLRegressor`; ``max_iter`` is the longest path searched.
    verbose : int, default=0
        Print one line per bandwidth factor.
    joint_view : "auto" or bool, default="auto"
        The joint view (:class:`~mvkernels.MVMLRegressor`'s ``joint_view``) as a grid
        dimension: ``"auto"`` scores three candidates in this order (ties keep the
        earlier): without the joint view, with it, and the joint view alone (only
        ``False`` for a single view); ``True`` / ``False`` fixes it (no joint-only
        candidate). The first two share the Nystrom map and the held-out statistics:
        the one without the joint view uses the leading blocks of the same features.
        The joint view alone (``joint_view="only"``, ``metric="identity"``: kernel ridge
        on the concatenated views, exactly when every row is a landmark) has its own
        capacity: with ``n_landmarks="auto"``,
        ``p_J = min(n, max(600, floor(sqrt(3000^3 / n))))`` landmarks (every training row
        up to 3000 rows; above, one ``O(n p_J^2)`` pass costs no more than at 3000 rows),
        else ``n_landmarks``. With ``search="screen"`` its
        bandwidth factor and ``alpha`` window come from the leave-one-out score of ridge on
        the screened features' joint block; it is cross-validated on the same folds, one
        Cholesky factorisation per fold and ``alpha`` (of the fold's kernel matrix when
        every row is a landmark). Its ``cv_results_`` rows are scored at the first
        ``eta`` and ``max_iter=1`` (NaN elsewhere), and when it wins ``best_estimator_``
        is ``MVMLRegressor(joint_view="only", metric="identity", n_landmarks=p_J)``.
        Searched in Nystrom mode on complete in-memory views that are not precomputed
        kernels.
    search : {"screen", "exhaustive"}, default="screen"
        ``"screen"``: every (``joint_view``, bandwidth factor) pair is first scored by the
        exact leave-one-out score of the fixed metric ``A = I`` on all the rows (one
        factorisation per pair, every ``alpha``), then the 2 best pairs are
        cross-validated in full at their screening-best ``alpha`` and its grid neighbours
        (see :mod:`mvkernels.mvml._screen`); the other candidates get NaN scores in
        ``cv_results_``. With missing views in the training rows the 4 best pairs are
        kept (the screen's fixed metric ranks the pairs less reliably on completed
        features). Applies in Nystrom mode on in-memory views when there are more pairs
        than kept ones; otherwise, and with ``"exhaustive"``, every candidate is
        cross-validated.
    missing_views : {"reduced", "complete"}, default="reduced"
        How samples with missing views (NaN rows) are predicted when the training rows
        have missing views. ``"reduced"``: a sample whose observed views are ``O`` is
        predicted by the model of the views ``O`` alone, fitted (with its own search,
        started from this one: its bandwidth factor and ``eta`` kept, ``alpha`` near its
        choice) on the training rows that observe any of them, one model per pattern of observed
        views present in the training rows (:mod:`mvkernels.mvml._reduced`; kept as
        ``best_estimator_.reduced_models_``); complete samples, and patterns no training
        row had, by the model of all the views. ``"complete"``: every sample by the model
        of all the views, its missing views' features completed by their conditional
        expectation. Dask views: ``"complete"``.

    Attributes
    ----------
    best_params_ : dict
        ``bandwidth_factor``, ``alpha``, for learned metrics ``eta`` and ``max_iter``, and
        ``joint_view`` when both candidates were searched.
    best_score_ : float
        Mean held-out score of the best candidate.
    best_kernel_params_ : list of dict
        The per-view kernel parameters of the best bandwidth (what ``best_estimator_`` uses;
        with the joint view selected, its parameters come last).
    best_joint_view_ : bool or "only"
        Whether the selected model has the joint view, or ``"only"`` for the joint view
        alone (``best_params_["joint_view"]`` when several were searched).
    cv_results_ : dict of arrays
        As ``GridSearchCV.cv_results_``: ``params``, ``param_*``, ``split{k}_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score``. Candidates left out
        by the screening (``search="screen"``) have NaN scores and rank after every scored
        one; ``screen_score`` (when the grid was screened) is the leave-one-out score of
        each candidate's (joint view, bandwidth factor) pair and ``screen_squared_error``
        its leave-one-out mean squared error of the outputs, which breaks ties of
        ``screen_score`` when the finalists are chosen.
    best_estimator_ : MVMLRegressor
        The refitted model (``refit=True``).
    n_iter_ : int or ndarray
        Outer iterations of ``best_estimator_`` (the selected ``max_iter`` without refit).
    best_index_, n_splits_, cv_time_

    See Also
    --------
    MVMLRegressor : The estimator whose hyperparameters are searched.
    MVMLClassifierCV : The same for classification.
    sklearn.model_selection.GridSearchCV : The generic search this one specialises.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X1, X2 = rng.normal(size=(40, 3)), rng.normal(size=(40, 2))
    >>> y = X1[:, 0] + np.sin(X2[:, 1])
    >>> from mvkernels import MVMLRegressorCV
    >>> reg = MVMLRegressorCV(cv=3).fit([X1, X2], y)
    >>> sorted(reg.best_params_)
    ['alpha', 'bandwidth_factor', 'eta', 'joint_view', 'max_iter']
    >>> reg.predict([X1, X2]).shape
    (40,)
    """

    _base_class = MVMLRegressor

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class MVMLClassifierCV(ProbaMixin, ClassifierMixin, _MVMLCVBase):
    """:class:`~mvkernels.MVMLClassifier` with built-in cross-validation.

    Parameters and attributes as :class:`MVMLRegressorCV` (default scoring: accuracy;
    ``StratifiedKFold`` folds), plus ``classes_``; ``best_estimator_`` is a fitted
    :class:`~mvkernels.MVMLClassifier`. All one-vs-all classes share the fold
    statistics, the factorisation and the hyperparameters.

    ``predict_proba`` / ``predict_log_proba`` (with ``refit=True``): ``softmax(a D(x))``
    of ``best_estimator_``'s decision values, the slope ``a`` (``calibration_``) fitted on
    the held-out decision values of the selected candidate, which the search computed
    anyway (no extra fit). The most probable class is the predicted one.

    Parameters
    ----------
    alphas, etas, bandwidth_factors, cv, scoring, n_jobs, refit, metric, learn_weights, \
n_landmarks, landmarks, kernel, kernel_params, max_iter, step_size, n_a_steps, \
sparse_threshold, eig_floor, chunk_size, views, random_state, verbose, joint_view, search, \
missing_views
        As :class:`MVMLRegressorCV`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    best_estimator_ : MVMLClassifier
        The refitted model (``refit=True``).
    best_params_, best_score_, best_kernel_params_, cv_results_, n_iter_, best_index_, \
n_splits_, cv_time_
        As :class:`MVMLRegressorCV`.

    See Also
    --------
    MVMLClassifier : The estimator whose hyperparameters are searched.
    MVMLRegressorCV : The same for regression (parameters and attributes).
    MVMLSVCCV : The same for the hinge loss.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X1, X2 = rng.normal(size=(40, 3)), rng.normal(size=(40, 2))
    >>> y = np.where(X1[:, 0] + X2[:, 0] > 0, "a", "b")
    >>> from mvkernels import MVMLClassifierCV
    >>> clf = MVMLClassifierCV(cv=3).fit([X1, X2], y)
    >>> clf.classes_
    array(['a', 'b'], dtype='<U1')
    >>> clf.best_estimator_.predict([X1, X2]).shape
    (40,)
    """

    _base_class: type = MVMLClassifier

    def _check_proba(self) -> None:
        """Probabilities are always available (they need ``refit=True`` at prediction)."""

    def _calibrated_decisions(self, X: Any) -> tuple[Any, Any]:
        est = self._check_refit()
        return self.calibration_, est._decision(X)

    def decision_function(self, X: Any) -> Any:
        """Outputs of ``best_estimator_``."""
        return self._check_refit().decision_function(X)


class MVMLSVCCV(MVMLClassifierCV):
    """:class:`~mvkernels.MVMLSVC` (hinge loss) with built-in cross-validation.

    As :class:`MVMLClassifierCV`: ``alpha`` x ``eta`` x bandwidth factor x outer
    iterations, with defaults sized for the hinge loss (every candidate runs the dual
    solver, the hinge loss has no sufficient statistics): ``alphas=(1e-5, 1e-4, 1e-3)``,
    ``etas=(0.01, 1)``, ``bandwidth_factors=(2, 8)``, ``max_iter=2`` (paths of 1 and 2
    outer iterations) and ``cv=3``: 24 candidates.

    How the work is shared: one Nystrom map per bandwidth factor (all folds), the fold's
    training features computed once and shared by every candidate; along each path every
    outer iteration is scored for free; with the learned dense metric the first g-step
    (metric ``A = I``) does not depend on ``eta`` and is solved once per ``alpha`` and
    class, and the A-steps of all ``eta`` x classes run as one low-rank batch. Along
    ``alpha`` (largest first) the first g-step's margins choose the next ``alpha``'s
    working set of rows (liblinear itself has no warm start; the result is exact, see
    :func:`~mvkernels.mvml._hinge.linear_svm_working_set`). The smallest default
    ``alpha`` is 1e-5: below it the g-step's ``C' = 1/(2 n alpha)`` makes the dual solver
    slow, and 1e-6 was never selected on the benchmark data (``docs/mvml_svm.md``).

    Parameters
    ----------
    alphas, etas, bandwidth_factors, scoring, n_jobs, refit, metric, learn_weights, \
n_landmarks, landmarks, kernel, kernel_params, step_size, n_a_steps, sparse_threshold, \
eig_floor, chunk_size, views, random_state, verbose, missing_views
        As :class:`MVMLClassifierCV`.
    search : {"screen", "exhaustive"}, default="screen"
        ``"screen"``: every (``joint_view``, bandwidth factor) pair is first scored by the
        exact leave-one-out accuracy of the fixed-metric ridge (MVML_I, square loss) on
        all the rows at its best ``alpha`` of the square loss's grid (``logspace(-4, 1,
        6)``: the hinge loss's ``alpha`` is on another scale), then the best pair only
        (the 2 best with missing views in the training rows) is cross-validated, at every
        ``alpha``, ``eta`` and iteration (the other candidates: NaN scores,
        ``screen_score`` in ``cv_results_``). Applies in Nystrom mode on in-memory views
        with more pairs than kept ones; ``"exhaustive"`` cross-validates every candidate.
    joint_view : bool or "auto", default=False
        As :class:`MVMLClassifierCV`, but off by default: every hinge-loss candidate runs
        its own solver (there are no sufficient statistics to share), so searching with
        and without the joint view doubles the search; pass ``"auto"`` to search it
        (with and without: no joint-only candidate here).
    cv : int, splitter or iterable, default=3
        As :class:`MVMLClassifierCV` (3 stratified folds by default).
    max_iter : int, default=2
        Longest path searched (outer iterations 1 .. ``max_iter``).

    Attributes
    ----------
    best_params_, best_score_, best_kernel_params_, cv_results_, best_estimator_, \
n_iter_, best_index_, n_splits_, cv_time_, classes_
        As :class:`MVMLClassifierCV`; ``best_estimator_`` is a fitted
        :class:`~mvkernels.MVMLSVC`.

    See Also
    --------
    MVMLSVC : The estimator whose hyperparameters are searched.
    MVMLClassifierCV : The same for the square loss.

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels import MVMLSVCCV
    >>> rng = np.random.RandomState(0)
    >>> X1, X2 = rng.randn(60, 3), rng.randn(60, 2)
    >>> y = (X1[:, 0] + X2[:, 0] > 0).astype(int)
    >>> cv = MVMLSVCCV(alphas=[1e-4, 1e-2], etas=[1.0], bandwidth_factors=[2.0]).fit([X1, X2], y)
    >>> sorted(cv.best_params_)
    ['alpha', 'bandwidth_factor', 'eta', 'max_iter']
    """

    _base_class = MVMLSVC
    _default_alphas = SVC_DEFAULT_ALPHAS
    _default_etas = SVC_DEFAULT_ETAS
    _default_factors = SVC_DEFAULT_BANDWIDTH_FACTORS
    # the screen chooses the bandwidth only: one finalist pair, scored by the ridge's
    # leave-one-out error over the square loss's alpha grid (the hinge loss's alpha is on
    # another scale), then cross-validated at every searched alpha
    _n_finalists = 1
    _screen_alphas = DEFAULT_ALPHAS
    # the square loss's leave-one-out error is a weaker guide between bandwidths tied on
    # its accuracy for the hinge loss: tied bandwidths are all cross-validated (on uWave
    # the tie-break picked a bandwidth 0.6 points worse in test accuracy)
    _screen_tiebreak = False
    # no joint-only candidate: the hinge loss has no shared factorisation to run it cheaply
    _joint_only = False

    def __init__(
        self,
        *,
        alphas: Any = None,
        etas: Any = None,
        bandwidth_factors: Any = None,
        cv: Any = 3,
        scoring: Any = None,
        n_jobs: int | None = None,
        refit: bool = True,
        metric: str = "dense",
        learn_weights: bool = False,
        n_landmarks: int | float | str | None = "auto",
        landmarks: str = "uniform",
        kernel: Any = "rbf",
        kernel_params: Any = None,
        max_iter: int = 2,
        step_size: float | str = "auto",
        n_a_steps: int = 1,
        sparse_threshold: str = "mu_eta",
        eig_floor: float = 1e-10,
        chunk_size: int | None = None,
        views: Any = None,
        random_state: Any = None,
        verbose: int = 0,
        joint_view: bool | str = False,
        search: str = "screen",
        missing_views: str = "reduced",
    ):
        super().__init__(
            alphas=alphas,
            etas=etas,
            bandwidth_factors=bandwidth_factors,
            cv=cv,
            scoring=scoring,
            n_jobs=n_jobs,
            refit=refit,
            metric=metric,
            learn_weights=learn_weights,
            n_landmarks=n_landmarks,
            landmarks=landmarks,
            kernel=kernel,
            kernel_params=kernel_params,
            max_iter=max_iter,
            step_size=step_size,
            n_a_steps=n_a_steps,
            sparse_threshold=sparse_threshold,
            eig_floor=eig_floor,
            chunk_size=chunk_size,
            views=views,
            random_state=random_state,
            verbose=verbose,
            joint_view=joint_view,
            search=search,
            missing_views=missing_views,
        )

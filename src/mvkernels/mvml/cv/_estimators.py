"""The MVML CV estimators: :class:`MVMLRegressorCV`, :class:`MVMLClassifierCV` and
:class:`MVMLSVCCV`."""

from __future__ import annotations

from typing import Any

from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import StrOptions

from .._estimators import MVMLClassifier, MVMLRegressor
from .._proba import ProbaMixin
from .._svm import MVMLSVC
from ._grid import _cv_constraints
from ._search import _MVMLCVBase

__all__ = ["MVMLClassifierCV", "MVMLRegressorCV", "MVMLSVCCV"]


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
        factorisation per pair, every ``alpha``), then the ``n_finalists`` best pairs are
        cross-validated in full at their screening-best ``alpha`` and its grid neighbours
        (see :mod:`mvkernels.mvml._screen`); the other candidates get NaN scores in
        ``cv_results_``. With missing views in the training rows twice as many pairs are
        kept (the screen's fixed metric ranks the pairs less reliably on completed
        features). Applies in Nystrom mode on in-memory views when there are more pairs
        than kept ones; otherwise, and with ``"exhaustive"``, every candidate is
        cross-validated.
    n_finalists : int >= 1 or None, default=None
        Pairs cross-validated in full after the screen (``search="screen"``); None: 1.
        Each pair costs one eigendecomposition and one batched metric path per fold. The
        default was 2 up to 0.1.0: on the 12 sets of ``bench_vs_sklearn.py --quick`` and
        ``bench_small_data.py`` one pair scored higher on 6 sets (0.04 to 0.5 point), the
        same on 5 and 0.1 point lower on one, in 10 to 41 % less time
        (``benchmarks/bench_cv_speed.py``).
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
    loss : {"squared"}, default="squared"
        The loss searched (regression has the square loss only; classifiers: see
        :class:`MVMLClassifierCV`).
    fit_intercept : bool or "auto", default=True
        An unpenalised offset per output (:class:`~mvkernels.MVMLRegressor`'s
        ``fit_intercept``) for every candidate: each fold is centred by its training
        means (from the total-minus-held-out statistics), the held-out outputs add each
        candidate's offset, the leave-one-out screen uses ridge with the intercept, and
        the refitted ``best_estimator_`` has it. ``"auto"``: a search along the
        intercept axis, the search with this class's default value first (``True``
        here, ``False`` for the classifiers) then the other, on the same folds, each
        with its own leave-one-out screen; their candidates side by side in
        ``cv_results_`` (column ``param_fit_intercept``), the better kept (ties to the
        default; ``best_params_["fit_intercept"]``) and ``best_estimator_`` refitted
        with it. The second search abandons the candidates that can no longer beat the
        first's best mean score (the default scores are at most 1 a fold; the same
        choice, as ``loss="auto"`` in :class:`MVMLClassifierCV`), so it costs up to one
        more search. With the other part axes (``feature_relevance``, and the
        classifiers' ``loss`` and ``multi_class``) the searches are those of the product
        of their values, the intercept innermost. The default is ``True`` since issue 32
        (``False`` before, and still for :class:`MVMLClassifierCV` and
        :class:`MVMLSVCCV`), as :class:`~mvkernels.MVMLRegressor`'s, measured in
        ``benchmarks/bench_defaults.py --part cv`` against the tuned
        ``GridSearchCV(KernelRidge)`` on six regression sets (SARCOS torques 1, 4, 7,
        wine quality white and red, Parkinson's 2 outputs; 1,000 training rows, 3
        splits, standardised views; ``docs/results/benchmarks/defaults.md``): test R^2
        +2.46 points above it on average, 0.23 below on the worst set (SARCOS torque 1:
        0.9555 against 0.9578), within 1 point on 6 of 6; ``False``: +1.08 on average,
        1.09 below on the worst set (wine quality, red: 0.3579 against 0.3688; the
        bias-free model pulls scores of 3 to 9 towards 0), 5 of 6, at 0.95 times the
        processor time. Searching both values on the same folds (the better
        ``best_score_``, now ``"auto"``) chose the same accuracy (+2.46, worst -0.22) at
        twice the cost, so it is not the default.
    feature_relevance : {"none", "ard", "auto"} or list of array-like, default="auto"
        As :class:`~mvkernels.MVMLRegressor`. ``"ard"`` learns the column scales once,
        before the search, on a subsample of at most half the (searched) rows and at most
        1,000 (not per fold: the folds' statistics are those of all the rows minus the
        held-out ones, which needs one feature space for every fold). So that the scores
        of the scaled views are not those of the rows the scales were fitted to, every
        fold moves the subsample's rows from its held-out part to its training part: the
        folds score the other rows only. Every candidate is fitted on the scaled views and
        ``best_estimator_`` gets the scales as a fixed ``feature_relevance``. ``"auto"``
        (the default): a search along the relevance axis, ``"none"`` and ``"ard"`` (scales
        learned once, as for ``"ard"``) on the same folds, their candidates side by side
        in ``cv_results_`` (column ``param_feature_relevance``) and the better one kept
        (ties to ``"none"``; ``best_params_["feature_relevance"]``); about the cost of
        ``"ard"`` plus one search, and one search when the learned relevance is flat (its
        candidates are then those of ``"none"``, with their scores, on the folds as
        given). Below 2,000 complete (searched) rows, where the subsample would be most
        of the rows, ``"auto"`` is ``"none"`` alone: on the real-data benchmark sets
        (300 to 1,000 rows) ``"auto"`` searched on every size scored as ``"none"``
        (``docs/results/benchmarks/relevance.md``), while with a few relevant columns
        among many it gains about 24 points (``scale_cv.md``). With ``sample_weight``
        or ``class_weight`` (no learned scales yet) and precomputed kernels (no
        columns), ``"auto"`` searches ``"none"`` alone.
    max_search_rows : int >= 2, "auto" or None, default="auto"
        Large data: above this many rows, the search (relevance, screen, folds) runs on a
        subsample of ``max_search_rows`` rows (uniform; stratified by class for the
        classifiers; seeded by ``random_state``) and only the refit sees every row, with
        the capacity of all of them: under ``n_landmarks="auto"`` / ``"grow"`` the
        refit's landmarks per view are ``grown_n_landmarks`` of all the rows (``sqrt(n)`` above
        40,000 rows for three views), never fewer than the search's, and its statistics
        are accumulated in row chunks (memory ``O(M^2 + chunk M)`` for ``M`` features).
        ``"auto"``: 20,000 rows; None: every row. Applies to complete in-memory views
        without landmark indices or precomputed kernels; below the threshold nothing
        changes. ``n_search_rows_`` is the rows searched.

    Attributes
    ----------
    best_params_ : dict
        ``bandwidth_factor``, ``alpha``, for learned metrics ``eta`` and ``max_iter``,
        ``joint_view`` when both candidates were searched, ``feature_relevance`` when
        ``"auto"`` searched both, and ``fit_intercept`` under ``fit_intercept="auto"``.
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
    feature_relevance_ : list of ndarray or None
        The column scales ``best_estimator_`` uses (see ``feature_relevance``); None for
        ``"none"`` (and for ``"auto"`` when ``"none"`` was chosen).
    n_search_rows_ : int
        The rows the search ran on (all of them, or ``max_search_rows``; the rows of
        positive weight with ``sample_weight``).
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

    Both values of the intercept on the same folds (``fit_intercept="auto"``): on targets
    far from 0 the offset wins.

    >>> reg = MVMLRegressorCV(cv=3, fit_intercept="auto").fit([X1, X2], y + 100.0)
    >>> reg.best_params_["fit_intercept"], sorted(set(reg.cv_results_["param_fit_intercept"]))
    (True, [False, True])
    """

    _base_classes = {"squared": MVMLRegressor}

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
        fit_intercept: bool | str = True,
        feature_relevance: Any = "auto",
        max_search_rows: int | str | None = "auto",
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
            n_finalists=n_finalists,
            missing_views=missing_views,
            loss=loss,
            fit_intercept=fit_intercept,
            feature_relevance=feature_relevance,
            max_search_rows=max_search_rows,
        )

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
    anyway (no extra fit). The most probable class is the predicted one. One-vs-one
    (``multi_class="ovo"``): Platt sigmoids of the pairs coupled as ``SVC`` does (see
    ``multi_class``), whose most probable class usually, not always, is the voted one.

    Parameters
    ----------
    alphas, etas, bandwidth_factors, cv, scoring, n_jobs, refit, metric, learn_weights, \
n_landmarks, landmarks, kernel, kernel_params, max_iter, step_size, n_a_steps, \
sparse_threshold, eig_floor, chunk_size, views, random_state, verbose, joint_view, search, \
n_finalists, missing_views, feature_relevance, max_search_rows
        As :class:`MVMLRegressorCV`.
    fit_intercept : bool or "auto", default=False
        As :class:`MVMLRegressorCV` (an offset per one-vs-all problem or pair; with
        ``loss="hinge"`` the g-step's augmented constant feature, :class:`MVMLSVCCV`),
        but ``False`` by default, the papers' bias-free model: ``"auto"`` searches
        ``False`` first, then ``True``, the better kept (ties to ``False``). An offset
        matters with few rows a class and unbalanced one-vs-rest problems, where a
        bias-free model's decision values of rows far from the training rows fall to 0
        (docs/mvml.md, "The intercept"). With ``multi_class="auto"`` and ``loss="auto"``
        the searches of their product (up to eight; each after the first abandoning
        beside the best before it).
    class_weight : None, "balanced" or dict, default=None
        As :class:`~mvkernels.MVMLClassifier`: multiplies the loss weight of the rows of
        each class in every fold's fit and in the refit (``"balanced"`` from the class
        counts of all the rows); the held-out scores take ``sample_weight`` only. Either
        loss (the hinge loss: per-row dual boxes, :class:`~mvkernels.MVMLSVC`).
    loss : {"squared", "hinge", "auto"}, default="squared"
        The loss searched. ``"squared"``: :class:`~mvkernels.MVMLClassifier` (MVML's
        square loss, eq. 8 / 15). ``"hinge"``: :class:`~mvkernels.MVMLSVC` (MVML-SVM),
        searched as :class:`MVMLSVCCV` searches it: its own default grids
        (``alphas=(1e-5, 1e-4, 1e-3)``, ``etas=(0.01, 1)``, ``bandwidth_factors=(2, 8)``;
        a grid given here applies as given), paths of at most 2 outer iterations and,
        under ``joint_view="auto"``, no joint view. ``"auto"``: both, on the same folds:
        the square loss's search and the hinge loss's, their candidates side by side in
        ``cv_results_`` (column ``param_loss``; a parameter one loss does not search is
        masked in its rows) and the best of either chosen (ties to the square loss).
        ``best_params_`` then holds ``"loss"``, and ``best_estimator_`` is a
        :class:`~mvkernels.MVMLClassifier` or a :class:`~mvkernels.MVMLSVC`. The hinge
        loss's search, second, abandons the candidates that can no longer win: with the
        default scoring, an ``alpha``'s paths stop on the remaining folds once even
        scores of 1 there would not lift any of its candidates above the square loss's
        best mean score (none is fitted when that score is 1); their later folds are NaN
        in ``cv_results_``, and the choice is that of both searches in full.
    multi_class : {"ovr", "ovo", "auto"}, default="ovr"
        The multi-class decomposition searched (K > 2 classes; the same model for two).
        ``"ovr"``: one-vs-rest, K problems sharing each fold's statistics.
        ``"ovo"``: one-vs-one (:class:`~mvkernels.MVMLClassifier`'s
        ``multi_class="ovo"``): every candidate is scored by its K(K-1)/2 pairwise
        decision values on all the held-out rows, aggregated by ``SVC``'s vote rule
        (votes, ties by the summed values); each pair is solved on its fold's training
        rows, in Nystrom mode from the pair's fold statistics (the sums of its two
        classes' statistics, each the total minus the held-out part); the joint view alone
        is one kernel ridge per pair; the leave-one-out screen of the (joint view,
        bandwidth factor) pairs stays the one-vs-rest ridge's. The refit
        ``best_estimator_`` is one-vs-one and ``predict_proba`` couples one Platt sigmoid
        per pair, fitted on the selected candidate's held-out pairwise values.
        ``"auto"``: both, on the same folds, their candidates side by side in
        ``cv_results_`` (column ``param_multi_class``; with ``loss="auto"`` the four
        searches of both losses and both decompositions) and the best chosen (ties to
        "ovr"); ``best_params_`` then holds ``"multi_class"``; the one-vs-one search runs
        second and abandons the candidates that can no longer win, as ``loss="auto"``
        does (the same choice). In-memory views only for "ovo" (as the estimator).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    best_estimator_ : MVMLClassifier
        The refitted model (``refit=True``).
    best_params_, best_score_, best_kernel_params_, cv_results_, n_iter_, best_index_, \
n_splits_, cv_time_, feature_relevance_, n_search_rows_
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

    The relevance axis of the default ``feature_relevance="auto"`` (from 2,000 rows):
    "none" and "ard" on the same folds (here 3 of the 4 columns of each view are noise,
    and "ard" wins):

    >>> X1, X2 = rng.normal(size=(2000, 4)), rng.normal(size=(2000, 4))
    >>> y = np.where(np.sin(2 * X1[:, 0]) + X2[:, 0] > 0, "a", "b")
    >>> clf = MVMLClassifierCV(
    ...     cv=3, alphas=[0.01, 0.1], bandwidth_factors=[1.0, 4.0], random_state=0
    ... ).fit([X1, X2], y)
    >>> searched = sorted(set(clf.cv_results_["param_feature_relevance"]))
    >>> clf.best_params_["feature_relevance"], searched
    ('ard', ['ard', 'none'])
    >>> [int(r.argmax()) for r in clf.feature_relevance_]  # the relevant column of each view
    [0, 0]
    """

    _base_classes = {"squared": MVMLClassifier, "hinge": MVMLSVC}
    _parameter_constraints: dict = {
        **_cv_constraints(),
        "loss": [StrOptions({"squared", "hinge", "auto"})],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "multi_class": [StrOptions({"ovr", "ovo", "auto"})],
    }

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
        class_weight: Any = None,
        multi_class: str = "ovr",
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
            n_finalists=n_finalists,
            missing_views=missing_views,
            loss=loss,
            fit_intercept=fit_intercept,
            feature_relevance=feature_relevance,
            max_search_rows=max_search_rows,
        )
        self.class_weight = class_weight
        self.multi_class = multi_class

    def _check_proba(self) -> None:
        """Probabilities are always available (they need ``refit=True`` at prediction)."""

    def _calibrated_decisions(self, X: Any) -> tuple[Any, Any]:
        est = self._check_refit()
        return self.calibration_, est._cv_engine().decision(X)

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
eig_floor, chunk_size, views, random_state, verbose, missing_views, max_search_rows
        As :class:`MVMLClassifierCV`.
    feature_relevance : {"none", "ard", "auto"} or list of array-like, default="none"
        As :class:`MVMLClassifierCV`, but ``"none"`` by default: every hinge-loss
        candidate runs its own solver, so ``"auto"`` doubles the search, and it was not
        measured for the hinge loss.
    loss : {"hinge"}, default="hinge"
        The hinge loss only (``MVMLClassifierCV(loss="auto")`` searches both losses).
    fit_intercept : bool or "auto", default=False
        An offset per one-vs-all problem (:class:`~mvkernels.MVMLSVC`'s
        ``fit_intercept``: the g-step's augmented constant feature) for every candidate:
        each candidate's offset minimises its data term on the fold's training rows and
        is added to its held-out outputs; the refitted ``best_estimator_`` has it.
        ``"auto"``: both, as :class:`MVMLClassifierCV` (``False`` first, ties to it).
    multi_class : {"ovr", "ovo", "auto"}, default="ovr"
        As :class:`MVMLClassifierCV` (one-vs-one: the hinge loss's paths on each pair's
        training rows of the fold).
    class_weight : None, "balanced" or dict, default=None
        As :class:`MVMLClassifierCV`: multiplies the loss weight (the dual box,
        :class:`~mvkernels.MVMLSVC`) of the rows of each class in every fold's fit and in
        the refit; the held-out scores take ``sample_weight`` only.
    search : {"screen", "exhaustive"}, default="screen"
        ``"screen"``: every (``joint_view``, bandwidth factor) pair is first scored by the
        exact leave-one-out accuracy of the fixed-metric ridge (MVML_I, square loss) on
        all the rows at its best ``alpha`` of the square loss's grid (``logspace(-4, 1,
        6)``: the hinge loss's ``alpha`` is on another scale), then the ``n_finalists``
        best pairs (default 1; twice as many with missing views in the training rows) are
        cross-validated, at every ``alpha``, ``eta`` and iteration (the other candidates:
        NaN scores, ``screen_score`` in ``cv_results_``). Applies in Nystrom mode on
        in-memory views with more pairs than kept ones; ``"exhaustive"`` cross-validates
        every candidate.
    n_finalists : int >= 1 or None, default=None
        Pairs cross-validated after the screen; None: 1.
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
n_iter_, best_index_, n_splits_, cv_time_, classes_, feature_relevance_, n_search_rows_
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

    _native_loss = "hinge"
    _parameter_constraints: dict = {
        **_cv_constraints(),
        "loss": [StrOptions({"hinge"})],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "multi_class": [StrOptions({"ovr", "ovo", "auto"})],
    }

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
        n_finalists: int | None = None,
        missing_views: str = "reduced",
        loss: str = "hinge",
        fit_intercept: bool | str = False,
        feature_relevance: Any = "none",
        max_search_rows: int | str | None = "auto",
        class_weight: Any = None,
        multi_class: str = "ovr",
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
            n_finalists=n_finalists,
            missing_views=missing_views,
            loss=loss,
            fit_intercept=fit_intercept,
            feature_relevance=feature_relevance,
            max_search_rows=max_search_rows,
            class_weight=class_weight,
            multi_class=multi_class,
        )

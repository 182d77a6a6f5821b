"""The public MVML estimators, :class:`MVMLRegressor` and :class:`MVMLClassifier`, over the
shared machinery of :mod:`._base` (:class:`~._base._BaseMVML`: Algorithm 1 of the paper,
the problem data and the fitted attributes)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .._targets import one_vs_all_targets
from .._validation import (
    validate_array_input,
)
from ._base import (
    _BaseMVML,
    mvml_constraints,
)
from ._data_part import DataPart, data_part, map_rows
from ._multiclass import (
    OneVsOneMixin,
    fit_pairwise_calibration,
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
    alpha : float, default=0.1
        The paper's lambda: weight of ``<g, A^+ g>`` (ridge on g). The defaults
        ``alpha=0.1``, ``bandwidth_factor=1.5``, ``joint_view="auto"`` and
        ``fit_intercept=True`` were chosen on the regression benchmark sets together
        (SARCOS torques 1, 4 and 7, wine quality white and red, Parkinson's; standardised
        views, 1,000 training rows; the user guide, "Defaults", and its generated table):
        test R^2 0.24 point above the tuned ``GridSearchCV(KernelRidge(kernel="rbf"))``
        on the concatenated views on average, 1.24 points below it on the worst set
        (SARCOS torque 1), at about an eighth of its fit time. The former defaults
        (``alpha=1``, ``bandwidth_factor=4``, no joint view, no intercept) were 9.7
        points below it on average and 20.9 on the worst set (wine quality, red; SARCOS
        torque 1: 0.821 against 0.958).
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
        indices used as the landmarks (they fix the count: a numeric ``n_landmarks`` that
        disagrees is a ValueError, ``"auto"`` is ignored; with missing views
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
    bandwidth_factor : float, default=1.5
        Multiplies the data-driven bandwidth parameter of Gaussian / Laplacian views whose
        ``gamma`` is not given: ``gamma_l = f / (2 sigma_l^2)``, ``sigma_l`` the mean
        pairwise distance of view ``l`` (1 is the papers' setting; 4 is of the order of
        scikit-learn's ``gamma="scale"``; 1.5 had the smallest gap to the tuned
        kernel ridge on the worst regression set, see ``alpha``: 1 had a better mean,
        +0.33 point, and a worst gap of 1.65 points, on Parkinson's; 2 of 1.99).
        Ignored for given ``gamma`` / ``sigma`` and other kernels. The default bandwidth
        follows each view's overall scale, not the ranges of its columns: scale the
        columns (e.g. ``StandardScaler`` in a pipeline) when they differ, as for ``SVC``
        (user guide, "Scaling the views").
    joint_view : bool, "only" or "auto", default="auto"
        Append one view, all views together: the predictor ``sum_l w_l f^l(x_l)`` is
        additive over views (the metric couples the views' coefficients, not their
        inputs), the joint view's kernel on the concatenation (for Gaussian views a
        product of per-view kernels) models cross-view interactions. Its bandwidth comes
        from the same heuristic times ``bandwidth_factor``; it is the last view of the
        fitted model (``n_views_``, ``weights_``, ``kernel_params_``, the metric). A kernel
        list gives it ``"rbf"`` unless ``v + 1`` kernels are listed; one ``kernel_params``
        dict applies to it too, a list of ``v`` dicts leaves its bandwidth to the
        heuristic (list ``v + 1`` dicts to set it); precomputed kernels:
        the elementwise product of the view kernels (also at predict time). Needs at least
        2 views. Nystrom and full-kernel modes, NumPy and Dask views. ``"only"``: the
        joint view alone (one view, ``n_views_ == 1``; predict still takes the input
        views). In Nystrom mode with ``metric="identity"`` this is kernel ridge
        regression on the concatenated views with the Nystrom kernel, exactly
        ``KernelRidge(alpha=alpha)`` when every training row is a landmark (the g-step
        ``g = (U^T U + alpha I)^{-1} U^T y`` gives ``k(x, X) (K + alpha I)^{-1} y`` by
        the push-through identity); the CV estimators search it. ``"auto"`` (the
        default): the joint view (``True``) with at least 2 input views and one kernel
        name for all of them (not ``"precomputed"``), else none. ``False`` is the papers'
        additive model; on the regression sets it lost 1.7 points of R^2 on average and
        4.7 on Parkinson's (see ``alpha``).
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
        kernels. The scales are learned from the rows as given, without ``fit``'s
        ``sample_weight`` (the model after them takes the weights; the CV estimators
        refuse weights with a learned relevance).
    fit_intercept : bool, default=True
        Add an unpenalised offset ``b`` per output: the predictor is
        ``sum_l w_l f^l(x) + b``. The square loss then runs Algorithm 1 on the design and
        targets centred by their training means (the offset is not penalised, so for
        any ``g`` the best ``b`` is ``ybar - m^T (w (.) g)``, ``m`` the mean feature
        vector): the g-step, the w-step and the A-steps see the centred data, at the
        cost of the uncentred fit (user guide, "The intercept"). False is the papers'
        bias-free model: away from the training rows its Gaussian kernels predict 0,
        not the targets' level; on wine quality (scores 3 to 9) it lost 1.4 and 2.1
        points of R^2 (see ``alpha``).

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
    >>> reg = MVMLRegressor().fit([X1, X2], y)
    >>> reg.predict([X1, X2]).shape
    (40,)
    >>> reg.n_views_  # the 2 views and the joint view (joint_view="auto")
    3
    >>> reg.mode_, reg.metric_.shape  # every sample a landmark: 3 views x 40
    ('nystrom', (120, 120))
    >>> far = [X1 + 50.0, X2 + 50.0]  # far from every training row: the offset
    >>> reg = MVMLRegressor().fit([X1, X2], y + 100.0)
    >>> bool(np.allclose(reg.predict(far), reg.intercept_)), bool(reg.intercept_ > 90)
    (True, True)
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
        bandwidth_factor: float = 1.5,
        joint_view: bool | str = "auto",
        fit_intercept: bool = True,
        feature_relevance: Any = "none",
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

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> MVMLRegressor:
        """Fit on views ``X`` (list of arrays, or one array cut by ``views``) and targets ``y``.

        ``sample_weight`` (n,): frequency weights of the rows (None: 1 each), for the
        weighted square loss ``sum_i s_i (y_i - f(x_i))^2``; rows of weight 0 are dropped
        first (user guide, "Sample and class weights"). On Dask views (Nystrom mode) the
        weighted statistics are one pass over the blocks; ``y`` and the weights come to
        the client.
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        X = validate_array_input(self, X, reset=True)
        part = data_part(X, y)  # in memory or Dask, decided once for the fit
        if sample_weight is not None:  # weighted: the targets come to the client
            part = part.with_client_targets()
        X, y, _ = self._weighted_rows(X, y, sample_weight)
        Y, self._single_output = part.regression_targets(y)  # lazy y: checked by block
        self.n_outputs_ = int(Y.shape[1])
        return self._fit_targets(X, Y, part)

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


def check_n_classes(est: Any) -> None:
    """``ValueError`` unless the classifier ``est`` (a plain or a CV estimator) has at
    least two classes in ``est.classes_``, naming its class."""
    if len(est.classes_) == 0:
        raise ValueError(f"{type(est).__name__}: y is empty (0 samples)")
    if len(est.classes_) < 2:
        raise ValueError(
            f"{type(est).__name__} needs samples of at least 2 classes; y has only "
            f"one class: {est.classes_[0]}"
        )


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
        As :class:`MVMLRegressor`.
    bandwidth_factor : float, default=4.0
        As :class:`MVMLRegressor` (whose default is 1.5).
    joint_view : bool, "only" or "auto", default="auto"
        As :class:`MVMLRegressor`: ``"auto"`` appends the joint
        view (all views together) when there are at least 2 views and one kernel name
        for all of them. The classifier's
        defaults ``joint_view="auto"``, ``alpha=0.1``, ``bandwidth_factor=4`` were chosen
        on the classification benchmark sets together (the user guide, "Defaults", and
        its generated table): within half a point of ``SVC()`` or above it on each; without
        the joint view the classifier lost to ``SVC()`` on uWave with 8 classes and 10
        rows a class, the former ``alpha=1`` (no joint view) on uWave, and the former
        ``bandwidth_factor=6`` (a narrower kernel) on raw uWave sensor series.
    eta, metric, learn_weights, n_landmarks, landmarks, kernel, kernel_params, \
max_iter, tol, step_size, n_a_steps, sparse_threshold, eig_floor, chunk_size, views, \
random_state, solver, fit_intercept, feature_relevance
        As :class:`MVMLRegressor` (same defaults, except ``fit_intercept=False``: the
        papers' bias-free model, within noise of the intercept on the classification
        sets). With ``fit_intercept`` every one-vs-all problem has its own offset.
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
        bandwidth_factor: float = 4.0,
        joint_view: bool | str = "auto",
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
        **mvml_constraints(),
        "probability": ["boolean"],
        **multiclass_constraints(),
        "class_weight": [StrOptions({"balanced"}), dict, None],
    }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> MVMLClassifier:
        """Fit on views ``X`` and class labels ``y``.

        ``sample_weight`` (n,): frequency weights of the rows (None: 1 each), multiplied
        by ``class_weight``; rows of weight 0 are dropped first (user guide, "Sample and
        class weights"). On Dask views (Nystrom mode) the weighted statistics are one pass
        over the blocks; with weights the labels come to the client.
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        X = validate_array_input(self, X, reset=True)
        part = data_part(X, y)  # in memory or Dask, decided once for the fit
        labels_seen = None
        if sample_weight is not None or getattr(self, "class_weight", None) is not None:
            # weighted: the labels come to the client (one value per row)
            y = part.to_client(y)
            part = part.with_client_targets()
        if sample_weight is not None:
            labels_seen = np.unique(column_or_1d(np.asarray(y)))
        X, y, _ = self._weighted_rows(X, y, sample_weight)
        self._labels_seen = labels_seen
        self._fit_labels(X, y, part)
        if self.probability:  # out-of-fold decision values -> calibration_ (5 extra fits)
            labels = np.asarray(part.to_client(y))
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

    def _fit_labels(self, X: Any, y: Any, part: DataPart) -> MVMLClassifier:
        """Encode the labels (``classes_``, +-1 columns) and fit the one-vs-all problems
        (or, ``multi_class="ovo"``, the one-vs-one problems: see :class:`OneVsOneMixin`);
        ``part``: the fit's data part (:meth:`fit` decides it once)."""
        self._ovo_pairs = None
        # "auto" (MVMLSVC's default): one-vs-one on in-memory data, one-vs-rest on Dask
        ovo = self.multi_class == "ovo" or (self.multi_class == "auto" and part.in_memory)
        if self.multi_class == "ovo":
            part.refuse(
                f"{type(self).__name__}(multi_class='ovo') does not support Dask input "
                "(the pairs' row subsets); use multi_class='ovr' (one Dask reduction)"
            )
        if part.lazy_targets:
            # classes by a Dask reduction; the +-1 targets stay lazy (one-hot per block)
            self.classes_, Y = part.lazy_class_targets(y)
            check_classification_targets(self.classes_)
            self._check_n_classes()
            return self._fit_targets(X, Y, part)
        y = column_or_1d(np.asarray(y), warn=True)
        check_classification_targets(y)
        self.classes_, yi = np.unique(y, return_inverse=True)
        self._check_n_classes()
        if ovo and len(self.classes_) > 2:
            self._ovo_pairs = ovo_pairs(len(self.classes_))
        self._apply_class_weight(yi, self.__dict__.get("_labels_seen"))
        Y = self._encode_targets(yi, len(self.classes_))
        return self._fit_targets(X, Y, part)

    def _check_n_classes(self) -> None:
        check_n_classes(self)

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

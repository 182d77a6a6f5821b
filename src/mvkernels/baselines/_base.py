"""Shared pieces of the baselines: per-view Gram matrices, the Gram-matrix kernel machine,
the estimator base class (validation, targets, fit/predict plumbing)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _num_samples, check_is_fitted, column_or_1d

from .._arrays import MIN_OBSERVED_ROWS
from .._docstrings import fill_placeholders
from .._kernel_families import BANDWIDTH_KERNELS, kernel_takes_sparse, names_precomputed
from .._linalg import sym as _sym
from .._targets import one_vs_all_targets, predicted_classes
from .._threads import serial_blas
from .._validation import (
    as_real_array,
    check_precomputed_kernel,
    check_psd_gram,
    check_real_targets,
    check_targets_finite,
    check_views,
    common_constraints,
    observed_mask,
    positive_real,
    take_rows,
    validate_array_input,
)
from .._weights import check_sample_weight, class_weight_of_rows, positive_rows
from ..kernels import make_view_kernels
from ..nystrom import BlockNystrom

if TYPE_CHECKING:
    from sklearn.svm import SVC


LOSSES = ("hinge", "squared")


# ============================================================================ numerical pieces
def kernel_ridge_dual(K: np.ndarray, Y: np.ndarray, alpha: float) -> np.ndarray:
    """Dual coefficients ``(K + alpha I)^{-1} Y`` of kernel ridge regression (Cholesky).

    ``K`` is symmetric PSD and ``alpha > 0``, so ``K + alpha I`` is positive definite.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric PSD Gram matrix (its symmetric part is used).
    Y : ndarray of shape (n,) or (n, T)
        Targets.
    alpha : float
        Ridge parameter, > 0.

    Returns
    -------
    ndarray of the shape of ``Y``
        The dual coefficients.
    """
    A = _sym(K) + alpha * np.eye(K.shape[0])
    return linalg.cho_solve(
        linalg.cho_factor(A, lower=True, check_finite=False), Y, check_finite=False
    )


def weighted_kernel_ridge_dual(
    K: np.ndarray, Y: np.ndarray, alpha: float, sample_weight: np.ndarray | None = None
) -> np.ndarray:
    """Dual coefficients of weighted kernel ridge, ``min_f sum_i w_i ||y_i - f(x_i)||^2 +
    alpha ||f||^2``: ``a = S (S K S + alpha I)^{-1} S Y`` with ``S = diag(sqrt(w))``
    (``w > 0``; unweighted: :func:`kernel_ridge_dual`). An integer weight gives the
    function fitted on the row repeated that many times."""
    if sample_weight is None:
        return kernel_ridge_dual(K, Y, alpha)
    s = np.sqrt(sample_weight)
    beta = kernel_ridge_dual(
        s[:, None] * K * s[None, :], s.reshape((-1,) + (1,) * (Y.ndim - 1)) * Y, alpha
    )
    return s.reshape((-1,) + (1,) * (Y.ndim - 1)) * beta


def _resolve_default_bandwidths(
    kernel: Any, kernel_params: Any, Xs: list[np.ndarray], rng: Any, sample_weight: Any
) -> list[dict | None]:
    """Per-view ``kernel_params`` with the default rbf / laplacian bandwidths made explicit,
    computed in double precision (and with ``sample_weight``), from ``rng`` in the order
    :class:`BlockNystrom` draws them (so its landmarks, drawn next from ``rng``, are the same
    as when it resolves the bandwidths itself)."""
    kernels = make_view_kernels(kernel, kernel_params, len(Xs))
    given = (
        list(kernel_params)
        if isinstance(kernel_params, (list, tuple))
        else [kernel_params] * len(Xs)
    )
    out: list[dict | None] = []
    for Xv, kern, params in zip(Xs, kernels, given):
        if kern.name in BANDWIDTH_KERNELS:  # the kernels with a data-driven bandwidth
            kern.fit(Xv, random_state=rng, sample_weight=sample_weight, precision="double")
            out.append(dict(kern.params_))
        else:
            out.append(params)
    return out


# ============================================================================ kernel maps
class ViewGrams:
    """Per-view Gram matrices of the training views, full or block-Nystrom.

    ``fit(Xs, sample_weight)`` fits the kernels (default bandwidths, in double precision,
    weighted by ``sample_weight`` as frequency weights:
    :func:`mvkernels.kernels.mean_pairwise_distance`) or a :class:`BlockNystrom` map with
    landmarks shared by all views (drawn uniformly from the rows, whatever their
    weights); :attr:`train` is the list of ``n x n`` training Gram matrices (``K_l`` or
    ``U_l U_l^T``) and :meth:`cross` the ``(m, n)`` test-train matrices (``k_l(X*, X)``
    or ``U*_l U_l^T``).

    Parameters
    ----------
    kernel, kernel_params, n_landmarks, landmarks, random_state
        As in the baseline estimators (:class:`SingleViewRegressor`).

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.baselines import ViewGrams
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.standard_normal((6, 3)), rng.standard_normal((6, 2))]
    >>> grams = ViewGrams().fit(Xs)
    >>> [K.shape for K in grams.train]
    [(6, 6), (6, 6)]
    >>> [K.shape for K in grams.cross([X[:2] for X in Xs])]
    [(2, 6), (2, 6)]
    >>> bool(np.allclose(grams.cross(Xs)[0], grams.train[0]))
    True
    >>> int(np.linalg.matrix_rank(ViewGrams(n_landmarks=4, random_state=0).fit(Xs).train[0]))
    4
    """

    def __init__(
        self,
        kernel: Any = "rbf",
        kernel_params: Any = None,
        n_landmarks: int | float | None = None,
        landmarks: str = "uniform",
        random_state: Any = None,
    ):
        self.kernel, self.kernel_params = kernel, kernel_params
        self.n_landmarks, self.landmarks = n_landmarks, landmarks
        self.random_state = random_state

    def fit(
        self,
        Xs: list[np.ndarray],
        sample_weight: np.ndarray | None = None,
        columns: np.ndarray | None = None,
        n_columns: int | None = None,
    ) -> ViewGrams:
        """Fit on (validated) views; ``columns``: precomputed kernels whose test-train
        matrices have ``n_columns`` columns, of which the training rows are ``columns``
        (rows of zero weight left out)."""
        self.n_views = len(Xs)
        self.n_samples = Xs[0].shape[0]
        self.n_features = [X.shape[1] for X in Xs]
        self.columns, self.n_columns = columns, n_columns
        if self.n_landmarks is None:
            kernels = make_view_kernels(self.kernel, self.kernel_params, len(Xs))
            self.precomputed = kernels[0].precomputed
            rng = check_random_state(self.random_state)
            if self.precomputed:
                Xs = [check_precomputed_kernel(K, i) for i, K in enumerate(Xs)]
            for Xv, kern in zip(Xs, kernels):
                kern.fit(Xv, random_state=rng, sample_weight=sample_weight, precision="double")
            self.kernels = kernels
            self.X_fit = Xs
            self.train = [
                _sym(Xv) if self.precomputed else _sym(kern(Xv, Xv))
                for Xv, kern in zip(Xs, kernels)
            ]
            for i, (K, kern) in enumerate(zip(self.train, kernels)):
                if kern.name == "callable":  # like precomputed kernels: must be a valid Gram
                    check_psd_gram(K, i, what="the kernel callable's training Gram matrix")
            self.nystrom = None
        else:
            # default bandwidths in double precision (the map's own are single on dense
            # rows), from the rng the landmarks are drawn from next
            rng = check_random_state(self.random_state)
            params = _resolve_default_bandwidths(
                self.kernel, self.kernel_params, Xs, rng, sample_weight
            )
            nys = BlockNystrom(
                kernel=self.kernel,
                kernel_params=params,
                n_landmarks=self.n_landmarks,
                landmarks=self.landmarks,
                random_state=rng,
            ).fit(Xs)
            self.nystrom, self.kernels = nys, nys.kernels_
            self.precomputed = nys.kernels_[0].precomputed
            Xs = nys.check_views(Xs)
            self.U = [nys.view_features(Xv, l) for l, Xv in enumerate(Xs)]
            self.train = [_sym(U @ U.T) for U in self.U]
        return self

    def check(self, X: Any, views: Any) -> list[np.ndarray]:
        """Validate test views against the training views."""
        Xs = check_views(
            X,
            views=views,
            n_views=self.n_views,
            n_features=None if self.precomputed else self.n_features,
        )
        if self.precomputed:
            n_train = self.n_samples if self.columns is None else self.n_columns
            Xs = [
                check_precomputed_kernel(K, i, n_train=n_train, square=False)
                for i, K in enumerate(Xs)
            ]
            if self.columns is not None:
                Xs = [K[:, self.columns] for K in Xs]
        return Xs

    def cross(self, Xs: list[np.ndarray]) -> list[np.ndarray]:
        """Test-train Gram matrices ``(m, n)`` of each (validated) test view."""
        return [self.cross_view(Xv, l) for l, Xv in enumerate(Xs)]

    def cross_view(self, Xv: np.ndarray, l: int) -> np.ndarray:
        """Test-train Gram matrix ``(m, n)`` of (validated) test rows of view ``l``."""
        if self.nystrom is not None:
            return self.nystrom.view_features(Xv, l) @ self.U[l].T
        if self.precomputed:
            return Xv
        return self.kernels[l](Xv, self.X_fit[l])


# ============================================================================ Gram-matrix learners
def _svc(C: float, random_state: Any) -> SVC:
    from sklearn.svm import SVC

    return SVC(kernel="precomputed", C=C, random_state=random_state)


class _GramModel:
    """A kernel machine on a precomputed Gram matrix, for +-1 target columns or real targets.

    ``loss="squared"``: kernel ridge, ``dual = (K + alpha I)^{-1} Y``, no intercept.
    ``loss="hinge"``: one binary ``SVC(kernel="precomputed", C)`` per column of ``Y``
    (labels +-1), ``dual`` = its signed dual coefficients ``y_i a_i``, with intercept.
    Sample weights scale each row's loss (kernel ridge) or its box ``C w_i`` (SVC).
    Output ``K* dual + intercept``.
    """

    def __init__(self, loss: str, alpha: float, C: float, random_state: Any = None):
        self.loss, self.alpha, self.C, self.random_state = loss, alpha, C, random_state

    def fit(
        self, K: np.ndarray, Y: np.ndarray, sample_weight: np.ndarray | None = None
    ) -> _GramModel:
        """``sample_weight`` (> 0): the weighted square loss, or the SVC's per-sample
        ``C w_i``."""
        n, T = Y.shape
        if self.loss == "squared":
            self.dual = weighted_kernel_ridge_dual(K, Y, self.alpha, sample_weight)
            self.intercept = np.zeros(T)
            return self
        self.dual = np.zeros((n, T))
        self.intercept = np.zeros(T)
        for t in range(T):
            svc = _svc(self.C, self.random_state).fit(K, Y[:, t], sample_weight=sample_weight)
            # SVC's decision is positive for classes_[1] = +1
            self.dual[svc.support_, t] = svc.dual_coef_[0]
            self.intercept[t] = svc.intercept_[0]
        return self

    def decision(self, Kx: np.ndarray) -> np.ndarray:
        return Kx @ self.dual + self.intercept


def _validate_array(est: BaseEstimator, X: Any, reset: bool) -> Any:
    """sklearn-style validation of a single 2-D array (names, widths); lists pass through."""
    return validate_array_input(est, X, reset)


class _TargetsMixin:
    """Inputs, targets and predictions of every baseline (the Gram-matrix ones and MLKR).

    :meth:`_fit_inputs` validates the training views and targets; ``_targets(y)`` returns
    real target columns (regressors; 1-D ``y`` remembered so that :meth:`predict` returns
    1-D) or the one-vs-all ``+-1`` columns (classifiers, which set ``classes_``);
    :meth:`_predict_views` validates test views against the training ones;
    :meth:`predict` maps the estimator's ``_decision(X)`` back to targets or classes.
    """

    _is_classifier = False
    _multi_output = False
    views: Any
    _decision: Callable[[Any], np.ndarray]  # provided by the estimator

    def _fit_inputs(
        self, X: Any, y: Any, sample_weight: Any = None
    ) -> tuple[list[np.ndarray], np.ndarray, np.ndarray | None]:
        """Validated training views, target columns and row weights; sets ``n_views_`` and
        ``n_features_view_``.

        Rows of zero weight are left out here, before anything is fitted (a zero weight
        is a removed row); the weights returned (None: all 1) are those of the rows kept,
        times their class's ``class_weight`` (classifiers). ``self._fit_rows`` holds the
        rows kept (None: all); ``self._fit_sample_weight`` the frequency weights alone
        (``sample_weight``, which the default bandwidths take) and
        ``self._fit_class_weight`` the class weights alone.
        """
        X = _validate_array(self, X, reset=True)
        Xs = check_views(
            X,
            views=self.views,
            ensure_min_samples=2,
            feature_names=getattr(self, "feature_names_in_", None),
            allow_missing=getattr(self, "_supports_missing", False),
        )
        n = Xs[0].shape[0]
        if y is not None and _num_samples(y) != n:
            raise ValueError(f"y has {_num_samples(y)} samples but the views have {n}")
        w = check_sample_weight(sample_weight, n)
        rows = positive_rows(w, n)
        self._n_rows_in = n
        self._fit_rows = rows
        labels_seen = None
        if rows is not None:
            if self._is_classifier and y is not None:
                labels_seen = np.unique(column_or_1d(as_real_array(y, "y", dtype=None)))
            Xs = take_rows(Xs, rows)
            if names_precomputed(getattr(self, "kernel", None)):  # Gram matrices: the columns too
                Xs = [K[:, rows] for K in Xs]
            y = _safe_indexing(y, rows)
            w = w[rows]
            if Xs[0].shape[0] < 2:
                raise ValueError(
                    f"only {Xs[0].shape[0]} sample has a positive weight; at least 2 are needed"
                )
        Y = self._targets(y)
        if Y.shape[0] != Xs[0].shape[0]:
            raise ValueError(f"y has {Y.shape[0]} samples but the views have {Xs[0].shape[0]}")
        if w is not None and (w == 1.0).all():  # unit weights: the unweighted fit, exactly
            w = None
        # the frequency weights alone (default bandwidths, MLKR's copies of a row)
        self._fit_sample_weight = w
        self._fit_class_weight = None
        if self._is_classifier:
            cw = class_weight_of_rows(
                getattr(self, "class_weight", None),
                self.classes_,
                self._y_index,
                w,
                labels_seen,
            )
            if cw is not None and not (cw == 1.0).all():
                self._fit_class_weight = cw
                w = cw if w is None else w * cw
                if not (w > 0).any():
                    raise ValueError("class_weight gives every sample a zero weight")
        self.n_views_ = len(Xs)
        self.n_features_view_ = [Xv.shape[1] for Xv in Xs]
        return Xs, Y, w

    def _predict_views(
        self, X: Any, check_widths: bool = True, allow_missing: bool = False
    ) -> list[np.ndarray]:
        """Test views validated against the training views (their widths too unless
        ``check_widths`` is False: precomputed kernels; NaN rows as missing views when
        ``allow_missing``)."""
        X = _validate_array(self, X, reset=False)
        return check_views(
            X,
            views=self.views,
            n_views=self.n_views_,
            n_features=self.n_features_view_ if check_widths else None,
            feature_names=getattr(self, "feature_names_in_", None),
            allow_missing=allow_missing,
        )

    def _targets(self, y: Any) -> np.ndarray:
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        if not self._is_classifier:
            y = check_real_targets(y)
            if not self._multi_output:
                y = column_or_1d(y, warn=True)
            if y.ndim == 1:
                y = column_or_1d(y)
                check_targets_finite(y)
                self._y_1d = True
                return y.reshape(-1, 1)
            if y.ndim != 2:
                raise ValueError(f"y must be 1-D or 2-D, got shape {y.shape}")
            check_targets_finite(y)
            self._y_1d = False
            return y
        y = column_or_1d(as_real_array(y, "y", dtype=None), warn=True)
        check_classification_targets(y)
        self.classes_, yi = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes (of positive "
                f"weight); y has only one class: {self.classes_[0]}"
            )
        self._y_index = yi
        return one_vs_all_targets(yi, len(self.classes_))

    def predict(self, X: Any) -> np.ndarray:
        """Predicted targets (regressors) or class labels (classifiers)."""
        D = self._decision(X)
        if not self._is_classifier:
            return D[:, 0] if self._y_1d else D
        return predicted_classes(D, self.classes_)


class _Base(_TargetsMixin, BaseEstimator):
    """Shared parameters and fit/predict plumbing of the baselines.

    Subclasses implement ``_fit_grams(grams, Y)`` (store what they need) and
    ``_decision_grams(cross) -> (m, T)``; ``_fit_grams`` gets the list of training Gram
    matrices of the views (after ``_transform_views``, e.g. one concatenated view for
    early fusion). ``__init__`` takes the regressors' parameters (``alpha`` and the shared
    ones): early and late fusion use it as is, the other families extend it.
    """

    # The regressors have no ``loss`` or ``C`` parameter: they are kernel ridge (the square
    # loss); the classifiers set both in ``__init__``.
    loss: str = "squared"
    C: float = 1.0
    #: whether the method takes missing views (NaN rows); see ``_fit_missing``
    _supports_missing = False
    _parameter_constraints: dict = {
        **common_constraints(),
        "alpha": [positive_real()],
        "C": [positive_real()],
        "loss": [StrOptions(set(LOSSES))],
        "class_weight": [StrOptions({"balanced"}), dict, None],  # the classifiers'
    }

    def __init__(
        self,
        alpha: float = 1.0,
        kernel: Any = "rbf",
        kernel_params: Any = None,
        n_landmarks: int | float | None = None,
        landmarks: str = "uniform",
        views: Any = None,
        random_state: Any = None,
    ):
        self.alpha = alpha
        _init_common(self, kernel, kernel_params, n_landmarks, landmarks, views, random_state)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = kernel_takes_sparse(self.kernel)
        return tags

    def _check_common(self) -> None:
        """Checks that involve more than one parameter (each one is checked by
        ``_parameter_constraints`` at fit)."""

    def _transform_views(self, Xs: list[np.ndarray]) -> list[np.ndarray]:
        return Xs

    def _maps(self) -> ViewGrams:
        return ViewGrams(
            self.kernel, self.kernel_params, self.n_landmarks, self.landmarks, self.random_state
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> _Base:
        """Fit on views ``X`` (list of arrays, or one array cut by ``views``) and ``y``.

        Parameters
        ----------
        X : list of array-like, or array-like of shape (n_samples, n_columns)
            The training views.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets, or class labels (classifiers).
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights ``>= 0`` (``docs/baselines.md``): a row of integer weight
            ``k`` counts as ``k`` copies of it, a row of weight 0 as removed; the default
            bandwidths are weighted the same way.

        Returns
        -------
        self
        """
        self._check_common()
        Xs, Y, w = self._fit_inputs(X, y, sample_weight)
        mask = observed_mask(Xs, min_observed=MIN_OBSERVED_ROWS) if self._supports_missing else None
        self.missing_fit_ = mask is not None
        if mask is not None:
            with serial_blas(Xs[0].shape[0]):
                self._fit_missing(Xs, Y, mask, w)
            return self
        with serial_blas(Xs[0].shape[0]):
            try:
                columns = self._fit_rows if names_precomputed(self.kernel) else None
                self.grams_ = self._maps().fit(
                    self._transform_views(Xs),
                    sample_weight=self._fit_sample_weight,
                    columns=columns,
                    n_columns=None if columns is None else int(self._n_rows_in),
                )
            except ValueError as exc:
                renamed = self._rename_error(exc)
                if renamed is exc:
                    raise
                raise renamed from exc
            self._fit_grams(self.grams_.train, Y, w)
        return self

    def _rename_error(self, exc: ValueError) -> ValueError:
        """Errors about the transformed views, named for the user (early fusion: the
        concatenation is not "view 0")."""
        return exc

    def _fit_missing(
        self, Xs: list[np.ndarray], Y: np.ndarray, mask: np.ndarray, w: np.ndarray | None
    ) -> None:
        """Fit with missing views (``_supports_missing`` methods only)."""
        raise NotImplementedError

    def _decision_missing(self, Xs: list[np.ndarray], mask: np.ndarray) -> np.ndarray:
        """Outputs for test views with missing views (``_supports_missing`` methods only)."""
        raise NotImplementedError

    def _decision(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "missing_fit_")
        precomputed = not self.missing_fit_ and self.grams_.precomputed
        allow_missing = self._supports_missing and not precomputed
        Xs = self._predict_views(X, check_widths=not precomputed, allow_missing=allow_missing)
        mask = observed_mask(Xs) if allow_missing else None
        if mask is not None or self.missing_fit_:
            if mask is None:
                mask = np.ones((Xs[0].shape[0], len(Xs)), dtype=bool)
            return self._decision_missing(Xs, mask)
        Xs = self.grams_.check(self._transform_views(Xs), views=None)
        with serial_blas(self.grams_.n_samples):
            return self._decision_grams(self.grams_.cross(Xs))


class _ClassifierMixin:
    """What makes a baseline a classifier: one-vs-all ``+-1`` targets (``_is_classifier``,
    read by :class:`_TargetsMixin`), ``class_weight`` and ``decision_function``
    (regressors have none)."""

    _is_classifier = True
    _decision: Callable[[Any], np.ndarray]  # provided by the estimator base class

    def decision_function(self, X: Any) -> np.ndarray:
        """Outputs: shape (n,) for two classes (positive = ``classes_[1]``), else (n, K)."""
        D = self._decision(X)
        return D[:, 0] if D.shape[1] == 1 else D


class _LossClassifierMixin(_ClassifierMixin):
    """The parameters of a Gram-matrix classifier with none of its own (early and late
    fusion): the loss and its constants, then the shared ones (``_Base``'s ``__init__``
    holds the regressors'), then ``class_weight``."""

    def __init__(
        self,
        C: float = 1.0,
        alpha: float = 1.0,
        loss: str = "hinge",
        kernel: Any = "rbf",
        kernel_params: Any = None,
        n_landmarks: int | float | None = None,
        landmarks: str = "uniform",
        views: Any = None,
        random_state: Any = None,
        class_weight: Any = None,
    ):
        self.C, self.alpha, self.loss = C, alpha, loss
        self.class_weight = class_weight
        _init_common(self, kernel, kernel_params, n_landmarks, landmarks, views, random_state)


_COMMON_DOC = """
    kernel : str, callable or list, default="rbf"
        One kernel for every view or one per view (:mod:`mvkernels.kernels`).
    kernel_params : dict, list of dict or None, default=None
        Kernel parameters; default Gaussian bandwidth = mean pairwise training distance.
    n_landmarks : None, int or float in (0, 1], default=None
        None: full kernels. Otherwise the block Nystrom approximation with landmarks
        shared by the views (:class:`mvkernels.nystrom.BlockNystrom`).
    landmarks : {"uniform", "kmeans++", "leverage"} or array-like of int, default="uniform"
        How the Nystrom landmark samples are drawn, or their training row indices
        (:class:`mvkernels.nystrom.BlockNystrom`).
    views : None or list, default=None
        How to cut a single 2-D array into views (:func:`mvkernels.check_views`).
    random_state : int, RandomState or None, default=None
        Landmarks, bandwidth subsampling, CV folds.
"""


# Appended to every classifier's Parameters section.
_CLASS_WEIGHT_DOC = """    class_weight : None, "balanced" or dict, default=None
        Weight of the rows of each class, multiplying ``sample_weight`` (as in
        :class:`sklearn.svm.SVC`): None gives every class weight 1, a dict
        ``{label: weight}`` the classes it names (others 1), ``"balanced"``
        ``n / (n_classes * n_c)``, ``n_c`` the (weighted) number of rows of class ``c``.
        Class weights weigh the rows' losses, not the default bandwidths.
"""

_LOSS_DOC = """
    C : float, default=1.0
        SVM box constant (``loss="hinge"``).
    alpha : float, default=1.0
        Ridge parameter (``loss="squared"``).
    loss : {"hinge", "squared"}, default="hinge"
        Binary SVM per one-vs-all column, or kernel ridge on the +-1 columns.
"""

_FIT_ATTRIBUTES_DOC = """
    n_views_ : int
        Number of views seen at fit.
    n_features_view_ : list of int
        Number of columns of each training view.
    n_features_in_ : int
        Number of columns of ``X`` when fitted on one 2-D array (absent for a list of views).
    feature_names_in_ : ndarray of str
        Column names of ``X`` when fitted on a DataFrame with string column names.
"""

_GRAMS_ATTRIBUTES_DOC = """
    grams_ : ViewGrams
        The fitted per-view kernels (or Nystrom map) and training Gram matrices.
""" + _FIT_ATTRIBUTES_DOC.lstrip("\n")

# The Examples section: two random views of 40 samples, a real target (regressors) or
# two classes "a" / "b" (classifiers); fit, predict, then the class's own lines.
_EXAMPLES_DOC = """
    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.baselines import {name}
    >>> rng = np.random.default_rng(0)
    >>> X1, X2 = rng.normal(size=(40, 3)), rng.normal(size=(40, 2))
    >>> y = {target}
    >>> model = {name}({args}).fit([X1, X2], y)
    >>> model.predict([X1, X2]).shape
    (40,)
"""
# The first attribute of every classifier.
_CLASSES_DOC = """
    classes_ : ndarray of shape (n_classes,)
        The class labels.
"""
_ATTRIBUTES_HEADING = "    Attributes\n    ----------\n"
# The regressors' first parameter (its text is the family's ``ridge`` part).
_RIDGE_DOC = """
    alpha : float, default=1.0
        {ridge}
"""
# The Parameters section of the families without parameters of their own (early and late
# fusion): those of ``_Base.__init__`` (regressors) and ``_LossClassifierMixin.__init__``.
_PARAMETERS_DOC = """
    Parameters
    ----------
    {task_parameters}
    {common_parameters}
"""
_COUNTERPART_DOC = "    {other} : The same for {task}."
_MVML_SEE_ALSO_DOC = (
    "    mvkernels.MVML{Task} : Multi-view metric learning (what the baselines compare with)."
)

_REGRESSION_TARGET = "X1[:, 0] + np.sin(X2[:, 1])"
_CLASSIFICATION_TARGET = 'np.where(X1[:, 0] + X2[:, 0] > 0, "a", "b")'


def _examples_doc(cls: type, classifier: bool, example_args: str, example_extra: str) -> str:
    """The Examples section of a baseline (see ``_EXAMPLES_DOC``)."""
    examples = _EXAMPLES_DOC.format(
        name=cls.__name__,
        args=example_args,
        target=_CLASSIFICATION_TARGET if classifier else _REGRESSION_TARGET,
    )
    if classifier:
        examples += "    >>> model.classes_\n    array(['a', 'b'], dtype='<U1')\n"
    if example_extra:
        examples += "".join(f"    {line}\n" for line in example_extra.split("\n"))
    return examples


def _fill_doc(
    sections: str,
    ridge: str = "Ridge parameter: ``dual = (K + alpha I)^{-1} y``.",
    example_args: str = "",
    example_extra: str = "",
    **parts: str,
) -> Callable[[type], type]:
    """Class decorator that completes a baseline's docstring (a real ``__doc__``, for
    ``help()``, the API pages and the doctests).

    ``sections`` is the family's Parameters, Attributes, See Also and Examples sections,
    one text for its regressor and its classifier, put at the class's placeholder line
    ``    {sections}``. In it, ``{Task}`` reads ``Regressor`` or ``Classifier``, and the
    placeholder lines are filled: ``parameters`` (the whole Parameters section of a
    family without parameters of its own), ``task_parameters`` (the classifiers' loss
    parameters, or the regressors' ``alpha``, described by ``ridge``: kernel ridge by
    default), ``common_parameters``, ``fit_attributes``, ``grams_attributes`` (shared
    texts), ``counterpart`` (the family's estimator for the other task),
    ``mvml_see_also`` (the MVML estimator compared with), ``examples`` (this class's
    constructor arguments ``example_args``, then the lines ``example_extra``) and each of
    ``parts`` (required).
    A classifier's Attributes section starts with ``classes_``.
    """

    def decorate(cls: type) -> type:
        classifier = getattr(cls, "_is_classifier", False)
        task = "Classifier" if classifier else "Regressor"
        other = "Regressor" if classifier else "Classifier"
        shared = {
            "task_parameters": _LOSS_DOC if classifier else _RIDGE_DOC.format(ridge=ridge),
            "common_parameters": _COMMON_DOC,
            "fit_attributes": _FIT_ATTRIBUTES_DOC,
            "grams_attributes": _GRAMS_ATTRIBUTES_DOC,
            "counterpart": _COUNTERPART_DOC.format(
                other=cls.__name__.replace(task, other),
                task="regression" if classifier else "classification",
            ),
            "mvml_see_also": _MVML_SEE_ALSO_DOC,
            "examples": _examples_doc(cls, classifier, example_args, example_extra),
        }
        doc = fill_placeholders(cls.__doc__ or "", {"sections": sections}, cls.__name__)
        doc = fill_placeholders(doc, {"parameters": _PARAMETERS_DOC}, cls.__name__, required=False)
        # parts first: a part may hold shared placeholders
        doc = fill_placeholders(doc, parts, cls.__name__)
        doc = fill_placeholders(doc, shared, cls.__name__, required=False)
        doc = doc.replace("{Task}", task)
        if classifier:
            if _ATTRIBUTES_HEADING not in doc:
                raise ValueError(f"{cls.__name__}: no Attributes section for classes_")
            doc = doc.replace(_ATTRIBUTES_HEADING, _ATTRIBUTES_HEADING + _CLASSES_DOC[1:], 1)
            # class_weight closes the Parameters section (the blank line before Attributes)
            head, sep, tail = doc.partition("\n\n    " + _ATTRIBUTES_HEADING.strip(" "))
            doc = head.rstrip("\n") + "\n" + _CLASS_WEIGHT_DOC.rstrip("\n") + sep + tail
        cls.__doc__ = doc
        return cls

    return decorate


def _init_common(self, kernel, kernel_params, n_landmarks, landmarks, views, random_state):
    self.kernel = kernel
    self.kernel_params = kernel_params
    self.n_landmarks = n_landmarks
    self.landmarks = landmarks
    self.views = views
    self.random_state = random_state


# ---------------------------------------------------------------------------- single view

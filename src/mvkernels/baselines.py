"""Baselines of the MVML paper, with the same multi-view input as the MVML estimators.

Every estimator here takes a list of views (or one 2-D array cut by ``views``, see
:func:`mvkernels._validation.check_views`), a per-view kernel (:mod:`mvkernels.kernels`;
default Gaussian with sigma = mean pairwise training distance, MVML paper Sec. 4.2) and an optional
block Nystrom approximation (``n_landmarks``, :class:`mvkernels.nystrom.BlockNystrom`:
the same landmark samples for every view, as MVML uses in the paper's Table 1, so every
method of that table sees the same approximated kernels ``K_l ~ U_l U_l^T``).

The methods (sources, and the choices each one leaves open, are in ``docs/baselines.md``):

===========================  ===================================================  ============
estimator                    method                                               source
===========================  ===================================================  ============
SingleViewRegressor /        kernel ridge (or SVM) on one view; the view is the   MVML paper
SingleViewClassifier         best by ``cv``-fold CV *on the training set*         Sec. 4
EarlyFusionRegressor /       one kernel on the concatenated views                 MVML paper
EarlyFusionClassifier                                                             Sec. 4 (ef)
LateFusionRegressor /        one model per view, outputs averaged                 MVML paper
LateFusionClassifier                                                              Sec. 4 (lf)
LpMKLRegressor /             lp-norm multiple kernel learning,                    Kloft et al.
LpMKLClassifier              ``K = sum_m beta_m K_m``, ``||beta||_p = 1``         2011 (JMLR)
OKLRegressor /               output kernel learning, ``k(x, x') L``,              Dinuzzo et al.
OKLClassifier                block coordinate descent on ``C`` and ``L``          2011 (ICML)
MLKRRegressor /              metric learning for kernel regression                Weinberger &
MLKRClassifier               (own implementation, L-BFGS)                         Tesauro 2007
===========================  ===================================================  ============

Losses and targets: the regressors use the square loss (kernel ridge, no intercept, like
MVML). The classifiers use one-vs-all ``+-1`` target columns (like
:class:`mvkernels.MVMLClassifier`; a single column for two classes) with
``loss="hinge"`` (a binary SVM per column: ``sklearn.svm.SVC`` on the precomputed
kernel, with intercept) or ``loss="squared"`` (kernel ridge on the ``+-1`` columns,
the "kernel regression" the MVML paper applies lpMKL with); prediction is the class of
largest output.

Nystrom mode builds the ``n x n`` approximate Gram matrices ``U_l U_l^T`` (and
``U*_l U_l^T`` at predict time): exact kernel machines on the approximated kernels, meant
for the papers' sizes (a few thousand training samples), not for millions of rows.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ._linalg import robust_eigh, robust_eigvalsh
from ._threads import serial_blas
from ._validation import (
    KernelSpec,
    as_real_array,
    check_precomputed_kernel,
    check_psd_gram,
    check_real_targets,
    check_targets_finite,
    check_views,
    common_constraints,
    nonnegative_real,
    positive_int,
    positive_real,
    validate_array_input,
)
from .kernels import make_view_kernels
from .nystrom import BlockNystrom, resolve_n_landmarks, uniform_indices

if TYPE_CHECKING:
    from sklearn.svm import SVC

__all__ = [
    "ViewGrams",
    "kernel_ridge_dual",
    "lpmkl_weight_update",
    "okl_objective",
    "okl_c_step",
    "okl_l_step",
    "mlkr_loss_grad",
    "mlkr_fit",
    "SingleViewRegressor",
    "SingleViewClassifier",
    "EarlyFusionRegressor",
    "EarlyFusionClassifier",
    "LateFusionRegressor",
    "LateFusionClassifier",
    "LpMKLRegressor",
    "LpMKLClassifier",
    "OKLRegressor",
    "OKLClassifier",
    "MLKRRegressor",
    "MLKRClassifier",
]

LOSSES = ("hinge", "squared")


# ============================================================================ numerical pieces
def _sym(K: np.ndarray) -> np.ndarray:
    return 0.5 * (K + K.T)


def kernel_ridge_dual(K: np.ndarray, Y: np.ndarray, alpha: float) -> np.ndarray:
    """Dual coefficients ``(K + alpha I)^{-1} Y`` of kernel ridge regression (Cholesky).

    ``K`` is symmetric PSD and ``alpha > 0``, so ``K + alpha I`` is positive definite.
    """
    A = _sym(K) + alpha * np.eye(K.shape[0])
    return linalg.cho_solve(
        linalg.cho_factor(A, lower=True, check_finite=False), Y, check_finite=False
    )


def lpmkl_weight_update(norms_sq: np.ndarray, p: float) -> np.ndarray:
    """Closed-form kernel weights of lp-norm MKL for fixed ``w`` (Kloft et al. 2011, eq. 12).

    ``beta_m = ||w_m||^{2/(p+1)} / (sum_m' ||w_m'||^{2p/(p+1)})^{1/p}``, the minimiser of
    ``sum_m ||w_m||^2 / beta_m`` over ``beta >= 0``, ``||beta||_p <= 1``; it has
    ``||beta||_p = 1``. ``norms_sq`` holds ``||w_m||^2`` (summed over the problems of a
    one-vs-all classifier, so the weights are shared by the classes).
    """
    norms_sq = np.maximum(np.asarray(norms_sq, dtype=np.float64), 0.0)
    if not norms_sq.sum() > 0:  # w = 0 (e.g. constant targets): keep uniform weights
        return np.full(norms_sq.shape, norms_sq.size ** (-1.0 / p))
    num = norms_sq ** (1.0 / (p + 1.0))
    den = np.sum(norms_sq ** (p / (p + 1.0))) ** (1.0 / p)
    return num / den


def okl_objective(
    K: np.ndarray, Y: np.ndarray, C: np.ndarray, L: np.ndarray, alpha: float
) -> float:
    """OKL objective (Dinuzzo et al. 2011, eq. 4)::

    ||Y - K C L||_F^2 / (2 alpha) + tr(C^T K C L) / 2 + ||L||_F^2 / 2
    """
    return _okl_objective_e(K @ C, Y, C, L, alpha)


def _okl_objective_e(
    E: np.ndarray, Y: np.ndarray, C: np.ndarray, L: np.ndarray, alpha: float
) -> float:
    R = Y - E @ L
    return float(np.sum(R * R) / (2 * alpha) + 0.5 * np.sum((C.T @ E) * L) + 0.5 * np.sum(L * L))


def okl_c_step(
    VK: np.ndarray | None, dK: np.ndarray, Y: np.ndarray, L: np.ndarray, alpha: float
) -> np.ndarray:
    """OKL C-step: the solution of ``K C L + alpha C = Y`` (Sylvester equation).

    With ``K = VK diag(dK) VK^T`` and ``L = VL diag(dL) VL^T`` (both PSD),
    ``C = VK [(VK^T Y VL) / (dK_i dL_j + alpha)] VL^T``; the exact minimiser over ``C`` of
    the (convex in C) objective :func:`okl_objective` for fixed ``L``. ``VK=None`` means
    ``K = diag(dK)`` (the problem rotated into the eigenbasis of K).
    """
    dL, VL = robust_eigh(L, what="OKL output kernel L")
    dL = np.maximum(dL, 0.0)
    Yr = Y if VK is None else VK.T @ Y
    Cr = ((Yr @ VL) / (dK[:, None] * dL[None, :] + alpha)) @ VL.T
    return Cr if VK is None else VK @ Cr


def okl_l_step(K: np.ndarray, Y: np.ndarray, C: np.ndarray, alpha: float) -> np.ndarray:
    """OKL L-step: the minimiser over symmetric ``L`` of :func:`okl_objective` for fixed C.

    Setting the symmetric part of the gradient
    ``-E^T (Y - E L) / alpha + C^T E / 2 + L`` (``E = K C``) to zero gives the Lyapunov
    equation ``(M + alpha I) L + L (M + alpha I) = E^T Y + Y^T E - alpha C^T E``,
    ``M = E^T E``, solved in the eigenbasis of ``M``:
    ``L = V [(V^T R V) / (m_i + m_j + 2 alpha)] V^T``.
    """
    return _okl_l_step_e(K @ C, Y, C, alpha)


def _okl_l_step_e(E: np.ndarray, Y: np.ndarray, C: np.ndarray, alpha: float) -> np.ndarray:
    m, V = robust_eigh(E.T @ E, what="OKL matrix E^T E")
    R = E.T @ Y
    R = R + R.T - alpha * _sym(C.T @ E)
    return _sym(V @ ((V.T @ R @ V) / (m[:, None] + m[None, :] + 2 * alpha)) @ V.T)


# ============================================================================ kernel maps
class ViewGrams:
    """Per-view Gram matrices of the training views, full or block-Nystrom.

    ``fit(Xs)`` fits the kernels (default bandwidths) or a :class:`BlockNystrom` map with
    landmarks shared by all views; :attr:`train` is the list of ``n x n`` training Gram
    matrices (``K_l`` or ``U_l U_l^T``) and :meth:`cross` the ``(m, n)`` test-train
    matrices (``k_l(X*, X)`` or ``U*_l U_l^T``).
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

    def fit(self, Xs: list[np.ndarray]) -> ViewGrams:
        self.n_views = len(Xs)
        self.n_samples = Xs[0].shape[0]
        self.n_features = [X.shape[1] for X in Xs]
        if self.n_landmarks is None:
            kernels = make_view_kernels(self.kernel, self.kernel_params, len(Xs))
            self.precomputed = kernels[0].precomputed
            rng = check_random_state(self.random_state)
            if self.precomputed:
                Xs = [check_precomputed_kernel(K, i) for i, K in enumerate(Xs)]
            for Xv, kern in zip(Xs, kernels):
                kern.fit(Xv, random_state=rng)
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
            nys = BlockNystrom(
                kernel=self.kernel,
                kernel_params=self.kernel_params,
                n_landmarks=self.n_landmarks,
                landmarks=self.landmarks,
                random_state=self.random_state,
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
            Xs = [
                check_precomputed_kernel(K, i, n_train=self.n_samples, square=False)
                for i, K in enumerate(Xs)
            ]
        return Xs

    def cross(self, Xs: list[np.ndarray]) -> list[np.ndarray]:
        """Test-train Gram matrices ``(m, n)`` of each (validated) test view."""
        if self.nystrom is not None:
            return [self.nystrom.view_features(Xv, l) @ self.U[l].T for l, Xv in enumerate(Xs)]
        if self.precomputed:
            return list(Xs)
        return [kern(Xv, self.X_fit[l]) for l, (Xv, kern) in enumerate(zip(Xs, self.kernels))]


# ============================================================================ Gram-matrix learners
def _svc(C: float, random_state: Any) -> SVC:
    from sklearn.svm import SVC

    return SVC(kernel="precomputed", C=C, random_state=random_state)


class _GramModel:
    """A kernel machine on a precomputed Gram matrix, for +-1 target columns or real targets.

    ``loss="squared"``: kernel ridge, ``dual = (K + alpha I)^{-1} Y``, no intercept.
    ``loss="hinge"``: one binary ``SVC(kernel="precomputed", C)`` per column of ``Y``
    (labels +-1), ``dual`` = its signed dual coefficients ``y_i a_i``, with intercept.
    Output ``K* dual + intercept``.
    """

    def __init__(self, loss: str, alpha: float, C: float, random_state: Any = None):
        self.loss, self.alpha, self.C, self.random_state = loss, alpha, C, random_state

    def fit(self, K: np.ndarray, Y: np.ndarray) -> _GramModel:
        n, T = Y.shape
        if self.loss == "squared":
            self.dual = kernel_ridge_dual(K, Y, self.alpha)
            self.intercept = np.zeros(T)
            return self
        self.dual = np.zeros((n, T))
        self.intercept = np.zeros(T)
        for t in range(T):
            svc = _svc(self.C, self.random_state).fit(K, Y[:, t])
            # SVC's decision is positive for classes_[1] = +1
            self.dual[svc.support_, t] = svc.dual_coef_[0]
            self.intercept[t] = svc.intercept_[0]
        return self

    def decision(self, Kx: np.ndarray) -> np.ndarray:
        return Kx @ self.dual + self.intercept


def _validate_array(est: BaseEstimator, X: Any, reset: bool) -> Any:
    """sklearn-style validation of a single 2-D array (names, widths); lists pass through."""
    return validate_array_input(est, X, reset)


class _Base(BaseEstimator):
    """Shared parameters and fit/predict plumbing of the baselines.

    Subclasses implement ``_fit_grams(grams, Y)`` (store what they need) and
    ``_decision_grams(cross) -> (m, T)``; ``_fit_grams`` gets the list of training Gram
    matrices of the views (after ``_transform_views``, e.g. one concatenated view for
    early fusion).
    """

    _is_classifier = False
    _parameter_constraints: dict = {
        **common_constraints(),
        "alpha": [positive_real()],
        "C": [positive_real()],
        "loss": [StrOptions(set(LOSSES))],
    }

    def _check_common(self) -> None:
        """Checks that involve more than one parameter (each one is checked by
        ``_parameter_constraints`` at fit)."""

    def _transform_views(self, Xs: list[np.ndarray]) -> list[np.ndarray]:
        return Xs

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
                f"{type(self).__name__} needs samples of at least 2 classes; "
                f"y has only one class: {self.classes_[0]}"
            )
        if len(self.classes_) == 2:
            return np.where(yi == 1, 1.0, -1.0)[:, None]
        Y = -np.ones((yi.shape[0], len(self.classes_)))
        Y[np.arange(yi.shape[0]), yi] = 1.0
        return Y

    _multi_output = False

    def _maps(self) -> ViewGrams:
        return ViewGrams(
            self.kernel, self.kernel_params, self.n_landmarks, self.landmarks, self.random_state
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None) -> _Base:
        """Fit on views ``X`` (list of arrays, or one array cut by ``views``) and ``y``."""
        self._check_common()
        X = _validate_array(self, X, reset=True)
        Xs = check_views(
            X,
            views=self.views,
            ensure_min_samples=2,
            feature_names=getattr(self, "feature_names_in_", None),
        )
        Y = self._targets(y)
        if Y.shape[0] != Xs[0].shape[0]:
            raise ValueError(f"y has {Y.shape[0]} samples but the views have {Xs[0].shape[0]}")
        self.n_views_ = len(Xs)
        self.n_features_view_ = [Xv.shape[1] for Xv in Xs]
        with serial_blas(Xs[0].shape[0]):
            try:
                self.grams_ = self._maps().fit(self._transform_views(Xs))
            except ValueError as exc:
                renamed = self._rename_error(exc)
                if renamed is exc:
                    raise
                raise renamed from exc
            self._fit_grams(self.grams_.train, Y)
        return self

    def _rename_error(self, exc: ValueError) -> ValueError:
        """Errors about the transformed views, named for the user (early fusion: the
        concatenation is not "view 0")."""
        return exc

    def _decision(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "grams_")
        X = _validate_array(self, X, reset=False)
        precomputed = self.grams_.precomputed
        Xs = check_views(
            X,
            views=self.views,
            n_views=self.n_views_,
            n_features=None if precomputed else self.n_features_view_,
            feature_names=getattr(self, "feature_names_in_", None),
        )
        Xs = self.grams_.check(self._transform_views(Xs), views=None)
        with serial_blas(self.grams_.n_samples):
            return self._decision_grams(self.grams_.cross(Xs))

    def predict(self, X: Any) -> np.ndarray:
        """Predicted targets (regressors) or class labels (classifiers)."""
        D = self._decision(X)
        if not self._is_classifier:
            return D[:, 0] if self._y_1d else D
        if D.shape[1] == 1:
            return self.classes_[(D[:, 0] > 0).astype(int)]
        return self.classes_[np.argmax(D, axis=1)]


class _DecisionMixin:
    """``decision_function`` of the classifiers (regressors have none)."""

    _decision: Callable[[Any], np.ndarray]  # provided by the estimator base class

    def decision_function(self, X: Any) -> np.ndarray:
        """Outputs: shape (n,) for two classes (positive = ``classes_[1]``), else (n, K)."""
        D = self._decision(X)
        return D[:, 0] if D.shape[1] == 1 else D


_COMMON_DOC = """
    kernel : str, callable or list, default="rbf"
        One kernel for every view or one per view (:mod:`mvkernels.kernels`).
    kernel_params : dict, list of dict or None
        Kernel parameters; default Gaussian bandwidth = mean pairwise training distance.
    n_landmarks : None, int or float in (0, 1], default=None
        None: full kernels. Otherwise the block Nystrom approximation with landmarks
        shared by the views (:class:`mvkernels.nystrom.BlockNystrom`).
    landmarks : {"uniform", "kmeans++"}, default="uniform"
    views : None or list
        How to cut a single 2-D array into views (:func:`mvkernels.check_views`).
    random_state : int, RandomState or None
        Landmarks, bandwidth subsampling, CV folds.
"""


def _init_common(self, kernel, kernel_params, n_landmarks, landmarks, views, random_state):
    self.kernel = kernel
    self.kernel_params = kernel_params
    self.n_landmarks = n_landmarks
    self.landmarks = landmarks
    self.views = views
    self.random_state = random_state


# ---------------------------------------------------------------------------- single view
class _SingleView(_Base):
    _parameter_constraints: dict = {
        **_Base._parameter_constraints,
        "view": [StrOptions({"best"}), Interval(Integral, 0, None, closed="left")],
        "cv": [positive_int(2)],
    }

    def _model(self) -> _GramModel:
        return _GramModel(
            getattr(self, "loss", "squared"), self.alpha, getattr(self, "C", 1.0), self.random_state
        )

    def _cv_score(self, K: np.ndarray, Y: np.ndarray) -> float:
        """Mean validation score on the training set: accuracy, or minus the MSE."""
        n = K.shape[0]
        if self._is_classifier:
            labels = Y.argmax(1) if Y.shape[1] > 1 else (Y[:, 0] > 0).astype(int)
            counts = np.bincount(labels)
            k = max(2, min(self.cv, counts[counts > 0].min()))
            splits = (
                StratifiedKFold(k, shuffle=True, random_state=0).split(np.zeros(n), labels)
                if counts[counts > 0].min() >= 2
                else KFold(min(self.cv, n), shuffle=True, random_state=0).split(np.zeros(n))
            )
        else:
            splits = KFold(min(self.cv, n), shuffle=True, random_state=0).split(np.zeros(n))
        scores = []
        for tr, va in splits:
            D = self._model().fit(K[np.ix_(tr, tr)], Y[tr]).decision(K[np.ix_(va, tr)])
            if self._is_classifier:
                pred = D.argmax(1) if D.shape[1] > 1 else (D[:, 0] > 0).astype(int)
                scores.append(np.mean(pred == labels[va]))
            else:
                scores.append(-np.mean((D - Y[va]) ** 2))
        return float(np.mean(scores))

    def _fit_grams(self, grams: list[np.ndarray], Y: np.ndarray) -> None:
        if self.view == "best":
            self.view_cv_scores_ = np.array([self._cv_score(K, Y) for K in grams])
            self.best_view_ = int(np.argmax(self.view_cv_scores_))
        else:
            if self.view >= len(grams):
                raise ValueError(f"view={self.view} but X has {len(grams)} view(s)")
            self.view_cv_scores_ = None
            self.best_view_ = int(self.view)
        self.model_ = self._model().fit(grams[self.best_view_], Y)

    def _decision_grams(self, cross: list[np.ndarray]) -> np.ndarray:
        return self.model_.decision(cross[self.best_view_])


class SingleViewRegressor(RegressorMixin, _SingleView):
    (
        """Kernel ridge regression on one view (the MVML paper's "KRR, one view" baseline).

    With ``view="best"`` each view is scored by ``cv``-fold cross-validation (mean squared
    error) on the training set only, and the best one is refitted on all training data;
    :attr:`best_view_` says which.

    Parameters
    ----------
    alpha : float, default=1.0
        Ridge parameter: ``dual = (K + alpha I)^{-1} y``.
    view : "best" or int, default="best"
    cv : int, default=3
"""
        + _COMMON_DOC
        + """
    Attributes
    ----------
    best_view_ : int
    view_cv_scores_ : ndarray of shape (n_views,) or None
        Minus the CV mean squared error of each view (None when ``view`` is given).
    model_ : fitted kernel machine on the chosen view
    grams_ : ViewGrams
    """
    )

    def __init__(
        self,
        alpha: float = 1.0,
        view: Any = "best",
        cv: int = 3,
        kernel: Any = "rbf",
        kernel_params: Any = None,
        n_landmarks: int | float | None = None,
        landmarks: str = "uniform",
        views: Any = None,
        random_state: Any = None,
    ):
        self.alpha, self.view, self.cv = alpha, view, cv
        _init_common(self, kernel, kernel_params, n_landmarks, landmarks, views, random_state)


class SingleViewClassifier(_DecisionMixin, ClassifierMixin, _SingleView):
    (
        """SVM (or kernel ridge on +-1 targets) on one view: the paper's "1 view SVM" column.

    With ``view="best"`` each view is scored by stratified ``cv``-fold cross-validation
    accuracy on the training set only (the paper reports "the best result obtained when
    using only one view"; we pick the view without looking at the test set).

    Parameters
    ----------
    C : float, default=1.0
        SVM box constant (``loss="hinge"``).
    alpha : float, default=1.0
        Ridge parameter (``loss="squared"``).
    loss : {"hinge", "squared"}, default="hinge"
    view : "best" or int, default="best"
    cv : int, default=3
"""
        + _COMMON_DOC
        + """
    Attributes
    ----------
    classes_, best_view_, view_cv_scores_ (CV accuracy per view), model_, grams_
    """
    )

    _is_classifier = True

    def __init__(
        self,
        C: float = 1.0,
        alpha: float = 1.0,
        loss: str = "hinge",
        view: Any = "best",
        cv: int = 3,
        kernel: Any = "rbf",
        kernel_params: Any = None,
        n_landmarks: int | float | None = None,
        landmarks: str = "uniform",
        views: Any = None,
        random_state: Any = None,
    ):
        self.C, self.alpha, self.loss, self.view, self.cv = C, alpha, loss, view, cv
        _init_common(self, kernel, kernel_params, n_landmarks, landmarks, views, random_state)


# ---------------------------------------------------------------------------- early fusion
class _EarlyFusion(_Base):
    _parameter_constraints: dict = {
        **_Base._parameter_constraints,
        "kernel": [KernelSpec(allow_list=False, allow_precomputed=False)],
    }

    def _check_common(self) -> None:
        if isinstance(self.kernel_params, (list, tuple)):
            raise TypeError(
                "early fusion uses one kernel on the concatenated views: "
                "kernel_params must be one dict, not a list"
            )

    def _transform_views(self, Xs: list[np.ndarray]) -> list[np.ndarray]:
        return [np.hstack(Xs)]

    def _rename_error(self, exc: ValueError) -> ValueError:
        msg = str(exc)
        if msg.startswith("view 0"):
            return type(exc)("the concatenated views (early fusion)" + msg[len("view 0") :])
        return exc

    def _fit_grams(self, grams: list[np.ndarray], Y: np.ndarray) -> None:
        self.model_ = _GramModel(
            getattr(self, "loss", "squared"), self.alpha, getattr(self, "C", 1.0), self.random_state
        ).fit(grams[0], Y)

    def _decision_grams(self, cross: list[np.ndarray]) -> np.ndarray:
        return self.model_.decision(cross[0])


class EarlyFusionRegressor(RegressorMixin, _EarlyFusion):
    (
        """Kernel ridge regression with one kernel on the concatenated views (early fusion).

    The default Gaussian bandwidth is the mean pairwise distance of the concatenated
    training vectors; with ``n_landmarks`` the Nystrom map is fitted on the concatenation.

    Parameters
    ----------
    alpha : float, default=1.0
"""
        + _COMMON_DOC
        + """
    Attributes
    ----------
    model_, grams_ (one "view": the concatenation)
    """
    )

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


class EarlyFusionClassifier(_DecisionMixin, ClassifierMixin, _EarlyFusion):
    (
        """SVM (or kernel ridge on +-1 targets) on the concatenated views: the paper's efSVM.

    Parameters
    ----------
    C : float, default=1.0
    alpha : float, default=1.0
    loss : {"hinge", "squared"}, default="hinge"
"""
        + _COMMON_DOC
        + """
    Attributes
    ----------
    classes_, model_, grams_
    """
    )

    _is_classifier = True

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
    ):
        self.C, self.alpha, self.loss = C, alpha, loss
        _init_common(self, kernel, kernel_params, n_landmarks, landmarks, views, random_state)


# ---------------------------------------------------------------------------- late fusion
class _LateFusion(_Base):
    def _fit_grams(self, grams: list[np.ndarray], Y: np.ndarray) -> None:
        self.models_ = [
            _GramModel(
                getattr(self, "loss", "squared"),
                self.alpha,
                getattr(self, "C", 1.0),
                self.random_state,
            ).fit(K, Y)
            for K in grams
        ]

    def _decision_grams(self, cross: list[np.ndarray]) -> np.ndarray:
        return np.mean([m.decision(Kx) for m, Kx in zip(self.models_, cross)], axis=0)


class LateFusionRegressor(RegressorMixin, _LateFusion):
    (
        """Late fusion: one kernel ridge model per view, predictions averaged (uniform weights).

    Parameters
    ----------
    alpha : float, default=1.0
        Ridge parameter of every per-view model.
"""
        + _COMMON_DOC
        + """
    Attributes
    ----------
    models_ : list of per-view kernel machines
    grams_ : ViewGrams
    """
    )

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


class LateFusionClassifier(_DecisionMixin, ClassifierMixin, _LateFusion):
    (
        """Late fusion: one SVM per view, decision values averaged, largest wins (lfSVM).

    The paper does not say how its lfSVM combines the views; averaging the one-vs-all
    decision values with equal weights is our choice (``docs/baselines.md``).

    Parameters
    ----------
    C : float, default=1.0
    alpha : float, default=1.0
    loss : {"hinge", "squared"}, default="hinge"
"""
        + _COMMON_DOC
        + """
    Attributes
    ----------
    classes_, models_, grams_
    """
    )

    _is_classifier = True

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
    ):
        self.C, self.alpha, self.loss = C, alpha, loss
        _init_common(self, kernel, kernel_params, n_landmarks, landmarks, views, random_state)


# ---------------------------------------------------------------------------- lpMKL
class _LpMKL(_Base):
    _parameter_constraints: dict = {
        **_Base._parameter_constraints,
        "p": [Interval(Real, 1, np.inf, closed="left")],
        "max_iter": [positive_int()],
        "tol": [nonnegative_real()],
    }

    def _fit_grams(self, grams: list[np.ndarray], Y: np.ndarray) -> None:
        loss = getattr(self, "loss", "squared")
        v = len(grams)
        beta = np.full(v, v ** (-1.0 / self.p))  # ||beta||_p = 1
        history: list[float] = []
        converged = False
        # ``it`` is read after the loop (n_iter_), which B007 does not see
        for it in range(1, self.max_iter + 1):  # noqa: B007
            K = sum(b * Km for b, Km in zip(beta, grams))
            model = _GramModel(loss, self.alpha, getattr(self, "C", 1.0), self.random_state).fit(
                K, Y
            )
            a = model.dual
            # ||w_m||^2 = beta_m^2 sum_t a_t^T K_m a_t, summed over the one-vs-all columns
            quad = np.array([np.sum(a * (Km @ a)) for Km in grams])
            history.append(self._objective(K, Y, model, quad, beta))
            new_beta = lpmkl_weight_update(beta**2 * quad, self.p)
            change = np.max(np.abs(new_beta - beta))
            beta = new_beta
            if change <= self.tol:
                converged = True
                break
        K = sum(b * Km for b, Km in zip(beta, grams))
        self.model_ = _GramModel(loss, self.alpha, getattr(self, "C", 1.0), self.random_state).fit(
            K, Y
        )
        quad = np.array([np.sum(self.model_.dual * (Km @ self.model_.dual)) for Km in grams])
        history.append(self._objective(K, Y, self.model_, quad, beta))
        if not converged:
            warnings.warn(
                f"lpMKL did not converge in {self.max_iter} iterations "
                f"(last weight change {change:.2g} > tol {self.tol})",
                ConvergenceWarning,
                stacklevel=4,  # the caller of fit (through _fit_context)
            )
        self.kernel_weights_ = beta
        self.n_iter_ = it
        self.objective_ = np.asarray(history)

    def _objective(
        self,
        K: np.ndarray,
        Y: np.ndarray,
        model: _GramModel,
        quad: np.ndarray,
        beta: np.ndarray,
    ) -> float:
        """Primal value ``loss + reg * sum_m ||w_m||^2 / beta_m`` for the current beta.

        ``sum_m ||w_m||^2 / beta_m = sum_m beta_m a^T K_m a``. Square loss:
        ``||Y - K a||^2 + alpha * that``; hinge: ``C sum hinge + that / 2``.
        """
        reg = float(np.dot(beta, quad))
        D = K @ model.dual + model.intercept
        if getattr(self, "loss", "squared") == "squared":
            return float(np.sum((Y - D) ** 2) + self.alpha * reg)
        return float(self.C * np.sum(np.maximum(0.0, 1.0 - Y * D)) + 0.5 * reg)

    def _decision_grams(self, cross: list[np.ndarray]) -> np.ndarray:
        Kx = sum(b * Km for b, Km in zip(self.kernel_weights_, cross))
        return self.model_.decision(Kx)


_LPMKL_DOC = """
    Kernel ``K = sum_m beta_m K_m`` over the views, ``beta >= 0``, ``||beta||_p = 1``;
    the kernel machine and the weights are learned by alternating minimisation (Kloft,
    Brefeld, Sonnenburg & Zien, "lp-Norm Multiple Kernel Learning", JMLR 12, 2011):
    for fixed ``beta`` the machine is solved exactly on ``K``; for fixed machine the
    weights have the closed form of their eq. 12 (:func:`lpmkl_weight_update`), with
    ``||w_m||^2 = beta_m^2 a^T K_m a`` from the dual coefficients ``a``. Starts from
    uniform weights ``v^{-1/p}``; stops when no weight moves more than ``tol``.
    One-vs-all classifiers share one ``beta`` (``||w_m||^2`` summed over classes).
"""


class LpMKLRegressor(RegressorMixin, _LpMKL):
    (
        """lp-norm MKL with kernel ridge regression (square loss).
"""
        + _LPMKL_DOC
        + """
    Parameters
    ----------
    alpha : float, default=1.0
        Ridge parameter: minimises ``||y - f||^2 + alpha sum_m ||w_m||^2 / beta_m``.
    p : float >= 1, default=2.0
        Norm of the kernel weights (p = 1: sparse MKL; large p: near-uniform weights).
    max_iter : int, default=50
    tol : float, default=1e-4
"""
        + _COMMON_DOC
        + """
    Attributes
    ----------
    kernel_weights_ : ndarray of shape (n_views,), ``||beta||_p = 1``
    objective_ : ndarray
        Primal objective at each iteration (non-increasing: exact block minimisation).
    n_iter_ : int
    model_, grams_
    """
    )

    def __init__(
        self,
        alpha: float = 1.0,
        p: float = 2.0,
        max_iter: int = 50,
        tol: float = 1e-4,
        kernel: Any = "rbf",
        kernel_params: Any = None,
        n_landmarks: int | float | None = None,
        landmarks: str = "uniform",
        views: Any = None,
        random_state: Any = None,
    ):
        self.alpha, self.p, self.max_iter, self.tol = alpha, p, max_iter, tol
        _init_common(self, kernel, kernel_params, n_landmarks, landmarks, views, random_state)


class LpMKLClassifier(_DecisionMixin, ClassifierMixin, _LpMKL):
    (
        """lp-norm MKL classifier: SVM (``loss="hinge"``) or kernel ridge on +-1 targets.
"""
        + _LPMKL_DOC
        + """
    The MVML paper's Table 1 applies lpMKL "to kernel regression": that is
    ``loss="squared"`` (one-vs-all kernel ridge on +-1 columns). With ``loss="hinge"`` each
    column is a binary SVC with intercept; its objective is
    ``C sum hinge + 1/2 sum_m ||w_m||^2 / beta_m``.

    Parameters
    ----------
    C : float, default=1.0
    alpha : float, default=1.0
    loss : {"hinge", "squared"}, default="hinge"
    p : float >= 1, default=2.0
    max_iter : int, default=50
    tol : float, default=1e-4
"""
        + _COMMON_DOC
        + """
    Attributes
    ----------
    classes_, kernel_weights_, objective_, n_iter_, model_, grams_
    """
    )

    _is_classifier = True

    def __init__(
        self,
        C: float = 1.0,
        alpha: float = 1.0,
        loss: str = "hinge",
        p: float = 2.0,
        max_iter: int = 50,
        tol: float = 1e-4,
        kernel: Any = "rbf",
        kernel_params: Any = None,
        n_landmarks: int | float | None = None,
        landmarks: str = "uniform",
        views: Any = None,
        random_state: Any = None,
    ):
        self.C, self.alpha, self.loss = C, alpha, loss
        self.p, self.max_iter, self.tol = p, max_iter, tol
        _init_common(self, kernel, kernel_params, n_landmarks, landmarks, views, random_state)


# ---------------------------------------------------------------------------- OKL
class _OKL(_Base):
    _parameter_constraints: dict = {
        **_Base._parameter_constraints,
        "max_iter": [positive_int()],
        "tol": [nonnegative_real()],
    }

    def _fit_grams(self, grams: list[np.ndarray], Y: np.ndarray) -> None:
        lam = self.alpha
        K = _sym(cast(np.ndarray, sum(grams) / len(grams)))
        dK, VK = robust_eigh(K, what="OKL input kernel")
        dK = np.maximum(dK, 0.0)
        T = Y.shape[1]
        L = np.eye(T)
        history: list[float] = []
        converged = False
        # The loop runs in the eigenbasis of K (K = VK diag(dK) VK^T): with
        # Yr = VK^T Y, Cr = VK^T C the objective is the same problem with K = diag(dK),
        # so every iteration costs O(n T^2) instead of O(n^2 T).
        Yr = VK.T @ Y
        for it in range(1, self.max_iter + 1):
            Cr = okl_c_step(None, dK, Yr, L, lam)
            Er = dK[:, None] * Cr
            L = _okl_l_step_e(Er, Yr, Cr, lam)
            history.append(_okl_objective_e(Er, Yr, Cr, L, lam))
            if it > 1 and history[-2] - history[-1] <= self.tol * abs(history[-2]):
                converged = True
                break
        Cr = okl_c_step(None, dK, Yr, L, lam)
        history.append(_okl_objective_e(dK[:, None] * Cr, Yr, Cr, L, lam))
        C = VK @ Cr
        if not converged:
            warnings.warn(
                f"OKL did not converge in {self.max_iter} iterations",
                ConvergenceWarning,
                stacklevel=4,  # the caller of fit (through _fit_context)
            )
        self.coef_ = C
        self.output_kernel_ = L
        self.output_kernel_min_eigenvalue_ = float(
            robust_eigvalsh(L, what="OKL output kernel L")[0]
        )
        self.objective_ = np.asarray(history)
        self.n_iter_ = it

    def _decision_grams(self, cross: list[np.ndarray]) -> np.ndarray:
        Kx = sum(cross) / len(cross)
        return Kx @ self.coef_ @ self.output_kernel_


_OKL_DOC = """
    Separable (decomposable) kernel ``K(x, x') = k(x, x') L`` with a learned PSD output
    kernel ``L`` (T x T), T = number of outputs (Dinuzzo, Ong, Gehler & Pillonetto,
    "Learning Output Kernels with Block Coordinate Descent", ICML 2011). Input kernel
    ``k`` = mean of the view kernels (our choice: OKL is not a multi-view method; see
    ``docs/baselines.md``). Objective (their eq. 4, ``alpha`` = their lambda)::

        min_{C, L >= 0}  ||Y - K C L||_F^2 / (2 alpha) + tr(C^T K C L) / 2 + ||L||_F^2 / 2

    Block coordinate descent from ``L = I``: the C-step solves the Sylvester equation
    ``K C L + alpha C = Y`` through the eigendecompositions of ``K`` (once) and ``L``; the
    L-step solves the Lyapunov equation
    ``(E^T E + alpha I) L + L (E^T E + alpha I) = E^T Y + Y^T E - alpha C^T E`` with
    ``E = K C`` (exact minimiser over symmetric ``L``). Stops when the relative decrease
    of the objective is below ``tol``. Prediction ``f(x) = L C^T k(X, x)``.
"""


class OKLRegressor(RegressorMixin, _OKL):
    (
        """Output kernel learning for multi-output regression.
"""
        + _OKL_DOC
        + """
    Parameters
    ----------
    alpha : float, default=1.0
    max_iter : int, default=300
    tol : float, default=1e-5
"""
        + _COMMON_DOC
        + """
    Attributes
    ----------
    coef_ : ndarray (n, T)
    output_kernel_ : ndarray (T, T)
    output_kernel_min_eigenvalue_ : float
    objective_ : ndarray (non-increasing)
    n_iter_ : int
    """
    )

    _multi_output = True

    def __init__(
        self,
        alpha: float = 1.0,
        max_iter: int = 300,
        tol: float = 1e-5,
        kernel: Any = "rbf",
        kernel_params: Any = None,
        n_landmarks: int | float | None = None,
        landmarks: str = "uniform",
        views: Any = None,
        random_state: Any = None,
    ):
        self.alpha, self.max_iter, self.tol = alpha, max_iter, tol
        _init_common(self, kernel, kernel_params, n_landmarks, landmarks, views, random_state)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class OKLClassifier(_DecisionMixin, ClassifierMixin, _OKL):
    (
        """Output kernel learning on one-vs-all +-1 targets (the MVML paper's OKL column).

    The outputs are the K one-vs-all columns (one column for two classes); ``L`` learns
    how the classes' decision functions are related. Prediction: the largest output.
"""
        + _OKL_DOC
        + """
    Parameters
    ----------
    alpha : float, default=1.0
    max_iter : int, default=300
    tol : float, default=1e-5
"""
        + _COMMON_DOC
        + """
    Attributes
    ----------
    classes_, coef_, output_kernel_, output_kernel_min_eigenvalue_, objective_, n_iter_
    """
    )

    _is_classifier = True

    def __init__(
        self,
        alpha: float = 1.0,
        max_iter: int = 300,
        tol: float = 1e-5,
        kernel: Any = "rbf",
        kernel_params: Any = None,
        n_landmarks: int | float | None = None,
        landmarks: str = "uniform",
        views: Any = None,
        random_state: Any = None,
    ):
        self.alpha, self.max_iter, self.tol = alpha, max_iter, tol
        _init_common(self, kernel, kernel_params, n_landmarks, landmarks, views, random_state)


# ---------------------------------------------------------------------------- MLKR
def _nw_weights(Z: np.ndarray) -> np.ndarray:
    """Row-normalised leave-one-out weights ``k_ij / sum_{j != i} k_ij``, ``k = exp(-d^2)``."""
    sq = np.sum(Z * Z, axis=1)
    D2 = np.maximum(sq[:, None] + sq[None, :] - 2 * Z @ Z.T, 0.0)
    np.fill_diagonal(D2, np.inf)
    D2 -= D2.min(axis=1, keepdims=True)  # shift each row: ratios unchanged, no underflow
    P = np.exp(-D2)
    return P / P.sum(axis=1, keepdims=True)


def mlkr_loss_grad(A: np.ndarray, X: np.ndarray, Y: np.ndarray) -> tuple[float, np.ndarray]:
    """MLKR loss and gradient (Weinberger & Tesauro 2007, eq. 3-4), vector targets.

    ``loss = sum_i ||yhat_i - y_i||^2`` with the leave-one-out Nadaraya-Watson estimate
    ``yhat_i = sum_{j != i} P_ij y_j``, ``P_ij = k_ij / sum_{j != i} k_ij``,
    ``k_ij = exp(-||A (x_i - x_j)||^2)``. With ``r_i = yhat_i - y_i`` and
    ``W_ij = P_ij <r_i, y_j - yhat_i>`` the gradient is
    ``-4 A sum_ij W_ij (x_i - x_j)(x_i - x_j)^T = -4 A X^T (diag(S 1) - S) X``,
    ``S = W + W^T``.
    """
    XA = X @ A.T
    P = _nw_weights(XA)
    Yhat = P @ Y
    R = Yhat - Y
    W = P * (R @ Y.T - np.sum(R * Yhat, axis=1, keepdims=True))
    S = W + W.T
    Lap = np.diag(S.sum(axis=1)) - S
    grad = -4.0 * (XA.T @ Lap) @ X
    return float(np.sum(R * R)), grad


def mlkr_fit(
    X: np.ndarray, Y: np.ndarray, n_components: int | None = None, max_iter: int = 100
) -> tuple[np.ndarray, Any]:
    """Learn the MLKR map ``A`` (m x d) by L-BFGS from a scaled PCA start.

    Start: the top ``m`` principal directions of ``X`` (all ``d`` when ``n_components`` is
    None), scaled so that the median squared distance between mapped training points is 1
    (so the Gaussian weights neither underflow nor all equal 1). Returns ``A`` and the
    ``scipy.optimize`` result.
    """
    from scipy.optimize import minimize

    n, d = X.shape
    m = d if n_components is None else n_components
    if isinstance(m, bool) or not isinstance(m, Integral) or not 1 <= int(m) <= d:
        raise ValueError(
            f"n_components must be an int in [1, {d}] (input columns), got {n_components!r}"
        )
    Xc = X - X.mean(axis=0)
    _, _, Vt = linalg.svd(Xc, full_matrices=False)
    A0 = np.zeros((m, d))
    k = min(m, Vt.shape[0])
    A0[:k] = Vt[:k]
    if k < m:  # more components than the data's rank: complete with coordinate axes
        A0[k:] = np.eye(d)[: m - k]
    Z = X @ A0.T
    sq = np.sum(Z * Z, 1)
    D2 = np.maximum(sq[:, None] + sq[None, :] - 2 * Z @ Z.T, 0.0)
    med = float(np.median(D2[np.triu_indices(n, 1)])) if n > 1 else 1.0
    if med > 0:
        A0 /= np.sqrt(med)

    def fun(a):
        loss, g = mlkr_loss_grad(a.reshape(m, d), X, Y)
        return loss, g.ravel()

    with serial_blas(n):
        res = minimize(fun, A0.ravel(), jac=True, method="L-BFGS-B", options={"maxiter": max_iter})
    return res.x.reshape(m, d), res


class _MLKR(BaseEstimator):
    """MLKR on the concatenated (standardised) views, Nadaraya-Watson prediction."""

    _is_classifier = False
    _multi_output = False
    _parameter_constraints: dict = {
        "n_components": [positive_int(), None],
        "max_iter": [positive_int()],
        "n_landmarks": common_constraints()["n_landmarks"],
        "views": ["array-like", None],
        "random_state": ["random_state"],
    }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None) -> _MLKR:
        """Fit on views ``X`` and targets / labels ``y``."""
        X = _validate_array(self, X, reset=True)
        Xs = check_views(
            X,
            views=self.views,
            ensure_min_samples=2,
            feature_names=getattr(self, "feature_names_in_", None),
        )
        Z = np.hstack(Xs)
        Y = _Base._targets(self, y)
        if Y.shape[0] != Z.shape[0]:
            raise ValueError(f"y has {Y.shape[0]} samples but the views have {Z.shape[0]}")
        self.n_views_ = len(Xs)
        self.n_features_view_ = [V.shape[1] for V in Xs]
        self.mean_ = Z.mean(axis=0)
        self.scale_ = Z.std(axis=0)
        self.scale_[self.scale_ == 0] = 1.0
        Z = (Z - self.mean_) / self.scale_
        n = Z.shape[0]
        if self.n_landmarks is None:
            idx = np.arange(n)
        else:
            idx = uniform_indices(
                n, resolve_n_landmarks(self.n_landmarks, n), check_random_state(self.random_state)
            )
            if idx.size < 2:
                raise ValueError("MLKR needs at least 2 landmark samples; raise n_landmarks")
        self.landmark_indices_ = idx
        self.components_, res = mlkr_fit(Z[idx], Y[idx], self.n_components, self.max_iter)
        self.n_iter_ = int(res.nit)
        self.loss_ = float(res.fun)
        if res.status == 1 or self.n_iter_ >= self.max_iter:  # L-BFGS-B: limit reached
            warnings.warn(
                f"MLKR stopped at max_iter={self.max_iter} L-BFGS iterations before "
                "converging; its metric (and predictions) then depend on the input "
                "scale and start. Increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,  # the caller of fit (through _fit_context)
            )
        self.train_embedding_ = Z[idx] @ self.components_.T
        self.train_targets_ = Y[idx]
        return self

    def _decision(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "components_")
        X = _validate_array(self, X, reset=False)
        Xs = check_views(
            X,
            views=self.views,
            n_views=self.n_views_,
            n_features=self.n_features_view_,
            feature_names=getattr(self, "feature_names_in_", None),
        )
        Z = ((np.hstack(Xs) - self.mean_) / self.scale_) @ self.components_.T
        E = self.train_embedding_
        d2 = np.maximum(np.sum(Z**2, 1)[:, None] + np.sum(E**2, 1)[None, :] - 2 * Z @ E.T, 0.0)
        W = np.exp(-(d2 - d2.min(axis=1, keepdims=True)))  # shifted: no 0/0 underflow
        return (W @ self.train_targets_) / W.sum(axis=1, keepdims=True)

    predict = _Base.predict


_MLKR_DOC = """
    Metric learning for kernel regression (Weinberger & Tesauro, AISTATS 2007): a linear
    map ``A`` of the concatenated, standardised views is learned (L-BFGS on
    :func:`mlkr_loss_grad`, from a scaled PCA start, :func:`mlkr_fit`) so that the
    leave-one-out Nadaraya-Watson estimate ``sum_j k_ij y_j / sum_j k_ij``,
    ``k_ij = exp(-||A (x_i - x_j)||^2)``, fits the targets; prediction is that estimate
    over the training points. Implemented here (not through ``metric-learn``, whose 0.7.0
    release fails with scikit-learn >= 1.8: it passes the removed ``force_all_finite``
    argument to ``check_X_y``). With ``n_landmarks`` the metric is learned on, and predicts
    from, a uniform random subset of that size (our reading of "MLKR at 6 / 12 / 24 %" in
    the MVML paper's Table 1). Classifiers use the one-vs-all +-1 columns as a vector
    target (one metric for all classes, the vector-valued form of the MLKR loss).
"""


class MLKRRegressor(RegressorMixin, _MLKR):
    (
        """MLKR regression on the concatenated views.
"""
        + _MLKR_DOC
        + """
    Parameters
    ----------
    n_components : int or None, default=None
        Rows of ``A`` (None: as many as input columns).
    max_iter : int, default=100
        L-BFGS iterations.
    n_landmarks : None, int or float in (0, 1], default=None
    views : None or list
    random_state : int, RandomState or None

    Attributes
    ----------
    components_ : ndarray (m, d)
    landmark_indices_ : ndarray
    loss_ : float
        Final leave-one-out loss on the (landmark) training points.
    n_iter_ : int
    """
    )

    def __init__(
        self,
        n_components: int | None = None,
        max_iter: int = 100,
        n_landmarks: int | float | None = None,
        views: Any = None,
        random_state: Any = None,
    ):
        self.n_components, self.max_iter = n_components, max_iter
        self.n_landmarks, self.views, self.random_state = n_landmarks, views, random_state


class MLKRClassifier(_DecisionMixin, ClassifierMixin, _MLKR):
    (
        """MLKR classifier: Nadaraya-Watson estimate of the one-vs-all +-1 codes, largest wins.
"""
        + _MLKR_DOC
        + """
    Parameters
    ----------
    n_components : int or None, default=None
    max_iter : int, default=100
    n_landmarks : None, int or float in (0, 1], default=None
    views : None or list
    random_state : int, RandomState or None

    Attributes
    ----------
    classes_, components_, landmark_indices_, loss_, n_iter_
    """
    )

    _is_classifier = True

    def __init__(
        self,
        n_components: int | None = None,
        max_iter: int = 100,
        n_landmarks: int | float | None = None,
        views: Any = None,
        random_state: Any = None,
    ):
        self.n_components, self.max_iter = n_components, max_iter
        self.n_landmarks, self.views, self.random_state = n_landmarks, views, random_state

"""Early fusion baseline: one kernel on the concatenated views."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin

from .._validation import (
    KernelSpec,
)
from ._base import _Base, _DecisionMixin, _fill_doc, _GramModel, _init_common


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


@_fill_doc()
class EarlyFusionRegressor(RegressorMixin, _EarlyFusion):
    """Kernel ridge regression with one kernel on the concatenated views (early fusion).

    The default Gaussian bandwidth is the mean pairwise distance of the concatenated
    training vectors; with ``n_landmarks`` the Nystrom map is fitted on the concatenation.

    Parameters
    ----------
    alpha : float, default=1.0
        Ridge parameter: ``dual = (K + alpha I)^{-1} y``.
    {common_parameters}

    Attributes
    ----------
    model_ : object
        The fitted kernel machine on the concatenated views.
    grams_ : ViewGrams
        The fitted kernel (or Nystrom map) of the concatenation, as a single "view".
    n_views_ : int
        Number of views seen at fit.
    n_features_view_ : list of int
        Number of columns of each training view.
    n_features_in_ : int
        Number of columns of ``X`` when fitted on one 2-D array (absent for a list of views).
    feature_names_in_ : ndarray of str
        Column names of ``X`` when fitted on a DataFrame with string column names.

    See Also
    --------
    EarlyFusionClassifier : The same for classification.
    LateFusionRegressor : One model per view, outputs averaged.
    mvkernels.MVMLRegressor : Multi-view metric learning (what the baselines compare with).

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.baselines import EarlyFusionRegressor
    >>> rng = np.random.default_rng(0)
    >>> X1, X2 = rng.normal(size=(40, 3)), rng.normal(size=(40, 2))
    >>> y = X1[:, 0] + np.sin(X2[:, 1])
    >>> reg = EarlyFusionRegressor(alpha=0.1).fit([X1, X2], y)
    >>> reg.predict([X1, X2]).shape
    (40,)
    """

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


@_fill_doc()
class EarlyFusionClassifier(_DecisionMixin, ClassifierMixin, _EarlyFusion):
    """SVM (or kernel ridge on +-1 targets) on the concatenated views: the paper's efSVM.

    Parameters
    ----------
    C : float, default=1.0
        SVM box constant (``loss="hinge"``).
    alpha : float, default=1.0
        Ridge parameter (``loss="squared"``).
    loss : {"hinge", "squared"}, default="hinge"
        Binary SVM per one-vs-all column, or kernel ridge on the +-1 columns.
    {common_parameters}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    model_ : object
        The fitted kernel machine on the concatenated views.
    grams_ : ViewGrams
        The fitted kernel (or Nystrom map) of the concatenation, as a single "view".
    n_views_ : int
        Number of views seen at fit.
    n_features_view_ : list of int
        Number of columns of each training view.
    n_features_in_ : int
        Number of columns of ``X`` when fitted on one 2-D array (absent for a list of views).
    feature_names_in_ : ndarray of str
        Column names of ``X`` when fitted on a DataFrame with string column names.

    See Also
    --------
    EarlyFusionRegressor : The same for regression.
    LateFusionClassifier : One SVM per view, decision values averaged.
    mvkernels.MVMLClassifier : Multi-view metric learning (what the baselines compare with).

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.baselines import EarlyFusionClassifier
    >>> rng = np.random.default_rng(0)
    >>> X1, X2 = rng.normal(size=(40, 3)), rng.normal(size=(40, 2))
    >>> y = np.where(X1[:, 0] + X2[:, 0] > 0, "a", "b")
    >>> clf = EarlyFusionClassifier().fit([X1, X2], y)
    >>> clf.classes_
    array(['a', 'b'], dtype='<U1')
    >>> clf.predict([X1, X2]).shape
    (40,)
    """

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

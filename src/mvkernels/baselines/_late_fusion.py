"""Late fusion baseline: one model per view, outputs averaged."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin

from ._base import _Base, _DecisionMixin, _fill_doc, _GramModel, _init_common


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


@_fill_doc()
class LateFusionRegressor(RegressorMixin, _LateFusion):
    """Late fusion: one kernel ridge model per view, predictions averaged (uniform weights).

    Parameters
    ----------
    alpha : float, default=1.0
        Ridge parameter of every per-view model.
    {common_parameters}

    Attributes
    ----------
    models_ : list of object
        The fitted per-view kernel machines.
    grams_ : ViewGrams
        The fitted per-view kernels (or Nystrom map) and training Gram matrices.
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
    LateFusionClassifier : The same for classification.
    EarlyFusionRegressor : One kernel on the concatenated views.
    mvkernels.MVMLRegressor : Multi-view metric learning (what the baselines compare with).

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.baselines import LateFusionRegressor
    >>> rng = np.random.default_rng(0)
    >>> X1, X2 = rng.normal(size=(40, 3)), rng.normal(size=(40, 2))
    >>> y = X1[:, 0] + np.sin(X2[:, 1])
    >>> reg = LateFusionRegressor(alpha=0.1).fit([X1, X2], y)
    >>> reg.predict([X1, X2]).shape
    (40,)
    >>> len(reg.models_)
    2
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
class LateFusionClassifier(_DecisionMixin, ClassifierMixin, _LateFusion):
    """Late fusion: one SVM per view, decision values averaged, largest wins (lfSVM).

    The paper does not say how its lfSVM combines the views; averaging the one-vs-all
    decision values with equal weights is our choice (``docs/baselines.md``).

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
    models_ : list of object
        The fitted per-view kernel machines.
    grams_ : ViewGrams
        The fitted per-view kernels (or Nystrom map) and training Gram matrices.
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
    LateFusionRegressor : The same for regression.
    EarlyFusionClassifier : One kernel on the concatenated views.
    mvkernels.MVMLClassifier : Multi-view metric learning (what the baselines compare with).

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.baselines import LateFusionClassifier
    >>> rng = np.random.default_rng(0)
    >>> X1, X2 = rng.normal(size=(40, 3)), rng.normal(size=(40, 2))
    >>> y = np.where(X1[:, 0] + X2[:, 0] > 0, "a", "b")
    >>> clf = LateFusionClassifier().fit([X1, X2], y)
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

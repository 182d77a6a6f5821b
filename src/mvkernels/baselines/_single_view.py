"""Single-view baseline: kernel ridge or SVM on the best view (chosen by CV)."""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils._param_validation import Interval, StrOptions

from .._validation import (
    positive_int,
)
from ._base import _COMMON_DOC, _Base, _DecisionMixin, _GramModel, _init_common


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

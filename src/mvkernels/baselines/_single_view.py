"""Single-view baseline: kernel ridge or SVM on the best view (chosen by CV)."""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils._param_validation import Interval, StrOptions

from .._targets import predicted_class_indices
from .._validation import (
    positive_int,
)
from ._base import _Base, _ClassifierMixin, _fill_doc, _GramModel, _init_common


class _SingleView(_Base):
    _parameter_constraints: dict = {
        **_Base._parameter_constraints,
        "view": [StrOptions({"best"}), Interval(Integral, 0, None, closed="left")],
        "cv": [positive_int(2)],
    }

    def _model(self) -> _GramModel:
        return _GramModel(self.loss, self.alpha, self.C, self.random_state)

    def _cv_score(self, K: np.ndarray, Y: np.ndarray) -> float:
        """Mean validation score on the training set: accuracy, or minus the MSE."""
        n = K.shape[0]
        if self._is_classifier:
            labels = predicted_class_indices(Y)
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
                pred = predicted_class_indices(D)
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


_SECTIONS_DOC = """
    Parameters
    ----------
    {task_parameters}
    view : "best" or int, default="best"
        The view to use, or ``"best"`` to choose it by cross-validation.
    cv : int, default=3
        Number of folds of the view selection.
    {common_parameters}

    Attributes
    ----------
    best_view_ : int
        Index of the view the model uses.
    view_cv_scores_ : ndarray of shape (n_views,) or None
        CV score of each view: accuracy (classifier) or minus the mean squared error
        (regressor); None when ``view`` is given.
    model_ : object
        The fitted kernel machine on the chosen view.
    {grams_attributes}

    See Also
    --------
    {counterpart}
    EarlyFusion{Task} : One kernel on the concatenated views.
    {mvml_see_also}

    {examples}
"""


@_fill_doc(
    _SECTIONS_DOC,
    example_args="alpha=0.1",
    example_extra=">>> int(model.best_view_)\n0",
)
class SingleViewRegressor(RegressorMixin, _SingleView):
    """Kernel ridge regression on one view (the MVML paper's "KRR, one view" baseline).

    With ``view="best"`` each view is scored by ``cv``-fold cross-validation (mean squared
    error) on the training set only, and the best one is refitted on all training data;
    :attr:`best_view_` says which.

    {sections}
    """

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


@_fill_doc(_SECTIONS_DOC)
class SingleViewClassifier(_ClassifierMixin, ClassifierMixin, _SingleView):
    """SVM (or kernel ridge on +-1 targets) on one view: the paper's "1 view SVM" column.

    With ``view="best"`` each view is scored by stratified ``cv``-fold cross-validation
    accuracy on the training set only (the paper reports "the best result obtained when
    using only one view"; we pick the view without looking at the test set).

    {sections}
    """

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

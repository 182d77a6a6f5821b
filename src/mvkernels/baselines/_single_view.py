"""Single-view baseline: kernel ridge or SVM on the best view (chosen by CV)."""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .._targets import predicted_class_indices
from .._validation import (
    positive_int,
)
from ._base import _Base, _ClassifierMixin, _fill_doc, _GramModel, _init_common


class _SingleView(_Base):
    _parameter_constraints: dict = {
        **_Base._parameter_constraints,
        "view": [StrOptions({"best"}), Interval(Integral, 0, None, closed="left")],
        "cv": [positive_int(2), HasMethods(["split", "get_n_splits"]), "array-like"],
    }

    def _model(self) -> _GramModel:
        return _GramModel(self.loss, self.alpha, self.C, self.random_state)

    def _splits(self, Y: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """The folds of the view selection over the training rows kept (positive weight).

        An int: (stratified) shuffled folds, seeded; a splitter: its ``split`` of the rows
        kept (with the class labels); an iterable of ``(train, test)`` indices into the
        rows given to ``fit``: those, without the rows of zero weight.
        """
        n = Y.shape[0]
        labels = predicted_class_indices(Y) if self._is_classifier else None
        cv = self.cv
        if isinstance(cv, Integral):
            if labels is not None:
                counts = np.bincount(labels)
                k = max(2, min(cv, counts[counts > 0].min()))
                if counts[counts > 0].min() >= 2:
                    folds = StratifiedKFold(k, shuffle=True, random_state=0)
                    return list(folds.split(np.zeros(n), labels))
            return list(KFold(min(cv, n), shuffle=True, random_state=0).split(np.zeros(n)))
        if hasattr(cv, "split"):
            return list(cv.split(np.zeros((n, 1)), labels))
        splits = [(np.asarray(tr, dtype=np.intp), np.asarray(te, dtype=np.intp)) for tr, te in cv]
        rows = self._fit_rows
        if rows is None:
            return splits
        new = np.full(int(self._n_rows_in), -1, dtype=np.intp)
        new[rows] = np.arange(rows.size)
        out = []
        for tr, te in splits:
            tr, te = new[tr], new[te]
            tr, te = tr[tr >= 0], te[te >= 0]
            if tr.size and te.size:
                out.append((tr, te))
        return out

    def _cv_score(
        self,
        K: np.ndarray,
        Y: np.ndarray,
        w: np.ndarray | None,
        splits: list[tuple[np.ndarray, np.ndarray]],
    ) -> float:
        """Mean validation score on the training set: accuracy, or minus the MSE (both
        weighted by the rows' weights ``w``, which also weigh the folds' fits)."""
        labels = predicted_class_indices(Y) if self._is_classifier else None
        scores = []
        for tr, va in splits:
            wt, wv = (None, None) if w is None else (w[tr], w[va])
            D = self._model().fit(K[np.ix_(tr, tr)], Y[tr], wt).decision(K[np.ix_(va, tr)])
            if self._is_classifier:
                pred = predicted_class_indices(D)
                scores.append(np.average(pred == labels[va], weights=wv))
            else:
                scores.append(-np.average(np.mean((D - Y[va]) ** 2, axis=1), weights=wv))
        return float(np.mean(scores))

    def _fit_grams(self, grams: list[np.ndarray], Y: np.ndarray, w: np.ndarray | None) -> None:
        if self.view == "best":
            splits = self._splits(Y)
            if not splits:
                raise ValueError("cv leaves no fold with training and test rows")
            self.view_cv_scores_ = np.array([self._cv_score(K, Y, w, splits) for K in grams])
            self.best_view_ = int(np.argmax(self.view_cv_scores_))
        else:
            if self.view >= len(grams):
                raise ValueError(f"view={self.view} but X has {len(grams)} view(s)")
            self.view_cv_scores_ = None
            self.best_view_ = int(self.view)
        self.model_ = self._model().fit(grams[self.best_view_], Y, w)

    def _decision_grams(self, cross: list[np.ndarray]) -> np.ndarray:
        return self.model_.decision(cross[self.best_view_])


_SECTIONS_DOC = """
    Parameters
    ----------
    {task_parameters}
    view : "best" or int, default="best"
        The view to use, or ``"best"`` to choose it by cross-validation.
    cv : int, CV splitter or iterable, default=3
        The folds of the view selection: a number of (stratified, for the classifier)
        shuffled folds, seeded; a splitter (``split`` of the training rows, with the
        labels); or ``(train, test)`` index pairs into the rows given to ``fit`` (rows of
        zero ``sample_weight`` are left out of them). Fits and scores are weighted.
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
        class_weight: Any = None,
    ):
        self.C, self.alpha, self.loss, self.view, self.cv = C, alpha, loss, view, cv
        self.class_weight = class_weight
        _init_common(self, kernel, kernel_params, n_landmarks, landmarks, views, random_state)

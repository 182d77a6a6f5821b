"""Late fusion baseline: one model per view, outputs averaged."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin

from ._base import ViewGrams, _Base, _fill_doc, _GramModel, _LossClassifierMixin


# ---------------------------------------------------------------------------- late fusion
class _LateFusion(_Base):
    """Missing views (NaN rows): each view's model is trained on the rows where that view
    is observed, and a sample's output is the mean over its observed views only."""

    _supports_missing = True

    def _model(self) -> _GramModel:
        return _GramModel(self.loss, self.alpha, self.C, self.random_state)

    def _fit_grams(self, grams: list[np.ndarray], Y: np.ndarray, w: np.ndarray | None) -> None:
        self.models_ = [self._model().fit(K, Y, w) for K in grams]

    def _decision_grams(self, cross: list[np.ndarray]) -> np.ndarray:
        return np.mean([m.decision(Kx) for m, Kx in zip(self.models_, cross)], axis=0)

    @staticmethod
    def _rows_of(w: np.ndarray | None, rows: np.ndarray) -> np.ndarray | None:
        return None if w is None else w[rows]

    def _view_param(self, value: Any, l: int) -> Any:
        return value[l] if isinstance(value, (list, tuple)) else value

    def _fit_missing(
        self, Xs: list[np.ndarray], Y: np.ndarray, mask: np.ndarray, w: np.ndarray | None
    ) -> None:
        self.view_grams_, self.models_ = [], []
        for l, Xv in enumerate(Xs):
            obs = mask[:, l]
            if self.kernel == "precomputed" or self._view_param(self.kernel, l) == "precomputed":
                raise ValueError("missing views are not supported with kernel='precomputed'")
            grams = ViewGrams(
                self._view_param(self.kernel, l),
                self._view_param(self.kernel_params, l),
                self.n_landmarks,
                self.landmarks,
                self.random_state,
            ).fit([Xv[obs]], sample_weight=self._rows_of(self._fit_sample_weight, obs))
            Yl = Y[obs]
            if self._is_classifier and np.unique(Yl, axis=0).shape[0] < 2:
                raise ValueError(f"view {l} is observed on samples of a single class only")
            self.view_grams_.append(grams)
            self.models_.append(self._model().fit(grams.train[0], Yl, self._rows_of(w, obs)))

    def _decision_missing(self, Xs: list[np.ndarray], mask: np.ndarray) -> np.ndarray:
        total, count = None, mask.sum(axis=1)[:, None]
        for l, (Xv, model) in enumerate(zip(Xs, self.models_)):
            obs = mask[:, l]
            if self.missing_fit_:
                Kx = self.view_grams_[l].cross_view(Xv[obs], 0)
            else:
                Kx = self.grams_.cross_view(Xv[obs], l)
            D = model.decision(Kx)
            if total is None:
                total = np.zeros((Xv.shape[0], D.shape[1]))
            total[obs] += D
        return total / count


_SECTIONS_DOC = """
    {parameters}

    Attributes
    ----------
    models_ : list of object
        The fitted per-view kernel machines.
    {grams_attributes}

    See Also
    --------
    {counterpart}
    EarlyFusion{Task} : One kernel on the concatenated views (efSVM for classification).
    {mvml_see_also}

    {examples}
"""


@_fill_doc(
    _SECTIONS_DOC,
    ridge="Ridge parameter of every per-view model.",
    example_args="alpha=0.1",
    example_extra=">>> len(model.models_)\n2",
)
class LateFusionRegressor(RegressorMixin, _LateFusion):
    """Late fusion: one kernel ridge model per view, predictions averaged (uniform weights).

    {sections}
    """


@_fill_doc(_SECTIONS_DOC)
class LateFusionClassifier(_LossClassifierMixin, ClassifierMixin, _LateFusion):
    """Late fusion: one SVM per view, decision values averaged, largest wins (lfSVM).

    The paper does not say how its lfSVM combines the views; averaging the one-vs-all
    decision values with equal weights is our choice (``docs/baselines.md``).

    {sections}
    """

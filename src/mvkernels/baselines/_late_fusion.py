"""Late fusion baseline: one model per view, outputs averaged."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin

from ._base import _COMMON_DOC, _Base, _DecisionMixin, _GramModel, _init_common


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

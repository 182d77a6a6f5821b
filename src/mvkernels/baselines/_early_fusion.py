"""Early fusion baseline: one kernel on the concatenated views."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin

from .._validation import (
    KernelSpec,
)
from ._base import _COMMON_DOC, _Base, _DecisionMixin, _GramModel, _init_common


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

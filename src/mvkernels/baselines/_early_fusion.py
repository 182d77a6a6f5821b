"""Early fusion baseline: one kernel on the concatenated views."""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin

from .._sparse import hstack_views
from .._validation import KernelSpec, ValidatedViews
from ._base import _Base, _fill_doc, _GramModel, _LossClassifierMixin


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
        joined = [hstack_views(Xs)]  # validated views give validated ones: not checked again
        return Xs.derived(joined) if isinstance(Xs, ValidatedViews) else joined

    def _rename_error(self, exc: ValueError) -> ValueError:
        msg = str(exc)
        if msg.startswith("view 0"):
            return type(exc)("the concatenated views (early fusion)" + msg[len("view 0") :])
        return exc

    def _fit_grams(self, grams: list[np.ndarray], Y: np.ndarray, w: np.ndarray | None) -> None:
        model = _GramModel(self.loss, self.alpha, self.C, self.random_state)
        self.model_ = model.fit(grams[0], Y, w)

    def _decision_grams(self, cross: list[np.ndarray]) -> np.ndarray:
        return self.model_.decision(cross[0])


_SECTIONS_DOC = """
    {parameters}

    Attributes
    ----------
    model_ : object
        The fitted kernel machine on the concatenated views.
    grams_ : ViewGrams
        The fitted kernel (or Nystrom map) of the concatenation, as a single "view".
    {fit_attributes}

    See Also
    --------
    {counterpart}
    LateFusion{Task} : One model per view, outputs averaged.
    {mvml_see_also}

    {examples}
"""


@_fill_doc(
    _SECTIONS_DOC,
    example_args="alpha=0.1",
)
class EarlyFusionRegressor(RegressorMixin, _EarlyFusion):
    """Kernel ridge regression with one kernel on the concatenated views (early fusion).

    The default Gaussian bandwidth is the mean pairwise distance of the concatenated
    training vectors; with ``n_landmarks`` the Nystrom map is fitted on the concatenation.

    {sections}
    """


@_fill_doc(_SECTIONS_DOC)
class EarlyFusionClassifier(_LossClassifierMixin, ClassifierMixin, _EarlyFusion):
    """SVM (or kernel ridge on +-1 targets) on the concatenated views: the paper's efSVM.

    {sections}
    """

"""The fitted model's mode on the prediction side: :class:`FullFit` (kernel rows against
the training views) or :class:`NystromFit` (the block Nystrom map ``nystrom_``), chosen
once at fit from the training problem (:attr:`~._problem.MVMLProblem.feature_space`)
and stored as the estimator's ``_fitted_mode``; and the row-wise output function
:class:`_MVMLOutputs` they build.

Each part answers, for the estimator that holds it, what depends on the mode at
prediction: the test views' checks (:meth:`FullFit.test_views`, and the joint-only
path's :meth:`FullFit.joint_only_views`), the output function
(:meth:`FullFit.decision_block`) and the compact model of rows with missing views kept
at fit (:meth:`FullFit.compact_missing_model`). The parts hold no state (the fitted
arrays stay on the estimator), so a pickled model stores only their class. A new mode
is one more part here beside its :class:`~._problem.MVMLProblem` subclass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._targets import predicted_classes
from .._validation import check_views
from ..nystrom import BlockNystrom, default_chunk_size
from ..nystrom._missing import CompletedOutputs
from ._data_part import data_part
from ._joint import JOINT_ONLY, joint_views


class FullFit:
    """Full-kernel mode (eq. 11): outputs from kernel rows against the training views
    (``X_fit_``) or precomputed test kernels; ``mode_ == "full"``."""

    #: whether the test views may have missing (NaN) rows before completion
    allow_missing = False

    def compact_missing_model(self, est: Any) -> CompletedOutputs | None:
        """No compact missing-view model: full mode completes through ``_completion``."""
        return None

    def decision_block(
        self, est: Any, classes: np.ndarray | None, offset: np.ndarray | None
    ) -> _MVMLOutputs:
        """The output function of weighted coefficients ``g_t,l * w_t,l`` (T, v, n)."""
        T = est._coefs.shape[0]
        G = est._coefs.reshape(T, est.n_views_, est.n_samples_fit_) * est._weights[:, :, None]
        return self.outputs(est, G, classes, offset)

    @staticmethod
    def outputs(
        est: Any,
        G: np.ndarray,
        classes: np.ndarray | None = None,
        offset: np.ndarray | None = None,
    ) -> _MVMLOutputs:
        """The output function (eq. 11) of weighted coefficients ``G`` (T, v, n) on the
        training rows of ``est`` (its kernels, fitted) and the offsets ``offset`` (T,)
        (None: none); with missing views, through the completed features
        (``_completion``: kernel rows ``u^_l(x) U^_l^T``, a Nystrom-space model). Also
        the held-out outputs of the full-kernel CV folds
        (:meth:`~mvkernels.mvml._cv_engine.CVEngine.outputs`)."""
        completion = getattr(est, "_completion", None)
        if completion is None:
            return _MVMLOutputs(
                Gw=G, kernels=est.kernels_, X_fit=est.X_fit_, classes=classes, offset=offset
            )
        nys, U = completion
        p = nys.n_landmarks_
        Gw = np.hstack([G[:, l, :] @ U[:, l * p : (l + 1) * p] for l in range(G.shape[1])])
        return _MVMLOutputs(Gw=Gw, nystrom=nys, classes=classes, offset=offset)

    def joint_only_views(self, est: Any, Xs: list) -> list:
        """The joint view alone of the input views ``Xs`` (precomputed: test kernels,
        checked as :meth:`test_views` checks them)."""
        if est.X_fit_ is None:
            Xs = data_part(Xs).test_kernels(Xs, est.n_samples_fit_)
        return joint_views(Xs, est.kernel)[-1:]

    def test_views(self, est: Any, X: Any, joint: bool) -> list:
        """The validated test views (with the joint view when ``joint``)."""
        n_in = est.n_views_ - joint
        completion = getattr(est, "_completion", None)
        if completion is not None:
            Xs = check_views(X, views=est.views, n_views=n_in, allow_missing=True)
            return completion[0].check_views(joint_views(Xs, est.kernel) if joint else Xs)
        Xs = check_views(
            X,
            views=est.views,
            n_views=n_in,
            n_features=None if est.X_fit_ is None else est.n_features_view_[:n_in],
        )
        if est.X_fit_ is None:  # precomputed (Dask cross-kernels: shape checked only)
            Xs = data_part(Xs).test_kernels(Xs, est.n_samples_fit_)
        return joint_views(Xs, est.kernel) if joint else Xs


class NystromFit:
    """Block Nystrom mode (Sec. 3.5, eq. 13-18): outputs ``u(x)^T (g~ * w)`` from the
    fitted map ``nystrom_``, which also completes rows with missing views;
    ``mode_ == "nystrom"``."""

    allow_missing = True

    @staticmethod
    def _weighted_coefs(est: Any) -> np.ndarray:
        """``g~_t * w_t`` with each view's weight repeated over its landmarks, (T, vp)."""
        return est._coefs * np.repeat(est._weights, est.nystrom_.n_landmarks_, axis=1)

    def compact_missing_model(self, est: Any) -> CompletedOutputs | None:
        """The compact outputs on rows with missing views that the map keeps instead of
        its ``vp x vp`` completion statistics
        (:meth:`BlockNystrom.compact_missing_model`; predictions the same to rounding)."""
        jv = est._joint_view()
        joint = bool(jv) and jv != JOINT_ONLY  # missing where any view is
        return est.nystrom_.compact_missing_model(
            self._weighted_coefs(est), always_missing=est.n_views_ - 1 if joint else None
        )

    def decision_block(
        self, est: Any, classes: np.ndarray | None, offset: np.ndarray | None
    ) -> _MVMLOutputs:
        """The output function of ``g~_t * w_t`` through the map (:class:`_MVMLOutputs`)."""
        return _MVMLOutputs(
            Gw=self._weighted_coefs(est),
            nystrom=est.nystrom_,
            classes=classes,
            offset=offset,
            completed=getattr(est, "_completed_outputs", None),
        )

    def joint_only_views(self, est: Any, Xs: list) -> list:
        """The joint view alone of the input views ``Xs``, as the map's container."""
        return est.nystrom_.check_views(joint_views(Xs, est.kernel)[-1:])

    def test_views(self, est: Any, X: Any, joint: bool) -> list:
        """The same container rules as at fit (:meth:`BlockNystrom.check_views`)."""
        if not joint:
            return est.nystrom_.check_views(check_views(X, views=est.views, allow_missing=True))
        Xs = check_views(
            X,
            views=est.views,
            n_views=est.n_views_ - 1,
            n_features=est._input_widths(),
            allow_missing=True,
        )
        return est.nystrom_.check_views(joint_views(Xs, est.kernel))


#: the parts, by :attr:`~._problem.MVMLProblem.feature_space` of the training problem
FITTED_MODES: dict[bool, FullFit | NystromFit] = {False: FullFit(), True: NystromFit()}
#: the parts by the fitted model's ``mode_`` (a model pickled before ``_fitted_mode``)
FITTED_MODE_NAMES: dict[str, FullFit | NystromFit] = {
    "full": FITTED_MODES[False],
    "nystrom": FITTED_MODES[True],
}


@dataclass
class _MVMLOutputs:
    """Row-wise output function of a fitted MVML model: ``(rows of each view) -> outputs``.

    Holds only what prediction needs (weighted coefficients, feature map or training
    views) so that it can be shipped once to Dask workers. ``Gw``: ``(T, vp)``
    ``g~_t * w`` (Nystrom) or ``(T, v, n)`` ``g_t,l * w_t,l`` (full). With ``classes``
    it returns labels (binary: ``classes[1]`` where the output is > 0; else argmax).
    ``offset``: (T,) the intercepts added to the outputs (None: bias-free).
    ``completed``: the outputs of rows with missing views when the map keeps no
    completion statistics (:meth:`BlockNystrom.compact_missing_model`).
    """

    Gw: np.ndarray
    nystrom: BlockNystrom | None = None
    kernels: list | None = None
    X_fit: list | None = None
    classes: np.ndarray | None = None
    offset: np.ndarray | None = None
    completed: CompletedOutputs | None = None

    handles_missing_views = True  # NaN rows: completed by the Nystrom map (see features)

    def outputs(self, blocks: list) -> np.ndarray:
        D = self._outputs(blocks)
        if self.offset is not None:
            D += self.offset
        return D

    def _outputs(self, blocks: list) -> np.ndarray:
        if self.nystrom is not None:
            return self.nystrom.linear_outputs(blocks, self.Gw, self.completed)
        m = blocks[0].shape[0]
        T = self.Gw.shape[0]
        out = np.empty((m, T))
        n = self.Gw.shape[2]
        chunk = default_chunk_size(n)
        for start in range(0, m, chunk):
            rows = slice(start, min(m, start + chunk))
            acc = np.zeros((rows.stop - rows.start, T))
            for l, (Xv, kern) in enumerate(zip(blocks, self.kernels)):
                Kt = Xv[rows] if self.X_fit is None else kern(Xv[rows], self.X_fit[l])
                acc += Kt @ self.Gw[:, l, :].T
            out[rows] = acc
        return out

    def __call__(self, blocks: list) -> np.ndarray:
        D = self.outputs(blocks)
        if self.classes is None:
            return D
        return predicted_classes(D, self.classes)

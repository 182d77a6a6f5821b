"""lp-norm multiple kernel learning (Kloft et al. 2011)."""

from __future__ import annotations

import warnings
from numbers import Real
from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval

from .._validation import (
    nonnegative_real,
    positive_int,
)
from ._base import _Base, _ClassifierMixin, _fill_doc, _GramModel, _init_common


def lpmkl_weight_update(norms_sq: np.ndarray, p: float) -> np.ndarray:
    """Closed-form kernel weights of lp-norm MKL for fixed ``w`` (Kloft et al. 2011, eq. 12).

    ``beta_m = ||w_m||^{2/(p+1)} / (sum_m' ||w_m'||^{2p/(p+1)})^{1/p}``, the minimiser of
    ``sum_m ||w_m||^2 / beta_m`` over ``beta >= 0``, ``||beta||_p <= 1``; it has
    ``||beta||_p = 1``. ``norms_sq`` holds ``||w_m||^2`` (summed over the problems of a
    one-vs-all classifier, so the weights are shared by the classes).

    Parameters
    ----------
    norms_sq : ndarray of shape (n_kernels,)
        ``||w_m||^2`` per kernel (negative values, from rounding, count as 0).
    p : float
        Norm of the weights, ``p >= 1``.

    Returns
    -------
    ndarray of shape (n_kernels,)
        The weights ``beta`` (uniform ``v^{-1/p}`` when every ``w_m`` is zero).
    """
    norms_sq = np.maximum(np.asarray(norms_sq, dtype=np.float64), 0.0)
    if not norms_sq.sum() > 0:  # w = 0 (e.g. constant targets): keep uniform weights
        return np.full(norms_sq.shape, norms_sq.size ** (-1.0 / p))
    num = norms_sq ** (1.0 / (p + 1.0))
    den = np.sum(norms_sq ** (p / (p + 1.0))) ** (1.0 / p)
    return num / den


# ---------------------------------------------------------------------------- lpMKL
class _LpMKL(_Base):
    _parameter_constraints: dict = {
        **_Base._parameter_constraints,
        "p": [Interval(Real, 1, np.inf, closed="left")],
        "max_iter": [positive_int()],
        "tol": [nonnegative_real()],
    }

    def _fit_grams(self, grams: list[np.ndarray], Y: np.ndarray, w: np.ndarray | None) -> None:
        loss = self.loss
        v = len(grams)
        beta = np.full(v, v ** (-1.0 / self.p))  # ||beta||_p = 1
        history: list[float] = []
        converged = False
        # ``it`` is read after the loop (n_iter_), which B007 does not see
        for it in range(1, self.max_iter + 1):  # noqa: B007
            K = sum(b * Km for b, Km in zip(beta, grams))
            model = _GramModel(loss, self.alpha, self.C, self.random_state).fit(K, Y, w)
            a = model.dual
            # ||w_m||^2 = beta_m^2 sum_t a_t^T K_m a_t, summed over the one-vs-all columns
            quad = np.array([np.sum(a * (Km @ a)) for Km in grams])
            history.append(self._objective(K, Y, model, quad, beta, w))
            new_beta = lpmkl_weight_update(beta**2 * quad, self.p)
            change = np.max(np.abs(new_beta - beta))
            beta = new_beta
            if change <= self.tol:
                converged = True
                break
        K = sum(b * Km for b, Km in zip(beta, grams))
        self.model_ = _GramModel(loss, self.alpha, self.C, self.random_state).fit(K, Y, w)
        quad = np.array([np.sum(self.model_.dual * (Km @ self.model_.dual)) for Km in grams])
        history.append(self._objective(K, Y, self.model_, quad, beta, w))
        if not converged:
            warnings.warn(
                f"lpMKL did not converge in {self.max_iter} iterations "
                f"(last weight change {change:.2g} > tol {self.tol})",
                ConvergenceWarning,
                stacklevel=4,  # the caller of fit (through _fit_context)
            )
        self.kernel_weights_ = beta
        self.n_iter_ = it
        self.objective_ = np.asarray(history)

    def _objective(
        self,
        K: np.ndarray,
        Y: np.ndarray,
        model: _GramModel,
        quad: np.ndarray,
        beta: np.ndarray,
        w: np.ndarray | None = None,
    ) -> float:
        """Primal value ``loss + reg * sum_m ||w_m||^2 / beta_m`` for the current beta.

        ``sum_m ||w_m||^2 / beta_m = sum_m beta_m a^T K_m a``. Square loss:
        ``||Y - K a||^2 + alpha * that``; hinge: ``C sum hinge + that / 2``; each row's
        loss times its sample weight ``w``.
        """
        reg = float(np.dot(beta, quad))
        D = K @ model.dual + model.intercept
        rw = np.ones(Y.shape[0]) if w is None else w
        if self.loss == "squared":
            return float(rw @ np.sum((Y - D) ** 2, axis=1) + self.alpha * reg)
        return float(self.C * (rw @ np.sum(np.maximum(0.0, 1.0 - Y * D), axis=1)) + 0.5 * reg)

    def _decision_grams(self, cross: list[np.ndarray]) -> np.ndarray:
        Kx = sum(b * Km for b, Km in zip(self.kernel_weights_, cross))
        return self.model_.decision(Kx)


_SECTIONS_DOC = """
    Parameters
    ----------
    {task_parameters}
    p : float >= 1, default=2.0
        Norm of the kernel weights (p = 1: sparse MKL; large p: near-uniform weights).
    max_iter : int, default=50
        Maximum number of alternating iterations.
    tol : float, default=1e-4
        Stop when no kernel weight moves more than ``tol``.
    {common_parameters}

    Attributes
    ----------
    kernel_weights_ : ndarray of shape (n_views,)
        The kernel weights ``beta``, ``||beta||_p = 1``.
    objective_ : ndarray of shape ``(n_iter_ + 1,)``
        Primal objective at each iteration (non-increasing: exact block minimisation).
    n_iter_ : int
        Number of alternating iterations run.
    model_ : object
        The fitted kernel machine on the combined kernel.
    {grams_attributes}

    See Also
    --------
    {counterpart}
    lpmkl_weight_update : The closed-form weight step.
    {mvml_see_also}

    {examples}
"""

_LPMKL_DOC = """
    Kernel ``K = sum_m beta_m K_m`` over the views, ``beta >= 0``, ``||beta||_p = 1``;
    the kernel machine and the weights are learned by alternating minimisation (Kloft,
    Brefeld, Sonnenburg & Zien, "lp-Norm Multiple Kernel Learning", JMLR 12, 2011):
    for fixed ``beta`` the machine is solved exactly on ``K``; for fixed machine the
    weights have the closed form of their eq. 12 (:func:`lpmkl_weight_update`), with
    ``||w_m||^2 = beta_m^2 a^T K_m a`` from the dual coefficients ``a``. Starts from
    uniform weights ``v^{-1/p}``; stops when no weight moves more than ``tol``.
    One-vs-all classifiers share one ``beta`` (``||w_m||^2`` summed over classes).
"""


@_fill_doc(
    _SECTIONS_DOC,
    lpmkl=_LPMKL_DOC,
    ridge="Ridge parameter: minimises ``||y - f||^2 + alpha sum_m ||w_m||^2 / beta_m``.",
    example_extra=">>> print(round(float(np.sum(model.kernel_weights_**2)), 6))\n1.0",
)
class LpMKLRegressor(RegressorMixin, _LpMKL):
    """lp-norm MKL with kernel ridge regression (square loss).

    {lpmkl}

    {sections}
    """

    def __init__(
        self,
        alpha: float = 1.0,
        p: float = 2.0,
        max_iter: int = 50,
        tol: float = 1e-4,
        kernel: Any = "rbf",
        kernel_params: Any = None,
        n_landmarks: int | float | None = None,
        landmarks: str = "uniform",
        views: Any = None,
        random_state: Any = None,
    ):
        self.alpha, self.p, self.max_iter, self.tol = alpha, p, max_iter, tol
        _init_common(self, kernel, kernel_params, n_landmarks, landmarks, views, random_state)


@_fill_doc(
    _SECTIONS_DOC,
    lpmkl=_LPMKL_DOC,
    example_args='loss="squared"',
    example_extra=">>> model.kernel_weights_.shape\n(2,)",
)
class LpMKLClassifier(_ClassifierMixin, ClassifierMixin, _LpMKL):
    """lp-norm MKL classifier: SVM (``loss="hinge"``) or kernel ridge on +-1 targets.

    {lpmkl}

    The MVML paper's Table 1 applies lpMKL "to kernel regression": that is
    ``loss="squared"`` (one-vs-all kernel ridge on +-1 columns). With ``loss="hinge"`` each
    column is a binary SVC with intercept; its objective is
    ``C sum hinge + 1/2 sum_m ||w_m||^2 / beta_m``.

    {sections}
    """

    def __init__(
        self,
        C: float = 1.0,
        alpha: float = 1.0,
        loss: str = "hinge",
        p: float = 2.0,
        max_iter: int = 50,
        tol: float = 1e-4,
        kernel: Any = "rbf",
        kernel_params: Any = None,
        n_landmarks: int | float | None = None,
        landmarks: str = "uniform",
        views: Any = None,
        random_state: Any = None,
        class_weight: Any = None,
    ):
        self.C, self.alpha, self.loss = C, alpha, loss
        self.p, self.max_iter, self.tol = p, max_iter, tol
        self.class_weight = class_weight
        _init_common(self, kernel, kernel_params, n_landmarks, landmarks, views, random_state)

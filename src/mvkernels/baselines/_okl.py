"""Output kernel learning (Dinuzzo et al. 2011)."""

from __future__ import annotations

import warnings
from typing import Any, cast

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning

from .._docstrings import filled_doc
from .._linalg import robust_eigh, robust_eigvalsh
from .._linalg import sym as _sym
from .._validation import (
    nonnegative_real,
    positive_int,
)
from ._base import _Base, _ClassifierMixin, _fill_doc, _init_common

# The arrays okl_objective and okl_l_step take, in their Parameters sections.
_OKL_ARRAYS_DOC = """
    K : ndarray of shape (n, n)
        Input Gram matrix.
    Y : ndarray of shape (n, T)
        Targets.
    C : ndarray of shape (n, T)
        Coefficients.
"""


@filled_doc(okl_arrays=_OKL_ARRAYS_DOC)
def okl_objective(
    K: np.ndarray, Y: np.ndarray, C: np.ndarray, L: np.ndarray, alpha: float
) -> float:
    """OKL objective (Dinuzzo et al. 2011, eq. 4)::

    ||Y - K C L||_F^2 / (2 alpha) + tr(C^T K C L) / 2 + ||L||_F^2 / 2

    Parameters
    ----------
    {okl_arrays}
    L : ndarray of shape (T, T)
        Output kernel.
    alpha : float
        Regularisation (the paper's lambda).

    Returns
    -------
    float
    """
    return _okl_objective_e(K @ C, Y, C, L, alpha)


def _okl_objective_e(
    E: np.ndarray, Y: np.ndarray, C: np.ndarray, L: np.ndarray, alpha: float
) -> float:
    R = Y - E @ L
    return float(np.sum(R * R) / (2 * alpha) + 0.5 * np.sum((C.T @ E) * L) + 0.5 * np.sum(L * L))


def okl_c_step(
    VK: np.ndarray | None, dK: np.ndarray, Y: np.ndarray, L: np.ndarray, alpha: float
) -> np.ndarray:
    """OKL C-step: the solution of ``K C L + alpha C = Y`` (Sylvester equation).

    With ``K = VK diag(dK) VK^T`` and ``L = VL diag(dL) VL^T`` (both PSD),
    ``C = VK [(VK^T Y VL) / (dK_i dL_j + alpha)] VL^T``; the exact minimiser over ``C`` of
    the (convex in C) objective :func:`okl_objective` for fixed ``L``. ``VK=None`` means
    ``K = diag(dK)`` (the problem rotated into the eigenbasis of K).

    Parameters
    ----------
    VK : ndarray of shape (n, n) or None
        Eigenvectors of ``K`` (None: ``K`` is diagonal).
    dK : ndarray of shape (n,)
        Eigenvalues of ``K`` (clipped at 0).
    Y : ndarray of shape (n, T)
        Targets.
    L : ndarray of shape (T, T)
        Output kernel (PSD).
    alpha : float
        Regularisation.

    Returns
    -------
    C : ndarray of shape (n, T)
    """
    dL, VL = robust_eigh(L, what="OKL output kernel L")
    dL = np.maximum(dL, 0.0)
    Yr = Y if VK is None else VK.T @ Y
    Cr = ((Yr @ VL) / (dK[:, None] * dL[None, :] + alpha)) @ VL.T
    return Cr if VK is None else VK @ Cr


@filled_doc(okl_arrays=_OKL_ARRAYS_DOC)
def okl_l_step(K: np.ndarray, Y: np.ndarray, C: np.ndarray, alpha: float) -> np.ndarray:
    """OKL L-step: the minimiser over symmetric ``L`` of :func:`okl_objective` for fixed C.

    Setting the symmetric part of the gradient
    ``-E^T (Y - E L) / alpha + C^T E / 2 + L`` (``E = K C``) to zero gives the Lyapunov
    equation ``(M + alpha I) L + L (M + alpha I) = E^T Y + Y^T E - alpha C^T E``,
    ``M = E^T E``, solved in the eigenbasis of ``M``:
    ``L = V [(V^T R V) / (m_i + m_j + 2 alpha)] V^T``.

    Parameters
    ----------
    {okl_arrays}
    alpha : float
        Regularisation.

    Returns
    -------
    L : ndarray of shape (T, T)
        Symmetric output kernel.
    """
    return _okl_l_step_e(K @ C, Y, C, alpha)


def _okl_l_step_e(E: np.ndarray, Y: np.ndarray, C: np.ndarray, alpha: float) -> np.ndarray:
    m, V = robust_eigh(E.T @ E, what="OKL matrix E^T E")
    R = E.T @ Y
    R = R + R.T - alpha * _sym(C.T @ E)
    return _sym(V @ ((V.T @ R @ V) / (m[:, None] + m[None, :] + 2 * alpha)) @ V.T)


# ---------------------------------------------------------------------------- OKL
class _OKL(_Base):
    _parameter_constraints: dict = {
        **_Base._parameter_constraints,
        "max_iter": [positive_int()],
        "tol": [nonnegative_real()],
    }

    def __init__(
        self,
        alpha: float = 1.0,
        max_iter: int = 300,
        tol: float = 1e-5,
        kernel: Any = "rbf",
        kernel_params: Any = None,
        n_landmarks: int | float | None = None,
        landmarks: str = "uniform",
        views: Any = None,
        random_state: Any = None,
    ):
        self.alpha, self.max_iter, self.tol = alpha, max_iter, tol
        _init_common(self, kernel, kernel_params, n_landmarks, landmarks, views, random_state)

    def _fit_grams(self, grams: list[np.ndarray], Y: np.ndarray, w: np.ndarray | None) -> None:
        lam = self.alpha
        K = _sym(cast(np.ndarray, sum(grams) / len(grams)))
        # sample weights: the weighted loss ||S (Y - K C L)||^2, S = diag(sqrt(w)), is the
        # unweighted problem of S K S and S Y in C' (C = S C'): same objective values
        s = None if w is None else np.sqrt(w)
        if s is not None:
            K, Y = s[:, None] * K * s[None, :], s[:, None] * Y
        dK, VK = robust_eigh(K, what="OKL input kernel")
        dK = np.maximum(dK, 0.0)
        T = Y.shape[1]
        L = np.eye(T)
        history: list[float] = []
        converged = False
        # The loop runs in the eigenbasis of K (K = VK diag(dK) VK^T): with
        # Yr = VK^T Y, Cr = VK^T C the objective is the same problem with K = diag(dK),
        # so every iteration costs O(n T^2) instead of O(n^2 T).
        Yr = VK.T @ Y
        for it in range(1, self.max_iter + 1):
            Cr = okl_c_step(None, dK, Yr, L, lam)
            Er = dK[:, None] * Cr
            L = _okl_l_step_e(Er, Yr, Cr, lam)
            history.append(_okl_objective_e(Er, Yr, Cr, L, lam))
            if it > 1 and history[-2] - history[-1] <= self.tol * abs(history[-2]):
                converged = True
                break
        Cr = okl_c_step(None, dK, Yr, L, lam)
        history.append(_okl_objective_e(dK[:, None] * Cr, Yr, Cr, L, lam))
        C = VK @ Cr
        if s is not None:
            C = s[:, None] * C
        if not converged:
            warnings.warn(
                f"OKL did not converge in {self.max_iter} iterations",
                ConvergenceWarning,
                stacklevel=4,  # the caller of fit (through _fit_context)
            )
        self.coef_ = C
        self.output_kernel_ = L
        self.output_kernel_min_eigenvalue_ = float(
            robust_eigvalsh(L, what="OKL output kernel L")[0]
        )
        self.objective_ = np.asarray(history)
        self.n_iter_ = it

    def _decision_grams(self, cross: list[np.ndarray]) -> np.ndarray:
        Kx = sum(cross) / len(cross)
        return Kx @ self.coef_ @ self.output_kernel_


_SECTIONS_DOC = """
    Parameters
    ----------
    alpha : float, default=1.0
        Regularisation (lambda of the paper's eq. 4).
    max_iter : int, default=300
        Maximum number of block coordinate descent iterations.
    tol : float, default=1e-5
        Stop when the relative decrease of the objective is below ``tol``.
    {common_parameters}

    Attributes
    ----------
    coef_ : ndarray of shape (n_samples, n_outputs)
        The coefficients ``C``.
    output_kernel_ : ndarray of shape (n_outputs, n_outputs)
        The learned output kernel ``L``.
    output_kernel_min_eigenvalue_ : float
        Smallest eigenvalue of ``L`` (>= 0 up to rounding).
    objective_ : ndarray
        The objective at each iteration (non-increasing).
    n_iter_ : int
        Number of block coordinate descent iterations run.
    {grams_attributes}

    See Also
    --------
    {counterpart}
    okl_c_step : The C-step (Sylvester equation).
    okl_l_step : The L-step (Lyapunov equation).
    mvkernels.operator_kernels.DecomposableKernel : A fixed separable operator-valued kernel.
    {mvml_see_also}

    {examples}
"""

# The regressor's example has two outputs (what the output kernel relates).
_REGRESSOR_EXAMPLES_DOC = """
    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.baselines import OKLRegressor
    >>> rng = np.random.default_rng(0)
    >>> X1, X2 = rng.normal(size=(40, 3)), rng.normal(size=(40, 2))
    >>> Y = np.column_stack([X1[:, 0], X1[:, 0] + 0.1 * X2[:, 1]])
    >>> reg = OKLRegressor(alpha=0.1).fit([X1, X2], Y)
    >>> reg.predict([X1, X2]).shape
    (40, 2)
    >>> reg.output_kernel_.shape
    (2, 2)
"""

_OKL_DOC = """
    Separable (decomposable) kernel ``K(x, x') = k(x, x') L`` with a learned PSD output
    kernel ``L`` (T x T), T = number of outputs (Dinuzzo, Ong, Gehler & Pillonetto,
    "Learning Output Kernels with Block Coordinate Descent", ICML 2011). Input kernel
    ``k`` = mean of the view kernels (our choice: OKL is not a multi-view method; see
    ``docs/baselines.md``). Objective (their eq. 4, ``alpha`` = their lambda)::

        min_{C, L >= 0}  ||Y - K C L||_F^2 / (2 alpha) + tr(C^T K C L) / 2 + ||L||_F^2 / 2

    Block coordinate descent from ``L = I``: the C-step solves the Sylvester equation
    ``K C L + alpha C = Y`` through the eigendecompositions of ``K`` (once) and ``L``; the
    L-step solves the Lyapunov equation
    ``(E^T E + alpha I) L + L (E^T E + alpha I) = E^T Y + Y^T E - alpha C^T E`` with
    ``E = K C`` (exact minimiser over symmetric ``L``). Stops when the relative decrease
    of the objective is below ``tol``. Prediction ``f(x) = L C^T k(X, x)``.
"""


@_fill_doc(_SECTIONS_DOC, okl=_OKL_DOC, examples=_REGRESSOR_EXAMPLES_DOC)
class OKLRegressor(RegressorMixin, _OKL):
    """Output kernel learning for multi-output regression.

    {okl}

    {sections}
    """

    _multi_output = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


@_fill_doc(_SECTIONS_DOC, okl=_OKL_DOC, example_args="alpha=0.1")
class OKLClassifier(_ClassifierMixin, ClassifierMixin, _OKL):
    """Output kernel learning on one-vs-all +-1 targets (the MVML paper's OKL column).

    The outputs are the K one-vs-all columns (one column for two classes); ``L`` learns
    how the classes' decision functions are related. Prediction: the largest output.

    {okl}

    {sections}
    """

    def __init__(
        self,
        alpha: float = 1.0,
        max_iter: int = 300,
        tol: float = 1e-5,
        kernel: Any = "rbf",
        kernel_params: Any = None,
        n_landmarks: int | float | None = None,
        landmarks: str = "uniform",
        views: Any = None,
        random_state: Any = None,
        class_weight: Any = None,
    ):
        self.alpha, self.max_iter, self.tol = alpha, max_iter, tol
        self.class_weight = class_weight
        _init_common(self, kernel, kernel_params, n_landmarks, landmarks, views, random_state)

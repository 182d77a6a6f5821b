"""Operator-valued (matrix-valued) kernels for vector-valued learning.

An operator-valued kernel maps a pair of inputs to a ``d x d`` matrix,
``K(x, x') in R^{d x d}`` (Audiffren & Kadri 2015, Sec. 2). A function in
its RKHS is ``f(x) = sum_i K(x, x_i) c_i`` with coefficients ``c_i in R^d``.

Two kinds are provided:

* :class:`DecomposableKernel` -- ``K(x, x') = k(x, x') B`` with a scalar kernel ``k`` (a
  :class:`mvkernels.kernels.ViewKernel`, so the same kernel code and default bandwidth as
  MVML) and a fixed symmetric positive semi-definite *output kernel* ``B`` (``d x d``). The
  OLOK paper uses ``k = exp(-||x - x'||^2 / mu)`` and ``B = J`` with ``J_ii = 1``,
  ``J_ij = 1/10`` (:func:`interaction_matrix`).
* :class:`CallableOperatorKernel` -- any matrix-valued kernel given as a vectorised callable
  ``func(X, Z) -> array (n_x, n_z, d, d)`` whose entry ``[i, j]`` is ``K(x_i, z_j)``.

Block-matrix convention
-----------------------
The ``(n_x d) x (n_z d)`` block kernel matrix is *sample-major*: row ``i * d + a`` is output
``a`` of sample ``i``. For a decomposable kernel it is ``np.kron(k(X, Z), B)``. Coefficients
are stored as ``(n, d)`` arrays ``C`` (row ``i`` is ``c_i``) so ``C.ravel()`` matches it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from ._linalg import robust_eigvalsh, sym
from .kernels import ViewKernel

__all__ = [
    "OperatorKernel",
    "DecomposableKernel",
    "CallableOperatorKernel",
    "interaction_matrix",
    "check_output_kernel",
]


def interaction_matrix(d: int, off_diagonal: float = 0.1) -> np.ndarray:
    """The OLOK paper's output matrix ``J``: 1 on the diagonal, ``off_diagonal`` elsewhere.

    ``J = (1 - rho) I + rho 1 1^T`` has eigenvalues ``1 - rho`` (multiplicity ``d - 1``) and
    ``1 + (d - 1) rho``, so it is positive semi-definite iff ``-1/(d-1) <= rho <= 1``.

    Parameters
    ----------
    d : int
        Number of outputs (>= 1).
    off_diagonal : float, default 0.1
        The paper's value is 1/10 (Sec. 3).

    Returns
    -------
    J : ndarray of shape (d, d)
    """
    d = int(d)
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d}")
    rho = float(off_diagonal)
    lo = -1.0 / (d - 1) if d > 1 else -np.inf
    if not (lo <= rho <= 1.0):
        raise ValueError(
            f"off_diagonal={rho} gives a matrix that is not positive semi-definite for "
            f"d={d}; it must lie in [{lo:.4g}, 1]"
        )
    J = np.full((d, d), rho)
    np.fill_diagonal(J, 1.0)
    return J


def check_output_kernel(B: Any, d: int | None = None, psd_tol: float = 1e-10) -> np.ndarray:
    """Validate an output kernel ``B``: a finite, symmetric, PSD ``d x d`` matrix.

    Parameters
    ----------
    B : array-like of shape (d, d)
    d : int, optional
        Required size (the number of outputs of the data).
    psd_tol : float
        Relative tolerance: the smallest eigenvalue must be ``>= -psd_tol * max|eig|``;
        symmetry is checked to ``1e-10`` relative.

    Returns
    -------
    B : ndarray of shape (d, d), float64, exactly symmetrised.

    Raises
    ------
    ValueError
        Wrong shape, NaN/infinity, not symmetric, not PSD, or all zero.
    """
    try:
        B = np.asarray(B, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"output_kernel could not be read as a numeric matrix: {exc}") from exc
    if B.ndim == 0:
        B = B.reshape(1, 1)
    if B.ndim != 2 or B.shape[0] != B.shape[1]:
        raise ValueError(f"output_kernel must be a square d x d matrix, got shape {B.shape}")
    if d is not None and B.shape[0] != d:
        raise ValueError(
            f"output_kernel is {B.shape[0]} x {B.shape[1]} but the targets have {d} output(s)"
        )
    if not np.isfinite(B).all():
        raise ValueError("output_kernel contains NaN or infinity")
    scale = float(np.abs(B).max())
    if scale == 0.0:
        raise ValueError("output_kernel is the zero matrix")
    if not np.allclose(B, B.T, rtol=0.0, atol=1e-10 * scale):
        raise ValueError("output_kernel is not symmetric")
    B = sym(B)
    eig = robust_eigvalsh(B, what="output_kernel")
    if eig[0] < -psd_tol * max(abs(eig[0]), abs(eig[-1])):
        raise ValueError(
            "output_kernel is not positive semi-definite "
            f"(smallest eigenvalue {eig[0]:.3g}, largest {eig[-1]:.3g})"
        )
    return B


class OperatorKernel:
    """Base class of matrix-valued kernels ``K(x, x') in R^{d x d}``.

    Subclasses implement :meth:`fit`, :meth:`blocks`, :meth:`apply`, :meth:`diag_op_norm`,
    and the attribute ``n_outputs`` (``None`` while unknown).
    """

    n_outputs: int | None = None
    decomposable: bool = False

    def fit(
        self, X: np.ndarray, n_outputs: int | None = None, random_state: Any = None
    ) -> OperatorKernel:  # pragma: no cover - abstract
        raise NotImplementedError

    def blocks(self, X: np.ndarray, Z: np.ndarray) -> np.ndarray:  # pragma: no cover
        """``K(x_i, z_j)`` for all pairs, shape (n_x, n_z, d, d)."""
        raise NotImplementedError

    def apply(self, X: np.ndarray, Z: np.ndarray, C: np.ndarray) -> np.ndarray:
        """``F[i] = sum_j K(x_i, z_j) C[j]``, shape (n_x, d), for coefficients C (n_z, d)."""
        return np.einsum("ijab,jb->ia", self.blocks(X, Z), C)

    def matrix(self, X: np.ndarray, Z: np.ndarray | None = None) -> np.ndarray:
        """The sample-major block kernel matrix, shape (n_x d, n_z d)."""
        Z = X if Z is None else Z
        G = self.blocks(X, Z)
        nx, nz, d, _ = G.shape
        return G.transpose(0, 2, 1, 3).reshape(nx * d, nz * d)

    def diag_op_norm(self, X: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """``||K(x_i, x_i)||_op`` for every row (kappa^2 of Assumption 1)."""
        raise NotImplementedError


class DecomposableKernel(OperatorKernel):
    """``K(x, x') = k(x, x') B``: a scalar kernel times a PSD output matrix.

    Parameters
    ----------
    kernel : str, callable or ViewKernel, default "rbf"
        The scalar kernel ``k`` (any name of :mod:`mvkernels.kernels` except
        "precomputed", or a callable ``f(X, Z, **params)``).
    kernel_params : dict, optional
        Parameters of ``k``, e.g. ``{"gamma": g}`` for ``exp(-g ||x - x'||^2)`` (the paper's
        ``mu`` is ``1 / g``). Without ``gamma``/``sigma`` the rbf bandwidth is set in
        :meth:`fit` from the data (mean pairwise distance, as in MVML).
    output_kernel : None, float or array-like of shape (d, d), default None
        ``B``. ``None``: identity (independent outputs). A float ``rho``: the paper-style
        matrix ``interaction_matrix(d, rho)`` (``0.1`` gives the paper's ``J``). An array:
        used as is after :func:`check_output_kernel`.

    Attributes
    ----------
    scalar_kernel : ViewKernel
    B : ndarray of shape (d, d) or None
        Resolved in :meth:`fit` (or at construction for an explicit matrix).
    """

    decomposable = True

    def __init__(
        self,
        kernel: str | Callable | ViewKernel = "rbf",
        kernel_params: dict | None = None,
        output_kernel: Any = None,
    ):
        if isinstance(kernel, ViewKernel):
            if kernel_params:
                raise ValueError("give kernel_params to the ViewKernel, not twice")
            self.scalar_kernel = copy.deepcopy(kernel)
        else:
            if kernel_params is not None and not isinstance(kernel_params, dict):
                raise TypeError(
                    f"kernel_params must be a dict or None, got {type(kernel_params).__name__}"
                )
            self.scalar_kernel = ViewKernel(kernel, kernel_params)
        if self.scalar_kernel.precomputed:
            raise ValueError(
                "operator-valued kernels need raw inputs; 'precomputed' is not supported"
            )
        self.output_kernel = output_kernel
        self.B: np.ndarray | None = None
        self.n_outputs = None
        if output_kernel is not None and not np.isscalar(output_kernel):
            self.B = check_output_kernel(output_kernel)
            self.n_outputs = self.B.shape[0]

    def _resolve_B(self, d: int) -> np.ndarray:
        ok = self.output_kernel
        if ok is None:
            return np.eye(d)
        if np.isscalar(ok):
            if isinstance(ok, (bool, np.bool_)) or not isinstance(ok, (int, float, np.number)):
                raise TypeError(f"output_kernel must be None, a float or a matrix, got {ok!r}")
            return interaction_matrix(d, float(ok))
        return check_output_kernel(ok, d)

    def fit(
        self,
        X: np.ndarray,
        n_outputs: int | None = None,
        random_state: Any = None,
        sample_weight: Any = None,
        precision: str = "single",
    ) -> DecomposableKernel:
        """Resolve the scalar kernel's bandwidth on ``X`` and ``B`` for ``n_outputs``.

        ``sample_weight`` and ``precision``: those of the default bandwidth
        (:meth:`mvkernels.kernels.ViewKernel.fit`)."""
        if n_outputs is None:
            n_outputs = self.n_outputs
        if n_outputs is None:
            raise ValueError("the number of outputs is needed to build the output kernel")
        self.B = self._resolve_B(int(n_outputs))
        self.n_outputs = self.B.shape[0]
        if self.scalar_kernel.params_ is None:
            self.scalar_kernel.fit(
                X, random_state=random_state, sample_weight=sample_weight, precision=precision
            )
        return self

    def _check(self) -> np.ndarray:
        if self.B is None or self.scalar_kernel.params_ is None:
            raise RuntimeError("DecomposableKernel.fit must be called first")
        return self.B

    def scalar(self, X: np.ndarray, Z: np.ndarray) -> np.ndarray:
        """The scalar Gram matrix ``k(X, Z)``, shape (n_x, n_z)."""
        self._check()
        return self.scalar_kernel(X, Z)

    def blocks(self, X: np.ndarray, Z: np.ndarray) -> np.ndarray:
        B = self._check()
        return self.scalar_kernel(X, Z)[:, :, None, None] * B

    def apply(self, X: np.ndarray, Z: np.ndarray, C: np.ndarray) -> np.ndarray:
        B = self._check()
        return (self.scalar_kernel(X, Z) @ C) @ B

    def matrix(self, X: np.ndarray, Z: np.ndarray | None = None) -> np.ndarray:
        B = self._check()
        return np.kron(self.scalar_kernel(X, X if Z is None else Z), B)

    def diag_op_norm(self, X: np.ndarray) -> np.ndarray:
        B = self._check()
        return self.scalar_kernel.diag(X) * float(robust_eigvalsh(B, what="output kernel B")[-1])

    def __repr__(self) -> str:
        return f"DecomposableKernel({self.scalar_kernel!r}, output_kernel={self.output_kernel!r})"


class CallableOperatorKernel(OperatorKernel):
    """A general matrix-valued kernel from a vectorised callable.

    Parameters
    ----------
    func : callable
        ``func(X, Z, **params)`` returning an array of shape (n_x, n_z, d, d) whose entry
        ``[i, j]`` is ``K(x_i, z_j)``. It must define a positive-definite kernel, in particular
        ``K(x, z) = K(z, x)^T`` (checked on the training data by :class:`VVRLSRegressor`).
    n_outputs : int, optional
        ``d``; inferred from the first evaluation when omitted.
    params : dict, optional
        Extra keyword arguments for ``func``.
    """

    def __init__(self, func: Callable, n_outputs: int | None = None, params: dict | None = None):
        if not callable(func):
            raise TypeError(f"func must be callable, got {type(func).__name__}")
        self.func = func
        self.n_outputs = None if n_outputs is None else int(n_outputs)
        self.params = dict(params or {})

    def fit(
        self, X: np.ndarray, n_outputs: int | None = None, random_state: Any = None
    ) -> CallableOperatorKernel:
        """Check that ``func`` returns d x d blocks matching ``n_outputs``."""
        G = self.blocks(X[:2], X[:2], check_d=False)
        d = G.shape[2]
        for expected in (self.n_outputs, n_outputs):
            if expected is not None and expected != d:
                raise ValueError(
                    f"the kernel callable returns {d} x {d} blocks but {expected} output(s) "
                    "are expected"
                )
        self.n_outputs = d
        return self

    def blocks(self, X: np.ndarray, Z: np.ndarray, check_d: bool = True) -> np.ndarray:
        G = np.asarray(self.func(X, Z, **self.params), dtype=np.float64)
        nx, nz = X.shape[0], Z.shape[0]
        if G.ndim != 4 or G.shape[:2] != (nx, nz) or G.shape[2] != G.shape[3]:
            raise ValueError(
                f"the operator kernel callable returned shape {G.shape}, expected "
                f"({nx}, {nz}, d, d)"
            )
        if check_d and self.n_outputs is not None and G.shape[2] != self.n_outputs:
            raise ValueError(
                f"the operator kernel callable returned {G.shape[2]} x {G.shape[3]} blocks, "
                f"expected {self.n_outputs} x {self.n_outputs}"
            )
        if not np.isfinite(G).all():
            raise ValueError("the operator kernel callable returned NaN or infinity")
        return G

    def diag_op_norm(self, X: np.ndarray) -> np.ndarray:
        out = np.empty(X.shape[0])
        for i in range(X.shape[0]):
            out[i] = np.linalg.norm(self.blocks(X[i : i + 1], X[i : i + 1])[0, 0], 2)
        return out

    def __repr__(self) -> str:
        return f"CallableOperatorKernel({getattr(self.func, '__name__', self.func)!r})"

"""Explicit feature maps ``phi`` with ``k(x, x') ~ phi(x)^T phi(x')`` for feature-space OLOK.

For a decomposable kernel ``K(x, x') = k(x, x') B`` the operator-valued feature map
``Phi(x) = phi(x) (x) B^{1/2}`` gives ``Phi(x)^T Phi(x') = phi(x)^T phi(x') B`` (Brault et
al. 2016), so OLOK with the approximate kernel keeps its model as one ``D x d`` matrix.

* ``"identity"``: ``phi(x) = x``, the exact map of the linear kernel ``<x, x'>``.
* ``"rff"``: random Fourier features (Rahimi & Recht 2007) of a shift-invariant ``k``,
  ``phi(x) = sqrt(2 / D) cos(W^T x + b)``, ``b ~ U[0, 2 pi]``, the columns of ``W`` drawn
  from the spectral density of ``k``: ``N(0, 2 gamma I)`` for the rbf kernel
  ``exp(-gamma ||x - x'||^2)``, independent Cauchy of scale ``gamma`` for the laplacian
  kernel ``exp(-gamma ||x - x'||_1)``. ``E[phi(x)^T phi(x')] = k(x, x')``.
* ``"nystrom"``: ``phi(x) = S k(L, x)`` with landmarks ``L`` (the first ``D`` rows of the
  stream) and ``S = (k(L, L)^+)^{1/2}``, so ``phi(x)^T phi(x') = k(x, L) k(L, L)^+ k(L, x')``,
  exact whenever ``x`` or ``x'`` is a landmark.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..kernels import ViewKernel
from ..nystrom import sqrt_pinv_psd

FEATURE_KINDS = ("identity", "rff", "nystrom")
#: kernels each feature kind approximates
SUPPORTED = {"identity": ("linear",), "rff": ("rbf", "laplacian"), "nystrom": None}


def check_feature_kernel(kind: str, kernel: ViewKernel) -> None:
    """``ValueError`` when ``features=kind`` cannot represent the scalar kernel."""
    names = SUPPORTED[kind]
    if names is not None and kernel.name not in names:
        what = {
            "identity": "is the exact feature map of the linear kernel",
            "rff": "(random Fourier features) approximate the rbf and laplacian kernels",
        }[kind]
        raise ValueError(f"features={kind!r} {what}, not of kernel {kernel.name!r}")


class FeatureMap:
    """A fitted explicit feature map of a scalar kernel (see the module docstring).

    Parameters
    ----------
    kind : {"identity", "rff", "nystrom"}
    kernel : ViewKernel
        The fitted scalar kernel ``k``.
    n_inputs : int
        ``p``, the input width.
    n_features : int
        ``D`` (ignored for "identity": ``D = p``).
    random_state : RandomState
        The draws of "rff".
    landmarks : ndarray of shape (D, p), optional
        Required for "nystrom".
    """

    def __init__(
        self,
        kind: str,
        kernel: ViewKernel,
        n_inputs: int,
        n_features: int,
        random_state: Any = None,
        landmarks: np.ndarray | None = None,
    ):
        check_feature_kernel(kind, kernel)
        self.kind = kind
        self.kernel = kernel
        if kind == "identity":
            self.n_features = int(n_inputs)
        elif kind == "rff":
            D = int(n_features)
            gamma = float(kernel.params_["gamma"])
            if kernel.name == "rbf":
                W = random_state.standard_normal((n_inputs, D)) * np.sqrt(2.0 * gamma)
            else:
                W = random_state.standard_cauchy((n_inputs, D)) * gamma
            self.W = W
            self.b = random_state.uniform(0.0, 2.0 * np.pi, D)
            self.n_features = D
        else:
            if landmarks is None:
                raise ValueError("Nystrom features need landmarks")
            self.landmarks = np.array(landmarks, dtype=np.float64)
            self.S, self.rank = sqrt_pinv_psd(kernel(self.landmarks, self.landmarks))
            self.n_features = self.landmarks.shape[0]

    def transform(self, X: np.ndarray) -> np.ndarray:
        """``phi(X)``, shape (n, D)."""
        if self.kind == "identity":
            return X
        if self.kind == "rff":
            Z = X @ self.W
            Z += self.b
            np.cos(Z, out=Z)
            Z *= np.sqrt(2.0 / self.n_features)
            return Z
        return self.kernel(X, self.landmarks) @ self.S

"""The feature maps of multi-view kernel PCA (one per view: kernel, identity, random Fourier
or Nystrom features) and the linear algebra they share (centring, leading eigenpairs,
sign convention)."""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import Any

import numpy as np
import scipy.linalg
from sklearn.kernel_approximation import RBFSampler

from .._arrays import is_dask_collection
from .._linalg import robust_eigh
from .._linalg import sym as _sym
from .._sparse import is_sparse
from ..kernels import ViewKernel
from ..nystrom import BlockNystrom

__all__: list[str] = []

#: eigenvalues at or below this fraction of the largest count as zero
RANK_TOL = 1e-10


# --------------------------------------------------------------------------- feature maps
class _ViewMap:
    """The feature map (explicit) or kernel (implicit) of one view, fitted on its data."""

    def __init__(self, kind: str, kernel: ViewKernel, n_features: Any, view: int):
        self.kind, self.kernel, self.n_features, self.view = kind, kernel, n_features, view
        self.sampler: Any = None

    @property
    def explicit(self) -> bool:
        return self.kind != "kernel"

    def fit(self, X: Any, rng: np.random.RandomState) -> _ViewMap:
        v = self.view
        if is_sparse(X) and self.kind == "identity":
            raise TypeError(
                f"view {v} is a sparse matrix, and features='identity' would densify it; "
                "use features='nystrom' (or 'rff'), an implicit kernel with a dual solver, "
                "or call .toarray() first"
            )
        if self.kind == "identity":
            if self.kernel.name != "linear":
                raise ValueError(
                    f"view {v}: features='identity' is the feature map of the linear kernel, "
                    f"not of {self.kernel.name!r}"
                )
            self.kernel.fit(X[:2] if is_dask_collection(X) else X)
            self.n_out = int(X.shape[1])
            return self
        if self.kind == "kernel":
            if self.kernel.precomputed:
                self.kernel.params_ = {}
            else:
                self.kernel.fit(X, random_state=rng)
            return self
        D = self.n_features
        if isinstance(D, bool) or not isinstance(D, Integral) or D < 1:
            raise ValueError(
                f"view {v}: n_features must be a positive int for features={self.kind!r}, got {D!r}"
            )
        if self.kind == "rff":
            if self.kernel.name != "rbf":
                raise ValueError(
                    f"view {v}: random Fourier features approximate the rbf "
                    f"kernel, not {self.kernel.name!r}"
                )
            self.kernel.fit(X, random_state=rng)
            self.sampler = RBFSampler(
                gamma=self.kernel.params_["gamma"], n_components=int(D), random_state=rng
            )
            # the random draws depend on the input width only: fit on a zero row
            self.sampler.fit(np.zeros((1, X.shape[1])))
        elif self.kind == "nystrom":
            if self.kernel.precomputed:
                raise ValueError(
                    f"view {v}: Nystrom features need raw data, not a precomputed kernel"
                )
            try:
                self.sampler = BlockNystrom(
                    kernel=self.kernel.kernel,
                    kernel_params=self.kernel.params,
                    n_landmarks=int(D),
                    random_state=rng,
                ).fit([X])
            except (ValueError, np.linalg.LinAlgError) as exc:
                msg = str(exc).replace("view 0", f"view {v}")
                if f"view {v}" not in msg:
                    msg = f"view {v}: {msg}"
                raise ValueError(f"{msg} (Nystrom features of view {v})") from exc
        self.n_out = int(D)
        return self

    def features(self, X: Any) -> np.ndarray:
        if self.kind == "identity":
            if is_sparse(X):  # new rows of a view fitted dense (fit refuses a sparse one):
                # densified block by block, as wide as the dense weights W_v (d_v x s)
                return np.asarray(X.toarray(), dtype=np.float64)
            return np.asarray(X, dtype=np.float64)
        if self.kind == "rff":
            return self.sampler.transform(X)
        if self.kind == "nystrom":
            return self.sampler.view_features(X, 0)
        raise RuntimeError(f"view {self.view} has an implicit kernel: no explicit features")

    def cross_kernel(self, X_train: np.ndarray, F_train: np.ndarray | None, X: Any) -> np.ndarray:
        """``(k(x_j, x))`` of shape (n_train, n_new)."""
        if self.explicit:
            return F_train @ self.features(X).T
        if self.kernel.precomputed:  # the (n_new, n_train) test kernel: dense output anyway
            return np.asarray(X.toarray() if is_sparse(X) else X, dtype=np.float64).T
        return self.kernel(X_train, X)


class _FeatureStack:
    """Row-wise ``[phi_1(X_1), ..., phi_V(X_V)]`` of a list of view blocks (picklable)."""

    def __init__(self, maps: Sequence[_ViewMap]):
        self.maps = list(maps)

    def __call__(self, blocks: Sequence[np.ndarray]) -> np.ndarray:
        return np.hstack(
            [
                m.features(B if is_sparse(B) else np.asarray(B, dtype=np.float64))
                for m, B in zip(self.maps, blocks)
            ]
        )


class _PrimalHidden:
    """Row-wise hidden units of eq. (6), ``h = Sigma^{-1} W^T (phi - mean)`` (picklable)."""

    def __init__(self, stack: _FeatureStack, mean: np.ndarray, B: np.ndarray):
        self.stack, self.mean, self.B = stack, mean, B  # B = Sigma^{-1} W^T (s x d)

    def __call__(self, blocks: Sequence[np.ndarray]) -> np.ndarray:
        return (self.stack(blocks) - self.mean) @ self.B.T


# --------------------------------------------------------------------------- helpers
def _per_view(value: Any, n_views: int, name: str) -> list:
    if isinstance(value, (list, tuple)):
        if len(value) != n_views:
            raise ValueError(
                f"{name} lists {len(value)} entries but the data has {n_views} view(s)"
            )
        return list(value)
    return [value] * n_views


def _real_array(X: Any, name: str) -> np.ndarray:
    """``X`` as a float64 array; complex input refused (no silent cast to real); a sparse
    matrix densified (the forecaster's series and windows, narrow by nature)."""
    if is_sparse(X):
        X = X.toarray()
    try:
        is_complex = np.iscomplexobj(X)
    except (TypeError, ValueError):
        is_complex = False
    if is_complex:
        raise ValueError(
            f"{name} is complex; mvkernels works on real data (take the real "
            "part, the modulus, or split real and imaginary parts into features)"
        )
    try:
        return np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} could not be read as a real numeric array: {exc}") from exc


def _center_gram(K: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """``M K M`` and the row means / grand mean of the uncentred K (for test centring)."""
    row = K.mean(axis=0)
    grand = float(row.mean())
    Kc = K - row[None, :] - row[:, None] + grand
    return _sym(Kc), row, grand


def _top_eigh(A: np.ndarray, s: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Top ``s`` eigenpairs of a symmetric PSD matrix, descending; rank checked."""
    m = A.shape[0]
    lam, V = robust_eigh(A, subset_by_index=(m - s, m - 1), what=f"centred {what}")
    lam, V = lam[::-1], V[:, ::-1]
    _check_rank(lam, s, what)
    return lam, V


def _top_eigh_range(Phi: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray]:
    """Top ``s`` eigenpairs of ``C = Phi^T Phi`` (d x d) for ``d > n``, without forming C.

    ``range(C) = range(Phi^T)``: with the thin QR ``Phi^T = Q R`` (Q: d x n),
    ``C = Q (R R^T) Q^T``, so the eigenpairs of C with nonzero eigenvalue are ``(lam, Q v)``
    for the eigenpairs ``(lam, v)`` of the n x n matrix ``R R^T = Q^T C Q``. Exact (a
    Rayleigh-Ritz step on an invariant subspace), O(d n^2) instead of O(d^3); tested against
    ``eigh(C)``.
    """
    Q, R = scipy.linalg.qr(Phi.T, mode="economic")
    lam, V = _top_eigh(_sym(R @ R.T), s, "covariance C")
    return lam, Q @ V


def _check_rank(lam: np.ndarray, s: int, what: str) -> None:
    top = lam[0] if lam.size else 0.0
    if not top > 0 or lam[-1] <= RANK_TOL * top:
        rank = int(np.sum(lam > RANK_TOL * max(top, 0.0))) if top > 0 else 0
        raise ValueError(
            f"n_components={s} exceeds the numerical rank of the centred {what} "
            f"(only {rank} eigenvalue(s) above {RANK_TOL:g} x the largest); lower n_components"
        )


def _sign_flip(H: np.ndarray) -> np.ndarray:
    """+-1 per column so that each column's largest-magnitude entry is positive."""
    idx = np.argmax(np.abs(H), axis=0)
    signs = np.sign(H[idx, np.arange(H.shape[1])])
    signs[signs == 0] = 1.0
    return signs

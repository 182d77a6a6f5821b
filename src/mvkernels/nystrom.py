"""Block-wise Nystrom approximation shared by all views (MVML paper, Sec. 3.5).

One set of landmark *samples* is chosen and used in every view, so that the
approximate block kernel keeps the sample alignment between views (SPEC.md 1.1).
For view ``l`` with landmark indices ``idx`` (``p`` of them):

    W_l = K_l[idx, idx]                 (p x p)
    S_l = (W_l^+)^{1/2}                 (symmetric p x p, see ``eig_floor``)
    u_l(x) = S_l k_l(X[idx], x)         (p features)

so ``K_l ~ U_l U_l^T`` with ``U_l = K_l[:, idx] S_l``. The feature vector of a sample is
the concatenation ``u(x) = (u_1(x), ..., u_v(x))`` of length ``v p``.

Numerical choice (documented, tested): ``(W^+)^{1/2}`` is computed from the
eigendecomposition ``W = V diag(s) V^T``; eigenvalues ``s_i <= eig_floor * max(s)``
are treated as zero (their directions are dropped from the pseudo-inverse). The
feature dimension stays ``p`` per view whatever the numerical rank, so with all n
samples as landmarks ``U U^T = K`` exactly (up to the floor).

No n x n matrix is built: features are computed in row chunks of ``chunk_size``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ._validation import check_precomputed_kernel, check_views
from .kernels import ViewKernel, make_view_kernels

__all__ = [
    "LANDMARK_STRATEGIES",
    "resolve_n_landmarks",
    "select_landmarks",
    "sqrt_pinv_psd",
    "default_chunk_size",
    "FeatureMoments",
    "BlockNystrom",
]

LANDMARK_STRATEGIES = ("uniform", "kmeans++")


def resolve_n_landmarks(n_landmarks: int | float, n_samples: int) -> int:
    """Number of landmarks from an int or a fraction of ``n_samples`` in (0, 1].

    A fraction is rounded to the nearest integer, and at least 1.
    """
    if isinstance(n_landmarks, bool):
        raise TypeError("n_landmarks must be an int or a float in (0, 1], not a bool")
    if isinstance(n_landmarks, Integral):
        p = int(n_landmarks)
        if p < 1:
            raise ValueError(f"n_landmarks must be >= 1, got {p}")
        if p > n_samples:
            raise ValueError(
                f"n_landmarks={p} is larger than the number of training samples ({n_samples})"
            )
        return p
    if isinstance(n_landmarks, Real):
        f = float(n_landmarks)
        if not 0.0 < f <= 1.0:
            raise ValueError(
                f"a fractional n_landmarks must be in (0, 1], got {n_landmarks!r}"
            )
        return max(1, min(n_samples, int(round(f * n_samples))))
    raise TypeError(f"n_landmarks must be an int or a float in (0, 1], got {n_landmarks!r}")


def default_chunk_size(n_columns: int, budget: int = 4_000_000) -> int:
    """Rows per chunk so that a chunk of ``n_columns`` float64 features is ~32 MB."""
    return int(max(256, budget // max(1, n_columns)))


def _kernel_column_blocks(
    Xs: Sequence[np.ndarray], kernels: Sequence[ViewKernel], j: int, chunk: int
) -> Iterator[tuple[slice, np.ndarray]]:
    """Yield (rows, sum over views of the kernel-space squared distance to sample j)."""
    n = Xs[0].shape[0]
    for start in range(0, n, chunk):
        rows = slice(start, min(n, start + chunk))
        d2 = np.zeros(rows.stop - rows.start)
        for Xv, kern in zip(Xs, kernels):
            if kern.precomputed:
                diag = np.diagonal(Xv)
                d2 += diag[rows] + Xv[j, j] - 2.0 * Xv[rows, j]
            else:
                zj = Xv[j : j + 1]
                d2 += kern.diag(Xv[rows]) + kern.diag(zj)[0] - 2.0 * kern(Xv[rows], zj)[:, 0]
        yield rows, np.maximum(d2, 0.0)


def select_landmarks(
    Xs: Sequence[np.ndarray],
    kernels: Sequence[ViewKernel],
    n_landmarks: int,
    strategy: str = "uniform",
    random_state: Any = None,
) -> np.ndarray:
    """Indices of the landmark samples, shared by all views.

    Parameters
    ----------
    Xs : list of arrays
        Training views (or n x n Gram matrices for precomputed kernels).
    kernels : list of fitted ViewKernel
    n_landmarks : int
    strategy : {"uniform", "kmeans++"}
        ``"uniform"``: a uniformly random subset (the paper: one random ordering shared
        by all views, first ``p`` kept). ``"kmeans++"``: k-means++ seeding in the joint
        kernel feature space, with squared distance
        ``sum_l k_l(x, x) + k_l(z, z) - 2 k_l(x, z)``; spreads landmarks over the data
        and gives a smaller Nystrom error than uniform sampling at equal ``p``.
    random_state : int, RandomState or None

    Returns
    -------
    idx : ndarray of int, shape (n_landmarks,), sorted
    """
    rng = check_random_state(random_state)
    n = Xs[0].shape[0]
    if strategy == "uniform":
        return np.sort(rng.permutation(n)[:n_landmarks])
    if strategy != "kmeans++":
        raise ValueError(
            f"unknown landmark strategy {strategy!r}; use one of {LANDMARK_STRATEGIES}"
        )
    chunk = default_chunk_size(1, budget=1_000_000)
    chosen = [int(rng.randint(n))]
    mind2 = np.full(n, np.inf)
    for _ in range(1, n_landmarks):
        for rows, d2 in _kernel_column_blocks(Xs, kernels, chosen[-1], chunk):
            np.minimum(mind2[rows], d2, out=mind2[rows])
        mind2[chosen] = 0.0
        total = mind2.sum()
        if not total > 0:  # every remaining point coincides with a landmark
            rest = np.setdiff1d(np.arange(n), chosen)
            chosen.extend(rng.choice(rest, n_landmarks - len(chosen), replace=False).tolist())
            break
        chosen.append(int(rng.choice(n, p=mind2 / total)))
    return np.sort(np.asarray(chosen, dtype=np.intp))


def sqrt_pinv_psd(W: np.ndarray, eig_floor: float = 1e-10) -> tuple[np.ndarray, int]:
    """Symmetric ``(W^+)^{1/2}`` of a PSD matrix and its numerical rank.

    Eigenvalues ``<= eig_floor * max eigenvalue`` count as zero.
    """
    W = 0.5 * (W + W.T)
    s, V = np.linalg.eigh(W)
    top = s[-1] if s.size else 0.0
    if not top > 0:
        raise ValueError("the landmark kernel matrix is zero or negative definite")
    keep = s > eig_floor * top
    inv_sqrt = np.zeros_like(s)
    inv_sqrt[keep] = 1.0 / np.sqrt(s[keep])
    S = (V * inv_sqrt) @ V.T
    return 0.5 * (S + S.T), int(keep.sum())


@dataclass
class FeatureMoments:
    """Sufficient statistics of a feature map over a data set (SPEC.md 1.1).

    ``gram = sum_i u_i u_i^T``, ``sum = sum_i u_i`` and, with targets,
    ``cross = sum_i u_i y_i^T``. Moments of disjoint chunks add up (:meth:`merge`), so
    they can be computed in one chunked, streamed or distributed pass.
    """

    n_samples: int
    sum: np.ndarray
    gram: np.ndarray
    cross: np.ndarray | None = None

    @classmethod
    def from_features(cls, U: np.ndarray, Y: np.ndarray | None = None) -> "FeatureMoments":
        cross = None if Y is None else U.T @ Y
        return cls(U.shape[0], U.sum(axis=0), U.T @ U, cross)

    def merge(self, other: "FeatureMoments") -> "FeatureMoments":
        cross = None
        if self.cross is not None and other.cross is not None:
            cross = self.cross + other.cross
        return FeatureMoments(
            self.n_samples + other.n_samples, self.sum + other.sum,
            self.gram + other.gram, cross,
        )


def moments_from_chunks(chunks: Iterator[tuple[np.ndarray, np.ndarray | None]]) -> FeatureMoments:
    """Accumulate :class:`FeatureMoments` over ``(U_chunk, Y_chunk)`` pairs."""
    total: FeatureMoments | None = None
    for U, Y in chunks:
        m = FeatureMoments.from_features(U, Y)
        total = m if total is None else total.merge(m)
    if total is None:
        raise ValueError("no data: the chunk iterator was empty")
    total.gram = 0.5 * (total.gram + total.gram.T)
    return total


class BlockNystrom(TransformerMixin, BaseEstimator):
    """Block-wise Nystrom feature map with landmarks shared across views.

    Parameters
    ----------
    kernel : str, callable or list, default="rbf"
        One kernel for every view or one per view (see :mod:`mvkernels.kernels`).
    kernel_params : dict, list of dict or None
        Kernel parameters, one dict for all views or one per view.
    n_landmarks : int or float, default=0.1
        Number of landmark samples, or a fraction of the training samples in (0, 1].
    landmarks : {"uniform", "kmeans++"}, default="uniform"
        Landmark strategy (:func:`select_landmarks`).
    eig_floor : float, default=1e-10
        Relative eigenvalue floor of the pseudo-inverse square root (:func:`sqrt_pinv_psd`).
    chunk_size : int or None
        Rows per chunk when computing features; ``None`` picks ~32 MB chunks.
    views : None or list
        How to cut a single 2-D input array into views (see :func:`mvkernels.check_views`).
    random_state : int, RandomState or None

    Attributes
    ----------
    kernels_ : list of ViewKernel
    landmark_indices_ : ndarray of shape (p,)
    landmarks_ : list of ndarray
        Landmark rows of each view (for precomputed kernels: the indices).
    normalizers_ : list of ndarray of shape (p, p)
        ``(W_l^+)^{1/2}`` per view.
    ranks_ : list of int
        Numerical rank of each ``W_l``.
    n_views_, n_landmarks_, n_features_view_ : fitted sizes.
    """

    def __init__(
        self,
        kernel: str | Callable | Sequence = "rbf",
        kernel_params: dict | Sequence[dict] | None = None,
        n_landmarks: int | float = 0.1,
        landmarks: str = "uniform",
        eig_floor: float = 1e-10,
        chunk_size: int | None = None,
        views: Any = None,
        random_state: Any = None,
    ):
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.eig_floor = eig_floor
        self.chunk_size = chunk_size
        self.views = views
        self.random_state = random_state

    # -- fitting -----------------------------------------------------------
    def fit(self, X: Any, y: Any = None) -> "BlockNystrom":
        """Fit the kernels (bandwidths), choose landmarks, factor each ``W_l``."""
        Xs = check_views(X, views=self.views)
        self._fit_views(Xs)
        if not isinstance(X, (list, tuple)):
            self.n_features_in_ = X.shape[1]
        return self

    def _fit_views(self, Xs: list[np.ndarray]) -> "BlockNystrom":
        rng = check_random_state(self.random_state)
        n = Xs[0].shape[0]
        kernels = make_view_kernels(self.kernel, self.kernel_params, len(Xs))
        if kernels[0].precomputed:
            Xs = [check_precomputed_kernel(K, i) for i, K in enumerate(Xs)]
        for Xv, kern in zip(Xs, kernels):
            kern.fit(Xv, random_state=rng)
        p = resolve_n_landmarks(self.n_landmarks, n)
        idx = select_landmarks(Xs, kernels, p, self.landmarks, rng)
        normalizers, ranks, landmark_rows = [], [], []
        for Xv, kern in zip(Xs, kernels):
            if kern.precomputed:
                W = Xv[np.ix_(idx, idx)]
                landmark_rows.append(idx.copy())
            else:
                Z = Xv[idx]
                W = kern(Z, Z)
                landmark_rows.append(np.array(Z))
            S, r = sqrt_pinv_psd(W, self.eig_floor)
            normalizers.append(S)
            ranks.append(r)
        self.kernels_ = kernels
        self.landmark_indices_ = idx
        self.landmarks_ = landmark_rows
        self.normalizers_ = normalizers
        self.ranks_ = ranks
        self.n_views_ = len(Xs)
        self.n_landmarks_ = p
        self.n_samples_fit_ = n
        self.n_features_view_ = [Xv.shape[1] for Xv in Xs]
        return self

    # -- features ------------------------------------------------------------
    def check_views(self, X: Any) -> list[np.ndarray]:
        """Validate views for transform against what was seen in fit."""
        check_is_fitted(self, "normalizers_")
        if self.kernels_[0].precomputed:
            Xs = check_views(X, views=self.views, n_views=self.n_views_)
            return [
                check_precomputed_kernel(K, i, n_train=self.n_samples_fit_, square=False)
                for i, K in enumerate(Xs)
            ]
        return check_views(
            X, views=self.views, n_views=self.n_views_, n_features=self.n_features_view_
        )

    def view_features(self, Xv: np.ndarray, view: int) -> np.ndarray:
        """Features ``U_l = k_l(X, landmarks) S_l`` of one (validated) view chunk."""
        kern = self.kernels_[view]
        if kern.precomputed:
            Q = Xv[:, self.landmark_indices_]
        else:
            Q = kern(Xv, self.landmarks_[view])
        return Q @ self.normalizers_[view]

    def iter_features(
        self, Xs: list[np.ndarray], chunk_size: int | None = None
    ) -> Iterator[tuple[slice, np.ndarray]]:
        """Yield ``(rows, U_chunk)`` with ``U_chunk`` of shape (rows, v p)."""
        n = Xs[0].shape[0]
        chunk = chunk_size or self.chunk_size or default_chunk_size(
            self.n_views_ * self.n_landmarks_
        )
        for start in range(0, n, chunk):
            rows = slice(start, min(n, start + chunk))
            yield rows, np.hstack(
                [self.view_features(Xv[rows], l) for l, Xv in enumerate(Xs)]
            )

    def transform(self, X: Any) -> np.ndarray:
        """Concatenated Nystrom features, shape (n_samples, n_views * n_landmarks)."""
        Xs = self.check_views(X)
        out = np.empty((Xs[0].shape[0], self.n_views_ * self.n_landmarks_))
        for rows, U in self.iter_features(Xs):
            out[rows] = U
        return out

    def moments(self, X: Any, Y: np.ndarray | None = None) -> FeatureMoments:
        """Sufficient statistics ``sum u u^T``, ``sum u``, ``sum u y^T`` in one chunked pass."""
        Xs = self.check_views(X)
        if Y is not None:
            Y = np.asarray(Y, dtype=np.float64)
            Y = Y.reshape(-1, 1) if Y.ndim == 1 else Y
            if Y.shape[0] != Xs[0].shape[0]:
                raise ValueError(
                    f"Y has {Y.shape[0]} rows but the views have {Xs[0].shape[0]} samples"
                )
        return moments_from_chunks(
            (U, None if Y is None else Y[rows]) for rows, U in self.iter_features(Xs)
        )

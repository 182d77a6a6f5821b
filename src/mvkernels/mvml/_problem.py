"""Training data of one MVML fit (:class:`MVMLProblem`), full-kernel or Nystrom mode."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .._arrays import views_kind
from ..nystrom import BlockNystrom, default_chunk_size
from ._metric import _sym


# ============================================================================ problem data
@dataclass(frozen=True)
class MVMLProblem:
    """Training data of one MVML fit, in full-kernel or Nystrom mode.

    This is what a loss's g-step receives (see :class:`~mvkernels.mvml._losses.Loss`).
    Frozen: a step that needs more of the data (e.g. the gathered features of Dask
    views) makes a new problem with :func:`dataclasses.replace`.

    Attributes
    ----------
    mode : {"full", "nystrom"}
    n_samples, n_views : int
    block_size : int
        ``n`` (full) or ``p`` (Nystrom); ``dim = n_views * block_size`` is the size of
        ``A`` / ``g``.
    Y : ndarray of shape (n, T), or a Dask array (Nystrom mode on Dask input)
        Targets, one column per independent problem (one-vs-all: +-1 columns). On Dask
        input it stays a lazy Dask array: the square loss only uses the statistics
        ``cross`` and ``target_sq``.
    Ks : list of ndarray (n, n) or None
        Full mode: the per-view training kernel matrices.
    gram, cross, feature_sum : ndarray or None
        Nystrom mode: ``C = sum u u^T`` (dim, dim), ``c = sum u y^T`` (dim, T) and
        ``sum u`` from :meth:`BlockNystrom.moments`. ``gram`` is None on a problem built
        for ``solver="cg"`` without the statistics
        (:func:`~mvkernels.mvml._iterative.row_statistics_problem`): the products with
        ``C`` then stream the rows.
    feature_scatter : ndarray or None
        Nystrom mode: ``sum (u - mean)(u - mean)^T`` accumulated stably
        (:attr:`FeatureMoments.scatter`), for the MVML_Cov metric.
    target_sq : ndarray of shape (T,) or None
        Nystrom mode: ``y_t^T y_t`` per target column (diagonal of the moments'
        ``target_gram``), for the square loss from the statistics.
    feature_map : BlockNystrom or None
        Nystrom mode: the fitted feature map (for losses that need the features
        themselves, e.g. the hinge loss: :meth:`iter_features`, :meth:`features`).
    Xs : list of arrays or None
        Nystrom mode: the validated training views (for :meth:`iter_features`); NumPy
        or Dask.
    U : ndarray of shape (n, dim) or None
        Nystrom mode: the training features, when a loss has materialised them (e.g.
        :class:`~mvkernels.MVMLSVC` on Dask input); :meth:`iter_features` and
        :meth:`features` then read them instead of recomputing from ``Xs``.
    target_sum : ndarray of shape (T,) or None
        Nystrom mode: ``sum_i y_i`` (for the target means of :meth:`centred`).
    feature_mean, target_mean : ndarray or None
        Set on a problem centred for an unpenalised intercept (:meth:`centred`): the
        training means the design and targets were centred by, ``m`` (dim,) and
        ``ybar`` (T,); None on an uncentred problem. Full mode: ``m`` stacks the column
        means of the ``K_l``.
    uncentred : MVMLProblem or None
        On a centred problem, the problem it was centred from (the fixed metrics, e.g.
        MVML_Cov, are computed from the data as given).
    sample_weight : ndarray of shape (n,) or None
        The rows' loss weights ``s_i > 0`` (None: 1 each), for the weighted square loss
        ``sum_i s_i (y_i - f(x_i))^2`` (rows of zero weight are dropped before the problem
        is built). Nystrom mode: the statistics are the weighted sums
        (:class:`~mvkernels.nystrom.FeatureMoments` with weights). Full mode: the loss
        sees the rows scaled by ``sqrt(s_i)``: ``Y`` holds ``sqrt(s_i) y_i`` and
        :meth:`design` / :meth:`view_outputs` scale their rows the same way, while ``Ks``
        stay the kernels (the coefficients are indexed by the training rows), unless
        ``scale_rows`` is False.
    scale_rows : bool
        Full mode with ``sample_weight``: whether ``Y``, :meth:`design` and
        :meth:`view_outputs` hold the rows scaled by ``sqrt(s_i)`` (True, the square
        loss) or the rows as given (False: the hinge loss, which weighs each row's hinge
        by ``s_i`` itself and needs the labels +-1).
    """

    mode: str
    n_samples: int
    n_views: int
    block_size: int
    Y: np.ndarray
    Ks: list | None = None
    gram: np.ndarray | None = None
    cross: np.ndarray | None = None
    feature_sum: np.ndarray | None = None
    target_sq: np.ndarray | None = None
    feature_scatter: np.ndarray | None = None
    feature_map: BlockNystrom | None = None
    Xs: list | None = None
    U: np.ndarray | None = None
    target_sum: np.ndarray | None = None
    feature_mean: np.ndarray | None = None
    target_mean: np.ndarray | None = None
    uncentred: MVMLProblem | None = field(default=None, repr=False)
    _design_cache: dict = field(default_factory=dict, repr=False)
    sample_weight: np.ndarray | None = field(default=None, repr=False)
    scale_rows: bool = True

    @classmethod
    def full(
        cls,
        Ks: list,
        Y: np.ndarray,
        sample_weight: np.ndarray | None = None,
        scale_rows: bool = True,
    ) -> MVMLProblem:
        """Full-kernel problem of the kernels ``Ks`` and targets ``Y`` (n, T), with the
        rows' loss weights ``sample_weight`` (None: unweighted; ``scale_rows``: see the
        class)."""
        n, v = Ks[0].shape[0], len(Ks)
        if sample_weight is None:
            return cls("full", n, v, n, Y, Ks=Ks)
        if not scale_rows:
            sw = np.asarray(sample_weight, dtype=np.float64)
            return cls("full", n, v, n, Y, Ks=Ks, sample_weight=sw, scale_rows=False)
        s = np.sqrt(np.asarray(sample_weight, dtype=np.float64))
        Ys = np.asarray(Y, dtype=np.float64) * s[:, None]
        return cls("full", n, v, n, Ys, Ks=Ks, sample_weight=np.asarray(sample_weight))

    @property
    def total_weight(self) -> float:
        """``sum_i s_i``: ``n_samples`` when unweighted."""
        if self.sample_weight is None:
            return float(self.n_samples)
        return float(np.sum(self.sample_weight))

    def _row_scale(self) -> np.ndarray | None:
        """Full mode: ``sqrt(s_i)`` per row (None: unweighted or ``scale_rows`` False)."""
        if self.sample_weight is None or not self.scale_rows:
            return None
        return np.sqrt(self.sample_weight)

    @classmethod
    def from_moments(
        cls,
        mom: Any,
        feature_map: BlockNystrom,
        Y: Any,
        Xs: list | None = None,
        U: np.ndarray | None = None,
        sample_weight: np.ndarray | None = None,
    ) -> MVMLProblem:
        """Nystrom-mode problem from :class:`~mvkernels.nystrom.FeatureMoments` (with
        targets) of the training rows: ``C``, ``c``, ``y^T y``, the feature sum and scatter
        (weighted moments with ``sample_weight``, the rows' weights)."""
        T = Y.shape[1]
        cross = np.asarray(mom.cross, dtype=np.float64).reshape(-1, T)
        target_sq = np.diag(np.asarray(mom.target_gram, dtype=np.float64)).copy()
        return cls(
            "nystrom",
            int(mom.n_samples),
            int(feature_map.n_views_),
            int(feature_map.n_landmarks_),
            Y,
            gram=_sym(np.asarray(mom.gram, dtype=np.float64)),
            cross=cross,
            feature_sum=np.asarray(mom.sum),
            target_sq=target_sq,
            feature_scatter=mom.centered_gram(),
            feature_map=feature_map,
            Xs=Xs,
            U=U,
            target_sum=(
                None
                if mom.target_sum is None
                else np.asarray(mom.target_sum, dtype=np.float64).reshape(T)
            ),
            sample_weight=sample_weight,
        )

    @classmethod
    def from_rows(
        cls, U: np.ndarray, Y: np.ndarray, feature_map: BlockNystrom, Xs: list | None = None
    ) -> MVMLProblem:
        """Nystrom-mode problem of the training features ``U`` (n x dim, unweighted)
        without ``C``: ``c = U^T Y``, ``sum u``, ``y^T y`` and ``sum y`` (``O(n dim T)``),
        for the structured path from the rows (fewer rows than features,
        :meth:`~mvkernels.mvml._lowrank.SharedSpectrum.from_rows`), which needs no
        more."""
        Y = np.asarray(Y, dtype=np.float64)
        return cls(
            "nystrom",
            U.shape[0],
            int(feature_map.n_views_),
            int(feature_map.n_landmarks_),
            Y,
            cross=U.T @ Y,
            feature_sum=U.sum(axis=0),
            target_sq=np.einsum("it,it->t", Y, Y),
            feature_map=feature_map,
            Xs=Xs,
            U=U,
            target_sum=Y.sum(axis=0),
        )

    def centred(self) -> MVMLProblem:
        """The problem of the square loss with an unpenalised intercept per target.

        ``min_{g, b} ||y - P g - b 1||^2 + alpha <g, A^+ g>`` is, for any ``g``, minimised
        by ``b = ybar - m^T g`` (``m = P^T 1 / n``), which leaves the same problem on the
        centred design ``(I - 11^T / n) P`` and targets ``y - ybar``. Nystrom mode: the
        statistics become ``C = sum (u - m)(u - m)^T`` (the feature scatter),
        ``c = sum (u - m)(y - ybar)^T = c - (sum u) ybar^T`` and
        ``y^T y = sum (y - ybar)^2``; the features (:meth:`iter_features`) are centred
        on the fly. Full mode: each ``K_l`` is row-centred, ``K_l - 1 m_l^T`` with
        ``m_l`` its column means, so ``design(w)`` is the centred ``W H``. The g-step,
        the w-step, the structured solvers and the data term then need no change; the
        offsets follow from :meth:`intercepts`. Already centred: returned as is. With
        ``sample_weight`` the means are the weighted means and ``n`` the total weight.
        """
        if self.target_mean is not None:
            return self
        n = self.n_samples if self.sample_weight is None else self.total_weight
        if self.mode == "full" and self.sample_weight is not None:
            s = self._row_scale()
            sw = np.asarray(self.sample_weight, dtype=np.float64)
            Y = np.asarray(self.Y, dtype=np.float64)  # sqrt(s) y
            ybar = (s @ Y) / n
            means = [(sw @ K) / n for K in self.Ks]
            return replace(
                self,
                Y=Y - s[:, None] * ybar[None, :],
                Ks=[K - m[None, :] for K, m in zip(self.Ks, means)],
                feature_mean=np.concatenate(means),
                target_mean=ybar,
                uncentred=self,
                _design_cache={},
            )
        if self.mode == "full":
            Y = np.asarray(self.Y, dtype=np.float64)
            ybar = Y.mean(axis=0)
            means = [K.mean(axis=0) for K in self.Ks]
            return replace(
                self,
                Y=Y - ybar,
                Ks=[K - m[None, :] for K, m in zip(self.Ks, means)],
                feature_mean=np.concatenate(means),
                target_mean=ybar,
                uncentred=self,
                _design_cache={},
            )
        total = self.target_sum
        if total is None:
            total = np.asarray(self.Y.sum(axis=0), dtype=np.float64)
        ybar = np.asarray(total, dtype=np.float64).reshape(-1) / n
        mean = np.asarray(self.feature_sum, dtype=np.float64) / n
        scatter = self.feature_scatter
        if scatter is None and self.gram is not None:  # (no statistics: solver="cg")
            scatter = _sym(self.gram - n * np.outer(mean, mean))
        target_sq = None
        if self.target_sq is not None:
            target_sq = np.maximum(self.target_sq - n * ybar**2, 0.0)
        return replace(
            self,
            Y=self.Y - ybar,
            gram=scatter,
            cross=self.cross - np.outer(self.feature_sum, ybar),
            feature_sum=np.zeros_like(mean),
            target_sq=target_sq,
            target_sum=np.zeros_like(ybar),
            feature_mean=mean,
            target_mean=ybar,
            uncentred=self,
            _design_cache={},
        )

    def intercepts(self, coef: np.ndarray, basis: np.ndarray | None = None) -> np.ndarray:
        """Offsets ``b_t = ybar_t - m^T (w (.) g_t)`` of weighted coefficients ``coef``
        (..., T, k) on a :meth:`centred` problem, shape (..., T); zeros on an uncentred
        one. ``basis`` (dim, k): the coefficients are ``basis @ coef`` in the feature
        basis (None: ``coef`` are, ``k = dim``)."""
        coef = np.asarray(coef, dtype=np.float64)
        if self.target_mean is None:
            return np.zeros(coef.shape[:-1])
        mean = self.feature_mean if basis is None else basis.T @ self.feature_mean
        return self.target_mean - coef @ mean

    @property
    def dim(self) -> int:
        return self.n_views * self.block_size

    @property
    def n_targets(self) -> int:
        return self.Y.shape[1]

    def weight_vector(self, w: np.ndarray) -> np.ndarray:
        """Diagonal of ``D_w = blockdiag(w_l I)`` (length ``dim``)."""
        return np.repeat(np.asarray(w, dtype=np.float64), self.block_size)

    def weighted_statistics(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Nystrom mode: ``M = D_w C D_w`` (dim, dim) and the rows ``b_t = D_w c_t``
        (T, dim), the only data the square-loss g-step sees (eq. 15)."""
        d = self.weight_vector(w)
        return self.gram * d[:, None] * d[None, :], (self.cross * d[:, None]).T

    def design(self, w: np.ndarray) -> np.ndarray:
        """Full mode: ``P = W H = [w_1 K_1, ..., w_v K_v]`` (n x nv), cached per ``w``."""
        if self.mode != "full":
            raise RuntimeError("design() is the full-kernel W H; use the moments in Nystrom mode")
        key = tuple(np.asarray(w, dtype=np.float64).tolist())
        P = self._design_cache.get(key)
        if P is None:
            P = np.hstack([wl * K for wl, K in zip(w, self.Ks)])
            s = self._row_scale()
            if s is not None:  # the weighted loss: rows scaled by sqrt(s_i)
                P *= s[:, None]
            self._design_cache.clear()
            self._design_cache[key] = P
        return P

    def iter_features(self, chunk_size: int | None = None) -> Iterator[tuple[slice, np.ndarray]]:
        """Nystrom mode: yield ``(rows, U_chunk)``, ``U_chunk`` of shape (rows, dim)."""
        if self.mode != "nystrom":
            raise RuntimeError("iter_features() needs Nystrom mode (n_landmarks set)")
        if self.U is not None:
            chunk = chunk_size or default_chunk_size(self.dim)
            chunks: Any = (
                (slice(s, min(self.n_samples, s + chunk)), self.U[s : s + chunk])
                for s in range(0, self.n_samples, chunk)
            )
        elif views_kind(self.Xs) == "dask":
            raise RuntimeError(
                "the training views are Dask arrays: set problem.U (materialised features) "
                "or use the sufficient statistics (gram, cross, target_sq)"
            )
        else:
            chunks = self.feature_map.iter_features(self.Xs, chunk_size)
        if self.feature_mean is None:
            return chunks
        mean = self.feature_mean  # a centred problem: centred features
        return ((rows, U - mean) for rows, U in chunks)

    def features(self) -> np.ndarray:
        """Nystrom mode: all training features ``U`` (n x dim), materialised."""
        if self.U is not None and self.feature_mean is None:
            return self.U
        out = np.empty((self.n_samples, self.dim))
        for rows, U in self.iter_features():
            out[rows] = U
        return out

    def view_outputs(self, g: np.ndarray) -> np.ndarray:
        """``Z`` (n x v): column ``l`` is ``K_l g_l`` (full; rows scaled by ``sqrt(s_i)``
        with ``sample_weight``) or ``U_l g_l`` (Nystrom)."""
        b = self.block_size
        if self.mode == "full":
            Z = np.column_stack([K @ g[l * b : (l + 1) * b] for l, K in enumerate(self.Ks)])
            s = self._row_scale()
            return Z if s is None else Z * s[:, None]
        Z = np.empty((self.n_samples, self.n_views))
        G = np.zeros((self.dim, self.n_views))
        for l in range(self.n_views):
            G[l * b : (l + 1) * b, l] = g[l * b : (l + 1) * b]
        for rows, U in self.iter_features():
            Z[rows] = U @ G
        return Z

    def view_moments(self, g: np.ndarray, t: int) -> tuple[np.ndarray, np.ndarray]:
        """``Z^T Z`` (v x v) and ``Z^T y_t`` (v,) for the w-step.

        Nystrom mode uses the sufficient statistics only: ``(Z^T Z)_lm = g_l^T C_lm g_m``,
        ``(Z^T y)_l = g_l^T c_l`` (eq. 17).
        """
        b, v = self.block_size, self.n_views
        if self.mode == "full":
            Z = self.view_outputs(g)
            return Z.T @ Z, Z.T @ self.Y[:, t]
        Gb = g.reshape(v, b)
        Cb = self.gram.reshape(v, b, v, b)
        ZtZ = np.einsum("li,limj,mj->lm", Gb, Cb, Gb)
        Zty = np.einsum("li,li->l", Gb, self.cross[:, t].reshape(v, b))
        return _sym(ZtZ), Zty

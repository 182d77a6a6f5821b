"""Feature moments (sufficient statistics of a feature map), NumPy path (private).

Lower layer of :mod:`mvkernels.nystrom` (which re-exports these names) and of
:mod:`mvkernels.nystrom._dask`; it imports neither.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._arrays import is_dask_collection
from .._linalg import sym
from ._landmarks import default_chunk_size


@dataclass
class FeatureMoments:
    """Sufficient statistics of a feature map over a data set.

    ``gram = sum_i u_i u_i^T``, ``sum = sum_i u_i`` and, with targets,
    ``cross = sum_i u_i y_i^T``, ``target_sum = sum_i y_i`` and
    ``target_gram = sum_i y_i y_i^T`` (for intercepts, residuals and objective values:
    ``||y - U g||^2 = target_gram - 2 g^T cross + g^T gram g``). Moments of disjoint
    chunks add up (:meth:`merge`), so they can be computed in one chunked, streamed or
    distributed pass.

    ``scatter = sum_i (u_i - mean)(u_i - mean)^T`` is kept alongside, accumulated the
    numerically stable way (each chunk centred on its own mean, chunks combined with the
    pairwise update of Chan, Golub & LeVeque 1979). ``gram / n - mean mean^T`` would lose
    about ``log10(||gram|| / (n ||cov||))`` digits to cancellation: RBF Nystrom features
    have a large common mean, and the one-pass covariance then depends on the summation
    order (chunking, number of Dask workers) in its 10th digit. No extra ``D x D`` product
    is needed: a chunk's ``gram`` is its scatter plus ``n_c m_c m_c^T``.

    Weighted moments (``sample_weight``, frequency weights ``s_i``) are the same sums with
    every row counted ``s_i`` times: ``gram = sum_i s_i u_i u_i^T``, ``sum = sum_i s_i u_i``,
    ``cross = sum_i s_i u_i y_i^T``, ... and ``mean = sum / weight`` with ``weight =
    sum_i s_i``; integer weights give the moments of the rows repeated.

    Attributes
    ----------
    n_samples : int
        Number of rows ``n``.
    sum : ndarray of shape (D,)
        ``sum_i u_i``.
    gram : ndarray of shape (D, D)
        ``sum_i u_i u_i^T``.
    cross : ndarray of shape (D, T) or None
        ``sum_i u_i y_i^T`` (with targets).
    target_sum : ndarray of shape (T,) or None
        ``sum_i y_i``.
    target_gram : ndarray of shape (T, T) or None
        ``sum_i y_i y_i^T``.
    scatter : ndarray of shape (D, D) or None
        ``sum_i (u_i - mean)(u_i - mean)^T``, accumulated stably.
    weight : float or None
        Weighted moments: the total weight ``sum_i s_i`` (None: unweighted, every row
        counts once; :attr:`total` is then ``n_samples``).
    """

    n_samples: int
    sum: np.ndarray
    gram: np.ndarray
    cross: np.ndarray | None = None
    target_sum: np.ndarray | None = None
    target_gram: np.ndarray | None = None
    scatter: np.ndarray | None = None
    weight: float | None = None

    @classmethod
    def from_features(
        cls, U: np.ndarray, Y: np.ndarray | None = None, sample_weight: np.ndarray | None = None
    ) -> FeatureMoments:
        """Moments of the rows ``U`` (and targets ``Y``), weighted by ``sample_weight``."""
        n = U.shape[0]
        if sample_weight is not None:
            return cls._weighted(U, Y, np.asarray(sample_weight, dtype=np.float64))
        total = U.sum(axis=0)
        mean = total / max(n, 1)  # an empty chunk (e.g. a 0-row Dask block): all zeros
        Uc = U - mean
        scatter = Uc.T @ Uc
        gram = scatter + np.outer(total, mean)
        if Y is None:
            return cls(n, total, gram, scatter=scatter)
        return cls(n, total, gram, U.T @ Y, Y.sum(axis=0), Y.T @ Y, scatter=scatter)

    @classmethod
    def _weighted(cls, U: np.ndarray, Y: np.ndarray | None, s: np.ndarray) -> FeatureMoments:
        weight = float(s.sum())
        total = s @ U
        mean = total / weight if weight > 0 else np.zeros_like(total)
        Uc = U - mean
        scatter = Uc.T @ (Uc * s[:, None])
        gram = scatter + np.outer(total, mean)
        if Y is None:
            return cls(U.shape[0], total, gram, scatter=scatter, weight=weight)
        Ys = Y * s[:, None]
        return cls(U.shape[0], total, gram, U.T @ Ys, Ys.sum(axis=0), Y.T @ Ys, scatter, weight)

    @property
    def total(self) -> float:
        """The total weight of the rows: ``weight``, or ``n_samples`` when unweighted."""
        return float(self.n_samples) if self.weight is None else float(self.weight)

    @property
    def mean(self) -> np.ndarray:
        """Feature means ``sum / total`` (``sum / n_samples`` when unweighted)."""
        return self.sum / (self.n_samples if self.weight is None else self.weight)

    def centered_gram(self) -> np.ndarray:
        """``Phi_c^T Phi_c = sum_i (u_i - mean)(u_i - mean)^T`` (KPCA's C with centred features).

        The stably accumulated :attr:`scatter` when present; otherwise (moments built by
        hand from ``gram`` and ``sum`` only) ``gram - n mean mean^T``, whose absolute
        rounding error is about ``eps * ||gram||``.
        """
        if self.scatter is not None:
            C = self.scatter
        else:
            C = self.gram - np.outer(self.sum, self.sum) / self._divisor()
        return sym(C)

    def _divisor(self) -> float:
        return self.n_samples if self.weight is None else self.weight

    def covariance(self) -> np.ndarray:
        """Empirical feature covariance ``centered_gram() / n_samples`` (biased, 1/n;
        weighted: divided by the total weight)."""
        return self.centered_gram() / self._divisor()

    def merge(self, other: FeatureMoments) -> FeatureMoments:
        def add(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
            return None if a is None or b is None else a + b

        na, nb = self._divisor(), other._divisor()
        weight = None
        if self.weight is not None or other.weight is not None:
            weight = float(na + nb)
        scatter = None
        if self.scatter is not None and other.scatter is not None:
            if na == 0 or nb == 0:
                scatter = self.scatter + other.scatter
            else:  # Chan et al.: M = M_a + M_b + (n_a n_b / n) delta delta^T
                delta = other.sum / nb - self.sum / na
                scatter = (
                    self.scatter + other.scatter + np.outer(delta, delta) * (na * nb / (na + nb))
                )
        return FeatureMoments(
            self.n_samples + other.n_samples,
            self.sum + other.sum,
            self.gram + other.gram,
            add(self.cross, other.cross),
            add(self.target_sum, other.target_sum),
            add(self.target_gram, other.target_gram),
            scatter,
            weight,
        )

    def symmetrize(self) -> FeatureMoments:
        """Make ``gram`` (and ``scatter``) exactly symmetric, in place; returns ``self``."""
        self.gram = sym(self.gram)
        if self.scatter is not None:
            self.scatter = sym(self.scatter)
        return self


def moments_from_chunks(chunks: Iterator[tuple]) -> FeatureMoments:
    """Accumulate :class:`FeatureMoments` over ``(U_chunk, Y_chunk)`` pairs.

    Parameters
    ----------
    chunks : iterator of (ndarray, ndarray or None) or of (ndarray, ndarray or None, ndarray)
        Feature rows and, optionally, their targets (and their weights).

    Returns
    -------
    FeatureMoments
    """
    total: FeatureMoments | None = None
    for U, Y, *sw in chunks:
        m = FeatureMoments.from_features(U, Y, sw[0] if sw else None)
        total = m if total is None else total.merge(m)
    if total is None:
        raise ValueError("no data: the chunk iterator was empty")
    return total.symmetrize()


def _as_targets(Y: Any, n: int) -> Any:
    """Targets as a 2-D float array (NumPy) or 2-D Dask array, with the row count checked."""
    if Y is None:
        return None
    if not is_dask_collection(Y):
        Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y.reshape(-1, 1)
    if Y.ndim != 2:
        raise ValueError(f"Y must be 1-D or 2-D, got shape {Y.shape}")
    if Y.shape[0] != n and not (np.isnan(Y.shape[0]) or np.isnan(n)):
        raise ValueError(f"Y has {Y.shape[0]} rows but the views have {n} samples")
    return Y


def numpy_feature_moments(
    feature_fn: Callable[[list[np.ndarray]], np.ndarray],
    Xs: list[np.ndarray],
    Y: np.ndarray | None,
    chunk_size: int | None = None,
    *,
    symmetrize: bool = True,
    sample_weight: np.ndarray | None = None,
) -> FeatureMoments:
    """:func:`mvkernels.nystrom.feature_moments` on in-memory views (``Y`` already 2-D;
    ``sample_weight``: the rows' frequency weights, None: unweighted)."""
    n = Xs[0].shape[0]

    def chunks() -> Iterator[tuple]:
        step = chunk_size
        start = 0
        while start < n:
            if step is None:  # probe the width on a small first chunk
                rows = slice(0, min(n, 256))
                U = np.asarray(feature_fn([X[rows] for X in Xs]))
                step = default_chunk_size(U.shape[1])
            else:
                rows = slice(start, min(n, start + step))
                U = np.asarray(feature_fn([X[rows] for X in Xs]))
            Yc = None if Y is None else Y[rows]
            if sample_weight is None:
                yield U, Yc
            else:
                yield U, Yc, sample_weight[rows]
            start = rows.stop

    if symmetrize:
        return moments_from_chunks(chunks())
    total: FeatureMoments | None = None
    for U, Yc, *sw in chunks():
        m = FeatureMoments.from_features(U, Yc, sw[0] if sw else None)
        total = m if total is None else total.merge(m)
    if total is None:
        raise ValueError("no data: the views have no rows")
    return total

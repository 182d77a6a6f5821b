"""Landmark counts and landmark selection shared by the NumPy and Dask paths (private).

Lower layer of :mod:`mvkernels.nystrom` (which re-exports these names) and of
:mod:`mvkernels.nystrom._dask`; it imports neither.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from ..kernels import ViewKernel, distinct_uniform_draws

LANDMARK_STRATEGIES = ("uniform", "kmeans++")


def resolve_n_landmarks(n_landmarks: int | float, n_samples: int) -> int:
    """Number of landmarks from an int or a fraction of ``n_samples`` in (0, 1].

    A fraction is rounded to the nearest integer, and at least 1.

    Parameters
    ----------
    n_landmarks : int or float
        A count, or a fraction of ``n_samples`` in (0, 1].
    n_samples : int
        Number of training samples.

    Returns
    -------
    int
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
            raise ValueError(f"a fractional n_landmarks must be in (0, 1], got {n_landmarks!r}")
        return max(1, min(n_samples, int(round(f * n_samples))))
    raise TypeError(f"n_landmarks must be an int or a float in (0, 1], got {n_landmarks!r}")


def default_chunk_size(n_columns: int, budget: int = 4_000_000) -> int:
    """Rows per chunk so that a chunk of ``n_columns`` float64 features is ~32 MB.

    Parameters
    ----------
    n_columns : int
        Features per row.
    budget : int, default=4_000_000
        Float64 entries per chunk.

    Returns
    -------
    int
        At least 1.
    """
    return int(max(256, budget // max(1, n_columns)))


#: above this many samples, uniform landmarks are drawn without an O(n) permutation
PERMUTATION_MAX = 1 << 22


def uniform_indices(n: int, size: int, random_state: Any = None) -> np.ndarray:
    """Sorted indices of ``size`` distinct samples drawn uniformly from ``range(n)``.

    For ``n <= PERMUTATION_MAX`` (4,194,304) this is the first ``size`` entries of one
    random permutation (the paper's rule). Above, to keep client memory O(size) for
    out-of-core data, indices are drawn with replacement in rounds and the first ``size``
    distinct ones (in draw order) are kept: still a uniform random subset
    (:func:`mvkernels.kernels.distinct_uniform_draws`). Both NumPy and
    Dask input use this function, so they get the same landmarks for the same seed.

    Parameters
    ----------
    n : int
        Number of samples.
    size : int
        Number of samples to draw (``<= n``).
    random_state : int, RandomState or None, default=None
        Seed.

    Returns
    -------
    ndarray of int, shape (size,)
        Sorted indices.
    """
    rng = check_random_state(random_state)
    if n <= PERMUTATION_MAX:
        return np.sort(rng.permutation(n)[:size])
    return np.sort(distinct_uniform_draws(n, size, rng)).astype(np.intp)


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


def select_landmarks_numpy(
    Xs: Sequence, kernels: Sequence[ViewKernel], n_landmarks: int, strategy: str, random_state: Any
) -> np.ndarray:
    """:func:`mvkernels.nystrom.select_landmarks` on in-memory (NumPy) views."""
    rng = check_random_state(random_state)
    n = Xs[0].shape[0]
    if strategy == "uniform":
        return uniform_indices(n, n_landmarks, rng)
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

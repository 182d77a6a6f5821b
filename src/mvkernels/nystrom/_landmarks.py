"""Landmark counts and landmark selection shared by the NumPy and Dask paths (private).

Lower layer of :mod:`mvkernels.nystrom` (which re-exports these names) and of
:mod:`mvkernels.nystrom._dask`; it imports neither.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
from scipy import linalg
from sklearn.utils import check_random_state

from .._linalg import robust_cholesky, robust_eigvalsh
from ..kernels import ViewKernel, distinct_uniform_draws

LANDMARK_STRATEGIES = ("uniform", "kmeans++", "leverage")


def is_index_landmarks(landmarks: Any) -> bool:
    """True if ``landmarks`` is given as row indices (anything but a strategy name)."""
    return not isinstance(landmarks, str)


def check_landmark_indices(landmarks: Any, n_samples: int) -> np.ndarray:
    """Validate landmark row indices given by the user.

    The indices are rows of the training data (the rows passed to ``fit``). They must be
    a non-empty 1-D array of distinct integers in ``[0, n_samples)``; their order is kept.
    Their number is the landmark count: it overrides ``n_landmarks``.

    Parameters
    ----------
    landmarks : array-like of int
        Row indices.
    n_samples : int
        Number of training rows.

    Returns
    -------
    ndarray of intp, shape (p,)

    Raises
    ------
    ValueError
        Not 1-D integers, empty, out of range or repeated.

    Examples
    --------
    >>> check_landmark_indices([4, 0, 2], 5)
    array([4, 0, 2])
    >>> check_landmark_indices([1, 1], 5)
    Traceback (most recent call last):
    ...
    ValueError: landmarks: row indices must be distinct; repeated: [1]
    """
    idx = np.asarray(landmarks)
    if idx.ndim != 1 or idx.size == 0:
        raise ValueError(
            "landmarks must be 'uniform', 'kmeans++', 'leverage' or a non-empty 1-D array "
            f"of training row indices, got an array of shape {idx.shape}"
        )
    if idx.dtype == bool or not np.issubdtype(idx.dtype, np.integer):
        raise ValueError(
            f"landmarks: row indices must be integers, got dtype {idx.dtype} "
            "(a boolean row mask: pass np.flatnonzero(mask))"
        )
    bad = idx[(idx < 0) | (idx >= n_samples)]
    if bad.size:
        raise ValueError(
            f"landmarks: row indices must lie in [0, {n_samples}) (the training rows), "
            f"got {bad[:5].tolist()}"
        )
    uniq, counts = np.unique(idx, return_counts=True)
    if uniq.size != idx.size:
        raise ValueError(
            f"landmarks: row indices must be distinct; repeated: {uniq[counts > 1][:5].tolist()}"
        )
    return idx.astype(np.intp)


def check_landmark_count(
    n_landmarks: Any, landmarks: Any, n_samples: int, fractions: bool = True
) -> None:
    """Refuse an explicit landmark count that disagrees with the landmark indices given.

    An index array fixes the number of landmarks. A count passed beside it is either the
    same number (accepted) or a contradiction, which is an error rather than silently
    ignored. Strategy names, ``None`` and non-numeric counts (``"auto"``) are not checked;
    nor are fractions when ``fractions=False`` (e.g. :class:`BlockNystrom`, whose default
    ``0.1`` cannot be told apart from a chosen value).

    Parameters
    ----------
    n_landmarks : int, float, str or None
        The count the user set.
    landmarks : str or array-like of int
        A strategy name or row indices.
    n_samples : int
        Training rows the indices refer to (a fraction is read against them).
    fractions : bool, default=True
        Check a fractional ``n_landmarks`` too.

    Raises
    ------
    ValueError
        The count and the number of indices differ.

    Examples
    --------
    >>> check_landmark_count(3, [0, 4, 7], 10)
    >>> check_landmark_count(5, [0, 4, 7], 10)
    Traceback (most recent call last):
    ...
    ValueError: n_landmarks=5 disagrees with the 3 landmark indices given in landmarks: ...
    """
    if not is_index_landmarks(landmarks) or isinstance(n_landmarks, bool):
        return
    if isinstance(n_landmarks, Integral):
        count = int(n_landmarks)
    elif fractions and isinstance(n_landmarks, Real) and 0.0 < float(n_landmarks) <= 1.0:
        count = max(1, int(round(float(n_landmarks) * n_samples)))
    else:
        return
    given = int(np.asarray(landmarks).size)
    if count != given:
        raise ValueError(
            f"n_landmarks={n_landmarks!r} disagrees with the {given} landmark indices given "
            f"in landmarks: the indices fix the count; set n_landmarks={given} or leave "
            "n_landmarks at its default"
        )


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


def _sum_kernel_diag(Xs: Sequence, kernels: Sequence[ViewKernel]) -> np.ndarray:
    """Diagonal of the sum of the view kernels, ``sum_l k_l(x_i, x_i)`` (O(n))."""
    n = Xs[0].shape[0]
    d = np.zeros(n)
    for Xv, kern in zip(Xs, kernels):
        d += np.diagonal(Xv) if kern.precomputed else kern.diag(Xv)
    return d


def _sum_kernel(
    Xs: Sequence, kernels: Sequence[ViewKernel], rows: np.ndarray, cols: np.ndarray
) -> np.ndarray:
    """Block ``K[rows, cols]`` of the sum of the view kernels."""
    K = np.zeros((rows.size, cols.size))
    for Xv, kern in zip(Xs, kernels):
        K += Xv[np.ix_(rows, cols)] if kern.precomputed else kern(Xv[rows], Xv[cols])
    return K


def _ridge_scores(
    Xs: Sequence,
    kernels: Sequence[ViewKernel],
    diag: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    weights: np.ndarray,
    lam: float,
) -> np.ndarray:
    """Approximate ridge leverage scores of ``rows`` from the weighted sample ``cols``.

    ``(K_ii - K_iS (K_SS + lam W^-2)^{-1} K_Si) / lam`` (Musco & Musco 2017, Eq. 5), in
    row chunks: the ``len(rows) x len(cols)`` block is never held whole.
    """
    M = _sum_kernel(Xs, kernels, cols, cols)
    M[np.diag_indices_from(M)] += lam / weights**2
    L = robust_cholesky(M)
    jitter = 1e-10 * max(float(np.trace(M)) / max(1, M.shape[0]), 1e-300)
    while L is None:  # rounding: the regularised matrix is PD in exact arithmetic
        M[np.diag_indices_from(M)] += jitter
        jitter *= 10.0
        L = robust_cholesky(M)
    out = np.empty(rows.size)
    chunk = default_chunk_size(cols.size)
    for start in range(0, rows.size, chunk):
        r = rows[start : start + chunk]
        T = linalg.solve_triangular(
            L, _sum_kernel(Xs, kernels, r, cols).T, lower=True, check_finite=False
        )
        out[start : start + r.size] = diag[r] - np.einsum("ij,ij->j", T, T)
    return np.maximum(out, 0.0) / lam


def leverage_indices(
    Xs: Sequence, kernels: Sequence[ViewKernel], n_landmarks: int, random_state: Any = None
) -> np.ndarray:
    """Landmarks sampled by approximate ridge leverage scores (recursive RLS sampling).

    The recursive ridge leverage score sampling of Musco & Musco (2017, "Recursive
    Sampling for the Nystrom Method", Algorithm 2 in the form of their reference code),
    on the sum of the view kernels ``K = sum_l K_l`` (the kernel of the joint feature
    space in which ``"kmeans++"`` measures distances), so that one set of rows serves
    every view. With ``s = n_landmarks``:

    1. A random permutation of the rows defines nested uniform subsets of sizes
       ``n, n/2, n/4, ...`` down to about ``s`` rows; the smallest is the first sample,
       with unit weights.
    2. Going up a level, ``lam = (tr(W K_SS W) - sum of its top k eigenvalues) / k``
       with ``k = ceil(s / (4 log s))`` and ``W`` the sample's weights, and every row of
       the level gets its approximate ridge leverage score
       ``l_i = (K_ii - K_iS (K_SS + lam W^-2)^{-1} K_Si) / lam``. Each row is then kept
       with probability ``q_i = min(1, log(s) l_i)`` and weight ``q_i^{-1/2}`` (a level
       keeps at most ``2 s`` rows: a larger sample is thinned uniformly, ``q`` corrected).
    3. At the top level (all rows) exactly ``s`` distinct rows are drawn without
       replacement with probability proportional to ``min(1, l_i)``.

    Rows that are alone in their region of the kernel space (low density, outliers) have
    large leverage and are kept; a dense cluster is covered by a few rows. The cost is
    ``O(n m)`` kernel evaluations with ``m ~ s`` the sample size of a level (about twice
    the work of one pass of features) plus ``O(m^3)`` per level; the ``n x n`` kernel is
    never formed, and rows are scored in chunks of ~32 MB.

    Parameters
    ----------
    Xs : list of arrays
        Training views (or n x n Gram matrices for precomputed kernels).
    kernels : list of fitted ViewKernel
    n_landmarks : int
        Number of landmarks ``s`` (``<= n``).
    random_state : int, RandomState or None
        Seed of the permutation and of the draws.

    Returns
    -------
    ndarray of int, shape (n_landmarks,), sorted

    References
    ----------
    C. Musco and C. Musco, "Recursive Sampling for the Nystrom Method", NeurIPS 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.kernels import make_view_kernels
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 0.05, (95, 2)), rng.normal(0, 3.0, (5, 2))])
    >>> (kern,) = make_view_kernels("rbf", {"gamma": 1.0}, 1)
    >>> idx = leverage_indices([X], [kern.fit(X)], 10, random_state=0)
    >>> int((idx >= 95).sum())  # the 5 isolated rows are all landmarks
    5
    """
    rng = check_random_state(random_state)
    n = int(Xs[0].shape[0])
    s = int(n_landmarks)
    if s >= n:
        return np.arange(n, dtype=np.intp)
    oversample = max(1.0, float(np.log(s)))
    k = max(1, int(np.ceil(s / (4.0 * oversample))))
    n_levels = int(np.ceil(np.log2(n / s)))
    perm = rng.permutation(n)
    sizes = [n]
    for _ in range(n_levels):
        sizes.append(-(-sizes[-1] // 2))
    diag = _sum_kernel_diag(Xs, kernels)
    tiny = 1e-6 * max(float(diag.mean()), np.finfo(float).tiny)
    sample = np.arange(sizes[-1])  # positions in perm (every level is a prefix of perm)
    weights = np.ones(sample.size)
    for level in range(n_levels - 1, -1, -1):
        cols = perm[sample]
        m = cols.size
        if k >= m:
            lam = tiny
        else:
            wK = _sum_kernel(Xs, kernels, cols, cols) * np.outer(weights, weights)
            top = robust_eigvalsh(wK, subset_by_index=(m - k, m - 1), what="sampled kernel")
            lam = max((float(np.trace(wK)) - float(np.abs(top).sum())) / k, tiny)
        current = perm[: sizes[level]]
        lev = _ridge_scores(Xs, kernels, diag, current, cols, weights, lam)
        if level > 0:
            q = np.minimum(1.0, oversample * lev)
            sample = np.flatnonzero(rng.random_sample(current.size) < q)
            if sample.size == 0:  # improbable: fall back on a uniform sample
                q[:] = min(1.0, s / current.size)
                sample = np.sort(rng.choice(current.size, min(s, current.size), replace=False))
            elif sample.size > 2 * s:  # a level keeps at most 2 s rows (uniform thinning)
                q = q * (2 * s / sample.size)
                sample = np.sort(rng.choice(sample, 2 * s, replace=False))
            weights = 1.0 / np.sqrt(q[sample])
            continue
        q = np.minimum(1.0, lev)
        positive = np.flatnonzero(q > 0)
        if positive.size >= s:
            chosen = rng.choice(n, s, replace=False, p=q / q.sum())
        else:  # fewer rows with a positive score than landmarks: fill uniformly
            rest = np.setdiff1d(np.arange(n), positive)
            fill = rng.choice(rest, s - positive.size, replace=False)
            chosen = np.concatenate([positive, fill])
        return np.sort(perm[chosen]).astype(np.intp)
    raise AssertionError("unreachable: n > n_landmarks gives at least one level")


def select_landmarks_numpy(
    Xs: Sequence, kernels: Sequence[ViewKernel], n_landmarks: int, strategy: str, random_state: Any
) -> np.ndarray:
    """:func:`mvkernels.nystrom.select_landmarks` on in-memory (NumPy) views."""
    rng = check_random_state(random_state)
    n = Xs[0].shape[0]
    if strategy == "uniform":
        return uniform_indices(n, n_landmarks, rng)
    if strategy == "leverage":
        return leverage_indices(Xs, kernels, n_landmarks, rng)
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

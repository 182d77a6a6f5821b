"""Dask back end of the shared feature layer (optional: ``pip install mvkernels[dask]``).

Dask is imported lazily, inside the functions of this module, and this module itself is
only imported by :mod:`mvkernels.nystrom` when a view is a Dask array; without Dask
nothing changes.

What runs where
---------------
* **Sufficient statistics** (:func:`dask_feature_moments`): every row block of the views
  (row chunks aligned across views, one chunk along columns) becomes one task that maps
  the feature function over the block, in sub-chunks of ``chunk_size`` rows, and returns
  its :class:`~mvkernels.nystrom.FeatureMoments` (``D x D`` Gram, sum, cross moments;
  weighted moments when the rows have weights, which travel block by block with them).
  The per-block moments are added in a tree (fan-in ``split_every``) on the workers; only
  the final ``D x D`` (and ``D x k``) result comes to the client.
* **Transform / predict** (:func:`map_view_rows`): a row-wise NumPy function mapped over
  the aligned row blocks; the result is a lazy Dask array with the same row chunks.
* **Landmarks** (:func:`select_landmarks_dask`): uniform landmarks are random indices
  drawn on the client (nothing is read), then only those rows are gathered
  (:func:`gather_rows`, sorted indices). ``"kmeans++"`` (and ``"leverage"``) runs exactly as
  on NumPy input when ``n <= kmeanspp_sample_size(p)`` (the rows are gathered: at most that
  many), otherwise on a uniform subsample of ``kmeanspp_sample_size(p) = max(20000, 50 p)``
  rows.
* **Bandwidths** (:func:`mvkernels.kernels.mean_pairwise_distance`) gather a random sample
  of at most 2000 rows per view.

The model pieces a task needs (kernels, landmarks, normalisers: the feature function)
enter the graph once, as one key, and are shipped once to each worker, not once per task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._arrays import (
    as_aligned_views,
    check_block_finite,
    is_dask_collection,
    require_dask,
)

__all__ = [
    "dask_feature_moments",
    "map_view_rows",
    "gather_rows",
    "kmeanspp_sample_size",
    "select_landmarks_dask",
    "fit_kernels_and_landmarks",
]

#: default fan-in of the tree sum of per-block moments
SPLIT_EVERY = 8


def _block_moments(
    feature_fn: Callable,
    chunk_size: int | None,
    start: int,
    Y: np.ndarray | None,
    *blocks: np.ndarray,
    sample_weight: np.ndarray | None = None,
) -> Any:
    """FeatureMoments of one row block, in sub-chunks of ``chunk_size`` rows (weighted by
    the block's ``sample_weight``, None: unweighted)."""
    from ._moments import _as_targets, numpy_feature_moments

    check_block_finite(blocks, start, Y, fn=feature_fn)
    blocks_ = list(blocks)
    return numpy_feature_moments(
        feature_fn,
        blocks_,
        _as_targets(Y, blocks_[0].shape[0]),
        chunk_size=chunk_size,
        symmetrize=False,
        sample_weight=None if sample_weight is None else np.asarray(sample_weight, np.float64),
    )


def _sum_moments(*parts: Any) -> Any:
    total = parts[0]
    for m in parts[1:]:
        total = total.merge(m)
    return total


def dask_feature_moments(
    feature_fn: Callable[[list[np.ndarray]], np.ndarray],
    Xs: Sequence[Any],
    Y: Any = None,
    *,
    chunk_size: int | None = None,
    split_every: int = SPLIT_EVERY,
    compute: bool = True,
    sample_weight: Any = None,
) -> Any:
    """:class:`~mvkernels.nystrom.FeatureMoments` of a row-wise feature map over Dask views.

    Parameters
    ----------
    feature_fn : callable
        ``feature_fn([X_1[rows], ..., X_v[rows]]) -> U[rows]`` of shape (rows, D), NumPy in,
        NumPy out, row-wise (row i of the output depends on row i of the input only) and
        picklable (it is shipped to the workers once).
    Xs : list of Dask (or NumPy) arrays, one per view, same number of rows
    Y : None, NumPy or Dask array of shape (n,) or (n, k)
    chunk_size : int or None
        Rows per sub-chunk inside a block (bounds worker memory at ~rows x D floats).
    split_every : int
        Fan-in of the tree sum of per-block moments.
    compute : bool
        If False, return the Delayed result instead of computing it.
    sample_weight : None, NumPy or Dask array of shape (n,)
        Frequency weights of the rows (weighted moments, as
        :meth:`FeatureMoments.from_features`): aligned with the views' row blocks, each
        block's task weighs its own rows (still one pass).

    Returns
    -------
    FeatureMoments (``gram`` symmetrised), computed with the current Dask scheduler (the
    distributed ``Client`` when one is active).
    """
    require_dask()
    from dask import delayed

    if Y is not None and not is_dask_collection(Y):
        Y = np.asarray(Y, dtype=np.float64)
    if sample_weight is not None and not is_dask_collection(sample_weight):
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
    extra = [None if Y is None else (Y.reshape(-1, 1) if Y.ndim == 1 else Y), sample_weight]
    views, (Yd, Wd) = as_aligned_views(Xs, extra)
    if Yd is not None:
        Yd = Yd.astype(np.float64)
    fn = delayed(feature_fn, pure=True)
    blocks = [V.to_delayed().ravel() for V in views]
    yblocks = None if Yd is None else Yd.to_delayed().ravel()
    wblocks = None if Wd is None else Wd.to_delayed().ravel()
    starts = np.concatenate([[0], np.cumsum(views[0].chunks[0])[:-1]]).astype(int)
    per_block = delayed(_block_moments, pure=True)
    parts = [
        per_block(
            fn,
            chunk_size,
            int(starts[b]),
            None if yblocks is None else yblocks[b],
            *[bl[b] for bl in blocks],
            **({} if wblocks is None else {"sample_weight": wblocks[b]}),
        )
        for b in range(len(starts))
    ]
    merge = delayed(_sum_moments, pure=True)
    split_every = max(2, int(split_every))
    while len(parts) > 1:
        parts = [merge(*parts[i : i + split_every]) for i in range(0, len(parts), split_every)]
    total = delayed(_symmetrize, pure=True)(parts[0])
    return total.compute() if compute else total


def _symmetrize(m: Any) -> Any:
    return m.symmetrize()


def _apply_rows(
    *blocks: np.ndarray, fn: Callable, ndim_out: int, block_info: Any = None
) -> np.ndarray:
    start = 0 if not block_info else block_info[0]["array-location"][0][0]
    check_block_finite(blocks, start, fn=fn)
    out = np.asarray(fn(list(blocks)))
    if out.shape[0] != blocks[0].shape[0] or out.ndim != ndim_out:
        raise ValueError(
            f"the row-wise function returned shape {out.shape} for a block of "
            f"{blocks[0].shape[0]} rows (expected {ndim_out}-D, one row per sample)"
        )
    return out


def map_view_rows(fn: Callable, Xs: Sequence[Any], n_out: int | None, dtype: Any) -> Any:
    """Lazy Dask array ``fn([X_1[rows], ..., X_v[rows]])`` over aligned row blocks.

    ``fn`` is row-wise and returns ``(rows, n_out)`` (or ``(rows,)`` when ``n_out`` is None),
    e.g. ``BlockNystrom`` features, ``predict`` or ``decision_function`` of an estimator.
    Nothing is computed here; the output has the row chunks of the first Dask view.
    """
    require_dask()
    import dask.array as da
    from dask import delayed

    views, _ = as_aligned_views(Xs)
    rows = views[0].chunks[0]
    fn_d = delayed(fn, pure=True)
    if n_out is None:
        return da.map_blocks(
            _apply_rows,
            *views,
            fn=fn_d,
            ndim_out=1,
            dtype=dtype,
            chunks=(rows,),
            drop_axis=1,
            meta=np.empty((0,), dtype=dtype),
        )
    return da.map_blocks(
        _apply_rows,
        *views,
        fn=fn_d,
        ndim_out=2,
        dtype=dtype,
        chunks=(rows, (int(n_out),)),
        meta=np.empty((0, 0), dtype=dtype),
    )


def gather_rows(Xs: Sequence[Any], idx: np.ndarray) -> list[np.ndarray]:
    """Rows ``idx`` of every view as NumPy arrays, in one compute (only those rows move)."""
    import dask

    idx = np.asarray(idx, dtype=np.intp)
    order = np.argsort(idx, kind="stable")
    sorted_idx = idx[order]
    lazy = [X[sorted_idx] if is_dask_collection(X) else np.asarray(X)[sorted_idx] for X in Xs]
    got = dask.compute(*lazy)
    inv = np.empty_like(order)
    inv[order] = np.arange(order.size)
    return [np.asarray(G, dtype=np.float64)[inv] for G in got]


def kmeanspp_sample_size(n_landmarks: int) -> int:
    """Rows on which k-means++ runs for Dask input: ``max(20000, 50 * n_landmarks)``."""
    return max(20_000, 50 * int(n_landmarks))


def select_landmarks_dask(
    Xs: Sequence[Any], kernels: Sequence[Any], n_landmarks: int, strategy: str, rng: Any
) -> np.ndarray:
    """Landmark indices for Dask views without bringing the data to the client.

    * ``"uniform"``: the same indices as on NumPy input (same ``rng`` draws); no data read.
    * ``"kmeans++"`` and ``"leverage"``: if ``n <= kmeanspp_sample_size(p)`` the (at most
      that many) rows are gathered and the NumPy selection runs on them: the same indices
      as on NumPy input. Otherwise it runs on a uniform random subsample of
      ``kmeanspp_sample_size(p)`` rows (gathered; same rng stream), and the chosen rows
      are mapped back to indices of the full data.
    """
    from ._landmarks import LANDMARK_STRATEGIES, uniform_indices
    from ._landmarks import select_landmarks_numpy as select_landmarks

    n = int(Xs[0].shape[0])
    if strategy == "uniform":
        return uniform_indices(n, n_landmarks, rng)
    if strategy not in ("kmeans++", "leverage"):
        raise ValueError(
            f"unknown landmark strategy {strategy!r}; use one of {LANDMARK_STRATEGIES}"
        )
    m = kmeanspp_sample_size(n_landmarks)
    if n <= m:
        local = gather_rows(Xs, np.arange(n))
        check_block_finite(local, None)
        return select_landmarks(local, kernels, n_landmarks, strategy, rng)
    sub = uniform_indices(n, m, rng)
    local = gather_rows(Xs, sub)
    check_block_finite(local, None)
    chosen = select_landmarks(local, kernels, n_landmarks, strategy, rng)
    return np.sort(sub[chosen])


def _bandwidth_sample_size() -> int:
    import inspect

    from ..kernels import mean_pairwise_distance

    return int(inspect.signature(mean_pairwise_distance).parameters["max_samples"].default)


def _needs_bandwidth_sample(kern: Any) -> bool:
    return bool(kern.open_bandwidth)


def fit_kernels_and_landmarks(
    Xs: Sequence[Any], kernels: Sequence[Any], n_landmarks: int, strategy: str, rng: Any
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Fit the view kernels and choose the landmarks of Dask views in as few passes as possible.

    Draws the random numbers in the same order as the NumPy path (bandwidth subsample of
    view 0, 1, ..., then the landmarks), so the fitted map is the same. The bandwidth
    samples (``mean_pairwise_distance``: 2000 rows per view, or all rows when fewer) and,
    for ``"uniform"``, the landmark rows are gathered in ONE compute, i.e. one pass over
    the data; ``"kmeans++"`` adds its subsample gather.

    Returns the sorted landmark indices and the landmark rows of every view (NumPy).
    """
    import dask

    from ..kernels import subsample_indices

    n = int(Xs[0].shape[0])
    m = _bandwidth_sample_size()
    samples: dict[int, np.ndarray] = {}
    for l, kern in enumerate(kernels):
        if _needs_bandwidth_sample(kern):
            samples[l] = subsample_indices(n, m, rng)
    idx = None
    if strategy == "uniform":
        from ._landmarks import uniform_indices

        idx = uniform_indices(n, n_landmarks, rng)
    lazy = [Xs[l][s] for l, s in samples.items()]
    if idx is not None:
        lazy += [X[idx] for X in Xs]
    got = [np.asarray(G, dtype=np.float64) for G in dask.compute(*lazy)]
    check_block_finite(got, None)
    for l, kern in enumerate(kernels):
        # on <= max_samples rows mean_pairwise_distance is exact and draws nothing
        kern.fit(got[list(samples).index(l)] if l in samples else Xs[l], random_state=rng)
    if idx is not None:
        return idx, got[len(samples) :]
    idx = select_landmarks_dask(Xs, kernels, n_landmarks, strategy, rng)
    rows = gather_rows(Xs, idx)
    check_block_finite(rows, None)
    return idx, rows

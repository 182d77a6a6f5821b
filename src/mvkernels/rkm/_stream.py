"""Streaming and Dask helpers of multi-view kernel PCA: chunks of views read once
(:meth:`MultiViewKPCA.fit_stream`), their mean, and the rows that choose the inference
ridge."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .._arrays import views_kind
from .._validation import check_views
from ..kernels import subsample_indices
from ._inference import MAX_ROWS

__all__: list[str] = []


class _ChunkStream:
    """``stream()`` yields the validated chunks of ``chunks()`` (a fresh pass each call):
    lists of NumPy views, the widths fixed by the first chunk, errors naming the chunk."""

    def __init__(self, chunks: Any, views: Any):
        if not callable(chunks):
            raise TypeError(
                "chunks must be a callable returning a fresh iterable of chunks "
                "(a generator function, e.g. lambda: iter_chunks(path))"
            )
        self.chunks = chunks
        self.views = views
        self.widths: list[int] | None = None

    def __call__(self) -> Iterator[list]:
        for i, chunk in enumerate(self.chunks()):
            yield self._check(i, chunk)

    def _check(self, i: int, chunk: Any) -> list:
        if isinstance(chunk, (list, tuple)):
            for v, Cv in enumerate(chunk):
                if np.iscomplexobj(Cv):
                    raise ValueError(
                        f"chunk {i}, view {v} is complex; mvkernels works on real data"
                    )
        if self.widths is None:
            Cs = check_views(chunk, views=self.views, ensure_min_samples=1)
            self.widths = [int(V.shape[1]) for V in Cs]
        else:
            try:
                Cs = check_views(
                    chunk, views=self.views, n_views=len(self.widths), n_features=self.widths
                )
            except ValueError as exc:
                raise ValueError(f"chunk {i}: {exc}") from exc
        if views_kind(Cs) == "dask":
            raise TypeError("fit_stream takes NumPy chunks; give Dask views to fit")
        return Cs


def _stream_mean(stack: Any, chunks: Iterable[list], d: int) -> tuple[int, np.ndarray]:
    """One pass: the number of samples and the mean of the ``d`` features."""
    total, n = np.zeros(d), 0
    for Cs in chunks:
        F = stack(Cs)
        total += F.sum(axis=0)
        n += F.shape[0]
    if n < 2:
        raise ValueError(f"the chunk stream holds {n} sample(s); at least 2 required")
    return n, total / n


def _ridge_rows_dask(Xs: list, n: int) -> list[np.ndarray]:
    """The rows of Dask views that score the inference ridge (the same seeded sample of
    at most ``MAX_ROWS`` rows as on NumPy input), gathered in one compute."""
    from ..nystrom._dask import gather_rows

    return gather_rows(Xs, subsample_indices(n, MAX_ROWS, 0))


def _ridge_rows_stream(chunks: Any, n: int) -> list[np.ndarray]:
    """The same sample of rows from a stream of (validated) chunks, read once."""
    idx = subsample_indices(n, MAX_ROWS, 0)
    parts: list[list[np.ndarray]] = []
    start = 0
    for Cs in chunks:
        m = int(Cs[0].shape[0])
        take = idx[(idx >= start) & (idx < start + m)] - start
        if take.size:
            parts.append([np.asarray(V)[take] for V in Cs])
        start += m
    return [np.vstack([P[v] for P in parts]) for v in range(len(parts[0]))]

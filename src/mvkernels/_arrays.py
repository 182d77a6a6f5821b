"""The bottom floor of the input layer: which kind of array a view is, and whole-row checks.

Every module that must tell NumPy, scipy.sparse and Dask views apart, or read which rows of
a view are missing, asks this module: input validation (:mod:`mvkernels._validation`), the
feature layer (:mod:`mvkernels.nystrom`, its Dask back end included) and the estimators.
It imports nothing of the package but :mod:`mvkernels._sparse`, so no import runs back up.

* **Kind**: :func:`is_dask_collection` (without importing Dask), :func:`views_kind` (the
  one NumPy/sparse/Dask decision), :func:`require_dask` (the optional dependency),
  :func:`check_known_lengths` (Dask views of unknown row counts are refused),
  :func:`compute_if_dask` (a value brought to the client, whatever its kind).
* **Missing views**: a missing view is a whole row of NaN in that view.
  :func:`check_whole_rows` refuses NaN in only some columns of a row,
  :func:`refuse_all_missing` a sample with every view missing, :func:`observed_rows` and
  :func:`observed_block_rows` read the observed rows of a view or of a block,
  :func:`dask_observed_mask` those of Dask views in one pass over their blocks.
* **Dask blocks**: :func:`as_aligned_views` gives Dask views (and targets) the same row
  chunks; :func:`check_block_finite` checks one row block inside a task, naming the view.

Dask is imported lazily, inside the functions that need it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._sparse import is_sparse

__all__ = [
    "MIN_OBSERVED_ROWS",
    "as_aligned_views",
    "check_block_finite",
    "check_known_lengths",
    "check_whole_rows",
    "compute_if_dask",
    "dask_observed_mask",
    "is_dask_collection",
    "observed_block_rows",
    "observed_rows",
    "refuse_all_missing",
    "require_dask",
    "views_kind",
]


# ---------------------------------------------------------------------------- kind
def is_dask_collection(x: Any) -> bool:
    """True for a Dask array (checked without importing Dask)."""
    return type(x).__module__.startswith("dask.") and hasattr(x, "chunks")


def compute_if_dask(x: Any) -> Any:
    """``x`` on the client: a Dask collection computed, anything else (NumPy, sparse,
    None) as it is.

    Examples
    --------
    >>> import numpy as np
    >>> compute_if_dask(np.arange(3)), compute_if_dask(None)
    (array([0, 1, 2]), None)
    """
    return x.compute() if is_dask_collection(x) else x


def require_dask() -> Any:
    """Import ``dask.array``, or raise an ImportError saying how to install it."""
    try:
        import dask.array as da
    except ImportError as exc:  # pragma: no cover - exercised only without dask
        raise ImportError(
            "Dask input needs the optional dependency: pip install 'mvkernels[dask]'"
        ) from exc
    return da


def views_kind(Xs: Sequence[Any]) -> str:
    """The one NumPy/Dask/sparse decision: ``"dask"`` if any view is a Dask array, else
    ``"sparse"`` if any is a scipy.sparse matrix, else ``"numpy"``. Read from
    :attr:`ValidatedViews.kind` when the views were validated already."""
    kind = getattr(Xs, "kind", None)
    if kind is not None:
        return str(kind)
    if any(is_dask_collection(Xv) for Xv in Xs):
        return "dask"
    return "sparse" if any(is_sparse(Xv) for Xv in Xs) else "numpy"


def check_known_lengths(X: Any) -> None:
    """Dask views must have known row counts (before they are compared across views)."""
    for i, Xv in enumerate(X if isinstance(X, (list, tuple)) else [X]):
        if is_dask_collection(Xv) and any(np.isnan(c) for c in Xv.chunks[0]):
            raise ValueError(
                f"view {i} is a Dask array with unknown chunk sizes; call "
                "X.compute_chunk_sizes() (or build it with known lengths) first"
            )


# ---------------------------------------------------------------------------- missing views
def _row_list(rows: np.ndarray, offset: int = 0, shown: int = 5) -> str:
    """``"3, 7, 9 and 12 more"``: the first ``shown`` row numbers (plus ``offset``) of an
    error message, then how many more."""
    out = ", ".join(str(int(r) + offset) for r in rows[:shown])
    return out + (f" and {rows.size - shown} more" if rows.size > shown else "")


def check_whole_rows(nan: np.ndarray, view: int, offset: int = 0, where: str = "") -> None:
    """A missing view is a whole row of NaN: refuse NaN in only some columns of a row."""
    partial = np.flatnonzero(nan.any(axis=1) & ~nan.all(axis=1))
    if partial.size:
        raise ValueError(
            f"view {view} contains NaN{where} in only some of its columns "
            f"(rows {_row_list(partial, offset)}); "
            "a missing view must be a whole row of NaN in that view (supported), not a partly "
            "observed row: impute the missing columns of that view first"
        )


#: a view must be observed on at least this many training rows
MIN_OBSERVED_ROWS = 2


def observed_rows(Xv: Any) -> np.ndarray:
    """Rows where a checked view is observed (not a NaN row). A sparse view is complete:
    missing views are NaN rows of dense views (a sparse view's stored values are finite)."""
    if is_sparse(Xv):
        return np.ones(Xv.shape[0], dtype=bool)
    return ~np.isnan(np.asarray(Xv)[:, 0])


def refuse_all_missing(mask: np.ndarray, offset: int = 0) -> None:
    """Refuse samples (rows of the observed mask) with every view missing."""
    empty = np.flatnonzero(~mask.any(axis=1))
    if empty.size:
        raise ValueError(
            f"every view is missing (all NaN) in rows {_row_list(empty, offset)}; a sample "
            "needs at least one observed view: drop those rows"
        )


def observed_block_rows(B: np.ndarray) -> np.ndarray:
    """Rows of a (whole-row-checked) NumPy block where the view is not a NaN row."""
    return ~np.isnan(B[:, 0]) if B.shape[1] else np.ones(B.shape[0], dtype=bool)


def _observed_block(B: np.ndarray, view: int, block_info: Any = None) -> np.ndarray:
    """Observed rows of one row block of a view; partly missing rows and infinity refused."""
    start = 0 if not block_info else block_info[0]["array-location"][0][0]
    where = f" (in rows {start}..{start + B.shape[0] - 1})"
    if np.isinf(B).any():
        raise ValueError(f"view {view} contains infinity{where}; remove or impute it first")
    check_whole_rows(np.isnan(B), view, offset=start, where=where)
    return observed_block_rows(B)


def dask_observed_mask(Xs: Sequence[Any]) -> np.ndarray:
    """(n, v) boolean mask of the observed (sample, view) pairs of Dask views, in one pass.

    Each row block of each view is read once (one compute for all views); only the
    boolean vectors reach the client. A row with NaN in only some columns of a view, or
    infinity, raises a ValueError naming the view and the rows.
    """
    import dask

    da = require_dask()
    views, _ = as_aligned_views(Xs)
    lazy = [
        da.map_blocks(
            _observed_block,
            V,
            view=l,
            dtype=bool,
            chunks=(V.chunks[0],),
            drop_axis=1,
            meta=np.empty((0,), dtype=bool),
        )
        for l, V in enumerate(views)
    ]
    return np.column_stack([np.asarray(m, dtype=bool) for m in dask.compute(*lazy)])


# ---------------------------------------------------------------------------- Dask blocks
def as_aligned_views(Xs: Sequence[Any], extra: Sequence[Any] = ()) -> tuple[list, list]:
    """Dask views (and extra row-aligned arrays) with the same row chunks, one column chunk.

    The row chunks of the first Dask array in ``Xs`` (else in ``extra``) are the
    reference; other Dask views
    are rechunked along rows to them (and to a single chunk along columns); NumPy views
    and ``extra`` arrays (e.g. targets, 1-D or 2-D) are wrapped with those chunks.

    Raises
    ------
    ValueError
        Unknown (NaN) chunk sizes, mismatched sample counts (naming the view).
    """
    da = require_dask()
    ref = next((X for X in list(Xs) + list(extra) if X is not None and is_dask_collection(X)), None)
    if ref is None:
        raise TypeError("as_aligned_views needs at least one Dask array")
    named = [(f"view {i}", X) for i, X in enumerate(Xs)] + [("Y", A) for A in extra]
    for name, X in named:
        if X is not None and is_dask_collection(X) and any(np.isnan(c) for c in X.chunks[0]):
            raise ValueError(
                f"{name} is a Dask array with unknown chunk sizes; call "
                ".compute_chunk_sizes() (or build it with known lengths) first"
            )
    rows = ref.chunks[0]
    n = int(sum(rows))

    def align(A: Any, what: str) -> Any:
        if A.shape[0] != n:
            raise ValueError(
                f"{what} has {A.shape[0]} samples, view 0 has {n}: every view must hold "
                "the same samples in the same order"
            )
        target = (rows,) + tuple((s,) for s in A.shape[1:])
        if is_dask_collection(A):
            return A if A.chunks == target else A.rechunk(target)
        return da.from_array(np.asarray(A), chunks=target)

    views = [align(X, f"view {i}") for i, X in enumerate(Xs)]
    others = [None if A is None else align(A, "Y") for A in extra]
    return views, others


def check_block_finite(
    blocks: Sequence[np.ndarray],
    start: int | None,
    Y: np.ndarray | None = None,
    fn: Any = None,
) -> None:
    """Raise a ValueError naming the view (and the rows) if a block holds NaN/inf.

    NaN in the views is left to a row-wise function ``fn`` that handles missing views
    (its ``handles_missing_views`` attribute is true, e.g. :meth:`BlockNystrom.features`)
    when it fills whole rows of a view; NaN in only some columns of a row is refused.
    """
    named = [(l, f"view {l}", B) for l, B in enumerate(blocks)]
    nan_ok = bool(getattr(fn, "handles_missing_views", False))
    if Y is not None:
        named.append((-1, "Y", Y))
    for l, name, B in named:
        where = "" if start is None else f" (in rows {start}..{start + B.shape[0] - 1})"
        if nan_ok and l >= 0 and not np.isinf(B).any():
            check_whole_rows(np.isnan(B), l, offset=start or 0, where=where)
            continue
        if not np.isfinite(B).all():
            bad = "NaN" if np.isnan(B).any() else "infinity"
            nan = np.isnan(B)
            if l >= 0 and not np.isinf(B).any() and (nan.all(axis=1) == nan.any(axis=1)).all():
                raise ValueError(
                    f"{name} contains NaN{where} in whole rows (missing views): on Dask input "
                    "they are supported by BlockNystrom and the MVML estimators in Nystrom "
                    "mode, not by this step; remove those rows or impute them first"
                )
            raise ValueError(f"{name} contains {bad}{where}; remove or impute it first")
    if nan_ok and blocks:  # a sample with every view missing: refused, naming the rows
        refuse_all_missing(np.column_stack([observed_block_rows(B) for B in blocks]), start or 0)

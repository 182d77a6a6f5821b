"""The data part of an MVML fit: in-memory (NumPy / scipy.sparse) or Dask, chosen once.

A fit decides once, from its validated views and targets (:func:`data_part`), whether its
data are in memory or lazy Dask arrays, and then asks the chosen part instead of testing
the arrays again at every site:

* :class:`InMemoryData`: NumPy or scipy.sparse views and NumPy targets. Everything is on
  the client; operations are the plain NumPy ones.
* :class:`DaskData`: Dask views and/or Dask targets (the Nystrom mode only). It records
  which of the two are lazy (``lazy_views``, ``lazy_targets``): the targets stay lazy and
  are validated block by block, statistics come from one Dask reduction, outputs at
  prediction are lazy Dask arrays with the views' row chunks.

The operations the MVML modules branch on live here, one home per variant:
bringing a value to the client (:meth:`~DataPart.to_client`, :meth:`~DataPart.compute`),
the length check of the targets (:meth:`~DataPart.check_targets`), refusing what needs
in-memory data (:meth:`~DataPart.refuse`), the BLAS-thread context of a fit
(:meth:`~DataPart.fit_threads`), the validation of real targets
(:meth:`~DataPart.regression_targets`), the labels of lazy class targets
(:meth:`DaskData.lazy_class_targets`), some rows of the views on the client
(:meth:`~DataPart.gather_rows`) and the row-wise outputs at prediction
(:meth:`~DataPart.row_outputs`). :func:`map_rows` applies a row-wise function to an
output that is already computed (NumPy) or lazy (Dask), deciding from that output.

**Decided once per fit.** The estimator's ``fit`` calls :func:`data_part` once, at its
entry, on the views and targets it is given (a weighted fit, which brings its targets to
the client, takes :meth:`~DataPart.with_client_targets` of it), and carries the part on
the fit's :class:`~mvkernels.mvml._fit_context.FitContext` (``data``). The problem data
(``_BaseMVML._problem_data``, where the views are validated) take it from there (a
problem built outside a fit decides there, once) and pass it down: to the joint view,
the loss's ``nystrom_problem`` hook, the statistics problem and the
:class:`~mvkernels.mvml._problem.NystromProblem` (its ``data`` field), whose steps ask it
(:meth:`NystromProblem.with_client_rows
<mvkernels.mvml._problem.NystromProblem.with_client_rows>` takes
:meth:`~DataPart.with_client_targets` once a loss has gathered the rows). Prediction
decides from the test views, once per call.

**BLAS threads** (:meth:`~DataPart.fit_threads`), one rule for every fit and the CV: the
client's thin products (kernel rows, features, moments, the bandwidth heuristic) run on
one BLAS thread up to :data:`~mvkernels._threads.SERIAL_BLAS_MAX_SIZE` rows
(:func:`~mvkernels._threads.serial_blas`), in memory and on Dask views alike, so that
their results do not depend on the machine's thread count; only on lazy targets, whose
row count the client may not know, the threads are left as they are.

The decision itself is :func:`mvkernels._arrays.views_kind` (the bottom-floor seam) and
:func:`mvkernels._arrays.is_dask_collection` for the targets, asked here only. Parts are
stateless but for their two flags, small and picklable. Dask is imported lazily.
"""

from __future__ import annotations

import warnings
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._arrays import (
    as_aligned_views,
    compute_if_dask,
    is_dask_collection,
    require_dask,
    views_kind,
)
from .._sparse import is_sparse
from .._threads import serial_blas
from .._validation import check_precomputed_kernel, check_real_targets, check_targets_finite

__all__ = [
    "DaskData",
    "DataPart",
    "InMemoryData",
    "data_part",
    "map_rows",
    "targets_are_lazy",
]


def targets_are_lazy(y: Any) -> bool:
    """Whether the targets ``y`` are a lazy Dask array."""
    return is_dask_collection(y)


def _views_are_lazy(X: Any) -> bool:
    """Whether the views ``X`` (validated views, a list of views, or one array cut into
    views) hold a Dask array."""
    if X is None:
        return False
    if isinstance(X, (list, tuple)) or hasattr(X, "kind"):
        return views_kind(X) == "dask"
    return is_dask_collection(X)


def _eager_regression_targets(y: Any) -> tuple[np.ndarray, bool]:
    """In-memory real targets as (n, k) float64, finite, and whether ``y`` was 1-D."""
    y = check_real_targets(np.asarray(y))
    if y.ndim not in (1, 2):
        raise ValueError(f"y should be a 1d or 2d array, got an array of shape {y.shape}")
    if y.ndim == 2 and y.shape[1] == 0:
        raise ValueError("y has 0 outputs (shape (n, 0)); give at least one target column")
    check_targets_finite(y)
    return (y[:, None], True) if y.ndim == 1 else (y, False)


def _lazy_label_column(y: Any) -> Any:
    """Lazy labels as 1-D (an (n, 1) column is raveled with scikit-learn's warning)."""
    if y.ndim == 2 and y.shape[1] == 1:
        from sklearn.exceptions import DataConversionWarning

        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the "
            "shape of y to (n_samples, ), for example using ravel().",
            DataConversionWarning,
            stacklevel=4,
        )
        return y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array, got a Dask array of shape {y.shape}")
    return y


def _lazy_regression_targets(y: Any) -> tuple[Any, bool]:
    """Lazy Dask real targets as (n, k) float64 (NaN/inf are caught block by block)."""
    if y.ndim not in (1, 2):
        raise ValueError(f"y should be a 1d or 2d array, got a Dask array of shape {y.shape}")
    if not np.issubdtype(y.dtype, np.number) or np.issubdtype(y.dtype, np.complexfloating):
        raise ValueError(f"y must hold real numbers, got dtype {y.dtype}")
    y = y.astype(np.float64)
    return (y[:, None], True) if y.ndim == 1 else (y, False)


class DataPart:
    """The operations a fit asks of its data (:class:`InMemoryData`, :class:`DaskData`)."""

    #: whether every array of the fit is on the client
    in_memory: bool = True
    #: whether the views are lazy Dask arrays
    lazy_views: bool = False
    #: whether the targets are a lazy Dask array
    lazy_targets: bool = False

    def to_client(self, x: Any) -> Any:
        """``x`` on the client."""
        raise NotImplementedError

    def compute(self, *arrays: Any) -> tuple:
        """The arrays on the client."""
        raise NotImplementedError

    def check_targets(self, Y: Any, n: int) -> None:
        """Refuse targets whose number of rows is not the views' ``n``."""
        if Y.shape[0] != n:
            raise ValueError(f"y has {Y.shape[0]} samples but the views have {n}")

    def refuse(self, message: str, error: type = ValueError, views_only: bool = False) -> None:
        """Raise ``error(message)`` where the data (``views_only``: the views) are lazy."""

    def fit_threads(self, n: Any) -> AbstractContextManager:
        """The BLAS threads of a fit on ``n`` rows: one thread (:func:`serial_blas`; see
        the module docstring, "BLAS threads")."""
        return serial_blas(int(n))

    def with_client_targets(self) -> DataPart:
        """The part of the same data once the targets are on the client."""
        return self

    def regression_targets(self, y: Any) -> tuple[Any, bool]:
        """Real targets as an (n, k) float64 array and whether ``y`` was 1-D."""
        return _eager_regression_targets(y)

    def lazy_class_targets(self, y: Any) -> tuple[np.ndarray, Any]:
        """The classes of lazy labels and their lazy +-1 targets (:class:`DaskData`; labels
        in memory are encoded by the estimator)."""
        raise TypeError("the labels are in memory: encode them with np.unique")

    def gather_rows(self, Xs: Any, idx: np.ndarray) -> list:
        """Rows ``idx`` of every view."""
        return [Xv[idx] for Xv in Xs]

    def row_outputs(
        self, fn: Any, Xs: Any, n_out: int | None = None, dtype: Any = np.float64
    ) -> Any:
        """The row-wise function ``fn`` of the views."""
        return fn(Xs)

    def row_block_sums(
        self, stats: Any, U: Any, y: np.ndarray, w: np.ndarray | None, chunk: int
    ) -> Any:
        """``sum_b stats(U_b, y_b, w_b)`` over blocks of ``chunk`` rows of ``U`` (``y``,
        ``w``: cut as ``U``; ``w`` may be None), summed in row order."""
        acc = None
        for s in range(0, U.shape[0], chunk):
            wb = None if w is None else w[s : s + chunk]
            block = stats(U[s : s + chunk], y[s : s + chunk], wb)
            acc = block if acc is None else acc + block
        return acc

    def side_by_side(self, Xs: Any, block_fn: Any) -> Any:
        """The views' columns side by side: ``block_fn(*views)`` on float64 arrays, or
        one CSR matrix (never densified) when a view is sparse."""
        if any(is_sparse(Xv) for Xv in Xs):
            import scipy.sparse as sp

            return sp.hstack([sp.csr_matrix(Xv) for Xv in Xs], format="csr")
        return block_fn(*[np.asarray(Xv, dtype=np.float64) for Xv in Xs])

    def test_kernels(self, Ks: Any, n_train: int) -> list:
        """Precomputed test kernels ``Ks`` (one per view), each checked to have one column
        per training sample (:func:`~mvkernels._validation.check_precomputed_kernel`)."""
        return [
            check_precomputed_kernel(K, i, n_train=n_train, square=False) for i, K in enumerate(Ks)
        ]


@dataclass(frozen=True)
class InMemoryData(DataPart):
    """NumPy / scipy.sparse views and NumPy targets: every operation on the client.

    Examples
    --------
    >>> import numpy as np
    >>> part = data_part([np.ones((4, 2))], np.arange(4.0))
    >>> part.in_memory, part.to_client(np.arange(3))
    (True, array([0, 1, 2]))
    >>> Y, single = part.regression_targets(np.arange(4.0))
    >>> Y.shape, single
    ((4, 1), True)
    """

    def to_client(self, x: Any) -> Any:
        """``x`` on the client: as it is."""
        return x

    def compute(self, *arrays: Any) -> tuple:
        """The arrays on the client: as they are."""
        return arrays


@dataclass(frozen=True)
class DaskData(DataPart):
    """Dask views and/or Dask targets (Nystrom mode): lazy where they are lazy.

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> y = da.from_array(np.array([0, 1, 1, 2]), chunks=2)
    >>> part = data_part([np.ones((4, 2))], y)
    >>> part.in_memory, part.lazy_views, part.lazy_targets
    (False, False, True)
    >>> classes, Y = part.lazy_class_targets(y)
    >>> classes, Y.compute()[:, 0]
    (array([0, 1, 2]), array([ 1., -1., -1., -1.]))
    """

    in_memory = False
    lazy_views: bool = True
    lazy_targets: bool = False

    def to_client(self, x: Any) -> Any:
        """``x`` on the client: a Dask array computed, anything else as it is."""
        return compute_if_dask(x)

    def compute(self, *arrays: Any) -> tuple:
        """The arrays on the client, in one Dask compute."""
        import dask

        return tuple(dask.compute(*arrays))

    def check_targets(self, Y: Any, n: int) -> None:
        """Refuse lazy targets of unknown length, then targets of another length."""
        if self.lazy_targets and np.isnan(Y.shape[0]):
            raise ValueError(
                "y is a Dask array with unknown chunk sizes; call y.compute_chunk_sizes() first"
            )
        super().check_targets(Y, n)

    def refuse(self, message: str, error: type = ValueError, views_only: bool = False) -> None:
        """Raise ``error(message)``: lazy data (with ``views_only``: lazy views only)."""
        if self.lazy_views or not views_only:
            raise error(message)

    def fit_threads(self, n: Any) -> AbstractContextManager:
        """The BLAS threads of a fit: as they are on lazy targets (their row count ``n``
        may be unknown to the client), else one thread (:func:`serial_blas`), lazy views
        or not (see the module docstring, "BLAS threads")."""
        return nullcontext() if self.lazy_targets else serial_blas(int(n))

    def with_client_targets(self) -> DataPart:
        """The part of the same data once the targets are on the client: in memory
        without lazy views."""
        return DaskData(lazy_views=True) if self.lazy_views else IN_MEMORY

    def regression_targets(self, y: Any) -> tuple[Any, bool]:
        """Real targets as an (n, k) float64 array, lazy on lazy targets (NaN/inf are
        caught block by block), and whether ``y`` was 1-D."""
        if self.lazy_targets:
            return _lazy_regression_targets(y)
        return _eager_regression_targets(y)

    def lazy_class_targets(self, y: Any) -> tuple[np.ndarray, Any]:
        """The classes of lazy labels ``y`` (a Dask reduction) and their lazy +-1
        targets: one column (binary, +1 = the second class) or one per class. An (n, 1)
        ``y`` is raveled with scikit-learn's warning."""
        da = require_dask()
        y = _lazy_label_column(y)
        classes = np.asarray(da.unique(y).compute())
        if len(classes) == 2:
            return classes, da.where(y == classes[1], 1.0, -1.0)[:, None]
        return classes, da.where(y[:, None] == classes[None, :], 1.0, -1.0)

    def gather_rows(self, Xs: Any, idx: np.ndarray) -> list:
        """Rows ``idx`` of every view as NumPy arrays, in one compute."""
        if not self.lazy_views:
            return super().gather_rows(Xs, idx)
        from ..nystrom._dask import gather_rows

        return gather_rows(Xs, idx)

    def row_outputs(
        self, fn: Any, Xs: Any, n_out: int | None = None, dtype: Any = np.float64
    ) -> Any:
        """The row-wise function ``fn`` of the views, block by block: a lazy Dask array
        with the views' row chunks (:func:`mvkernels.nystrom.map_views`)."""
        from ..nystrom import map_views

        return map_views(fn, Xs, n_out=n_out, dtype=dtype)

    def row_block_sums(
        self, stats: Any, U: Any, y: np.ndarray, w: np.ndarray | None, chunk: int
    ) -> Any:
        """``sum_b stats(U_b, y_b, w_b)`` over the row blocks ``U_b`` of a Dask ``U`` (each
        on a worker; ``y``, ``w``: in-memory rows cut as ``U``'s blocks, ``w`` may be
        None), in one compute; ``chunk`` is not used (the blocks are ``U``'s)."""
        import dask

        bounds = np.cumsum((0,) + U.chunks[0])
        parts = [
            dask.delayed(stats)(
                blk,
                y[bounds[i] : bounds[i + 1]],
                None if w is None else w[bounds[i] : bounds[i + 1]],
            )
            for i, blk in enumerate(U.to_delayed().ravel())
        ]
        return np.sum(dask.compute(*parts), axis=0)

    def side_by_side(self, Xs: Any, block_fn: Any) -> Any:
        """The views' columns side by side, lazily: ``block_fn`` on each aligned row block
        of the views (the views' row chunks, one column chunk); views in memory (only the
        targets lazy) as :class:`InMemoryData` does."""
        if not self.lazy_views:
            return super().side_by_side(Xs, block_fn)
        da = require_dask()
        aligned, _ = as_aligned_views(Xs)
        width = sum(int(V.shape[1]) for V in aligned)
        dtype = np.result_type(*[V.dtype for V in aligned])
        return da.map_blocks(
            block_fn,
            *aligned,
            dtype=dtype,
            chunks=(aligned[0].chunks[0], (width,)),
            meta=np.empty((0, 0), dtype=dtype),
        )

    def test_kernels(self, Ks: Any, n_train: int) -> list:
        """Precomputed test kernels ``Ks``: a Dask one has its shape checked only (its
        values stay lazy), an in-memory one is checked as :class:`InMemoryData` does."""
        out = []
        for i, K in enumerate(Ks):
            if not is_dask_collection(K):
                out.append(check_precomputed_kernel(K, i, n_train=n_train, square=False))
            elif K.shape[1] != n_train:
                raise ValueError(
                    f"view {i}: precomputed test kernel must have one column per "
                    f"training sample ({n_train}), got shape {K.shape}"
                )
            else:
                out.append(K)
        return out


#: the part of in-memory data (stateless)
IN_MEMORY = InMemoryData()


def data_part(Xs: Any = None, y: Any = None) -> DataPart:
    """The data part of views ``Xs`` and targets ``y``: :class:`DaskData` when either
    holds a Dask array, else :class:`InMemoryData` (the one NumPy/Dask decision of a fit).

    Examples
    --------
    >>> import numpy as np
    >>> type(data_part([np.ones((3, 2))], np.zeros(3))).__name__
    'InMemoryData'
    >>> import dask.array as da
    >>> part = data_part([da.ones((3, 2), chunks=2)], np.zeros(3))
    >>> type(part).__name__, part.lazy_views, part.lazy_targets
    ('DaskData', True, False)
    """
    lazy_views, lazy_targets = _views_are_lazy(Xs), targets_are_lazy(y)
    if lazy_views or lazy_targets:
        return DaskData(lazy_views=lazy_views, lazy_targets=lazy_targets)
    return IN_MEMORY


def map_rows(D: Any, fn: Any, n_out: int | None, dtype: Any = np.float64) -> Any:
    """``fn`` on the rows of outputs ``D`` (n, T): at once (NumPy) or block by block (a
    lazy Dask array, one column chunk); ``n_out`` is the output's number of columns (None:
    a 1-D output).

    Examples
    --------
    >>> import numpy as np
    >>> map_rows(np.array([[1.0, 2.0], [3.0, 0.0]]), lambda B: B.argmax(axis=1), None)
    array([1, 0])
    """
    if not is_dask_collection(D):
        return fn(np.asarray(D))
    D = D.rechunk({1: -1})
    if n_out is None:
        return D.map_blocks(fn, drop_axis=1, chunks=(D.chunks[0],), dtype=dtype)
    return D.map_blocks(fn, chunks=(D.chunks[0], (n_out,)), dtype=dtype)

"""Thread control shared by the estimators: single-threaded BLAS where it is faster.

Threaded BLAS (OpenBLAS, MKL) pays a synchronisation cost per call that dominates on small
or thin matrices, and much more so when the cores are shared (``pytest -n 2``, a Dask worker
beside the client): measured 100x slower for a few-hundred-wide Cholesky / eigh on 2 busy
cores, 2-3x for OLOK's thin block products, 75x for a thin QR in the RKM primal solver.
Every estimator asks :func:`serial_blas` whether its problem is in that regime.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

#: Problems up to this size (matrix side, or rows of a thin product) run on one BLAS thread.
SERIAL_BLAS_MAX_SIZE = 2000


def serial_blas(
    size: int, min_size: int = 0, max_size: int | None = SERIAL_BLAS_MAX_SIZE
) -> AbstractContextManager:
    """A context manager limiting BLAS to one thread when ``min_size <= size <= max_size``.

    Parameters
    ----------
    size : int
        The size that decides: the side of the matrices factorised, or the rows of a block.
    min_size : int, default=0
        Below it nothing changes (the context switch would cost more than the work).
    max_size : int or None, default=SERIAL_BLAS_MAX_SIZE
        Above it nothing changes (threads pay off); ``None``: no upper bound.

    Returns
    -------
    contextlib.AbstractContextManager
        ``threadpoolctl.threadpool_limits(1, "blas")`` or a no-op context.
    """
    if size < min_size or (max_size is not None and size > max_size):
        return nullcontext()
    return _controller().limit(limits=1, user_api="blas")


_CONTROLLER: list = []


def _controller() -> Any:
    """One ``threadpoolctl.ThreadpoolController`` per process: scanning the loaded BLAS
    libraries costs ~1-2 ms, paid once instead of at every :func:`serial_blas`."""
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]

"""Alias of :mod:`mvkernels.mvml` for MVML-SVM (kept for existing imports):
:class:`MVMLSVC` lives in :mod:`mvkernels.mvml._svm`."""

from .mvml._svm import DASK_GATHER_MAX_BYTES, MVMLSVC

__all__ = ["MVMLSVC", "DASK_GATHER_MAX_BYTES"]

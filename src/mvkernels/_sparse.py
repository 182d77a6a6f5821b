"""Sparse views (``scipy.sparse`` CSR / CSC): the one home of their rules.

A sparse view stays sparse: kernels are evaluated by scikit-learn's pairwise kernels,
which take sparse input and return dense ``(n_x, n_z)`` blocks, so a Nystrom map needs
the view (O(nnz)) and ``n x p`` kernel blocks only. Named kernels that take sparse views:
``linear``, ``rbf``, ``laplacian``, ``poly`` (and ``precomputed``, where the view *is* a
kernel matrix, densified since a kernel matrix is dense). Callable kernels, Dask input,
and explicit features that are the view itself (``MultiViewKPCA``'s ``"identity"`` and
``"rff"``) refuse them with a ``TypeError`` naming the view.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = [
    "is_sparse",
    "check_sparse_view",
    "refuse_sparse",
    "row_sq_norms",
    "hstack_views",
]


def is_sparse(x: Any) -> bool:
    """True for a ``scipy.sparse`` matrix or array."""
    return bool(sp.issparse(x))


def check_sparse_view(
    Xv: Any, i: int, *, dtype: Any, ensure_finite: bool, ensure_min_samples: int
) -> sp.csr_matrix:
    """A sparse view as CSR of ``dtype`` (row chunks are cheap), checked like a dense one.

    CSR and CSC (and the other scipy formats, converted) are accepted; only the stored
    values are checked for NaN / infinity, nothing is densified.
    """
    if np.dtype(Xv.dtype).kind == "c":
        raise ValueError(
            f"Complex data not supported: view {i} is complex; mvkernels needs real data"
        )
    if Xv.ndim != 2:
        raise ValueError(f"view {i} must be 2-D, got a sparse array of shape {Xv.shape}")
    out = sp.csr_matrix(Xv, dtype=np.float64 if dtype is None else dtype)
    if out.shape[0] < ensure_min_samples:
        raise ValueError(
            f"view {i} has {out.shape[0]} sample(s); at least {ensure_min_samples} required"
        )
    if out.shape[1] == 0:
        raise ValueError(f"view {i} has 0 features (shape {out.shape})")
    if ensure_finite and not np.isfinite(out.data).all():
        bad = "NaN" if np.isnan(out.data).any() else "infinity"
        raise ValueError(f"view {i} (sparse) contains {bad}; remove or impute it first")
    if not out.has_sorted_indices:  # sort a copy: never reorder the caller's matrix
        out = out.copy()
        out.sort_indices()
    return out


def refuse_sparse(Xs: Any, why: str) -> None:
    """``TypeError`` naming the first sparse view, for a mode that cannot take them."""
    for i, Xv in enumerate(Xs):
        if is_sparse(Xv):
            raise TypeError(f"view {i} is a sparse matrix, which {why}; call .toarray() first")


def row_sq_norms(X: Any) -> np.ndarray:
    """``||x_i||^2`` for every row, dense or sparse, without densifying."""
    if is_sparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def hstack_views(Xs: Any) -> Any:
    """Column concatenation of views: CSR if any view is sparse, else a NumPy array."""
    if any(is_sparse(X) for X in Xs):
        return sp.hstack([sp.csr_matrix(X) for X in Xs], format="csr")
    return np.hstack(Xs)

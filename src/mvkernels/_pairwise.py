"""Pairwise squared distances and the Laplacian form of pair weights: the parts shared by
the metric learners of Gaussian kernels (MLKR, :mod:`mvkernels.baselines._mlkr`, and the
learned feature relevance of MVML, :mod:`mvkernels.mvml._relevance`).

Both differentiate a loss through ``k_ij = exp(-||M (x_i - x_j)||^2)``; with ``S`` the
symmetric matrix of pair weights ``dloss / d||M (x_i - x_j)||^2`` (times ``k_ij``),
``sum_ij S_ij (x_i - x_j)(x_i - x_j)^T = 2 X^T (diag(S 1) - S) X``, whose product with
``X`` is :func:`laplacian_apply`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

__all__ = ["laplacian_apply", "squared_distances"]


def squared_distances(A: Any, B: Any = None) -> np.ndarray:
    """Squared Euclidean distances ``||a_i - b_j||^2`` (rounding below 0 clipped).

    Parameters
    ----------
    A : ndarray or sparse matrix of shape (n, d)
    B : ndarray or sparse matrix of shape (m, d) or None
        None: ``A`` (the distances between the rows of ``A``).

    Returns
    -------
    ndarray of shape (n, m)
    """
    sq_a = _row_sq_norms(A)
    if B is None:
        B, sq_b = A, sq_a
    else:
        sq_b = _row_sq_norms(B)
    G = A @ B.T
    G = G.toarray() if sparse.issparse(G) else np.asarray(G)
    return np.maximum(sq_a[:, None] + sq_b[None, :] - 2.0 * G, 0.0)


def _row_sq_norms(A: Any) -> np.ndarray:
    if sparse.issparse(A):
        return np.asarray(A.multiply(A).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", A, A)


def laplacian_apply(S: np.ndarray, X: Any) -> np.ndarray:
    """``(diag(S 1) - S) X`` for a square ``S`` (the graph Laplacian of the pair weights).

    Parameters
    ----------
    S : ndarray of shape (n, n)
    X : ndarray or sparse matrix of shape (n, d)

    Returns
    -------
    ndarray of shape (n, d)
    """
    if sparse.issparse(X):
        SX = np.asarray((X.T @ S.T).T)
        return np.asarray(X.multiply(S.sum(axis=1)[:, None]).toarray()) - SX
    return S.sum(axis=1)[:, None] * X - S @ X

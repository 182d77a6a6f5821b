"""Block-wise Nystrom approximation shared by all views (MVML paper, Sec. 3.5).

One set of landmark *samples* is chosen and used in every view, so that the
approximate block kernel keeps the sample alignment between views.
For view ``l`` with landmark indices ``idx`` (``p`` of them):

    W_l = K_l[idx, idx]                 (p x p)
    S_l = (W_l^+)^{1/2}                 (symmetric p x p, see ``eig_floor``)
    u_l(x) = S_l k_l(X[idx], x)         (p features)

so ``K_l ~ U_l U_l^T`` with ``U_l = K_l[:, idx] S_l``. The feature vector of a sample is
the concatenation ``u(x) = (u_1(x), ..., u_v(x))`` of length ``v p``.

Numerical choice (documented, tested): ``(W^+)^{1/2}`` is computed from the
eigendecomposition ``W = V diag(s) V^T``; eigenvalues ``s_i <= eig_floor * max(s)``
are treated as zero (their directions are dropped from the pseudo-inverse). The
feature dimension stays ``p`` per view whatever the numerical rank, so with all n
samples as landmarks ``U U^T = K`` exactly (up to the floor).

No n x n matrix is built: features are computed in row chunks of ``chunk_size``.

Dask input (optional extra ``mvkernels[dask]``): :class:`BlockNystrom` ``fit``,
``transform`` and ``moments`` accept Dask views chunked by rows, and so do
:func:`feature_moments` and :func:`map_views`; they dispatch to :mod:`mvkernels.nystrom._dask`
(Dask is only imported there). Results equal the NumPy ones to rounding (1e-10 tested);
``transform`` then returns a lazy Dask array, ``moments`` a small in-memory
:class:`FeatureMoments` computed as a Dask reduction.

Layout of this subpackage (private modules; the public names are re-exported here):
``_landmarks`` (landmark budgets and selection), ``_moments`` (sufficient statistics of
the features), ``_map`` (:class:`BlockNystrom` and the NumPy/Dask dispatch) and ``_dask``
(the Dask back end, the only module that imports Dask).
"""

from ._landmarks import (
    LANDMARK_STRATEGIES,
    check_landmark_count,
    check_landmark_indices,
    default_chunk_size,
    leverage_indices,
    resolve_n_landmarks,
    uniform_indices,
)
from ._map import BlockNystrom, feature_moments, map_views, select_landmarks, sqrt_pinv_psd
from ._moments import FeatureMoments, moments_from_chunks

__all__ = [
    "LANDMARK_STRATEGIES",
    "resolve_n_landmarks",
    "check_landmark_indices",
    "check_landmark_count",
    "leverage_indices",
    "select_landmarks",
    "sqrt_pinv_psd",
    "default_chunk_size",
    "uniform_indices",
    "FeatureMoments",
    "moments_from_chunks",
    "feature_moments",
    "map_views",
    "BlockNystrom",
]

"""Scalar kernels on one view, shared by every estimator of the package.

Each view ``l`` gets a scalar kernel ``k_l``. A kernel is given by
name or as a callable, with a dict of parameters:

====================  ===========================================  ===========================
name                  formula                                      parameters (default)
====================  ===========================================  ===========================
``"rbf"``             ``exp(-gamma ||x - z||^2)``,                 ``gamma`` or ``sigma``
(``"gaussian"``)      ``gamma = 1 / (2 sigma^2)``                  (sigma = mean pairwise
                                                                   Euclidean distance of the
                                                                   view's training points)
``"laplacian"``       ``exp(-gamma ||x - z||_1)``                  ``gamma`` (1 / mean
                                                                   pairwise L1 distance)
``"linear"``          ``<x, z>``                                   none
``"poly"``            ``(gamma <x, z> + coef0)^degree``            ``gamma`` (1 / n_features),
(``"polynomial"``)                                                 ``coef0`` (1), ``degree`` (3)
callable              ``f(X, Z, **params)`` -> (n_x, n_z) array    anything ``f`` accepts
``"precomputed"``     the view *is* a kernel matrix                none
====================  ===========================================  ===========================

Each named kernel is one small class in :mod:`mvkernels._kernel_families` (its
parameters and their value checks, default bandwidth and the parameter holding it,
evaluation and sparse support), registered in ``KERNEL_FAMILIES``: a new named kernel is
one class there (see "How a kernel is added" in that module); :class:`ViewKernel` reads it
and branches on no kernel or parameter name.

The default Gaussian bandwidth follows the MVML paper (Sec. 4.2): sigma is the mean
pairwise distance between training points of the view. For more than
``max_samples`` (2000) points it is estimated on a random subsample of the rows
(an unbiased estimate of the mean over all pairs), so no n x n matrix is built. Dense
rows' distances are computed in single precision (see :func:`mean_pairwise_distance`).

Precomputed kernels and cross-validation
----------------------------------------
With ``kernel="precomputed"`` each view passed to ``fit`` is the n x n training Gram
matrix and each view passed to ``predict`` is the (n_test, n_train) cross-kernel.
Scikit-learn's splitters cannot cut a *list* of Gram matrices, so to cross-validate
precomputed kernels build the Gram matrix of each view on *all* samples once and
wrap it in :class:`IndexedKernel`; the data ``X`` is then just the sample index
column ``np.arange(n)[:, None]`` repeated for each view (``views=[1, 1, ...]``), and any
splitter, ``GridSearchCV`` or ``cross_val_score`` works unchanged::

    Ks = [K_view0, K_view1]                       # each n x n, on all samples
    X = np.repeat(np.arange(n)[:, None], len(Ks), axis=1).astype(float)
    est = MVMLClassifier(kernel=[IndexedKernel(K) for K in Ks], views=[1, 1])
    cross_val_score(est, X, y, cv=5)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from scipy.spatial.distance import pdist
from sklearn.metrics.pairwise import (
    euclidean_distances,
    manhattan_distances,
)
from sklearn.utils import check_random_state

from ._arrays import compute_if_dask
from ._kernel_families import (
    KERNEL_NAMES,
    KernelFamily,
    check_kernel_takes_sparse,
    kernel_family,
)
from ._sparse import is_sparse, row_sq_norms
from ._threads import serial_blas

__all__ = [
    "KERNEL_NAMES",
    "ViewKernel",
    "IndexedKernel",
    "mean_pairwise_distance",
    "subsample_indices",
    "make_view_kernels",
]


def distinct_uniform_draws(n: int, size: int, rng: np.random.RandomState) -> np.ndarray:
    """``size`` distinct integers of ``range(n)`` in draw order, in O(size) memory.

    Integers are drawn uniformly with replacement in rounds (``2 * missing + 16`` per
    round) and the first occurrence of each is kept until ``size`` distinct ones are
    found: a uniformly random ``size``-subset, in uniformly random order. Efficient when
    ``size`` is small next to ``n`` (the expected number of rounds is then ~1).
    """
    if not 0 <= size <= n:
        raise ValueError(f"cannot draw {size} distinct samples out of {n}")
    chosen = np.empty(0, dtype=np.int64)
    while chosen.size < size:
        draw = np.concatenate([chosen, rng.randint(0, n, size=2 * (size - chosen.size) + 16)])
        _, first = np.unique(draw, return_index=True)
        chosen = draw[np.sort(first)]
    return chosen[:size]


def subsample_indices(n: int, size: int, random_state: Any = None) -> np.ndarray:
    """Sorted indices of ``min(size, n)`` distinct rows drawn uniformly from ``range(n)``.

    Memory is O(size) whatever ``n`` is (``RandomState.choice(n, size, replace=False)``
    would build an O(n) permutation: 160 MB at n = 20M): for ``n <= 4 * size`` one
    permutation of ``range(n)`` (then O(size) too), otherwise
    :func:`distinct_uniform_draws`. Seeded by ``random_state``; NumPy and Dask inputs
    use this same function, so they draw the same rows.

    Parameters
    ----------
    n : int
        Number of rows.
    size : int
        Number of rows to draw.
    random_state : int, RandomState or None, default=None
        Seed.

    Returns
    -------
    ndarray of int, shape (min(size, n),)
        Sorted row indices.
    """
    if size >= n:
        return np.arange(n, dtype=np.intp)
    rng = check_random_state(random_state)
    if n <= 4 * size:
        return np.sort(rng.permutation(n)[:size]).astype(np.intp)
    return np.sort(distinct_uniform_draws(n, size, rng)).astype(np.intp)


def mean_pairwise_distance(
    X: Any,
    metric: str = "euclidean",
    max_samples: int = 2000,
    random_state: Any = None,
    precision: str = "single",
    sample_weight: Any = None,
) -> float:
    """Mean distance between pairs of distinct rows of ``X`` (optionally weighted).

    Exact for ``n <= max_samples``; otherwise the mean over the pairs of
    ``max_samples`` rows drawn without replacement (an unbiased estimate), so the
    cost is ``O(max_samples^2 d)`` whatever ``n`` is. The rows are drawn by
    :func:`subsample_indices` (O(max_samples) memory, not O(n)). Works on Dask arrays by
    pulling only the sampled rows.

    Parameters
    ----------
    X : array-like or Dask array of shape (n, d)
        The rows.
    metric : str, default="euclidean"
        Distance (:func:`scipy.spatial.distance.pdist` names).
    max_samples : int, default=2000
        Rows used at most (drawn without replacement).
    random_state : int, RandomState or None, default=None
        Seed of the subsample.
    precision : {"single", "double"}, default="single"
        Arithmetic of the Euclidean distances of dense rows. ``"single"``: the pairwise
        products in float32 on the centred, power-of-two-scaled rows, every sum in
        float64; about twice as fast (the products are the whole cost). Each squared
        distance is then off by about ``1e-7 (||x_i||^2 + ||x_j||^2)`` (centred rows):
        the mean is within about 1e-8 relative of the exact one on real views (the
        errors cancel), and within about 1e-4 on adversarial data (many near-duplicate
        pairs far from the mean, e.g. tight clusters far apart: 1.4e-5 measured). A
        bandwidth heuristic asks no more. ``"double"``: ``pdist``'s mean to rounding.
        Sparse rows, ``"cityblock"`` and weighted rows are always computed in double.
    sample_weight : None or ndarray of shape (n,), default=None
        Frequency weights (>= 0): a row of weight ``w`` counts as ``w`` copies of itself.
        The mean is over the pairs of that multiset,
        ``sum_{i<j} w_i w_j d_ij / (sum_{i<j} w_i w_j + sum_i max(w_i (w_i - 1), 0) / 2)``
        (the second term counts the pairs of copies of one row, at distance 0; a row of
        weight at most 1 has none). Integer weights give the mean of the data with each
        row repeated ``w_i`` times, a zero weight the mean without that row, unit weights
        the unweighted mean. Rows of zero weight are never drawn into the subsample.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.spatial.distance import pdist
    >>> X = np.random.default_rng(0).normal(size=(300, 20))
    >>> exact = pdist(X).mean()
    >>> bool(abs(mean_pairwise_distance(X) / exact - 1) < 1e-6)
    True
    >>> bool(abs(mean_pairwise_distance(X, precision="double") / exact - 1) < 1e-12)
    True
    >>> w = np.arange(300) % 3  # frequency weights: each row 0, 1 or 2 times
    >>> repeated = pdist(np.repeat(X, w, axis=0)).mean()
    >>> bool(abs(mean_pairwise_distance(X, sample_weight=w) / repeated - 1) < 1e-12)
    True
    """
    if precision not in ("single", "double"):
        raise ValueError(f'precision must be "single" or "double", got {precision!r}')
    if sample_weight is not None:
        return _weighted_mean_distance(X, sample_weight, metric, max_samples, random_state)
    n = X.shape[0]
    if n < 2:
        raise ValueError(
            f"got n_samples = {n}: at least 2 samples are needed to estimate "
            "a kernel bandwidth (or set gamma/sigma in kernel_params)"
        )
    if n > max_samples:
        X = X[subsample_indices(n, max_samples, random_state)]
    X = compute_if_dask(X)
    if is_sparse(X):  # the subsample's distances, never its dense copy
        D = (euclidean_distances if metric == "euclidean" else manhattan_distances)(X)
        return float(D[np.triu_indices(D.shape[0], 1)].mean())
    if metric == "euclidean":
        # One BLAS thread, always: the blocked products' rounding (float32 above all) would
        # otherwise depend on the thread count, and with it every bandwidth and every fit.
        with serial_blas(0, max_size=None):
            return _mean_euclidean_distance(
                np.asarray(X, dtype=np.float64),
                np.float32 if precision == "single" else np.float64,
            )
    d = pdist(np.asarray(X, dtype=np.float64), metric=metric)
    return float(d.mean())


def _weighted_mean_distance(
    X: Any, sample_weight: Any, metric: str, max_samples: int, random_state: Any
) -> float:
    """:func:`mean_pairwise_distance` with frequency weights (its ``sample_weight``)."""
    w = np.asarray(sample_weight, dtype=np.float64).ravel()
    if w.shape[0] != X.shape[0]:
        raise ValueError(f"sample_weight has {w.shape[0]} entries but X has {X.shape[0]} rows")
    rows = np.flatnonzero(w > 0)
    if rows.size < 2:
        raise ValueError(
            f"got {rows.size} sample(s) of positive weight: at least 2 are needed to "
            "estimate a kernel bandwidth (or set gamma/sigma in kernel_params)"
        )
    if rows.size > max_samples:
        rows = rows[subsample_indices(rows.size, max_samples, random_state)]
    Xr = X[rows]
    Xr = compute_if_dask(Xr)
    w = w[rows]
    Xr = Xr if is_sparse(Xr) else np.asarray(Xr, dtype=np.float64)
    with serial_blas(0, max_size=None):  # as the unweighted mean: independent of threads
        if metric == "euclidean":
            D = euclidean_distances(Xr)
        elif metric == "cityblock":
            D = manhattan_distances(Xr)
        else:
            from scipy.spatial.distance import squareform

            D = squareform(pdist(Xr, metric=metric))
        np.fill_diagonal(D, 0.0)
        total = 0.5 * float(w @ D @ w)
    pairs = 0.5 * (float(w.sum()) ** 2 - float(w @ w)) + 0.5 * float(
        np.maximum(w * (w - 1.0), 0.0).sum()
    )
    return total / pairs


def _mean_euclidean_distance(X: np.ndarray, dtype: Any = np.float64, block: int = 128) -> float:
    """Mean Euclidean distance over the pairs ``i < j`` of rows of dense ``X``.

    ``||x_i - x_j||^2 = ||x_i||^2 + ||x_j||^2 - 2 x_i^T x_j`` on the centred rows (the
    distances do not change; centring keeps the cancellation small), written as one
    product ``L_i^T R_j`` of the augmented rows ``L_i = [x_i, ||x_i||^2, 1]`` and
    ``R_j = [-2 x_j, 1, ||x_j||^2]``: the BLAS product gives the squared distances
    directly (no broadcast passes). A row block against the rows from its own first row
    on at a time: each off-diagonal pair is computed once and the diagonal blocks, whose
    pairs come twice, are halved (about ``n^2 / 2`` products in all, as a symmetric rank-k
    update; ``O(block n)`` memory besides the two augmented copies).

    ``dtype``: the arithmetic of the products and of the distances; the sums are float64
    either way. float64: equal to ``pdist(X).mean()`` to rounding (about 1e-15 relative
    on the benchmark views), 3-4x faster than ``pdist`` for a few hundred columns.
    float32: about twice as fast again (the centred rows are rounded to float32 once, and
    their squared norms computed from the rounded rows, as their products are). Rows whose
    squared norms would overflow or underflow (in float32, or in float64 for data near
    1e+-150) are first scaled by a power of two (exact) so that their largest entry is
    at most 1, and the mean is scaled back.
    """
    n, d = X.shape
    L = np.empty((n, d + 2), dtype=dtype)
    mean = X.mean(axis=0)
    with np.errstate(over="ignore", under="ignore"):  # checked below
        np.subtract(X, mean, out=L[:, :d], casting="same_kind")  # centred, rounded once
        sq = row_sq_norms(L[:, :d])
    top = float(sq.max()) if n else 0.0
    scale = 1.0
    info = np.finfo(dtype)
    if not info.tiny * 2.0**40 <= top <= info.max * 2.0**-8:
        # squared norms that overflow or underflow in this precision (or identical rows):
        # the rows scaled by a power of two (exact) so that their largest entry is at most 1
        Xc = X - mean
        big = max(float(Xc.max()), -float(Xc.min())) if Xc.size else 0.0
        if big == 0.0:
            return 0.0
        scale = 2.0 ** float(np.ceil(np.log2(big)))
        np.multiply(Xc, 1.0 / scale, out=L[:, :d], casting="same_kind")
        sq = row_sq_norms(L[:, :d])
    L[:, d] = sq
    L[:, d + 1] = 1.0
    R = np.empty((n, d + 2), dtype=dtype)
    np.multiply(L[:, :d], -2.0, out=R[:, :d])
    R[:, d] = 1.0
    R[:, d + 1] = sq
    total = 0.0
    for start in range(0, n, block):
        stop = min(n, start + block)
        b = stop - start
        D2 = L[start:stop] @ R[start:].T  # rows start..stop-1 against rows start..n-1
        np.maximum(D2, 0.0, out=D2)
        D2[:, :b].flat[:: b + 1] = 0.0  # the pairs (i, i) of the diagonal block
        np.sqrt(D2, out=D2)
        total += float(D2[:, b:].sum(dtype=np.float64)) + 0.5 * float(
            D2[:, :b].sum(dtype=np.float64)
        )
    return scale * total / (n * (n - 1) / 2)


class ViewKernel:
    """A scalar kernel for one view whose data-dependent parameters are set in ``fit``.

    Parameters
    ----------
    kernel : str or callable
        One of :data:`KERNEL_NAMES` or a callable ``f(X, Z, **params)``.
    params : dict, optional
        Kernel parameters (see the module docstring).
    view : int, default=0
        Index of the view, named in error messages.

    Attributes
    ----------
    name : str
        Canonical kernel name (``"callable"`` for a callable).
    params_ : dict
        Resolved parameters after :meth:`fit` (e.g. ``{"gamma": ...}`` for rbf).

    Examples
    --------
    The default Gaussian bandwidth: ``sigma`` is the mean pairwise distance of the
    training rows, here ``(5 + 10 + 5) / 3``, and ``gamma = 1 / (2 sigma^2)``:

    >>> import numpy as np
    >>> from mvkernels.kernels import ViewKernel
    >>> X = np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])
    >>> k = ViewKernel("rbf").fit(X)
    >>> round(k.params_["gamma"], 6)
    0.01125
    >>> k(X, X[:1]).round(4)  # exp(-gamma ||x_i - x_0||^2)
    array([[1.    ],
           [0.7548],
           [0.3247]])
    >>> ViewKernel("rbf", {"sigma": 5.0}).fit(X)(X[:2], X[:2]).round(4)
    array([[1.    , 0.6065],
           [0.6065, 1.    ]])
    >>> ViewKernel("poly", {"degree": 2}).fit(X).params_  # gamma = 1 / n_features
    {'gamma': 0.5, 'coef0': 1.0, 'degree': 2}
    """

    def __init__(self, kernel: str | Callable = "rbf", params: dict | None = None, view: int = 0):
        self.kernel = kernel
        self.params = dict(params or {})
        self.view = view
        #: the named kernel's family (:mod:`mvkernels._kernel_families`); None: a callable
        self.family: KernelFamily | None = None
        if callable(kernel):
            self.name = "callable"
        else:
            family = kernel_family(kernel)
            if family is None:
                raise ValueError(
                    f"view {view}: unknown kernel {kernel!r}; use one of "
                    f"{', '.join(KERNEL_NAMES)} or a callable"
                )
            self.family, self.name = family, family.name
            family.check_params(self.params, view)  # names and values
        self.params_: dict | None = None

    @property
    def precomputed(self) -> bool:
        return self.name == "precomputed"

    @property
    def open_bandwidth(self) -> bool:
        """Whether :meth:`fit` sets a data-driven default bandwidth (a named kernel with
        one, :attr:`~mvkernels._kernel_families.KernelFamily.bandwidth_distance`, and
        neither ``gamma`` nor ``sigma`` given)."""
        return self.family is not None and self.family.open_bandwidth(self.params)

    def fit(
        self,
        X: Any,
        random_state: Any = None,
        sample_weight: Any = None,
        precision: str = "single",
    ) -> ViewKernel:
        """Resolve data-dependent parameters (bandwidths) on training data ``X``.

        ``sample_weight`` (frequency weights) and ``precision`` go to
        :func:`mean_pairwise_distance` (default bandwidths of "rbf" and "laplacian").
        """
        if is_sparse(X):
            check_kernel_takes_sparse(self.name, self.view)
        p = dict(self.params)
        if self.family is not None:
            self.family.check_params(p, self.view)  # again: ``params`` may have been set

            def mean_distance(metric: str) -> float:
                """The default bandwidths' mean pairwise distance of the rows ``X``
                (``precision`` applies to Euclidean distances only)."""
                return mean_pairwise_distance(
                    X,
                    metric,
                    random_state=random_state,
                    precision=precision,
                    sample_weight=sample_weight,
                )

            p = self.family.resolve(p, X, self.view, mean_distance)
        self.params_ = p
        return self

    def _check_fitted(self) -> dict:
        if self.params_ is None:
            raise RuntimeError("ViewKernel.fit must be called before evaluating the kernel")
        return self.params_

    def __call__(self, X: np.ndarray, Z: np.ndarray) -> np.ndarray:
        """Kernel matrix ``(k(x_i, z_j))_{ij}`` of shape (n_x, n_z)."""
        p = self._check_fitted()
        if self.family is not None:
            return self.family.gram(X, Z, p)
        kernel = cast(Callable[..., Any], self.kernel)  # name == "callable" here
        K = np.asarray(kernel(X, Z, **p), dtype=np.float64)
        if K.shape != (X.shape[0], Z.shape[0]):
            raise ValueError(
                f"view {self.view}: the kernel callable returned shape {K.shape}, "
                f"expected ({X.shape[0]}, {Z.shape[0]})"
            )
        if not np.isfinite(K).all():
            raise ValueError(f"view {self.view}: the kernel callable returned NaN or infinity")
        return K

    def diag(self, X: np.ndarray) -> np.ndarray:
        """``k(x_i, x_i)`` for every row, without building the full matrix."""
        p = self._check_fitted()
        if self.family is not None:
            return self.family.diag(X, p)
        return np.array([self(X[i : i + 1], X[i : i + 1])[0, 0] for i in range(X.shape[0])])

    def __repr__(self) -> str:
        return f"ViewKernel({self.kernel!r}, params={self.params_ or self.params})"


class IndexedKernel:
    """A precomputed Gram matrix looked up by sample index, for cross-validation.

    ``IndexedKernel(K)(X, Z) = K[X[:, 0], Z[:, 0]]``: the view's "data" is the column
    of sample indices into ``K``. See the module docstring for the recipe.

    Parameters
    ----------
    K : array of shape (n, n)
        Gram matrix of the view over all samples (training and test).
    """

    def __init__(self, K: np.ndarray):
        K = np.asarray(K, dtype=np.float64)
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise ValueError(f"IndexedKernel needs a square Gram matrix, got shape {K.shape}")
        self.K = K

    def _index(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != 1:
            raise ValueError(
                f"IndexedKernel expects one column of sample indices, got shape {X.shape}"
            )
        idx = X[:, 0]
        if not np.all(idx == np.round(idx)) or idx.min() < 0 or idx.max() >= len(self.K):
            raise ValueError(f"IndexedKernel indices must be integers in [0, {len(self.K)})")
        return idx.astype(np.intp)

    def __call__(self, X: np.ndarray, Z: np.ndarray) -> np.ndarray:
        return self.K[np.ix_(self._index(X), self._index(Z))]


def _per_view(value: Any, n_views: int, name: str, what: str) -> list:
    """``value`` for every view, or a list/tuple of one per view (its length checked)."""
    if not isinstance(value, (list, tuple)):
        return [value] * n_views
    if len(value) != n_views:
        raise ValueError(f"{name} lists {len(value)} {what} but the data has {n_views} view(s)")
    return list(value)


def make_view_kernels(
    kernel: str | Callable | Sequence[str | Callable],
    kernel_params: dict | Sequence[dict | None] | None,
    n_views: int,
) -> list[ViewKernel]:
    """One unfitted :class:`ViewKernel` per view from estimator parameters.

    ``kernel`` is one name/callable for all views or a list with one per view;
    ``kernel_params`` is one dict for all views, a list of dicts (one per view), or None.

    Parameters
    ----------
    kernel : str, callable or list
        One kernel for every view or one per view.
    kernel_params : dict, list of dict or None
        One parameter dict for every view or one per view.
    n_views : int
        Number of views.

    Returns
    -------
    list of ViewKernel
    """
    kernels = _per_view(kernel, n_views, "kernel", "kernels")
    if kernel_params is None or isinstance(kernel_params, (dict, list, tuple)):
        params = _per_view(kernel_params, n_views, "kernel_params", "dicts")
    else:
        raise TypeError(
            "kernel_params must be a dict, a list of dicts or None, got "
            f"{type(kernel_params).__name__}"
        )
    out = []
    for i, (k, p) in enumerate(zip(kernels, params)):
        if p is not None and not isinstance(p, dict):
            raise TypeError(f"view {i}: kernel_params must be a dict, got {type(p).__name__}")
        out.append(ViewKernel(k, p, view=i))
    names = {vk.name == "precomputed" for vk in out}
    if len(names) > 1:
        raise ValueError(
            "mixing precomputed and non-precomputed kernels across views is not supported"
        )
    return out

"""Block Nystrom feature map and the NumPy/Dask dispatch of landmarks, moments and maps."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from numbers import Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from .._arrays import (
    MIN_OBSERVED_ROWS,
    as_aligned_views,
    check_known_lengths,
    is_dask_collection,
    views_kind,
)
from .._kernel_families import kernel_takes_sparse
from .._linalg import psd_sqrt
from .._packing import pack, unpack
from .._sparse import is_sparse
from .._threads import serial_blas
from .._validation import (
    check_precomputed_kernel,
    check_psd_gram,
    check_views,
    common_constraints,
    observed_mask,
    positive_int,
    validate_array_input,
)
from ..kernels import ViewKernel, make_view_kernels
from ._landmarks import (
    check_landmark_count,
    check_landmark_indices,
    default_chunk_size,
    is_index_landmarks,
    resolve_n_landmarks,
    select_landmarks_numpy,
)
from ._missing import CompletedOutputs, ConditionalViews, block_mask, missing_patterns
from ._moments import (
    FeatureMoments,
    _as_targets,
    numpy_feature_moments,
)
from ._storage import restored_landmarks, stored_landmarks

__all__ = [
    "select_landmarks",
    "sqrt_pinv_psd",
    "landmark_normalizer",
    "feature_moments",
    "map_views",
    "BlockNystrom",
    "fit_validated_views",
    "weight_missing_model",
]


def select_landmarks(
    Xs: Sequence[np.ndarray],
    kernels: Sequence[ViewKernel],
    n_landmarks: int,
    strategy: str = "uniform",
    random_state: Any = None,
) -> np.ndarray:
    """Indices of the landmark samples, shared by all views.

    Parameters
    ----------
    Xs : list of arrays
        Training views (or n x n Gram matrices for precomputed kernels).
    kernels : list of fitted ViewKernel
    n_landmarks : int
    strategy : {"uniform", "kmeans++", "leverage"}
        ``"uniform"``: a uniformly random subset (the paper: one random ordering shared
        by all views, first ``p`` kept; see :func:`~mvkernels.nystrom.uniform_indices`).
        ``"kmeans++"``: k-means++ seeding in the joint kernel feature space, with squared distance
        ``sum_l k_l(x, x) + k_l(z, z) - 2 k_l(x, z)``; spreads landmarks over the data
        and gives a smaller Nystrom error than uniform sampling at equal ``p``.
        ``"leverage"``: approximate ridge leverage-score sampling of the summed view
        kernels (recursive RLS sampling, :func:`~mvkernels.nystrom.leverage_indices`):
        ``O(n p)`` kernel evaluations, vectorised, never the ``n x n`` kernel.
    random_state : int, RandomState or None

    With Dask views nothing but the chosen rows reaches the client; ``"kmeans++"`` and
    ``"leverage"`` then run on a uniform subsample of ``max(20000, 50 p)`` rows when n is
    larger than that (see :func:`mvkernels.nystrom._dask.select_landmarks_dask`).

    Returns
    -------
    idx : ndarray of int, shape (n_landmarks,), sorted
    """
    rng = check_random_state(random_state)
    if views_kind(Xs) == "dask":
        from ._dask import select_landmarks_dask

        return select_landmarks_dask(Xs, kernels, n_landmarks, strategy, rng)
    return select_landmarks_numpy(Xs, kernels, n_landmarks, strategy, rng)


def sqrt_pinv_psd(W: np.ndarray, eig_floor: float = 1e-10) -> tuple[np.ndarray, int]:
    """Symmetric ``(W^+)^{1/2}`` of a PSD matrix and its numerical rank.

    Eigenvalues ``<= eig_floor * max eigenvalue`` count as zero.

    Parameters
    ----------
    W : ndarray of shape (p, p)
        Symmetric PSD matrix (the landmark kernel matrix).
    eig_floor : float, default=1e-10
        Relative eigenvalue floor.

    Returns
    -------
    S : ndarray of shape (p, p)
    rank : int
    """
    S, rank = psd_sqrt(W, inverse=True, eig_floor=eig_floor, what="landmark kernel matrix W")
    if rank == 0:
        raise ValueError("the landmark kernel matrix is zero or negative definite")
    return S, rank


def feature_moments(
    feature_fn: Callable[[list[np.ndarray]], np.ndarray],
    Xs: Any,
    Y: Any = None,
    chunk_size: int | None = None,
    *,
    symmetrize: bool = True,
    sample_weight: Any = None,
) -> FeatureMoments:
    """Sufficient statistics of any row-wise feature map, NumPy or Dask, in one pass.

    Parameters
    ----------
    feature_fn : callable
        ``feature_fn([X_1[rows], ..., X_v[rows]]) -> U[rows]`` of shape (rows, D): takes
        the list of per-view row blocks (NumPy) and returns their features (NumPy);
        row-wise. For Dask input it must be picklable (module-level function, bound
        method or callable object; ``cloudpickle`` also takes lambdas and closures).
    Xs : list of arrays (one per view) or one 2-D array (a single view)
        NumPy arrays, or Dask arrays chunked by rows (any view being Dask selects the
        Dask path; views may have different column chunking).
    Y : None or array of shape (n,) or (n, k), NumPy or Dask
    chunk_size : int or None
        Rows per chunk (NumPy) or per sub-chunk inside a Dask block; ``None``: chunks of
        ~32 MB of features (the width D is found from the first chunk).
    symmetrize : bool
        Symmetrise ``gram`` at the end (always done on the Dask path).
    sample_weight : None or array of shape (n,), NumPy or Dask
        Frequency weights of the rows (weighted moments, :class:`FeatureMoments`); on
        the Dask path each block's weights travel with its rows (the same single pass).

    Returns
    -------
    FeatureMoments
        ``gram = U^T U``, ``sum = U^T 1``, ``cross = U^T Y`` (None without Y), ``n_samples``.
        With Dask input the work runs on the Dask scheduler (a distributed ``Client``
        when one is active) and only these small arrays reach the client.
    """
    if not isinstance(Xs, list):
        Xs = list(Xs) if isinstance(Xs, tuple) else [Xs]
    n = Xs[0].shape[0]
    Y = _as_targets(Y, n)
    if views_kind(Xs) == "dask" or is_dask_collection(Y) or is_dask_collection(sample_weight):
        from ._dask import dask_feature_moments

        return dask_feature_moments(
            feature_fn, Xs, Y, chunk_size=chunk_size, sample_weight=sample_weight
        )
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
    return numpy_feature_moments(
        feature_fn, Xs, Y, chunk_size, symmetrize=symmetrize, sample_weight=sample_weight
    )


def map_views(
    fn: Callable[[list[np.ndarray]], np.ndarray],
    Xs: Sequence[Any],
    n_out: int | None = None,
    dtype: Any = np.float64,
) -> Any:
    """Apply a row-wise function to views: NumPy in, NumPy out; Dask in, lazy Dask out.

    ``fn([X_1, ..., X_v])`` returns an array with one row per sample: shape ``(rows,)``
    (``n_out=None``) or ``(rows, n_out)``. With NumPy views this is just ``fn(Xs)``; with
    Dask views (chunked by rows) it returns a lazy Dask array with those row chunks, ``fn``
    running block by block on the workers (see :func:`mvkernels.nystrom._dask.map_view_rows`).
    This is how ``transform``/``predict`` return Dask arrays on Dask input.

    Parameters
    ----------
    fn : callable
        Row-wise function of the list of views.
    Xs : list of arrays
        The views (all NumPy or all Dask, with the same row chunks).
    n_out : int or None, default=None
        Columns of the output (None: 1-D output).
    dtype : dtype, default=np.float64
        Output dtype (of the Dask array).

    Returns
    -------
    ndarray or Dask array
    """
    Xs = Xs if isinstance(Xs, list) else list(Xs)
    if views_kind(Xs) == "dask":
        from ._dask import map_view_rows

        return map_view_rows(fn, Xs, n_out, dtype)
    return fn(Xs)


def landmark_normalizer(
    kern: ViewKernel,
    Z: Any,
    eig_floor: float,
    *,
    W: np.ndarray | None = None,
    view: int = 0,
) -> tuple[np.ndarray, int]:
    """``S_l = (W_l^+)^{1/2}`` of one view from its landmark rows, and the rank of ``W_l``.

    ``W_l = k_l(Z, Z)`` (``W``: the landmark block of a precomputed Gram matrix instead).
    The Gram matrix and its eigendecomposition run on one BLAS thread whatever ``p``, so
    that the same landmark rows always give the same ``S_l`` bit for bit: a fit and every
    load of a pickled map (:meth:`BlockNystrom.__setstate__`, which recomputes ``S_l``
    instead of storing it) compute it the same way.

    Parameters
    ----------
    kern : ViewKernel
        The fitted kernel of the view.
    Z : ndarray or sparse matrix of shape (p, n_features)
        The landmark rows of the view (ignored when ``W`` is given).
    eig_floor : float
        Relative eigenvalue floor (:func:`sqrt_pinv_psd`).
    W : ndarray of shape (p, p) or None, default=None
        The landmark Gram matrix, when it is not computed from ``Z`` (precomputed kernels).
    view : int, default=0
        The view's index, for error messages.

    Returns
    -------
    S : ndarray of shape (p, p)
    rank : int
    """
    with serial_blas(int(Z.shape[0]) if W is None else int(W.shape[0]), max_size=None):
        if W is None:
            W = kern(Z, Z)
            if kern.name == "callable":  # like precomputed kernels: must be a valid Gram
                check_psd_gram(W, view, what="the kernel callable's landmark Gram matrix")
        return sqrt_pinv_psd(W, eig_floor)


def _recomputable(kern: ViewKernel) -> bool:
    """Whether ``S_l`` is a function of what a pickled map keeps: a named kernel family and
    the landmark rows (not a precomputed Gram matrix, not a user's callable)."""
    return not kern.precomputed and kern.name != "callable"


class BlockNystrom(TransformerMixin, BaseEstimator):
    """Block-wise Nystrom feature map with landmarks shared across views.

    Parameters
    ----------
    kernel : str, callable or list, default="rbf"
        One kernel for every view or one per view (see :mod:`mvkernels.kernels`).
    kernel_params : dict, list of dict or None
        Kernel parameters, one dict for all views or one per view.
    n_landmarks : int or float, default=0.1
        Number of landmark samples, or a fraction of the training samples in (0, 1].
    landmarks : {"uniform", "kmeans++", "leverage"} or array-like of int, default="uniform"
        Landmark strategy (:func:`select_landmarks`), or the landmarks themselves: row
        indices of the training data (distinct integers in ``[0, n_samples)``, in the
        order given). An index array fixes the number of landmarks: an integer
        ``n_landmarks`` that disagrees is a ValueError, a fraction is ignored. With
        missing views every listed row must be observed in every view (ValueError
        otherwise).
    eig_floor : float, default=1e-10
        Relative eigenvalue floor of the pseudo-inverse square root (:func:`sqrt_pinv_psd`).
    chunk_size : int or None
        Rows per chunk when computing features; ``None`` picks ~32 MB chunks.
    views : None or list
        How to cut a single 2-D input array into views (see :func:`mvkernels.check_views`).
    random_state : int, RandomState or None

    Attributes
    ----------
    kernels_ : list of ViewKernel
    landmark_indices_ : ndarray of shape (p,) or (n_views, p)
        The training rows used as landmarks (one row per view after a fit with missing
        views).
    landmarks_ : list of ndarray
        Landmark rows of each view (for precomputed kernels: the indices).
    normalizers_ : list of ndarray of shape (p, p)
        ``(W_l^+)^{1/2}`` per view.
    ranks_ : list of int
        Numerical rank of each ``W_l``.
    n_views_, n_landmarks_, n_features_view_ : fitted sizes.
    missing_model_ : ConditionalViews
        Mean and pairwise-complete covariance of the feature blocks, used to complete
        the features of samples with missing views (see below). Not set by a fit on
        complete Dask views, nor on a single view (nothing to complete from); not kept
        by an MVML estimator fitted on complete views (:meth:`compact_missing_model`);
        :meth:`fit_missing_model` computes it.

    See Also
    --------
    select_landmarks : The landmark strategies.
    mvkernels.MVMLRegressor : Multi-view metric learning on these features.
    sklearn.kernel_approximation.Nystroem : The single-view Nystrom map.

    Notes
    -----
    Missing views: a sample's missing view is a row of NaN in that view (at fit and at
    transform). The observed views of a sample get their feature blocks as usual; a
    missing view's block is replaced by its conditional expectation given the observed
    blocks, ``mu_M + Sigma_MO (Sigma_OO + eps I)^{-1} (z_O - mu_O)``, under the mean and
    covariance of the blocks estimated pairwise (block ``(a, b)`` from the rows where
    views a and b are both observed): :mod:`mvkernels.nystrom._missing`. With missing
    training rows, the landmarks of each view are drawn from the rows where that view is
    observed (``landmark_indices_`` then has one row per view; a view observed on fewer
    rows than ``n_landmarks_`` takes them all, repeated, and its block has that rank).
    Fitting computes these statistics in one pass over the data (Dask views: one more
    pass first finds each view's observed rows; a fit on complete Dask views skips the
    statistics, so it cannot complete missing views at transform). Assumes views are
    missing at random.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X1, X2 = rng.normal(size=(40, 3)), rng.normal(size=(40, 2))
    >>> from mvkernels import BlockNystrom
    >>> nys = BlockNystrom(n_landmarks=10, random_state=0).fit([X1, X2])
    >>> nys.transform([X1, X2]).shape  # 10 features per view
    (40, 20)

    Landmarks given as training rows, and pandas output:

    >>> nys = BlockNystrom(landmarks=[0, 5, 9], random_state=0).fit([X1, X2])
    >>> nys.landmark_indices_, nys.n_landmarks_
    (array([0, 5, 9]), 3)
    >>> nys.get_feature_names_out()[:4].tolist()
    ['blocknystrom_view0_0', 'blocknystrom_view0_1', 'blocknystrom_view0_2', 'blocknystrom_view1_0']
    """

    _parameter_constraints: dict = {
        **common_constraints(landmarks_optional=False),
        "eig_floor": [Interval(Real, 0, 1, closed="left")],
        "chunk_size": [positive_int(), None],
    }

    def __init__(
        self,
        kernel: str | Callable | Sequence = "rbf",
        kernel_params: dict | Sequence[dict] | None = None,
        n_landmarks: int | float = 0.1,
        landmarks: str = "uniform",
        eig_floor: float = 1e-10,
        chunk_size: int | None = None,
        views: Any = None,
        random_state: Any = None,
    ):
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.eig_floor = eig_floor
        self.chunk_size = chunk_size
        self.views = views
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = kernel_takes_sparse(self.kernel)
        return tags

    # -- pickling ----------------------------------------------------------
    def __getstate__(self) -> dict:
        """The state without the normalizers ``S_l`` that the landmark rows and kernels
        determine (:func:`landmark_normalizer`): ``v p^2`` numbers, the largest part of a
        map (``p = 1347`` landmarks of a 64-column view: 14.5 MB against 0.7 MB of
        landmark rows). Those of precomputed kernels and callables are kept. The
        landmark rows are stored compactly and exactly (:func:`~._storage.stored_landmarks`: a
        view whose rows are the other views' rows side by side, as the MVML estimators'
        joint view, by reference; values in the narrowest exact floating type), and the
        landmark indices in the narrowest integer type."""
        state = dict(super().__getstate__())  # object's state is the instance dict itself
        kernels, normalizers = state.get("kernels_"), state.get("normalizers_")
        if kernels is not None and normalizers is not None:
            state["normalizers_"] = [
                None if _recomputable(kern) else S for kern, S in zip(kernels, normalizers)
            ]
        if state.get("landmarks_") is not None:
            state["landmarks_"] = stored_landmarks(state["landmarks_"])
        if "landmark_indices_" in state:
            state["landmark_indices_"] = pack(state["landmark_indices_"])
        return state

    def __setstate__(self, state: dict) -> None:
        """Restore a pickled map: the landmark rows bit for bit as fitted
        (:func:`~._storage.restored_landmarks`), then each dropped ``S_l`` recomputed from them
        exactly as the fit computed it (one eigendecomposition of ``W_l`` per view, on one
        BLAS thread: bit for bit the fitted ``S_l``)."""
        if state.get("landmarks_") is not None:
            state = {**state, "landmarks_": restored_landmarks(state["landmarks_"])}
        if "landmark_indices_" in state:
            state = {**state, "landmark_indices_": unpack(state["landmark_indices_"])}
        super().__setstate__(state)
        normalizers = self.__dict__.get("normalizers_")
        if normalizers is not None and any(S is None for S in normalizers):
            self.normalizers_ = [
                landmark_normalizer(kern, Z, self.eig_floor, view=l)[0] if S is None else S
                for l, (kern, Z, S) in enumerate(zip(self.kernels_, self.landmarks_, normalizers))
            ]

    def __copy__(self) -> BlockNystrom:
        """A shallow copy that shares the normalizers (``copy.copy`` would go through
        :meth:`__getstate__` and recompute them)."""
        out = type(self).__new__(type(self))
        out.__dict__.update(self.__dict__)
        return out

    def __deepcopy__(self, memo: dict) -> BlockNystrom:
        """A deep copy of the state, normalizers included (no recomputation)."""
        out = type(self).__new__(type(self))
        memo[id(self)] = out
        out.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return out

    # -- fitting -----------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None) -> BlockNystrom:
        """Fit the kernels (bandwidths), choose landmarks, factor each ``W_l``.

        Every parameter is checked first (``_parameter_constraints``): e.g. ``eig_floor``
        must lie in [0, 1), ``chunk_size`` be None or an int >= 1, ``landmarks`` a known
        strategy, whatever the input.
        """
        check_known_lengths(X)
        X = validate_array_input(self, X, reset=True)
        Xs = check_views(
            X,
            views=self.views,
            feature_names=getattr(self, "feature_names_in_", None),
            allow_missing=True,
        )
        # an explicit count beside an index array must agree (the 0.1 default is a fraction)
        check_landmark_count(self.n_landmarks, self.landmarks, Xs[0].shape[0], fractions=False)
        self._fit_views(Xs)
        return self

    def _fit_views(
        self,
        Xs: list[np.ndarray],
        mask: Any = "compute",
        view_statistics: bool = True,
        defer_normalizers: bool = False,
    ) -> BlockNystrom:
        """Fit on validated views. ``mask``: the observed mask (:func:`observed_mask`;
        None: complete), computed here by default. ``view_statistics=False`` skips the pass
        of :attr:`missing_model_` on complete data (a caller then sets it from its own
        moments, :meth:`set_missing_model`). ``defer_normalizers=True`` (complete in-memory
        views, built-in kernels, no view statistics): the landmarks and kernels only, the
        normalisers ``S_l`` (one eigendecomposition a view) left to
        :meth:`_fit_normalizers`, which a caller that only needs the landmark Gram matrices
        (:meth:`_landmark_grams`) may skip; ``normalizers_`` is unset until then."""
        rng = check_random_state(self.random_state)
        kernels = make_view_kernels(self.kernel, self.kernel_params, len(Xs))
        dask_input = views_kind(Xs) == "dask"
        if isinstance(mask, str):  # Dask views: one pass over their blocks
            mask = observed_mask(Xs, min_observed=MIN_OBSERVED_ROWS)
        if mask is not None and kernels[0].precomputed:
            raise ValueError(
                "missing views (NaN rows) are not supported with kernel='precomputed'; "
                "pass the raw views (or complete Gram matrices)"
            )
        if dask_input:
            if kernels[0].precomputed:
                raise TypeError(
                    "kernel='precomputed' cannot be fitted on Dask input (the n x n Gram "
                    "matrices are checked in memory); pass the raw views, or NumPy Gram "
                    "matrices (test-time cross-kernels may be Dask arrays)"
                )
            Xs, _ = as_aligned_views(Xs)
        n = int(Xs[0].shape[0])
        if kernels[0].precomputed:
            Xs = [check_precomputed_kernel(K, i) for i, K in enumerate(Xs)]
        given = None
        if is_index_landmarks(self.landmarks):  # the array overrides n_landmarks
            given = check_landmark_indices(self.landmarks, n)
            p = int(given.size)
        else:
            p = resolve_n_landmarks(self.n_landmarks, n)
        if mask is not None:
            if given is None:
                p = min(p, int(mask.sum(axis=0).max()))
            idx, gathered = self._fit_missing_landmarks(Xs, kernels, mask, p, rng, given)
        elif given is not None:
            for Xv, kern in zip(Xs, kernels):
                kern.fit(Xv, random_state=rng)
            idx = given
            if dask_input:
                from ._dask import gather_rows

                gathered = gather_rows(Xs, idx)
        elif dask_input:  # bandwidth samples and landmark rows only, in one pass
            from ._dask import fit_kernels_and_landmarks

            idx, gathered = fit_kernels_and_landmarks(Xs, kernels, p, self.landmarks, rng)
        else:
            for Xv, kern in zip(Xs, kernels):
                kern.fit(Xv, random_state=rng)
            idx = select_landmarks(Xs, kernels, p, self.landmarks, rng)
        landmark_rows, grams = [], []
        for l, (Xv, kern) in enumerate(zip(Xs, kernels)):
            W = None
            if kern.precomputed:
                W = Xv[np.ix_(idx, idx)]
                landmark_rows.append(idx.copy())
            else:
                Z = gathered[l] if dask_input or mask is not None else Xv[idx]
                landmark_rows.append(Z.copy() if is_sparse(Z) else np.array(Z))
            grams.append(W)
        self.kernels_ = kernels
        self.landmark_indices_ = idx
        self.landmarks_ = landmark_rows
        deferred = (
            defer_normalizers
            and mask is None
            and not dask_input
            and not view_statistics
            and all(not k.precomputed and k.name != "callable" for k in kernels)
        )
        if deferred:  # unset (not fitted) until _fit_normalizers
            self.__dict__.pop("normalizers_", None)
            self.__dict__.pop("ranks_", None)
        else:
            self._fit_normalizers(grams)
        self.n_views_ = len(Xs)
        self.n_landmarks_ = p
        self.n_samples_fit_ = n
        self.n_features_view_ = [Xv.shape[1] for Xv in Xs]
        if len(Xs) > 1 and (mask is not None or (view_statistics and not dask_input)):
            self._fit_missing_model(Xs)
        return self

    def _landmark_grams(self) -> list[np.ndarray]:
        """The landmark Gram matrices ``W_l = k_l(Z_l, Z_l)`` of a map fitted with
        built-in kernels, computed as :func:`landmark_normalizer` does (one BLAS thread),
        so that :meth:`_fit_normalizers` on them gives the same ``S_l`` bit for bit."""
        out = []
        for kern, Z in zip(self.kernels_, self.landmarks_):
            with serial_blas(int(Z.shape[0]), max_size=None):
                out.append(kern(Z, Z))
        return out

    def _fit_normalizers(self, grams: list | None = None) -> None:
        """``normalizers_`` and ``ranks_`` (:func:`landmark_normalizer`), from the
        landmark Gram matrices ``grams`` where given (None entries: computed)."""
        normalizers, ranks = [], []
        for l, (kern, Z) in enumerate(zip(self.kernels_, self.landmarks_)):
            W = None if grams is None else grams[l]
            S, r = landmark_normalizer(kern, Z, self.eig_floor, W=W, view=l)
            normalizers.append(S)
            ranks.append(r)
        self.normalizers_ = normalizers
        self.ranks_ = ranks

    def _fit_missing_model(self, Xs: list) -> None:
        """:attr:`missing_model_` from one pass over validated training views."""
        mom = feature_moments(self._observed_features, Xs, chunk_size=self.chunk_size)
        self.missing_model_ = ConditionalViews.from_augmented(
            mom.gram, self.n_views_, self.n_landmarks_
        )

    def _fit_missing_landmarks(
        self,
        Xs: list,
        kernels: list,
        mask: np.ndarray,
        p: int,
        rng: Any,
        given: np.ndarray | None = None,
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Kernels fitted on, and ``p`` landmarks drawn from, the rows where each view is
        observed. Returns the (v, p) landmark indices and the landmark rows of each view.
        ``given``: landmark rows chosen by the user (validated indices), which must be
        observed in every view; they are the landmarks of every view.

        A view observed on ``r < p`` rows (e.g. the joint view, observed where every view
        is) takes all ``r`` rows, repeated to fill ``p``: its block has rank ``r`` and spans
        the same space as the ``r`` distinct landmarks (``W^+`` ignores repeats), while the
        other views keep their ``p`` landmarks."""
        dask_input = views_kind(Xs) == "dask"
        idx, rows = [], []
        for l, (Xv, kern) in enumerate(zip(Xs, kernels)):
            obs = np.flatnonzero(mask[:, l])
            Xo = Xv[obs]  # Dask: lazy, only the sampled rows are read
            kern.fit(Xo, random_state=rng)
            if given is not None:
                missing = given[~mask[given, l]]
                if missing.size:
                    raise ValueError(
                        f"landmarks: rows {missing[:5].tolist()} are missing in view {l} "
                        "(NaN rows); with missing views, landmark row indices must be rows "
                        "where every view is observed (or use a strategy, which draws each "
                        "view's landmarks from its observed rows)"
                    )
                sub = np.searchsorted(obs, given)
            elif obs.size <= p:
                sub = np.concatenate([np.arange(obs.size), np.arange(p - obs.size) % obs.size])
            elif dask_input:  # the same draws as below (k-means++: see select_landmarks)
                from ._dask import select_landmarks_dask

                sub = select_landmarks_dask([Xo], [kern], p, self.landmarks, rng)
            else:
                sub = select_landmarks_numpy([Xo], [kern], p, self.landmarks, rng)
            rows.append(Xo[sub])
            idx.append(obs[sub])
        if dask_input:  # the landmark rows of every view in one compute
            import dask

            rows = [np.asarray(R) for R in dask.compute(*rows)]
        return np.vstack(idx), rows

    def _observed_features(self, blocks: list[np.ndarray]) -> np.ndarray:
        """Rows ``[o_1 z_1, ..., o_v z_v, o_1, ..., o_v]``: feature blocks zeroed where the
        view is missing, then the observed indicators (their moments give the pairwise
        statistics, :func:`~mvkernels.nystrom._missing.pairwise_statistics`)."""
        mask = block_mask(blocks)
        if mask is None:
            mask = np.ones((blocks[0].shape[0], self.n_views_), dtype=bool)
        return np.hstack([self._masked_features(blocks, mask), mask])

    _observed_features.handles_missing_views = True  # type: ignore[attr-defined]

    def set_missing_model(self, model: ConditionalViews) -> None:
        """Set the statistics used to complete missing views (e.g. from an estimator's
        own moments of complete training features, :meth:`ConditionalViews.from_moments`)."""
        self.missing_model_ = model

    def fit_missing_model(self, X: Any) -> BlockNystrom:
        """Compute the statistics that complete missing views (:attr:`missing_model_`).

        For a map whose statistics were not kept (an MVML estimator fitted on complete
        views keeps only the compact form its predictions need,
        :meth:`compact_missing_model`) or never computed (a fit on complete Dask views):
        one pass over the training views ``X`` (NaN rows for missing views), the pass a
        fit makes.

        Parameters
        ----------
        X : list of arrays or one array cut by ``views``
            The training views (the rows the map was fitted on).

        Returns
        -------
        self : BlockNystrom

        Examples
        --------
        >>> import numpy as np
        >>> from mvkernels import MVMLRegressor
        >>> rng = np.random.default_rng(0)
        >>> Xs = [rng.normal(size=(60, 3)), rng.normal(size=(60, 2))]
        >>> reg = MVMLRegressor(n_landmarks=10, joint_view=False, random_state=0)
        >>> reg = reg.fit(Xs, Xs[0][:, 0])
        >>> hasattr(reg.nystrom_, "missing_model_")  # complete views: not kept
        False
        >>> Xt = [Xs[0][:3].copy(), Xs[1][:3]]
        >>> Xt[0][0] = np.nan  # view 0 of the first row missing
        >>> reg.nystrom_.fit_missing_model(Xs).transform(Xt).shape
        (3, 20)
        """
        self._fit_missing_model(self.check_views(X))
        return self

    def compact_missing_model(
        self, G: np.ndarray, always_missing: int | None = None
    ) -> CompletedOutputs | None:
        """Replace :attr:`missing_model_` by the outputs of the linear model ``u G^T``.

        Applies to statistics estimated on complete training rows (no view can be found
        missing in the training data) when the compact form
        (:meth:`ConditionalViews.completed_outputs`, ``|O| p x T`` numbers per pattern of
        observed views ``O``) is smaller than the ``v p x v p`` covariance: then the map
        keeps no statistics (``transform`` refuses rows with a missing view until
        :meth:`fit_missing_model`) and the returned form predicts those rows, through
        :meth:`linear_outputs`, as the statistics did (to rounding). Otherwise nothing
        changes.

        Parameters
        ----------
        G : ndarray of shape (T, v p)
            The coefficients of the model's ``T`` linear outputs.
        always_missing : int or None, default=None
            A view missing in every pattern that has a missing view (the joint view).

        Returns
        -------
        CompletedOutputs or None
            The compact form; None if the statistics are kept, absent, or if no row can
            have a missing view (a single view: such a row is refused).
        """
        model = getattr(self, "missing_model_", None)
        if model is None or not model.from_complete_rows:
            return None
        patterns = missing_patterns(self.n_views_, always_missing)
        T, p = int(np.shape(G)[0]), self.n_landmarks_
        size = 8 * int((patterns.sum(axis=1) * p + 1).sum()) * T
        if size >= model.nbytes:
            return None
        completed = model.completed_outputs(G, patterns) if len(patterns) else None
        del self.missing_model_
        return completed

    def linear_outputs(
        self, blocks: list[np.ndarray], G: np.ndarray, completed: CompletedOutputs | None = None
    ) -> np.ndarray:
        """``U G^T`` of the features ``U`` of per-view NumPy row blocks, shape (m, T).

        Rows with missing views: completed by :attr:`missing_model_` (:meth:`features`)
        or, given ``completed`` (:meth:`compact_missing_model`), by its compact form.
        Computed in chunks of rows (:meth:`iter_features`).
        """
        m, T = blocks[0].shape[0], G.shape[0]
        out = np.empty((m, T))
        if completed is None or self.kernels_[0].precomputed:
            for rows, U in self.iter_features(blocks):
                out[rows] = U @ G.T
            return out
        chunk = self._chunk()
        for start in range(0, m, chunk):
            rows = slice(start, min(m, start + chunk))
            part = [Xv[rows] for Xv in blocks]
            mask = block_mask(part, start)
            if mask is None:
                U = np.hstack([self.view_features(Xv, l) for l, Xv in enumerate(part)])
                out[rows] = U @ G.T
            else:
                U = self._masked_features(part, mask)
                out[rows] = completed.fill(U @ G.T, U, mask)
        return out

    # -- features ------------------------------------------------------------
    def check_views(self, X: Any) -> list[np.ndarray]:
        """Validate views for transform against what was seen in fit.

        Dask views are checked for their number and shapes only (NaN/inf are caught
        block by block when the features are computed).
        """
        check_is_fitted(self, "normalizers_")
        check_known_lengths(X)
        X = validate_array_input(self, X, reset=False)
        names = getattr(self, "feature_names_in_", None)
        if self.kernels_[0].precomputed:
            Xs = check_views(X, views=self.views, n_views=self.n_views_, feature_names=names)
            out = []
            for i, K in enumerate(Xs):
                if is_dask_collection(K):
                    if K.shape[1] != self.n_samples_fit_:
                        raise ValueError(
                            f"view {i}: precomputed test kernel must have one column per "
                            f"training sample ({self.n_samples_fit_}), got shape {K.shape}"
                        )
                    out.append(K)
                else:
                    out.append(
                        check_precomputed_kernel(K, i, n_train=self.n_samples_fit_, square=False)
                    )
            return out
        Xs = check_views(
            X,
            views=self.views,
            n_views=self.n_views_,
            n_features=self.n_features_view_,
            feature_names=names,
            allow_missing=True,
        )
        if views_kind(Xs) != "dask":
            observed_mask(Xs)  # samples with every view missing: refused here
        return Xs

    def kernel_block(self, Xv: np.ndarray, view: int) -> np.ndarray:
        """Kernel values ``k_l(X, landmarks)`` of one (validated, complete) view chunk,
        shape (rows, n_landmarks): the features before the normaliser ``S_l``."""
        if self.kernels_[view].precomputed:
            return Xv[:, self.landmark_indices_]
        return self.kernels_[view](Xv, self.landmarks_[view])

    def view_features(self, Xv: np.ndarray, view: int) -> np.ndarray:
        """Features ``U_l = k_l(X, landmarks) S_l`` of one (validated) view chunk."""
        return self.kernel_block(Xv, view) @ self.normalizers_[view]

    def features(self, blocks: list[np.ndarray]) -> np.ndarray:
        """Concatenated features ``(u_1, ..., u_v)`` of a list of per-view NumPy row blocks.

        The row-wise feature function handed to :func:`feature_moments` and
        :func:`map_views` (picklable: it ships the fitted map to Dask workers). Rows with
        missing views (NaN rows) get the conditional expectation of the missing blocks
        (:attr:`missing_model_`).
        """
        mask = None if self.kernels_[0].precomputed else block_mask(blocks)
        if mask is None:
            return np.hstack([self.view_features(Xv, l) for l, Xv in enumerate(blocks)])
        model = getattr(self, "missing_model_", None)
        if model is None:
            raise ValueError(
                "samples with missing views (NaN rows) cannot be completed: this map keeps "
                "no statistics of its training features (an MVML estimator fitted on "
                "complete views keeps only the compact form its predictions need, and a "
                "BlockNystrom fitted on complete Dask views does not compute them); call "
                "fit_missing_model(X_train) on the map with its training views first"
            )
        return model.complete(self._masked_features(blocks, mask), mask)

    features.handles_missing_views = True  # type: ignore[attr-defined]

    def _masked_features(self, blocks: list[np.ndarray], mask: np.ndarray) -> np.ndarray:
        """Feature blocks of the observed views, zeros where a view is missing."""
        p = self.n_landmarks_
        U = np.zeros((blocks[0].shape[0], self.n_views_ * p))
        for l, Xv in enumerate(blocks):
            obs = mask[:, l]
            if obs.any():
                U[obs, l * p : (l + 1) * p] = self.view_features(Xv[obs], l)
        return U

    def _chunk(self, chunk_size: int | None = None) -> int:
        return (
            chunk_size or self.chunk_size or default_chunk_size(self.n_views_ * self.n_landmarks_)
        )

    def iter_features(
        self, Xs: list[np.ndarray], chunk_size: int | None = None
    ) -> Iterator[tuple[slice, np.ndarray]]:
        """Yield ``(rows, U_chunk)`` with ``U_chunk`` of shape (rows, v p)."""
        n = Xs[0].shape[0]
        chunk = self._chunk(chunk_size)
        for start in range(0, n, chunk):
            rows = slice(start, min(n, start + chunk))
            yield rows, self.features([Xv[rows] for Xv in Xs])

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of the output features: ``blocknystrom_view{l}_{k}``.

        Feature ``k`` of view ``l`` is column ``l * n_landmarks_ + k`` of
        :meth:`transform` (the block of view ``l``, landmark direction ``k``).

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Ignored (checked against ``feature_names_in_`` when given); the output
            names do not depend on the input names.

        Returns
        -------
        ndarray of str, shape (n_views * n_landmarks,)
        """
        check_is_fitted(self, "normalizers_")
        _check_feature_names_in(self, input_features, generate_names=False)
        return np.asarray(
            [
                f"blocknystrom_view{l}_{k}"
                for l in range(self.n_views_)
                for k in range(self.n_landmarks_)
            ],
            dtype=object,
        )

    def transform(self, X: Any) -> Any:
        """Concatenated Nystrom features, shape (n_samples, n_views * n_landmarks).

        On Dask input: a lazy Dask array with the row chunks of the input.
        """
        Xs = self.check_views(X)
        D = self.n_views_ * self.n_landmarks_
        if views_kind(Xs) == "dask":
            return map_views(self.features, Xs, n_out=D)
        out = np.empty((Xs[0].shape[0], D))
        for rows, U in self.iter_features(Xs):
            out[rows] = U
        return out

    def moments(self, X: Any, Y: Any = None, sample_weight: Any = None) -> FeatureMoments:
        """Sufficient statistics ``sum u u^T``, ``sum u``, ``sum u y^T`` in one chunked pass.

        ``X`` and ``Y`` may be Dask arrays (chunked by rows): the pass is then a Dask
        reduction and only the small result comes back (:func:`feature_moments`).
        ``sample_weight`` (NumPy views): each row counted with its frequency weight.
        """
        Xs = self.check_views(X)
        Y = _as_targets(Y, Xs[0].shape[0])
        return feature_moments(
            self.features, Xs, Y, chunk_size=self._chunk(), sample_weight=sample_weight
        )


# ============================================================================ for estimators
def fit_validated_views(
    nys: BlockNystrom, Xs: list, mask: Any = "compute", defer_normalizers: bool = False
) -> BlockNystrom:
    """Fit ``nys`` on views its caller has validated (:func:`check_views`), without the
    pass of view statistics on complete views: the step of an estimator that owns a map
    and computes the feature moments itself (the MVML estimators and their
    cross-validated search).

    Parameters
    ----------
    nys : BlockNystrom
        The map, with its parameters set (not fitted).
    Xs : list of array-like
        The validated views (NumPy, SciPy sparse or Dask, rows aligned).
    mask : ndarray of bool, None or "compute", default="compute"
        The observed mask ``(n, v)`` of the views (:func:`observed_mask`; None: no
        missing rows), computed here by default. With missing rows the map keeps the
        completion statistics of the observed features (eq. 13-18), unweighted
        (:func:`weight_missing_model` weights them).
    defer_normalizers : bool, default=False
        Complete in-memory views only: leave the normalisers ``S_l`` (one
        eigendecomposition per view) to the first use of the features, for a caller that
        may need only the landmark Gram matrices (the cross-validated search's screen).

    Returns
    -------
    BlockNystrom
        ``nys``, fitted.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(20, 3)), rng.normal(size=(20, 2))]
    >>> nys = fit_validated_views(BlockNystrom(n_landmarks=5, random_state=0), Xs)
    >>> nys.transform(Xs).shape
    (20, 10)
    """
    return nys._fit_views(Xs, mask, view_statistics=False, defer_normalizers=defer_normalizers)


def weight_missing_model(nys: BlockNystrom, Xs: list, sample_weight: np.ndarray) -> None:
    """Set the completion statistics of the fitted map ``nys`` (views with missing rows,
    eq. 13-18) from the moments of the observed features of ``Xs`` weighted by
    ``sample_weight`` (the map's own are unweighted), as a weighted loss sees the rows.

    Parameters
    ----------
    nys : BlockNystrom
        A map fitted on ``Xs`` (:func:`fit_validated_views`).
    Xs : list of array-like
        The training views, NaN rows where a view is missing.
    sample_weight : ndarray of shape (n_samples,)
        The rows' weights.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(20, 3)), rng.normal(size=(20, 2))]
    >>> Xs[1][:4] = np.nan  # view 1 missing on 4 rows
    >>> nys = fit_validated_views(BlockNystrom(n_landmarks=5, random_state=0), Xs)
    >>> weight_missing_model(nys, Xs, np.linspace(0.5, 2.0, 20))
    >>> bool(np.isfinite(nys.transform(Xs)).all())
    True
    """
    gram = feature_moments(
        nys._observed_features, Xs, chunk_size=nys.chunk_size, sample_weight=sample_weight
    ).gram
    nys.set_missing_model(
        ConditionalViews.from_augmented(gram, int(nys.n_views_), int(nys.n_landmarks_))
    )

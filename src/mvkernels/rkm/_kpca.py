"""Multi-view kernel PCA (restricted kernel machine): training and inference."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any, ClassVar, cast

import numpy as np
import scipy.linalg
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._arrays import MIN_OBSERVED_ROWS, is_dask_collection, observed_rows, views_kind
from .._kernel_families import kernel_takes_sparse
from .._linalg import psd_sqrt, robust_eigh
from .._linalg import sym as _sym
from .._sparse import is_sparse
from .._threads import serial_blas
from .._validation import (
    _check_one_view,
    check_precomputed_kernel,
    check_psd_gram,
    check_views,
    observed_mask,
    validate_array_input,
)
from ..kernels import make_view_kernels, subsample_indices
from ..nystrom import feature_moments, map_views
from ..stiefel import STIEFEL_OPTIMIZERS, StiefelResult, stiefel_trace_max
from ._incomplete import infer_hidden, pairwise_moments
from ._inference import MAX_ROWS, RidgeChoice, choose_ridge
from ._maps import (
    _center_gram,
    _check_rank,
    _FeatureStack,
    _per_view,
    _PrimalHidden,
    _sign_flip,
    _top_eigh,
    _top_eigh_range,
    _ViewMap,
)
from ._stream import (
    _ChunkStream,
    _ridge_rows_dask,
    _ridge_rows_stream,
    _stream_mean,
)

__all__ = ["SOLVERS", "FEATURE_KINDS", "MultiViewKPCA"]

SOLVERS = ("auto", "primal-eig", "dual-eig", "primal-stiefel", "dual-stiefel")
FEATURE_KINDS = ("kernel", "identity", "rff", "nystrom")

#: eigenvalues of the inference matrix (eq. 15/16) at or below this fraction of the
#: largest are treated as zero (pseudo-inverse on the well-conditioned part)
INFERENCE_RCOND = 1e-10


# --------------------------------------------------------------------------- estimator
#: parameter constraints of the Stiefel training shared by the RKM estimators
STIEFEL_TRAINING_CONSTRAINTS: dict[str, list] = {
    "rotate": ["boolean"],
    "rescale": ["boolean"],
    "learning_rate": [Interval(Real, 0, None, closed="neither")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "max_iter": [Interval(Integral, 1, None, closed="left"), None],
    "optimizer": [StrOptions(set(STIEFEL_OPTIMIZERS))],
    "verbose": ["verbose"],
}


class MultiViewKPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Multi-view restricted kernel machine / kernel PCA (Achten et al. 2023).

    Parameters
    ----------
    n_components : int, default=2
        Number of hidden units ``s``.
    solver : {"auto", "primal-eig", "dual-eig", "primal-stiefel", "dual-stiefel"}
        Training algorithm (Algorithms 1-4); ``"auto"`` follows the paper's flowchart.
    kernel : str, callable or list, default="linear"
        Kernel of each view (one for all or one per view), see :mod:`mvkernels.kernels`.
    kernel_params : dict, list of dict or None
    features : None, str or list, default=None
        Feature map of each view: ``"kernel"`` (implicit: dual solvers only), ``"identity"``
        (explicit map of the linear kernel), ``"rff"`` (random Fourier features of the rbf
        kernel, scikit-learn ``RBFSampler``), ``"nystrom"``. ``None``: ``"identity"`` for a
        linear kernel, ``"kernel"`` otherwise.
    n_features : int or list, default=1000
        Number of features of ``"rff"`` / ``"nystrom"`` views (one for all or one per view).
    rotate : bool, default=True
        After Stiefel training, rotate to diagonal Sigma (Alg. 3/4, steps 7-9).
    rescale : bool, default=True
        Primal rescaling ``W = U Sigma^{1/2}`` (Alg. 1 step 6). ``False`` reproduces the
        paper's ablation (Fig. 7): ``W = U``, which breaks primal-dual equivalence and
        inference; for study only.
    learning_rate : float, default=0.5
        Cayley Adam step size (``optimizer="cayley-adam"`` only).
    tol : float, default=1e-12
        Stiefel stopping rule: relative Riemannian gradient
        ``||grad f||_F / ||A X||_F <= tol`` of eq. (8) / (12).
    max_iter : int or None, default=None
        Stiefel iteration cap (a ``ConvergenceWarning`` when hit); ``None``: 1000 for
        ``"lobpcg"``, 100000 for ``"cayley-adam"``.
    optimizer : {"lobpcg", "cayley-adam"}, default="lobpcg"
        Stiefel optimiser of ``"primal-stiefel"`` / ``"dual-stiefel"``: block Riemannian
        conjugate gradient with an exact Rayleigh-Ritz line search
        (:func:`mvkernels.stiefel.lobpcg_trace_max`), or the paper's Cayley Adam
        (:func:`mvkernels.stiefel.cayley_adam`).
    verbose : int, default=0
        If > 0, Stiefel training prints the iteration, objective and relative Riemannian
        gradient norm.
    n_neighbors : int, default=10
        Neighbours of the kernel-smoother pre-image of a missing non-identity view.
    inference_ridge : "auto" or float >= 0, default="auto"
        Ridge ``alpha`` of the missing-view inference, ``h* = (A + alpha I)^{-1} r`` with
        ``A`` the matrix of eq. (15)/(16). ``"auto"``: the value of a grid (0, 1e-10 to
        1e2 times the largest eigenvalue of ``A``, and infinity, i.e. the training mean)
        with the smallest reconstruction error of the missing views on up to 2000
        training rows; ``infer_views`` warns if the training mean wins. ``0``: the
        paper's eq. (15)/(16) (a pseudo-inverse, with a warning, when ``A`` is
        singular). Dask- and stream-fitted models keep only those (at most 2000, a
        seeded uniform sample) training rows, gathered at fit for this choice.
    chunk_size : int or None
        Rows per chunk of the Dask feature reduction.
    views : None or list
        How to cut a single 2-D array into views (:func:`mvkernels.check_views`).
    random_state : int, RandomState or None

    Attributes
    ----------
    solver_ : str
        The algorithm used (``"auto"`` resolved).
    hidden_, components_ : ndarray (n, s)
        Hidden units ``H`` of the training points (the paper's latent components);
        ``components_`` is the same array. A lazy Dask array after a Dask fit.
    sigma_ : ndarray (s, s)
        Sigma (diagonal after eig or rotation).
    eigenvalues_ : ndarray (s,)
        Eigenvalues of ``sigma_``, descending (the top eigenvalues of C and K).
    U_ : ndarray (d, s) or None
        Orthonormal primal directions (explicit features only).
    W_ : list of ndarray (d_v, s) or None
        Primal weights per view (explicit features only): eq. (9) or eq. (5).
    feature_means_ : list of ndarray or None
        Training feature means per view (explicit features).
    n_views_, n_samples_, n_features_view_ : sizes seen in fit.
    stiefel_result_ : StiefelResult or None
    n_iter_ : int
        Stiefel iterations (1 for an eigendecomposition).
    n_features_in_ : int
        Columns of a single-array input (not set for a list of views).
    See Also
    --------
    RKMForecaster : Time-series forecasting with a two-view RKM.
    mvkernels.stiefel.stiefel_trace_max : The Stiefel solvers.
    sklearn.decomposition.KernelPCA : Single-view kernel PCA.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X1, X2 = rng.normal(size=(40, 3)), rng.normal(size=(40, 2))
    >>> from mvkernels import MultiViewKPCA
    >>> kpca = MultiViewKPCA(n_components=2).fit([X1, X2])
    >>> kpca.transform([X1, X2]).shape
    (40, 2)
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions(set(SOLVERS))],
        "kernel": [str, callable, list, tuple],
        "kernel_params": [dict, list, tuple, None],
        "features": [StrOptions(set(FEATURE_KINDS)), list, tuple, None],
        "n_features": [Interval(Integral, 1, None, closed="left"), list, tuple],
        **STIEFEL_TRAINING_CONSTRAINTS,
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "inference_ridge": [StrOptions({"auto"}), Interval(Real, 0, None, closed="left")],
        "chunk_size": [Interval(Integral, 1, None, closed="left"), None],
        "views": ["array-like", None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components: int = 2,
        solver: str = "auto",
        kernel: Any = "linear",
        kernel_params: Any = None,
        features: Any = None,
        n_features: Any = 1000,
        rotate: bool = True,
        rescale: bool = True,
        learning_rate: float = 0.5,
        tol: float = 1e-12,
        max_iter: int | None = None,
        optimizer: str = "lobpcg",
        verbose: int = 0,
        n_neighbors: int = 10,
        inference_ridge: Any = "auto",
        chunk_size: int | None = None,
        views: Any = None,
        random_state: Any = None,
    ):
        self.n_components = n_components
        self.solver = solver
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.features = features
        self.n_features = n_features
        self.rotate = rotate
        self.rescale = rescale
        self.learning_rate = learning_rate
        self.tol = tol
        self.max_iter = max_iter
        self.optimizer = optimizer
        self.verbose = verbose
        self.n_neighbors = n_neighbors
        self.inference_ridge = inference_ridge
        self.chunk_size = chunk_size
        self.views = views
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        kernels = self.kernel if isinstance(self.kernel, (list, tuple)) else [self.kernel]
        feats = self.features if isinstance(self.features, (list, tuple)) else [self.features]
        identity = any(f == "identity" for f in feats) or (
            any(f is None for f in feats) and any(k == "linear" for k in kernels)
        )
        tags.input_tags.sparse = kernel_takes_sparse(self.kernel) and not identity
        return tags

    @property
    def _n_features_out(self) -> int:
        """Output width of :meth:`transform` (for ``get_feature_names_out``)."""
        return int(self.sigma_.shape[0])

    # -- setup --------------------------------------------------------------
    def _make_maps(self, n_views: int) -> list[_ViewMap]:
        kernels = make_view_kernels(self.kernel, self.kernel_params, n_views)
        feats = _per_view(self.features, n_views, "features")
        nfeat = _per_view(self.n_features, n_views, "n_features")
        maps = []
        for l, (k, f, D) in enumerate(zip(kernels, feats, nfeat)):
            if f is None:
                f = "identity" if k.name == "linear" else "kernel"
            if f not in FEATURE_KINDS:
                raise ValueError(f"view {l}: unknown features {f!r}; use one of {FEATURE_KINDS}")
            maps.append(_ViewMap(f, k, D, l))
        return maps

    def _resolve_solver(self, maps: list[_ViewMap], n: int, dask_input: bool) -> str:
        implicit = [m.view for m in maps if not m.explicit]
        solver = self.solver
        if solver == "auto":
            if implicit:
                solver = "dual-eig"
            else:
                d = sum(m.n_out for m in maps)
                solver = "primal-eig" if d < n else "dual-eig"
                if dask_input:
                    solver = "primal-eig"
        if solver.startswith("primal") and implicit:
            raise ValueError(
                f"solver={solver!r} needs explicit feature maps, but view(s) {implicit} use an "
                "implicit kernel; use a dual solver or features='rff'/'nystrom'/'identity'"
            )
        if dask_input and solver.startswith("dual"):
            raise ValueError(
                f"solver={solver!r} needs the n x n kernel matrix in memory and does not take "
                "Dask input; use solver='primal-eig' or 'primal-stiefel' with explicit "
                "features ('identity', 'rff', 'nystrom'), or compute the views first"
            )
        return solver

    def _check_input(self, X: Any, fit: bool) -> list[Any]:
        X = validate_array_input(self, X, reset=fit)  # sklearn checks on one array
        if fit:
            Xs = check_views(X, views=self.views, ensure_min_samples=2, allow_missing=True)
        else:
            Xs = check_views(
                X,
                views=self.views,
                n_views=self.n_views_,
                n_features=self.n_features_view_,
                allow_missing=True,
            )
        if views_kind(Xs) == "dask":
            from ..nystrom._dask import as_aligned_views

            Xs, _ = as_aligned_views(Xs)
        return Xs

    # -- fit ------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None) -> MultiViewKPCA:
        """Train the model on the views ``X`` (list of arrays or one array + ``views``).

        ``y`` is ignored (a target is simply another view).
        """
        Xs = self._check_input(X, fit=True)
        dask_input = views_kind(Xs) == "dask"
        n = int(Xs[0].shape[0])
        s = int(self.n_components)
        rng = check_random_state(self.random_state)
        maps = self._make_maps(len(Xs))
        mask = None if dask_input else observed_mask(Xs, min_observed=MIN_OBSERVED_ROWS)
        if maps[0].kernel.precomputed:
            if dask_input:
                raise TypeError("kernel='precomputed' does not take Dask input")
            Xs = [check_precomputed_kernel(K, i) for i, K in enumerate(Xs)]
        for l, (m, Xv) in enumerate(zip(maps, Xs)):
            m.fit(Xv if mask is None else Xv[mask[:, l]], rng)
        solver = self._resolve_solver(maps, n, dask_input)
        if mask is not None and not solver.startswith("primal"):
            raise ValueError(
                f"missing views (NaN rows) need a primal solver with explicit feature maps "
                f"(features='identity', 'rff' or 'nystrom'), got solver={solver!r}"
            )
        self.n_views_ = len(Xs)
        self.n_samples_ = n
        self.n_features_view_ = [int(V.shape[1]) for V in Xs]
        self.solver_ = solver
        self._maps = maps
        self.stiefel_result_: StiefelResult | None = None
        self.n_iter_ = 1
        self._factor_cache: dict[tuple, Any] = {}
        # serial BLAS below ~2000 rows/features: threaded OpenBLAS QR/eigh on shared cores
        # was measured 70x slower (SantaFe QR: 30 s threaded vs 0.4 s serial)
        size = n if solver.startswith("dual") else min(n, sum(m.n_out for m in maps))
        with serial_blas(size):
            if solver.startswith("primal"):
                self._fit_primal(Xs, maps, s, rng, dask_input, mask)
            else:
                self._fit_dual(Xs, maps, s, rng)
            if mask is not None:  # eq. (15) for the rows with missing views
                self.hidden_ = self.components_ = infer_hidden(self, Xs, mask)
        return self

    def _max_iter(self) -> int:
        if self.max_iter is not None:
            return int(self.max_iter)
        return 1000 if self.optimizer == "lobpcg" else 100_000

    def _stiefel(self, A: Any, n: int, s: int, rng: np.random.RandomState) -> np.ndarray:
        """Eq. (8) / (12) on the Stiefel manifold; ``A`` a matrix or ``Z -> A Z``."""
        kw: dict[str, Any] = dict(tol=self.tol, max_iter=self._max_iter(), verbose=self.verbose)
        if self.optimizer == "cayley-adam":
            kw["lr"] = self.learning_rate
        res = stiefel_trace_max(A, s, random_state=rng, n=n, optimizer=self.optimizer, **kw)
        self.stiefel_result_ = res
        self.n_iter_ = max(int(res.n_iter), 1)
        if not res.converged:
            warnings.warn(
                f"Stiefel optimisation ({self.optimizer}) stopped after "
                f"max_iter={self._max_iter()} iterations with relative Riemannian gradient "
                f"{res.grad_norm:.2e} > tol={self.tol:g}",
                ConvergenceWarning,
                stacklevel=3,
            )
        return res.X

    def _rotation(self, Sigma: np.ndarray, what: str, s: int) -> tuple[np.ndarray, np.ndarray]:
        lam, O = robust_eigh(Sigma, what="Sigma")
        lam, O = lam[::-1], O[:, ::-1]
        _check_rank(lam, s, what)
        return lam, O

    def _stiefel_solution(
        self,
        M: Any,
        size: int,
        s: int,
        rng: np.random.RandomState,
        what: str,
        quadratic: Any = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """Stiefel basis ``B`` of ``M`` (eq. 8 / 12), ``Sigma = B^T M B`` (eq. 9 / 13), its
        eigenvalues and, with ``rotate``, the rotation ``O`` (already applied to ``B`` and
        ``Sigma``; None without ``rotate``). ``M``: a matrix, or ``Z -> M Z`` with
        ``quadratic``: ``B -> B^T M B``."""
        B = self._stiefel(M, size, s, rng)
        Sigma = _sym(quadratic(B) if quadratic is not None else B.T @ M @ B)
        lam, O = self._rotation(Sigma, what, s)
        if not self.rotate:
            return B, Sigma, lam, None
        return B @ O, np.diag(lam), lam, O

    def _fit_primal(
        self,
        Xs: list,
        maps: list[_ViewMap],
        s: int,
        rng: np.random.RandomState,
        dask_input: bool,
        mask: np.ndarray | None = None,
    ) -> None:
        stack = _FeatureStack(maps)
        dims = [m.n_out for m in maps]
        d = sum(dims)
        if s > d:
            raise ValueError(f"n_components={s} exceeds the feature dimension d={d}")
        n = int(Xs[0].shape[0])
        if mask is not None:  # missing views: pairwise-complete C (see _incomplete)
            mean, C, Phi = pairwise_moments(stack, Xs, mask, dims)
        elif dask_input:
            mom = feature_moments(stack, Xs, chunk_size=self.chunk_size)
            mean = mom.mean
            C = mom.centered_gram()
            Phi = None
        else:
            Phi = stack(Xs)
            mean = Phi.mean(axis=0)
            Phi = Phi - mean
            # eq. (10); not formed when d > n (range-restricted eigh, or C Z = Phi^T (Phi Z))
            C = None if d > n else _sym(Phi.T @ Phi)
        if self.solver_ == "primal-eig":
            if C is None:
                lam, U = _top_eigh_range(Phi, s)  # eq. (11), exact, O(d n^2)
            else:
                lam, U = _top_eigh(C, s, "covariance C")  # eq. (11)
            Sigma = np.diag(lam)
        else:
            if C is None:  # d > n: C Z = Phi^T (Phi Z)

                def apply_C(Z: np.ndarray, Phi: np.ndarray = Phi) -> np.ndarray:
                    return Phi.T @ (Phi @ Z)

                def quadratic(U: np.ndarray, Phi: np.ndarray = Phi) -> np.ndarray:
                    PU = Phi @ U
                    return PU.T @ PU

                U, Sigma, lam, _ = self._stiefel_solution(
                    apply_C, d, s, rng, "covariance C", quadratic
                )
            else:
                U, Sigma, lam, _ = self._stiefel_solution(C, d, s, rng, "covariance C")
        H = None if Phi is None else (lambda B: Phi @ B.T)
        self._primal_tail(U, Sigma, lam, stack, mean, dims, H, Xs, dask_input)

    def _primal_tail(
        self,
        U: np.ndarray,
        Sigma: np.ndarray,
        lam: np.ndarray,
        stack: _FeatureStack,
        mean: np.ndarray,
        dims: list[int],
        hidden: Any,
        Xs: Any,
        dask_input: bool,
    ) -> None:
        """W (rescaling), hidden units (eq. 6), sign convention and fitted attributes.

        ``hidden(B)`` returns ``Phi B^T`` for ``B = Sigma^{-1} W^T`` (None on Dask input).
        """
        s = U.shape[1]
        if self.rescale:
            root = np.diag(np.sqrt(np.diag(Sigma))) if self._diag(Sigma) else psd_sqrt(Sigma)[0]
            W = U @ root  # W = U Sigma^{1/2} (Alg. 1 step 6)
        else:
            W = U.copy()  # ablation: no step 6
        B = scipy.linalg.solve(Sigma, W.T, assume_a="sym")  # Sigma^{-1} W^T, for eq. (6)
        if hidden is not None:
            H = hidden(B)  # eq. (6)
            D = _sign_flip(H)
            H = H * D
        else:
            D = self._dask_signs(Xs, stack, mean, B)
            H = None
        U, W, B = U * D, W * D, B * D[:, None]
        Sigma = D[:, None] * Sigma * D[None, :]
        self.U_ = U
        self.sigma_ = Sigma
        self.eigenvalues_ = lam
        bounds = np.cumsum([0] + dims)
        self.W_ = [W[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        self.feature_means_ = [mean[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        self._hidden_fn = _PrimalHidden(stack, mean, B)
        # training data for pre-images of non-identity views (not kept from Dask / streams)
        self._X_fit = None if (dask_input or Xs is None) else Xs
        # Dask: the rows that score the inference ridge (streams: set by fit_stream)
        self._ridge_rows = _ridge_rows_dask(Xs, self.n_samples_) if dask_input else None
        if H is None:
            H = map_views(self._hidden_fn, Xs, n_out=s)
        self.hidden_ = H
        self.components_ = H

    # -- mini-batch (streamed) primal Stiefel training ---------------------------------
    def fit_stream(self, chunks: Any, y: Any = None) -> MultiViewKPCA:
        """Primal Stiefel training (Alg. 3) on a stream of row chunks, never all in memory.

        Parameters
        ----------
        chunks : callable
            ``chunks()`` returns a fresh iterable of chunks; each chunk is a list of views
            (aligned rows, the same views and widths in every chunk), or one 2-D array cut
            by ``views``. It is called once for the feature means, once per Stiefel
            iteration (``C Z = sum_chunks (Phi_c - mean)^T ((Phi_c - mean) Z)``, eq. 8) and
            once for ``Phi U`` (eq. 9 and the hidden units, eq. 6).
        y : ignored

        Returns
        -------
        self

        Notes
        -----
        Only ``solver="primal-stiefel"`` (or ``"auto"``) with explicit feature maps
        (``"identity"``, ``"rff"``, ``"nystrom"``). Data-dependent parts of the feature
        maps (Nystrom landmarks, a default rbf bandwidth) are fitted on the first chunk;
        with ``identity`` maps and RFF with a given bandwidth the result equals
        :meth:`fit` on the concatenated data. Memory: one chunk's features, ``d x b``
        Stiefel blocks and the ``n x s`` hidden units. The model keeps no training data
        but the seeded sample of at most 2000 rows that chooses the inference ridge (one
        more pass), so it infers identity views only (like a Dask fit).
        """
        self._validate_params()
        self._check_stream_solver()
        rng = check_random_state(self.random_state)
        stream = _ChunkStream(chunks, self.views)
        it = iter(stream())
        try:
            first = next(it)
        except StopIteration:
            raise ValueError("the chunk stream is empty") from None
        maps = self._stream_maps(first, rng)
        stack = _FeatureStack(maps)
        dims = [m.n_out for m in maps]
        d, s = sum(dims), int(self.n_components)
        if s > d:
            raise ValueError(f"n_components={s} exceeds the feature dimension d={d}")
        n, mean = _stream_mean(stack, [first, *it], d)  # pass 1

        def apply_C(Z: np.ndarray) -> np.ndarray:  # C Z, one pass over the chunks
            out = np.zeros((d, Z.shape[1]))
            for Cs in stream():
                P = stack(Cs) - mean
                out += P.T @ (P @ Z)
            return out

        self.n_views_ = len(first)
        self.n_samples_ = n
        self.n_features_view_ = list(stream.widths)
        self.solver_ = "primal-stiefel"
        self._maps = maps
        self.stiefel_result_ = None
        self.n_iter_ = 1
        self._factor_cache = {}
        with serial_blas(min(n, d)):
            U = self._stiefel(apply_C, d, s, rng)  # eq. (8)
            PU = np.vstack([(stack(Cs) - mean) @ U for Cs in stream()])
            Sigma = _sym(PU.T @ PU)  # eq. (9)
            lam, O = self._rotation(Sigma, "covariance C", s)
            if self.rotate:
                U, Sigma, PU = U @ O, np.diag(lam), PU @ O
            self._primal_tail(
                U, Sigma, lam, stack, mean, dims, lambda B: PU @ (U.T @ B.T), None, False
            )
        self._ridge_rows = _ridge_rows_stream(stream(), n)  # one more pass, no features
        return self

    def _check_stream_solver(self) -> None:
        if self.solver not in ("auto", "primal-stiefel"):
            raise ValueError(
                f"fit_stream trains with solver='primal-stiefel' (Alg. 3); "
                f"got solver={self.solver!r}"
            )

    def _stream_maps(self, first: list, rng: np.random.RandomState) -> list[_ViewMap]:
        """Feature maps fitted on the first chunk; explicit maps only."""
        maps = self._make_maps(len(first))
        if maps[0].kernel.precomputed:
            raise ValueError("fit_stream needs feature maps, not precomputed kernels")
        for m, Xv in zip(maps, first):
            m.fit(Xv, rng)
        implicit = [m.view for m in maps if not m.explicit]
        if implicit:
            raise ValueError(
                f"fit_stream needs explicit feature maps, but view(s) {implicit} "
                "use an implicit kernel; use features='rff'/'nystrom'/'identity'"
            )
        return maps

    @staticmethod
    def _diag(S: np.ndarray) -> bool:
        return bool(np.all(S == np.diag(np.diag(S))))

    def _dask_signs(
        self, Xs: list, stack: _FeatureStack, mean: np.ndarray, B: np.ndarray
    ) -> np.ndarray:
        """Sign convention on Dask input: one pass for each column's max-|H| entry."""
        import dask

        H = map_views(_PrimalHidden(stack, mean, B), Xs, n_out=B.shape[0])
        hi, lo = dask.compute(H.max(axis=0), H.min(axis=0))
        signs = np.where(hi >= -lo, 1.0, -1.0)
        return signs

    def _fit_dual(self, Xs: list, maps: list[_ViewMap], s: int, rng: np.random.RandomState) -> None:
        n = Xs[0].shape[0]
        if s >= n:
            raise ValueError(f"n_components={s} must be smaller than n_samples={n}")
        F_train, Kc, rows, grands = [], [], [], []
        for m, Xv in zip(maps, Xs):
            if m.explicit:
                F = m.features(Xv)
                K = F @ F.T
            else:
                F = None
                K = Xv if m.kernel.precomputed else m.kernel(Xv, Xv)
                if m.kernel.name == "callable":  # not a rank problem: say what is wrong
                    check_psd_gram(K, m.view, what="the kernel callable's training Gram matrix")
            Kcv, row, grand = _center_gram(K)
            F_train.append(F)
            Kc.append(Kcv)
            rows.append(row)
            grands.append(grand)
        Ksum = _sym(cast(np.ndarray, sum(Kc)))  # eq. (14): sum_v M K_v M
        if self.solver_ == "dual-eig":
            lam, H = _top_eigh(Ksum, s, "kernel matrix K")
            Sigma = np.diag(lam)
        else:
            H, Sigma, lam, _ = self._stiefel_solution(Ksum, n, s, rng, "kernel matrix K")
        D = _sign_flip(H)
        H = H * D
        Sigma = D[:, None] * Sigma * D[None, :]
        self.sigma_ = Sigma
        self.eigenvalues_ = lam
        self.hidden_ = H
        self.components_ = H
        self.U_ = None
        self._X_fit = [None if m.kernel.precomputed else Xv for m, Xv in zip(maps, Xs)]
        self._F_train = F_train
        self._Kc = Kc
        self._K_rows = rows
        self._K_grand = grands
        if all(m.explicit for m in maps):
            means = [F.mean(axis=0) for F in F_train]
            self.feature_means_ = means
            self.W_ = [(F - mu).T @ H for F, mu in zip(F_train, means)]  # eq. (5)
        else:
            self.feature_means_ = None
            self.W_ = None

    # -- inference --------------------------------------------------------------
    def _is_dual(self) -> bool:
        return self.solver_.startswith("dual")

    def _centred_cross(self, v: int, Xv: np.ndarray) -> np.ndarray:
        """Centred test kernel vectors ``k_v^c(x*)`` as columns, (n_train, n_new)."""
        k = self._maps[v].cross_kernel(self._X_fit[v], self._F_train[v], Xv)
        return k - k.mean(axis=0)[None, :] - self._K_rows[v][:, None] + self._K_grand[v]

    def _hidden_units(self, obs: dict[int, np.ndarray], missing: list[int]) -> np.ndarray:
        """Eq. (15) (primal) / (16) (dual): hidden units from the observed views.

        With missing views the inverse of the inference matrix is ridged,
        ``(A + alpha I)^{-1}`` (:mod:`mvkernels.rkm._inference`).
        """
        if self._is_dual():
            H = self.hidden_
            rhs = sum(H.T @ self._centred_cross(v, Xv) for v, Xv in obs.items())
        else:
            rhs = sum(
                self.W_[v].T @ (self._maps[v].features(Xv) - self.feature_means_[v]).T
                for v, Xv in obs.items()
            )
        V, w, cond, n_cut, choice = self._inference_factor(tuple(sorted(missing)))
        n_new = int(np.shape(rhs)[1]) if np.ndim(rhs) == 2 else 0
        if choice is not None and np.isinf(choice.alpha):
            warnings.warn(
                f"inferring view(s) {sorted(missing)}: on the training rows no ridge of the "
                "inference of eq. (15)/(16) predicts the missing view(s) better than their "
                f"training mean (squared error {choice.mean_error:.3g}); infer_views returns "
                "the training mean (hidden units 0). The observed views carry no usable "
                "information about the missing ones under this model.",
                UserWarning,
                stacklevel=3,
            )
            return np.zeros((n_new, len(w)))
        if choice is not None and choice.alpha > 0:
            inv = 1.0 / (w + choice.alpha)
        else:
            top = float(np.abs(w).max()) if w.size else 0.0
            keep = np.abs(w) > INFERENCE_RCOND * top
            inv = np.zeros_like(w)
            inv[keep] = 1.0 / w[keep]
            if n_cut:
                warnings.warn(
                    f"inferring view(s) {sorted(missing)}: the inference matrix of eq. "
                    f"(15)/(16) is ill-conditioned (condition number {cond:.2e}); {n_cut} of "
                    f"its {len(inv)} eigenvalue(s) are below {INFERENCE_RCOND:g} x the largest "
                    "and were treated as zero (pseudo-inverse): the observed views do not "
                    "determine every hidden unit. Use inference_ridge='auto' or lower "
                    "n_components for a well-posed inference.",
                    UserWarning,
                    stacklevel=3,
                )
        return (V @ (inv[:, None] * (V.T @ rhs))).T

    def _inference_factor(self, missing: tuple[int, ...]) -> Any:
        """Eigenpairs of ``Sigma - sum_m W_m^T W_m`` (eq. 15) / ``Sigma - H^T K_m H`` (eq. 16).

        With the rescaling the matrix is ``W_O^T W_O`` (``H^T K_O H`` in the dual), the
        normal matrix of a least-squares problem, and can be singular when the observed
        views span fewer than ``s`` directions. It is decomposed by a symmetric eigensolver
        (not LU: without the rescaling it may be indefinite). ``inference_ridge="auto"``
        chooses a ridge ``alpha`` on the training rows (:func:`._inference.choose_ridge`);
        ``alpha = 0`` inverts on the well-conditioned part: eigenvalues
        ``|w| <= INFERENCE_RCOND * max|w|`` count as 0. Cached per set of missing views
        (recursive forecasting reuses it every step). Returns ``(V, w, condition number,
        number of discarded eigenvalues, RidgeChoice or None)``.
        """
        cache = self.__dict__.setdefault("_factor_cache", {})
        key = (missing, repr(self.inference_ridge))
        if key not in cache:
            Sigma = self.sigma_
            if self._is_dual():
                H = self.hidden_
                G = sum((H.T @ self._Kc[m] @ H for m in missing), np.zeros_like(Sigma))
            else:
                G = sum((self.W_[m].T @ self.W_[m] for m in missing), np.zeros_like(Sigma))
            w, V = robust_eigh(Sigma - G, what="inference matrix of eq. (15)/(16)")
            top = float(np.abs(w).max()) if w.size else 0.0
            n_cut = int(np.sum(np.abs(w) <= INFERENCE_RCOND * top)) if missing else 0
            low = float(np.abs(w).min()) if w.size else 0.0
            cond = top / low if low > 0 else np.inf
            choice = self._choose_ridge(missing, w, V, G, allow_zero=n_cut == 0)
            cache[key] = (V, w, cond, n_cut, choice)
        return cache[key]

    def _choose_ridge(
        self, missing: tuple[int, ...], w: np.ndarray, V: np.ndarray, G: np.ndarray, **kw: Any
    ) -> RidgeChoice | None:
        """The ridge of the inference: fixed, or chosen on the training rows ("auto")."""
        if not missing:
            return None
        if self.inference_ridge != "auto":
            alpha = float(self.inference_ridge)
            return RidgeChoice(alpha, np.nan, np.nan) if alpha > 0 else None
        if not self.rescale:  # ablation: indefinite matrix, plain eq. (15)/(16)
            return None
        observed = [v for v in range(self.n_views_) if v not in missing]
        rows = subsample_indices(self.n_samples_, MAX_ROWS, 0)
        if self._is_dual():
            H = self.hidden_
            R = sum(self._Kc[v][rows] @ H for v in observed)
            P = sum(self._Kc[m][rows] @ H for m in missing)
            sq = sum(float(np.trace(self._Kc[m][np.ix_(rows, rows)])) for m in missing)
        elif self._X_fit is not None or getattr(self, "_ridge_rows", None) is not None:
            Xr = self._X_fit
            if Xr is None:  # Dask or streamed fit: the sampled training rows
                Xr = self._ridge_rows
                rows = np.arange(Xr[0].shape[0])
            # the complete training rows (a model fitted on rows with missing views)
            complete = np.column_stack([observed_rows(Xv) for Xv in Xr]).all(axis=1)
            if not complete.all():
                idx = np.flatnonzero(complete)
                if idx.size == 0:
                    return None
                rows = idx[subsample_indices(idx.size, MAX_ROWS, 0)]
            F = {
                v: self._maps[v].features(Xr[v][rows]) - self.feature_means_[v]
                for v in range(self.n_views_)
            }
            R = sum(F[v] @ self.W_[v] for v in observed)
            P = sum(F[m] @ self.W_[m] for m in missing)
            sq = sum(float(np.sum(F[m] ** 2)) for m in missing)
        else:  # a model restored without its training rows
            return None
        return choose_ridge(w, V, R, P, G, sq, **kw)

    def transform(self, X: Any) -> Any:
        """Hidden units of new points (eq. 6), shape (n_new, s).

        A sample's missing view is a row of NaN in that view: its hidden units are then
        inferred from its observed views (eq. 15/16), as :meth:`infer_views` does.

        Dask input (primal solvers) gives a lazy Dask array with the row chunks of the input.
        """
        check_is_fitted(self, "sigma_")
        Xs = self._check_input(X, fit=False)
        mask = None if views_kind(Xs) == "dask" else observed_mask(Xs)
        if mask is not None:  # eq. (15)/(16) from the observed views of each sample
            return infer_hidden(self, Xs, mask)
        if views_kind(Xs) == "dask":
            if self._is_dual():
                raise ValueError(
                    "a dual model cannot transform Dask input; compute it first "
                    "or fit with a primal solver"
                )
            return map_views(self._hidden_fn, Xs, n_out=self.n_components)
        if self._is_dual():
            return self._hidden_units(dict(enumerate(Xs)), [])
        return self._hidden_fn(Xs)

    def infer_views(self, X: Any, missing: Sequence[int], return_hidden: bool = False) -> Any:
        """Infer the ``missing`` views of new points from the observed ones (eq. 15/16).

        Parameters
        ----------
        X : list
            One entry per view (``None`` or anything for the missing ones), or only the
            observed views, in view order.
        missing : sequence of int
            Indices of the views to infer (at least one view must stay observed).
        return_hidden : bool
            Also return the hidden units ``h*`` (n_new, s).

        Returns
        -------
        list of ndarray
            One array per missing view, in the order of ``missing``: the view itself for
            identity features (exact pre-image), else a kernel-smoother pre-image over the
            ``n_neighbors`` most similar training points (see the module docstring).
        """
        check_is_fitted(self, "sigma_")
        V = self.n_views_
        missing = [int(m) for m in missing]
        if not missing:
            raise ValueError("missing is empty: use transform to get the hidden units")
        bad = [m for m in missing if not 0 <= m < V]
        if bad or len(set(missing)) != len(missing):
            raise ValueError(f"missing must list distinct view indices in [0, {V}), got {missing}")
        observed = [v for v in range(V) if v not in missing]
        if not observed:
            raise ValueError("every view is missing: at least one view must be observed")
        if not isinstance(X, (list, tuple)):
            raise TypeError("infer_views takes a list of views (None for the missing ones)")
        if len(X) == V:
            given = [X[v] for v in observed]
        elif len(X) == len(observed):
            given = list(X)
        else:
            raise ValueError(
                f"X has {len(X)} entries; expected {V} (all views, None for the "
                f"missing) or {len(observed)} (the observed views {observed})"
            )
        if any(is_dask_collection(G) for G in given):
            raise TypeError("infer_views takes NumPy views; compute the Dask arrays first")
        checked: list[np.ndarray] = []
        for v, G in zip(observed, given):  # errors name the view's own index
            G = _check_one_view(G, v, dtype=np.float64, ensure_finite=True, ensure_min_samples=1)
            if G.shape[1] != self.n_features_view_[v]:
                raise ValueError(
                    f"view {v} has {G.shape[1]} features, but "
                    f"{self.n_features_view_[v]} were seen in fit"
                )
            if G.shape[0] != checked[0].shape[0] if checked else False:
                raise ValueError(
                    f"view {v} has {G.shape[0]} samples, view {observed[0]} "
                    f"has {checked[0].shape[0]}: the views must be aligned"
                )
            checked.append(G)
        obs = dict(zip(observed, checked))
        h = self._hidden_units(obs, missing)
        out = [self._reconstruct(m, h) for m in missing]
        return (out, h) if return_hidden else out

    def _reconstruct(self, m: int, h: np.ndarray) -> np.ndarray:
        """Missing view ``m`` from hidden units: eq. (7) / ``Phi_m^T H h``, then pre-image."""
        vmap = self._maps[m]
        if vmap.kind == "identity":
            if self._is_dual():
                F = self._F_train[m]
                return ((F - F.mean(axis=0)).T @ (self.hidden_ @ h.T)).T + F.mean(axis=0)
            return h @ self.W_[m].T + self.feature_means_[m]
        X_train = self._X_fit[m] if self._X_fit is not None else None
        if self._is_dual():
            S = self._Kc[m] @ (self.hidden_ @ h.T)  # (n_train, n_new)
        else:
            if self._X_fit is None:
                raise ValueError(
                    f"view {m}: the pre-image of a non-identity view needs the "
                    "training data, which a Dask fit does not keep"
                )
            F = vmap.features(X_train) - self.feature_means_[m]
            S = F @ (self.W_[m] @ h.T)  # Phi_m W_m h = K_m H h (eq. 5)
        if X_train is None:
            raise ValueError(f"view {m}: a precomputed kernel has no pre-image")
        k = min(int(self.n_neighbors), S.shape[0])
        out = np.empty((S.shape[1], X_train.shape[1]))
        for j in range(S.shape[1]):
            top = np.argpartition(-S[:, j], k - 1)[:k]
            w = np.maximum(S[top, j], 0.0)
            near = X_train[top].toarray() if is_sparse(X_train) else X_train[top]  # k rows
            if w.sum() <= 0:
                out[j] = near[np.argmax(S[top, j])]
            else:
                out[j] = w @ near / w.sum()
        return out

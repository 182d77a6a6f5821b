"""Training data of one MVML fit: :class:`MVMLProblem`, in full-kernel mode
(:class:`FullProblem`) or Nystrom mode (:class:`NystromProblem`).

The mode is a part, not a string: each problem type holds only its own data and says how
its mode does what depends on it (centring for the intercept, the square loss's system,
residual and w-step moments, the cross-covariance metric, the problem of a subset of the
rows and its coefficients). A new mode is one more :class:`MVMLProblem` subclass
implementing those methods (and a constructor the estimators call).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import KW_ONLY, dataclass, field, replace
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from scipy.linalg import blas

from .._linalg import sym as _sym
from .._validation import take_rows
from ..nystrom import BlockNystrom, FeatureMoments, default_chunk_size
from ._data_part import IN_MEMORY, DataPart, data_part
from ._metric_algebra import PSDFactor, cov_metric_full, cov_metric_nystrom


def times_factor(X: np.ndarray, factor: PSDFactor) -> np.ndarray:
    """``X F``: a triangular product (BLAS ``trmm``, half the flops of a general one)
    for a Cholesky factor ``F = L``."""
    if factor.kind != "cholesky":
        return X @ factor.F
    return blas.dtrmm(1.0, factor.L, X, side=1, lower=1)


def factor_t_times(factor: PSDFactor, X: np.ndarray) -> np.ndarray:
    """``F^T X`` (``trmm`` for a Cholesky factor, see :func:`times_factor`)."""
    if factor.kind != "cholesky":
        return factor.F.T @ X
    return blas.dtrmm(1.0, factor.L, X, side=0, lower=1, trans_a=1, overwrite_b=1)


# ============================================================================ problem data
@dataclass(frozen=True)
class MVMLProblem:
    """Training data of one MVML fit: the interface both modes share.

    This is what a loss's g-step receives (see :class:`~mvkernels.mvml._losses.Loss`).
    Frozen: a step that needs more of the data (e.g. the gathered features of Dask
    views) makes a new problem with :func:`dataclasses.replace`. Build one with
    :meth:`full` (:class:`FullProblem`), :meth:`from_moments` or :meth:`from_rows`
    (:class:`NystromProblem`).

    Attributes
    ----------
    mode : {"full", "nystrom"}
        Read-only, the mode's name (the estimators' ``mode_``).
    n_samples, n_views : int
    block_size : int
        ``n`` (full) or ``p`` (Nystrom); ``dim = n_views * block_size`` is the size of
        ``A`` / ``g``.
    Y : ndarray of shape (n, T), or a Dask array (Nystrom mode on Dask input)
        Targets, one column per independent problem (one-vs-all: +-1 columns). On Dask
        input it stays a lazy Dask array: the square loss only uses the statistics
        (:class:`NystromStatistics`).
    sample_weight : ndarray of shape (n,) or None
        The rows' loss weights ``s_i > 0`` (None: 1 each), for the weighted square loss
        ``sum_i s_i (y_i - f(x_i))^2`` (rows of zero weight are dropped before the problem
        is built); see each mode for how it applies them.
    feature_mean, target_mean : ndarray or None
        Set on a problem centred for an unpenalised intercept (:meth:`centred`): the
        training means the design and targets were centred by, ``m`` (dim,) and
        ``ybar`` (T,); None on an uncentred problem. Full mode: ``m`` stacks the column
        means of the ``K_l``.
    uncentred : MVMLProblem or None
        On a centred problem, the problem it was centred from (the fixed metrics, e.g.
        MVML_Cov, are computed from the data as given).
    """

    mode: ClassVar[str]
    #: whether the problem lives in an explicit feature space (rows ``u_i`` of width
    #: ``dim``, statistics ``C``, ``c``), where the structured solvers run
    feature_space: ClassVar[bool]

    n_samples: int
    n_views: int
    block_size: int
    Y: np.ndarray
    _: KW_ONLY
    sample_weight: np.ndarray | None = field(default=None, repr=False)
    feature_mean: np.ndarray | None = None
    target_mean: np.ndarray | None = None
    uncentred: MVMLProblem | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if type(self) is MVMLProblem:
            raise TypeError(
                "MVMLProblem is the interface of the modes: build a FullProblem or a "
                "NystromProblem (MVMLProblem.full, from_moments or from_rows)"
            )

    # ------------------------------------------------------------------ constructors
    @staticmethod
    def full(
        Ks: list,
        Y: np.ndarray,
        sample_weight: np.ndarray | None = None,
        scale_rows: bool = True,
    ) -> FullProblem:
        """Full-kernel problem of the kernels ``Ks`` and targets ``Y`` (n, T), with the
        rows' loss weights ``sample_weight`` (None: unweighted; ``scale_rows``: see
        :class:`FullProblem`)."""
        n, v = Ks[0].shape[0], len(Ks)
        if sample_weight is None:
            return FullProblem(n, v, n, Y, Ks)
        if not scale_rows:
            sw = np.asarray(sample_weight, dtype=np.float64)
            return FullProblem(n, v, n, Y, Ks, sample_weight=sw, scale_rows=False)
        s = np.sqrt(np.asarray(sample_weight, dtype=np.float64))
        Ys = np.asarray(Y, dtype=np.float64) * s[:, None]
        return FullProblem(n, v, n, Ys, Ks, sample_weight=np.asarray(sample_weight))

    @staticmethod
    def from_moments(
        mom: Any,
        feature_map: BlockNystrom,
        Y: Any,
        Xs: list | None = None,
        U: np.ndarray | None = None,
        sample_weight: np.ndarray | None = None,
        data: DataPart | None = None,
    ) -> NystromProblem:
        """Nystrom-mode problem from :class:`~mvkernels.nystrom.FeatureMoments` (with
        targets) of the training rows: ``C``, ``c``, ``y^T y``, the feature sum and scatter
        (weighted moments with ``sample_weight``, the rows' weights), with the feature
        rows ``feature_map``, ``Xs``, ``U`` (:class:`FeatureRows`). ``data``: the fit's
        data part (None: :func:`~mvkernels.mvml._data_part.data_part` of ``Xs`` and
        ``Y``)."""
        return NystromProblem(
            int(mom.n_samples),
            int(feature_map.n_views_),
            int(feature_map.n_landmarks_),
            Y,
            statistics=NystromStatistics.of_moments(mom, Y.shape[1]),
            feature_rows=FeatureRows(feature_map, Xs=Xs, U=U),
            sample_weight=sample_weight,
            data=data_part(Xs, Y) if data is None else data,
        )

    @staticmethod
    def from_rows(
        U: np.ndarray, Y: np.ndarray, feature_map: BlockNystrom, Xs: list | None = None
    ) -> NystromProblem:
        """Nystrom-mode problem of the in-memory training features ``U`` (n x dim,
        unweighted) without ``C``: ``c = U^T Y``, ``sum u``, ``y^T y`` and ``sum y``
        (``O(n dim T)``), for the structured path from the rows (fewer rows than
        features, :meth:`~mvkernels.mvml._lowrank.SharedSpectrum.from_rows`), which
        needs no more."""
        Y = np.asarray(Y, dtype=np.float64)
        return NystromProblem(
            U.shape[0],
            int(feature_map.n_views_),
            int(feature_map.n_landmarks_),
            Y,
            statistics=NystromStatistics(
                cross=U.T @ Y,
                feature_sum=U.sum(axis=0),
                target_sq=np.einsum("it,it->t", Y, Y),
                target_sum=Y.sum(axis=0),
            ),
            feature_rows=FeatureRows(feature_map, Xs=Xs, U=U),
        )

    # ------------------------------------------------------------------ shared
    @property
    def total_weight(self) -> float:
        """``sum_i s_i``: ``n_samples`` when unweighted."""
        if self.sample_weight is None:
            return float(self.n_samples)
        return float(np.sum(self.sample_weight))

    @property
    def dim(self) -> int:
        return self.n_views * self.block_size

    @property
    def n_targets(self) -> int:
        return self.Y.shape[1]

    def weight_vector(self, w: np.ndarray) -> np.ndarray:
        """Diagonal of ``D_w = blockdiag(w_l I)`` (length ``dim``)."""
        return np.repeat(np.asarray(w, dtype=np.float64), self.block_size)

    def centred(self) -> MVMLProblem:
        """The problem of the square loss with an unpenalised intercept per target.

        ``min_{g, b} ||y - P g - b 1||^2 + alpha <g, A^+ g>`` is, for any ``g``, minimised
        by ``b = ybar - m^T g`` (``m = P^T 1 / n``), which leaves the same problem on the
        centred design ``(I - 11^T / n) P`` and targets ``y - ybar`` (each mode centres
        its own data: :meth:`FullProblem._centred`, :meth:`NystromProblem._centred`).
        The g-step, the w-step, the structured solvers and the data term then need no
        change; the offsets follow from :meth:`intercepts`. Already centred: returned as
        is. With ``sample_weight`` the means are the weighted means and ``n`` the total
        weight.
        """
        if self.target_mean is not None:
            return self
        return self._centred(self.n_samples if self.sample_weight is None else self.total_weight)

    def intercepts(self, coef: np.ndarray, basis: np.ndarray | None = None) -> np.ndarray:
        """Offsets ``b_t = ybar_t - m^T (w (.) g_t)`` of weighted coefficients ``coef``
        (..., T, k) on a :meth:`centred` problem, shape (..., T); zeros on an uncentred
        one. ``basis`` (dim, k): the coefficients are ``basis @ coef`` in the feature
        basis (None: ``coef`` are, ``k = dim``)."""
        coef = np.asarray(coef, dtype=np.float64)
        if self.target_mean is None:
            return np.zeros(coef.shape[:-1])
        mean = self.feature_mean if basis is None else basis.T @ self.feature_mean
        return self.target_mean - coef @ mean

    # ------------------------------------------------------------------ per mode
    def _centred(self, n: float) -> MVMLProblem:
        """:meth:`centred` of an uncentred problem, ``n`` the total weight."""
        raise NotImplementedError

    def view_outputs(self, g: np.ndarray) -> np.ndarray:
        """``Z`` (n x v): column ``l`` is view ``l``'s outputs ``f^l`` of ``g_l``."""
        raise NotImplementedError

    def view_moments(self, g: np.ndarray, t: int) -> tuple[np.ndarray, np.ndarray]:
        """``Z^T Z`` (v x v) and ``Z^T y_t`` (v,) for the w-step (eq. 10 / 17)."""
        raise NotImplementedError

    def squared_residual(self, t: int, g: np.ndarray, w: np.ndarray) -> float:
        """The square loss ``||y_t - W H g||^2`` of target ``t`` (eq. 7 / 14)."""
        raise NotImplementedError

    def ridge_system(
        self, cols: Any, factor: PSDFactor, w: np.ndarray
    ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
        """The linear system of the square loss's g-step for the target columns ``cols``
        (one index: vector right-hand sides), before ``alpha``: ``(PF, S, rhs)`` with
        ``S`` a new array and ``F`` the metric factor (left out for ``A0 = I``). The
        solution ``x`` of ``(S + alpha I) x = rhs`` gives ``g = F PF^T x`` (``PF`` set:
        the kernel form) or ``g = F x`` (``PF`` None: the feature form)."""
        raise NotImplementedError

    def cov_metric(self) -> np.ndarray:
        """The cross-covariance metric of MVML_Cov of this problem's data."""
        raise NotImplementedError

    def subset(
        self, rows: np.ndarray, Y: np.ndarray, moments: FeatureMoments | None = None
    ) -> MVMLProblem:
        """The problem of the training rows ``rows`` (increasing) with the targets ``Y``
        (len(rows), T), on the same kernels / feature map; ``moments``: their feature
        moments with ``Y`` when known (Nystrom mode; else recomputed when this problem
        has statistics)."""
        raise NotImplementedError

    def subset_coefficients(self, g: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The coefficients ``g`` of :meth:`subset` ``(rows)`` as this problem's."""
        raise NotImplementedError

    def training_outputs(self, coef: np.ndarray) -> np.ndarray:
        """The outputs ``(W H g)`` on the training rows (as given, not scaled) of the
        weighted coefficients ``coef`` (m, dim), one column each: shape (n, m)."""
        raise NotImplementedError

    def with_views(self, Xs: list | None) -> MVMLProblem:
        """The problem with the training views ``Xs`` for a loss that reads the rows (the
        feature rows of Nystrom mode; full mode reads its kernels: itself)."""
        raise NotImplementedError

    # the mode's own data, for the callers that check the mode first
    def design(self, w: np.ndarray) -> np.ndarray:
        """Full mode: ``P = W H``; see :meth:`FullProblem.design`."""
        raise RuntimeError("design() is the full-kernel W H; use the moments in Nystrom mode")

    def weighted_statistics(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Nystrom mode; see :meth:`NystromProblem.weighted_statistics`."""
        raise RuntimeError("weighted_statistics() needs Nystrom mode (n_landmarks set)")

    def iter_features(self, chunk_size: int | None = None) -> Iterator[tuple[slice, np.ndarray]]:
        """Nystrom mode; see :meth:`NystromProblem.iter_features`."""
        raise RuntimeError("iter_features() needs Nystrom mode (n_landmarks set)")

    def features(self) -> np.ndarray:
        """Nystrom mode; see :meth:`NystromProblem.features`."""
        raise RuntimeError("features() needs Nystrom mode (n_landmarks set)")


@dataclass(frozen=True)
class FullProblem(MVMLProblem):
    """Full-kernel mode (eq. 7-12): the per-view training kernels ``K_l`` (n x n).

    Attributes
    ----------
    Ks : list of ndarray (n, n)
        The per-view training kernel matrices (row-centred on a :meth:`centred` problem).
    scale_rows : bool
        With ``sample_weight``: whether ``Y``, :meth:`design` and :meth:`view_outputs`
        hold the rows scaled by ``sqrt(s_i)`` (True, the square loss, whose loss then
        sees the rows scaled; ``Ks`` stay the kernels, the coefficients are indexed by
        the training rows) or the rows as given (False: the hinge loss, which weighs
        each row's hinge by ``s_i`` itself and needs the labels +-1).

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.mvml import MVMLProblem
    >>> K = np.eye(3)
    >>> problem = MVMLProblem.full([K, 2 * K], np.ones((3, 1)))
    >>> problem.mode, problem.dim
    ('full', 6)
    >>> problem.design(np.array([0.5, 0.5]))[0]
    array([0.5, 0. , 0. , 1. , 0. , 0. ])
    """

    mode = "full"
    feature_space = False

    Ks: list
    _: KW_ONLY
    scale_rows: bool = True

    def _row_scale(self) -> np.ndarray | None:
        """``sqrt(s_i)`` per row (None: unweighted or ``scale_rows`` False)."""
        if self.sample_weight is None or not self.scale_rows:
            return None
        return np.sqrt(self.sample_weight)

    def _centred(self, n: float) -> FullProblem:
        """Each ``K_l`` row-centred, ``K_l - 1 m_l^T`` with ``m_l`` its (weighted) column
        means, so :meth:`design` is the centred ``W H``; with row scaling the scaled
        targets lose ``sqrt(s_i) ybar``."""
        Y = np.asarray(self.Y, dtype=np.float64)
        if self.sample_weight is not None:
            s = self._row_scale()
            sw = np.asarray(self.sample_weight, dtype=np.float64)
            ybar = (s @ Y) / n  # Y holds sqrt(s) y
            means = [(sw @ K) / n for K in self.Ks]
            Yc = Y - s[:, None] * ybar[None, :]
        else:
            ybar = Y.mean(axis=0)
            means = [K.mean(axis=0) for K in self.Ks]
            Yc = Y - ybar
        return replace(
            self,
            Y=Yc,
            Ks=[K - m[None, :] for K, m in zip(self.Ks, means)],
            feature_mean=np.concatenate(means),
            target_mean=ybar,
            uncentred=self,
        )

    def design(self, w: np.ndarray) -> np.ndarray:
        """``P = W H = [w_1 K_1, ..., w_v K_v]`` (n x nv); the design of the fixed view
        weights ``w_l = 1 / v`` (every fit without ``learn_weights``) is built once and
        kept (:attr:`_uniform_design`), any other is built at each call. Not to be
        modified in place."""
        w = np.asarray(w, dtype=np.float64)
        if np.array_equal(w, self._uniform_weights()):
            return self._uniform_design
        return self._design_of(w)

    def _uniform_weights(self) -> np.ndarray:
        return np.full(self.n_views, 1.0 / self.n_views)

    # functools.cached_property stores the value in the instance's __dict__ on first use,
    # which is not a dataclass field: the frozen problem's data never change (a
    # dataclasses.replace, e.g. the centred problem, is a new problem without it)
    @cached_property
    def _uniform_design(self) -> np.ndarray:
        """:meth:`design` of the fixed view weights ``w_l = 1 / v``, built on first use."""
        return self._design_of(self._uniform_weights())

    def _design_of(self, w: np.ndarray) -> np.ndarray:
        P = np.hstack([wl * K for wl, K in zip(w, self.Ks)])
        s = self._row_scale()
        if s is not None:  # the weighted loss: rows scaled by sqrt(s_i)
            P *= s[:, None]
        return P

    def view_outputs(self, g: np.ndarray) -> np.ndarray:
        """Column ``l`` is ``K_l g_l`` (rows scaled by ``sqrt(s_i)`` with
        ``sample_weight``)."""
        b = self.block_size
        Z = np.column_stack([K @ g[l * b : (l + 1) * b] for l, K in enumerate(self.Ks)])
        s = self._row_scale()
        return Z if s is None else Z * s[:, None]

    def view_moments(self, g: np.ndarray, t: int) -> tuple[np.ndarray, np.ndarray]:
        """From the outputs :meth:`view_outputs` (eq. 10)."""
        Z = self.view_outputs(g)
        return Z.T @ Z, Z.T @ self.Y[:, t]

    def squared_residual(self, t: int, g: np.ndarray, w: np.ndarray) -> float:
        """``||y_t - W H g||^2`` (eq. 7's data term): the kept design of the fixed view
        weights times ``g``, or at other weights (``learn_weights``) the outputs
        ``sum_l w_l K_l g_l`` from :meth:`view_outputs` (rows scaled by ``sqrt(s_i)``
        with row scaling), without building the ``n x nv`` design again (equal to
        rounding)."""
        w = np.asarray(w, dtype=np.float64)
        if np.array_equal(w, self._uniform_weights()):
            f = self._uniform_design @ g
        else:
            f = self.view_outputs(g) @ w
        r = self.Y[:, t] - f
        return float(r @ r)

    def ridge_system(
        self, cols: Any, factor: PSDFactor, w: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Eq. (8), the kernel form: ``S = (P F)(P F)^T`` (``n x n``), ``rhs = y``."""
        P = self.design(w)
        PF = P if factor.is_identity else times_factor(P, factor)
        return PF, PF @ PF.T, self.Y[:, cols]

    def cov_metric(self) -> np.ndarray:
        return cov_metric_full(self.Ks, self.sample_weight)

    def subset(
        self, rows: np.ndarray, Y: np.ndarray, moments: FeatureMoments | None = None
    ) -> FullProblem:
        """The kernels' ``(rows, rows)`` sub-blocks."""
        sw = None if self.sample_weight is None else self.sample_weight[rows]
        Ks = [K[np.ix_(rows, rows)] for K in self.Ks]
        return MVMLProblem.full(Ks, Y, sw, scale_rows=self.scale_rows)

    def subset_coefficients(self, g: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """``g`` on the subset's rows, zero on the other training rows."""
        out = np.zeros((self.n_views, self.n_samples))
        out[:, rows] = np.asarray(g).reshape(self.n_views, rows.size)
        return out.ravel()

    def training_outputs(self, coef: np.ndarray) -> np.ndarray:
        """``sum_l K_l coef_l^T``."""
        blocks = np.asarray(coef).reshape(coef.shape[0], self.n_views, self.n_samples)
        return sum(K @ blocks[:, l].T for l, K in enumerate(self.Ks))

    def with_views(self, Xs: list | None) -> FullProblem:
        return self


class MissingPartError(RuntimeError):
    """A step asked a :class:`NystromProblem` for a part it was built without (its
    :class:`NystromStatistics` or its :class:`FeatureRows`)."""


@dataclass(frozen=True)
class NystromStatistics:
    """The square loss's sufficient statistics of a Nystrom-mode problem (eq. 14-15):
    what its g-step, data term and w-step read instead of the rows.

    The weighted sums with the problem's ``sample_weight``
    (:class:`~mvkernels.nystrom.FeatureMoments` with weights).

    Attributes
    ----------
    cross : ndarray of shape (dim, T)
        ``c = sum u y^T``.
    feature_sum : ndarray of shape (dim,)
        ``sum u``.
    target_sq : ndarray of shape (T,)
        ``y_t^T y_t`` per target column (diagonal of the moments' ``target_gram``).
    target_sum : ndarray of shape (T,) or None
        ``sum_i y_i`` (for the target means of :meth:`MVMLProblem.centred`; None: from
        the targets).
    gram : ndarray of shape (dim, dim) or None
        ``C = sum u u^T`` from :meth:`BlockNystrom.moments`. None on statistics built
        without it: ``solver="cg"``
        (:func:`~mvkernels.mvml._iterative.row_statistics_problem`, whose products with
        ``C`` stream the rows) and the structured path from the rows
        (:meth:`MVMLProblem.from_rows`).
    feature_scatter : ndarray of shape (dim, dim) or None
        ``sum (u - mean)(u - mean)^T`` accumulated stably
        (:attr:`FeatureMoments.scatter`), for the MVML_Cov metric and the centred ``C``.

    Examples
    --------
    >>> import numpy as np
    >>> U, Y = np.eye(3), np.ones((3, 1))
    >>> stats = NystromStatistics(U.T @ Y, U.sum(axis=0), (Y**2).sum(axis=0), gram=U.T @ U)
    >>> stats.cross.ravel(), stats.target_sq
    (array([1., 1., 1.]), array([3.]))
    """

    cross: np.ndarray
    feature_sum: np.ndarray
    target_sq: np.ndarray
    target_sum: np.ndarray | None = None
    gram: np.ndarray | None = field(default=None, repr=False)
    feature_scatter: np.ndarray | None = field(default=None, repr=False)

    @staticmethod
    def of_moments(mom: Any, T: int) -> NystromStatistics:
        """The statistics of :class:`~mvkernels.nystrom.FeatureMoments` ``mom`` with
        ``T`` target columns."""
        return NystromStatistics(
            cross=np.asarray(mom.cross, dtype=np.float64).reshape(-1, T),
            feature_sum=np.asarray(mom.sum),
            target_sq=np.diag(np.asarray(mom.target_gram, dtype=np.float64)).copy(),
            target_sum=(
                None
                if mom.target_sum is None
                else np.asarray(mom.target_sum, dtype=np.float64).reshape(T)
            ),
            gram=_sym(np.asarray(mom.gram, dtype=np.float64)),
            feature_scatter=mom.centered_gram(),
        )


@dataclass(frozen=True)
class FeatureRows:
    """The training rows of a Nystrom-mode problem, for a loss whose g-step reads them
    (the hinge loss; the square loss with ``solver="cg"``), for :meth:`subset`'s
    statistics and the fitted model's outputs.

    Attributes
    ----------
    feature_map : BlockNystrom
        The fitted feature map (``u = feature_map.transform(x)``).
    Xs : list of arrays or None
        The validated training views (the features then come from the map, chunk by
        chunk); NumPy or Dask. None: not kept (``U`` is).
    U : ndarray of shape (n, dim) or None
        The training features, when materialised (e.g. :class:`~mvkernels.MVMLSVC`'s
        problem, Dask input gathered to the client); read instead of recomputing them
        from ``Xs``.

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.nystrom import BlockNystrom
    >>> Xs = [np.random.default_rng(0).normal(size=(10, 2))]
    >>> nys = BlockNystrom(n_landmarks=4, random_state=0).fit(Xs)
    >>> FeatureRows(nys, U=nys.transform(Xs)).U.shape
    (10, 4)
    """

    feature_map: BlockNystrom
    Xs: list | None = field(default=None, repr=False)
    U: np.ndarray | None = field(default=None, repr=False)

    def take(self, rows: np.ndarray) -> FeatureRows:
        """The rows ``rows`` of the views / features."""
        return FeatureRows(
            self.feature_map,
            Xs=None if self.Xs is None else take_rows(self.Xs, rows),
            U=None if self.U is None else self.U[rows],
        )


@dataclass(frozen=True)
class NystromProblem(MVMLProblem):
    """Block Nystrom mode (Sec. 3.5, eq. 13-18): features ``u_i`` (``dim = v p``), in
    two typed parts, each present or not as a whole.

    Attributes
    ----------
    statistics : NystromStatistics or None
        The square loss's sufficient statistics (``C``, ``c``, ``y^T y``, ...). None on a
        problem of a loss that reads the rows only (the hinge loss).
    feature_rows : FeatureRows or None
        The feature map and the training views or features. None on a problem of
        statistics alone (the CV's fold problems of the square loss).
    data : DataPart
        The data part of the fit (:func:`~mvkernels.mvml._data_part.data_part` of the
        training views and targets, chosen once by the fit and passed down): in memory
        or Dask.

    :attr:`stats` and :attr:`row_data` give the parts, with a clear
    :class:`MissingPartError` where the problem was built without one: read ``C`` as
    ``problem.stats.gram``, the features as ``problem.row_data.U`` (the parts are the
    problem's one surface; it forwards none of their fields).

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.mvml import MVMLProblem
    >>> from mvkernels.nystrom import BlockNystrom
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(20, 2)), rng.normal(size=(20, 3))]
    >>> nys = BlockNystrom(n_landmarks=5, random_state=0).fit(Xs)
    >>> problem = MVMLProblem.from_rows(nys.transform(Xs), np.ones((20, 1)), nys)
    >>> problem.mode, problem.dim, problem.stats.gram is None, problem.row_data.U.shape
    ('nystrom', 10, True, (20, 10))
    """

    mode = "nystrom"
    feature_space = True

    _: KW_ONLY
    statistics: NystromStatistics | None = None
    feature_rows: FeatureRows | None = None
    data: DataPart = field(default=IN_MEMORY, repr=False)

    # ------------------------------------------------------------------ the parts
    @property
    def stats(self) -> NystromStatistics:
        """The sufficient statistics; :class:`MissingPartError` on a problem built
        without them."""
        if self.statistics is None:
            raise MissingPartError(
                "this Nystrom problem has no sufficient statistics (C, c, y^T y): it was "
                "built for a loss that reads the feature rows (e.g. the hinge loss); build "
                "it with MVMLProblem.from_moments for the square loss"
            )
        return self.statistics

    @property
    def row_data(self) -> FeatureRows:
        """The feature map and training rows; :class:`MissingPartError` on a problem
        built from statistics alone."""
        if self.feature_rows is None:
            raise MissingPartError(
                "this Nystrom problem has no feature rows (feature map, views or features): "
                "it was built from sufficient statistics alone; pass feature_map (and Xs "
                "or U) to MVMLProblem.from_moments for a loss or step that reads the rows"
            )
        return self.feature_rows

    def with_rows(self, Xs: list | None, U: np.ndarray | None) -> NystromProblem:
        """The problem with the training views ``Xs`` and features ``U`` (either may be
        None) of the same feature map."""
        return replace(self, feature_rows=FeatureRows(self.row_data.feature_map, Xs=Xs, U=U))

    def with_client_rows(self, U: np.ndarray, Y: np.ndarray) -> NystromProblem:
        """The problem with its training features ``U`` and targets ``Y`` brought to the
        client (a loss that reads the rows, on Dask input)."""
        return replace(
            self,
            Y=Y,
            feature_rows=replace(self.row_data, U=U),
            data=self.data.with_client_targets(),
        )

    # ------------------------------------------------------------------ the mode
    def _centred(self, n: float) -> NystromProblem:
        """The statistics become ``C = sum (u - m)(u - m)^T`` (the feature scatter),
        ``c = sum (u - m)(y - ybar)^T = c - (sum u) ybar^T`` and
        ``y^T y = sum (y - ybar)^2``; the features (:meth:`iter_features`) are centred
        on the fly."""
        st = self.stats
        total = st.target_sum
        if total is None:
            total = np.asarray(self.Y.sum(axis=0), dtype=np.float64)
        ybar = np.asarray(total, dtype=np.float64).reshape(-1) / n
        mean = np.asarray(st.feature_sum, dtype=np.float64) / n
        scatter = st.feature_scatter
        if scatter is None and st.gram is not None:  # (no statistics: solver="cg")
            scatter = _sym(st.gram - n * np.outer(mean, mean))
        stats = replace(
            st,
            gram=scatter,
            cross=st.cross - np.outer(st.feature_sum, ybar),
            feature_sum=np.zeros_like(mean),
            target_sq=np.maximum(st.target_sq - n * ybar**2, 0.0),
            target_sum=np.zeros_like(ybar),
        )
        return replace(
            self,
            Y=self.Y - ybar,
            statistics=stats,
            feature_mean=mean,
            target_mean=ybar,
            uncentred=self,
        )

    def weighted_statistics(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``M = D_w C D_w`` (dim, dim) and the rows ``b_t = D_w c_t`` (T, dim), the only
        data the square-loss g-step sees (eq. 15)."""
        st = self.stats
        d = self.weight_vector(w)
        return st.gram * d[:, None] * d[None, :], (st.cross * d[:, None]).T

    def iter_features(self, chunk_size: int | None = None) -> Iterator[tuple[slice, np.ndarray]]:
        """Yield ``(rows, U_chunk)``, ``U_chunk`` of shape (rows, dim)."""
        rd = self.row_data
        if rd.U is not None:
            chunk = chunk_size or default_chunk_size(self.dim)
            U = rd.U
            chunks: Any = (
                (slice(s, min(self.n_samples, s + chunk)), U[s : s + chunk])
                for s in range(0, self.n_samples, chunk)
            )
        else:
            self.data.refuse(
                "the training views are Dask arrays: set the problem's features U "
                "(NystromProblem.with_client_rows) or use the sufficient statistics "
                "(gram, cross, target_sq)",
                RuntimeError,
                views_only=True,
            )
            chunks = rd.feature_map.iter_features(rd.Xs, chunk_size)
        if self.feature_mean is None:
            return chunks
        mean = self.feature_mean  # a centred problem: centred features
        return ((rows, U - mean) for rows, U in chunks)

    def features(self) -> np.ndarray:
        """All training features ``U`` (n x dim), materialised."""
        U = self.row_data.U
        if U is not None and self.feature_mean is None:
            return U
        out = np.empty((self.n_samples, self.dim))
        for rows, Uc in self.iter_features():
            out[rows] = Uc
        return out

    def view_outputs(self, g: np.ndarray) -> np.ndarray:
        """Column ``l`` is ``U_l g_l``."""
        b = self.block_size
        Z = np.empty((self.n_samples, self.n_views))
        G = np.zeros((self.dim, self.n_views))
        for l in range(self.n_views):
            G[l * b : (l + 1) * b, l] = g[l * b : (l + 1) * b]
        for rows, U in self.iter_features():
            Z[rows] = U @ G
        return Z

    def view_moments(self, g: np.ndarray, t: int) -> tuple[np.ndarray, np.ndarray]:
        """From the sufficient statistics only: ``(Z^T Z)_lm = g_l^T C_lm g_m``,
        ``(Z^T y)_l = g_l^T c_l`` (eq. 17)."""
        st = self.stats
        b, v = self.block_size, self.n_views
        Gb = g.reshape(v, b)
        Cb = st.gram.reshape(v, b, v, b)
        ZtZ = np.einsum("li,limj,mj->lm", Gb, Cb, Gb)
        Zty = np.einsum("li,li->l", Gb, st.cross[:, t].reshape(v, b))
        return _sym(ZtZ), Zty

    def squared_residual(self, t: int, g: np.ndarray, w: np.ndarray) -> float:
        """``y^T y - 2 b^T g + g^T M g`` from the statistics (eq. 14)."""
        st = self.stats
        yy = float(st.target_sq[t])
        dg = self.weight_vector(w) * g
        val = yy - 2.0 * float(st.cross[:, t] @ dg) + float(dg @ st.gram @ dg)
        return max(val, 0.0)

    def ridge_system(
        self, cols: Any, factor: PSDFactor, w: np.ndarray
    ) -> tuple[None, np.ndarray, np.ndarray]:
        """Eq. (15), the feature form: ``S = F^T M F`` (symmetrised), ``rhs = F^T b``."""
        M, B = self.weighted_statistics(w)
        rhs = B[cols].T
        if factor.is_identity:
            return None, _sym(M), rhs
        # F^T M F; M is symmetric, so M^T (its F-ordered view) serves as M
        S = _sym(factor_t_times(factor, times_factor(M.T, factor)))
        return None, S, factor.F.T @ rhs

    def cov_metric(self) -> np.ndarray:
        st = self.stats
        n: Any = self.n_samples if self.sample_weight is None else self.total_weight
        return cov_metric_nystrom(
            st.gram, st.feature_sum, n, self.n_views, scatter=st.feature_scatter
        )

    def subset(
        self, rows: np.ndarray, Y: np.ndarray, moments: FeatureMoments | None = None
    ) -> NystromProblem:
        """The same feature map, the rows of the views / features and their statistics
        (none when this problem has none: a loss that reads the rows only)."""
        sw = None if self.sample_weight is None else self.sample_weight[rows]
        taken = self.row_data.take(rows)
        if self.statistics is None or self.statistics.gram is None:
            # a loss that reads the rows only (the hinge loss)
            return NystromProblem(
                rows.size,
                self.n_views,
                self.block_size,
                Y,
                feature_rows=taken,
                sample_weight=sw,
                data=self.data,
            )
        mom = moments
        if mom is None and taken.U is not None:
            mom = FeatureMoments.from_features(taken.U, Y, sw).symmetrize()
        elif mom is None and sw is None:
            mom = taken.feature_map.moments(taken.Xs, Y)
        elif mom is None:
            mom = taken.feature_map.moments(taken.Xs, Y, sample_weight=sw)
        return MVMLProblem.from_moments(
            mom, taken.feature_map, Y, Xs=taken.Xs, U=taken.U, sample_weight=sw, data=self.data
        )

    def subset_coefficients(self, g: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The feature-space coefficients, shared by every row: ``g`` as is."""
        return g

    def training_outputs(self, coef: np.ndarray) -> np.ndarray:
        """``U coef^T``."""
        return self.features() @ coef.T

    def with_views(self, Xs: list | None) -> NystromProblem:
        return replace(self, feature_rows=replace(self.row_data, Xs=Xs))


def feature_problem(problem: MVMLProblem) -> NystromProblem:
    """``problem`` as a feature-space problem (:attr:`MVMLProblem.feature_space`): the
    precondition of the structured paths, which read its statistics."""
    if not isinstance(problem, NystromProblem):
        raise TypeError(f"a feature-space (Nystrom) problem is needed, got mode {problem.mode!r}")
    return problem

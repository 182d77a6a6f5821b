"""The estimators: :class:`OLOKRegressor` (Algorithm 1, exact or in a feature space) and
:class:`VVRLSRegressor` (its batch counterpart)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from numbers import Integral, Real
from typing import Any, cast

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._linalg import robust_eigh
from .._threads import serial_blas
from .._validation import (
    KernelSpec,
    as_real_array,
    check_not_complex,
    nonnegative_real,
    positive_int,
    positive_real,
)
from .._weights import check_sample_weight
from ..operator_kernels import DecomposableKernel, OperatorKernel
from ._features import FEATURE_KINDS, FeatureMap, check_feature_kernel
from ._problem import GROWTH, LOSSES, Schedule, grad_squared, make_operator_kernel, theorem_t0
from ._steps import (
    BlockInputs,
    FeatureExpansion,
    OutputBasis,
    SupportExpansion,
    block_recursion,
    block_solve_squared,
)

_RENORM = 1e-100  # renormalise the running scale below this
_FLOOR = 1e-200  # never let the scale go below this inside a block
# Batches of at least this many rows run on one BLAS thread: the block products are thin
# (measured 38 ms threaded against 16 ms serial for an rbf block 256 x 10000 x 50 on 2
# busy cores); learn_one skips the context switch, which costs more than the work.
_SERIAL_MIN_ROWS = 64


# --------------------------------------------------------------------------- shared
class _VectorOutputRegressor(RegressorMixin, BaseEstimator):
    """Regressor of vector outputs (``y`` of shape (n,) or (n, d)): the tags of OLOK and
    vv-RLS."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags


def _drop_zero_weights(
    X: np.ndarray, Y: np.ndarray, w: np.ndarray | None, allow_empty: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The rows of positive weight and their weights (None when all are 1)."""
    if w is None:
        return X, Y, None
    if allow_empty and not (w > 0).any():
        return X[:0], Y[:0], None
    keep = w > 0
    if not keep.all():
        X, Y, w = X[keep], Y[keep], w[keep]
    return X, Y, None if (w == 1.0).all() else w


# --------------------------------------------------------------------------- OLOK
class OLOKRegressor(_VectorOutputRegressor):
    """Online learning with operator-valued kernels (OLOK, Algorithm 1 of Audiffren & Kadri).

    Stochastic gradient descent on the instantaneous regularised risk
    ``R_inst(f, x, y) = l(f(x), y) + alpha/2 ||f||^2`` in the RKHS of the operator-valued kernel
    ``K(x, x') = k(x, x') B`` (Eq. (1)), with lazy decay, support storage and exact block
    updates (see :mod:`mvkernels.olok`); or the same algorithm in an explicit feature space
    of ``k`` (``features``), where the model is one ``n_features x d`` matrix and memory does
    not grow with the stream.

    Parameters
    ----------
    kernel : str, callable or OperatorKernel, default "rbf"
        Scalar kernel ``k`` by name ("rbf", "laplacian", "linear", "poly") or callable
        ``f(X, Z, **params)`` (as in :mod:`mvkernels.kernels`), or a full
        :class:`~mvkernels.operator_kernels.OperatorKernel` (e.g. a
        :class:`~mvkernels.operator_kernels.CallableOperatorKernel`), in which case
        ``kernel_params`` and ``output_kernel`` must be left at None.
    kernel_params : dict, optional
        Parameters of ``k``, e.g. ``{"gamma": g}`` for ``exp(-g ||x - x'||^2)``; the paper's
        width ``mu`` is ``1 / g``. Without one, the rbf bandwidth comes from the first batch.
    output_kernel : None, float or array of shape (d, d), default None
        ``B``: None = identity; a float ``rho`` = 1 on the diagonal and ``rho`` elsewhere
        (``0.1`` is the paper's ``J``); or an explicit symmetric PSD matrix.
    features : None or {"rff", "nystrom", "identity"}, default None
        None: exact OLOK, the model is a kernel expansion over the (live) samples.
        Otherwise OLOK with the kernel ``phi(x)^T phi(x') B`` of an explicit feature map:
        ``"identity"`` (``phi(x) = x``, exact for the linear kernel), ``"rff"`` (random
        Fourier features of the rbf or laplacian kernel, drawn with ``random_state``),
        ``"nystrom"`` (Nystrom features on the first ``n_features`` rows of the stream, which
        are learnt exactly before the switch). Needs a decomposable kernel and no truncation.
    n_features : int, default 1000
        Number of features ``D`` of "rff" and "nystrom" (the Nystrom budget).
    eta0 : float, default 1.0
        Initial learning rate (the paper's ``eta``; its experiments use 0.1). With a
        normalised kernel (``k(x, x) = 1``, ``B = I``) ``eta_1 = 1`` fits the first sample
        exactly; keep ``eta0 ||B||_op kappa^2 < 2`` for a stable squared-loss step.
    learning_rate : {"invscaling", "constant"} or callable, default "invscaling"
        "invscaling": ``eta_t = eta0 / t^power_t`` (Theorem 1 uses ``power_t = 0.5``);
        "constant": ``eta_t = eta0``; a callable maps the 1-based time ``t`` (an int array) to
        ``eta_t`` (an array of the same shape).
    power_t : float, default 0.5
    alpha : float, default 1e-3
        The regularisation ``lambda`` of ``R_inst``; each step multiplies old coefficients
        by ``1 - eta_t alpha``, which must stay in (0, 1]: ``eta_t * alpha < 1`` is checked.
    truncation : None, int or "theorem", default None
        Keep only the last ``s_t`` coefficients (Algorithm 1, step 3): None keeps all, an
        int ``s`` is a fixed window, "theorem" uses Theorem 1's schedule.
    truncation_eps : float, default 0.25
        ``eps`` in ``s_t = max(ceil(c t^{1/2+eps}), t_0)`` (only for "theorem").
    truncation_t0 : int, optional
        ``t_0`` of that schedule; default: Theorem 1's value, :func:`theorem_t0`.
    truncation_scale : float, default 1.0
        ``c > 0`` in that schedule (only for "theorem"): a constant factor on the window,
        i.e. on the work per step; Theorem 1's bound needs the ``t^{1/2+eps}`` growth only.
    loss : {"squared", "epsilon_insensitive"}, default "squared"
        ``1/2 ||z - y||^2`` (gradient ``z - y``) or ``max(0, ||z - y||_2 - epsilon)``
        (1-Lipschitz, Assumption 2 of Theorem 1).
    epsilon : float, default 0.1
        Width of the insensitive zone (epsilon-insensitive loss only).
    random_state : int, RandomState or None
        Subsampling of rows for the default bandwidth and the draws of "rff"; the updates
        are deterministic and follow the order of the rows (no shuffling: order is the
        stream).

    Attributes
    ----------
    kernel_ : OperatorKernel
        The fitted operator kernel (bandwidth and ``B`` resolved).
    t_ : int
        Number of samples seen (the time ``t``).
    support_vectors_ : ndarray of shape (m, n_features)
        Inputs of the live coefficients (the last ``s_t`` with truncation); only while the
        model is a kernel expansion.
    dual_coef_ : ndarray of shape (m, n_outputs)
        ``alpha_{i,t}`` of the live support, scale factor applied (kernel expansion only).
    feature_map_ : object
        The explicit feature map (``features`` set; for "nystrom" once the basis is built),
        with ``transform(X) -> phi(X)`` and ``n_features``.
    coef_ : ndarray of shape (n_features, n_outputs)
        ``W`` with ``f(x) = phi(x)^T W`` (feature-space model only).
    n_features_in_ : int
        Number of input features (``n_features``, fixed by the first batch).
    n_outputs_ : int
        Number of outputs ``d`` (columns of ``y``; 1 for a 1-D ``y``).

    Notes
    -----
    ``learn_one``/``predict_one`` take river-style feature dicts (keys fixed by the first
    call, any order later) or 1-D arrays, and targets as a scalar, 1-D array or dict.
    ``fit`` resets the model and makes one pass; ``partial_fit`` continues the stream.

    See Also
    --------
    VVRLSRegressor : The batch counterpart (vector-valued regularised least squares).
    mvkernels.operator_kernels.OperatorKernel : Operator-valued kernels ``k(x, x') B``.

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels import OLOKRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((2000, 5))
    >>> Y = np.c_[np.sin(X[:, 0]), np.cos(X[:, 1])]
    >>> exact = OLOKRegressor(kernel_params={"gamma": 0.2}, output_kernel=0.1, eta0=0.5)
    >>> rff = OLOKRegressor(kernel_params={"gamma": 0.2}, output_kernel=0.1, eta0=0.5,
    ...                     features="rff", n_features=300, random_state=0)
    >>> for a in range(0, 2000, 500):
    ...     _ = rff.partial_fit(X[a : a + 500], Y[a : a + 500])
    >>> rff.coef_.shape
    (300, 2)
    >>> bool(exact.fit(X, Y).score(X, Y) > 0.7 and rff.score(X, Y) > 0.7)
    True
    """

    _block_size = 256  # rows per block of the kernel-expansion model
    _feature_block_size = 128  # of the feature-space model (in-block Gram: b D per row)
    _parameter_constraints: dict = {
        "kernel": [KernelSpec(allow_list=False, allow_precomputed=False), OperatorKernel],
        "kernel_params": [dict, None],
        "output_kernel": "no_validation",  # checked when the kernel is built
        "features": [StrOptions(set(FEATURE_KINDS)), None],
        "n_features": [positive_int()],
        "eta0": [positive_real()],
        "learning_rate": [StrOptions({"invscaling", "constant"}), callable],
        "power_t": [nonnegative_real()],
        "alpha": [nonnegative_real()],
        "truncation": [Interval(Integral, 1, None, closed="left"), StrOptions({"theorem"}), None],
        "truncation_eps": [Interval(Real, 0, 0.5, closed="neither")],
        "truncation_t0": [positive_int(), None],
        "truncation_scale": [positive_real()],
        "loss": [StrOptions(set(LOSSES))],
        "epsilon": [nonnegative_real()],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        kernel: str | Callable | OperatorKernel = "rbf",
        kernel_params: dict | None = None,
        output_kernel: Any = None,
        features: str | None = None,
        n_features: int = 1000,
        eta0: float = 1.0,
        learning_rate: str | Callable = "invscaling",
        power_t: float = 0.5,
        alpha: float = 1e-3,
        truncation: int | str | None = None,
        truncation_eps: float = 0.25,
        truncation_t0: int | None = None,
        truncation_scale: float = 1.0,
        loss: str = "squared",
        epsilon: float = 0.1,
        random_state: Any = None,
    ):
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.output_kernel = output_kernel
        self.features = features
        self.n_features = n_features
        self.eta0 = eta0
        self.learning_rate = learning_rate
        self.power_t = power_t
        self.alpha = alpha
        self.truncation = truncation
        self.truncation_eps = truncation_eps
        self.truncation_t0 = truncation_t0
        self.truncation_scale = truncation_scale
        self.loss = loss
        self.epsilon = epsilon
        self.random_state = random_state

    # ------------------------------------------------------------------ parameters
    def _check_params(self, validate: bool = True) -> None:
        """Every parameter (``_parameter_constraints``; skipped with ``validate=False`` when
        ``_fit_context`` has checked them), then the rules across parameters; sets the
        stream's :class:`Schedule`."""
        if validate:
            self._validate_params()
        if not callable(self.learning_rate) and self.eta0 * self.alpha >= 1:
            raise ValueError(
                f"eta_t * alpha must be < 1 for every t (Algorithm 1), but eta_1 * alpha = "
                f"{self.eta0} * {self.alpha} = {self.eta0 * self.alpha:.4g}; lower eta0 or alpha"
            )
        if self.features is not None:
            if self.truncation is not None:
                raise ValueError(
                    f"truncation={self.truncation!r} cannot be combined with "
                    f"features={self.features!r}: a feature-space model has no support to "
                    "truncate (its size is fixed by n_features); use truncation=None"
                )
            if isinstance(self.kernel, OperatorKernel) and not self.kernel.decomposable:
                raise ValueError(
                    f"features={self.features!r} needs a decomposable kernel k(x, x') B; "
                    f"got {type(self.kernel).__name__}"
                )
        tr = self.truncation
        sched: dict[str, Any] = dict(
            learning_rate=self.learning_rate,
            eta0=float(self.eta0),
            power_t=float(self.power_t),
            alpha=float(self.alpha),
        )
        if tr == "theorem":
            eps = float(self.truncation_eps)
            t0 = self.truncation_t0
            sched.update(
                window_kind="theorem",
                eps=eps,
                scale=float(self.truncation_scale),
                t0=theorem_t0(self.eta0, self.alpha, eps) if t0 is None else int(t0),
            )
        elif tr is not None:
            sched.update(window_kind="fixed", window=int(tr))
        self._schedule = Schedule(**sched)

    # ------------------------------------------------------------------ state
    def _init_state(self, X: np.ndarray, d: int, y_1d: bool, validated: bool = False) -> None:
        self._check_params(validate=not validated)
        self.kernel_ = make_operator_kernel(self.kernel, self.kernel_params, self.output_kernel)
        if (
            isinstance(self.kernel_, DecomposableKernel)
            and X.shape[0] < 2
            and self.kernel_.scalar_kernel.open_bandwidth
        ):
            raise ValueError(
                "got 1 sample in the first batch: the default rbf/laplacian bandwidth is set "
                "from the first batch and needs at least 2 rows; pass a larger first batch or "
                "set kernel_params={'gamma': ...}"
            )
        self.kernel_.fit(X, n_outputs=d, random_state=check_random_state(self.random_state))
        B = cast(DecomposableKernel, self.kernel_).B if self.kernel_.decomposable else None
        self._B = B
        self._basis = OutputBasis(B) if B is not None else None
        self.n_outputs_ = d
        self._y_1d = y_1d
        self._loss_fn, self._grad_fn = LOSSES[self.loss]
        self.t_ = 0
        self._ymax = 0.0  # largest |target| seen (growth test of the squared loss)
        self._scale = 1.0  # c_t
        self._w = 0  # coefficients with time <= w are truncated
        kind, p = self.features, X.shape[1]
        if kind is not None:
            check_feature_kernel(kind, cast(DecomposableKernel, self.kernel_).scalar_kernel)
        self._model: SupportExpansion | FeatureExpansion
        if kind in ("identity", "rff"):
            # drawn from random_state afresh: the same features whether or not the
            # bandwidth rule subsampled rows
            fmap = FeatureMap(
                kind,
                cast(DecomposableKernel, self.kernel_).scalar_kernel,
                p,
                self.n_features,
                check_random_state(self.random_state),
            )
            self._model = FeatureExpansion(fmap, B, d)
        else:
            if kind == "nystrom":
                cap = int(self.n_features)
            else:
                cap = max(1024, X.shape[0] if self.truncation is None else 1024)
            self._model = SupportExpansion(self.kernel_, p, d, cap)

    def _renormalise(self) -> None:
        self._model.rescale(self._scale)
        self._scale = 1.0

    @property
    def _nystrom_pending(self) -> bool:
        """Nystrom features whose basis (the first ``n_features`` rows) is still being read."""
        return self.features == "nystrom" and isinstance(self._model, SupportExpansion)

    # ------------------------------------------------------------------ core
    def _learn(self, X: np.ndarray, Y: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
        """Run Algorithm 1 over the rows of ``X`` (steps scaled by the positive weights
        ``w``); return the online predictions f_{t-1}(x_t)."""
        n = X.shape[0]
        P = np.empty((n, self.n_outputs_))
        with serial_blas(n, min_size=_SERIAL_MIN_ROWS, max_size=None):
            start = 0
            while start < n:
                size = (
                    self._feature_block_size
                    if isinstance(self._model, FeatureExpansion)
                    else self._block_size
                )
                stop = start + size
                wb = None if w is None else w[start:stop]
                with np.errstate(over="ignore", invalid="ignore"):  # checked: _check_block
                    start += self._learn_block(X[start:stop], Y[start:stop], P[start:stop], wb)
        return P

    def _diverged(self, t: int, growth: tuple[float, float] | None = None) -> ValueError:
        what = (
            "non-finite prediction or coefficient"
            if growth is None
            else f"online prediction |f| = {growth[0]:.3g}, more than {GROWTH:.0e} times the "
            f"largest target seen ({growth[1]:.3g}), growing geometrically"
        )
        return ValueError(
            f"OLOK diverged at t={t} ({what}): the step is too "
            f"large for this kernel. With the squared loss keep eta_t ||K(x, x)||_op < 2, here "
            f"eta0={self.eta0!r}; lower eta0, use learning_rate='invscaling', or a smaller "
            "output_kernel"
        )

    def _check_block(self, t0: int, beta: np.ndarray, P: np.ndarray, Yb: np.ndarray) -> None:
        """Divergence guard: non-finite values, or (squared loss) online predictions growing
        geometrically past ``GROWTH`` times the largest target. Raises before anything is
        stored, so the model stays at time ``t0``."""
        if not (np.isfinite(beta).all() and np.isfinite(P).all()):
            bad = np.flatnonzero(~(np.isfinite(beta).all(1) & np.isfinite(P).all(1)))
            raise self._diverged(t0 + 1 + int(bad[0]))
        if self._grad_fn is grad_squared:
            # with the squared loss a stable step keeps the online predictions within a
            # modest multiple of the targets; an unstable one multiplies them by
            # |1 - eta k| > 1 at every step, so |f| > GROWTH x max|y| flags it after a few
            # rows instead of after overflow
            ymax = np.maximum.accumulate(np.max(np.abs(Yb), axis=1))
            ymax = np.maximum(ymax, self._ymax)
            pmax = np.max(np.abs(P), axis=1)
            grown = np.flatnonzero(pmax > GROWTH * ymax)
            if grown.size:
                j = int(grown[0])
                raise self._diverged(t0 + 1 + j, growth=(float(pmax[j]), float(ymax[j])))
            self._ymax = float(ymax[-1])

    def _learn_block(
        self, Xb: np.ndarray, Yb: np.ndarray, Pout: np.ndarray, wb: np.ndarray | None = None
    ) -> int:
        if self._scale < _RENORM:
            self._renormalise()
        t0 = self.t_
        if self._nystrom_pending:  # the basis is built exactly after row n_features
            Xb, Yb = Xb[: int(self.n_features) - t0], Yb[: int(self.n_features) - t0]
        b = Xb.shape[0]
        times = np.arange(t0 + 1, t0 + b + 1)
        eta = self._schedule.etas(times)
        if wb is not None:  # a weight scales its row's step (gradient and decay)
            eta = eta * wb[:b]
            big = np.flatnonzero(eta * float(self.alpha) >= 1.0)
            if big.size:
                j = int(big[0])
                raise ValueError(
                    f"sample_weight * eta_t * alpha must be < 1 (Algorithm 1's decay), but "
                    f"at t={t0 + 1 + j} it is {wb[j]!r} * {eta[j] / wb[j]:.4g} * "
                    f"{self.alpha!r} = {eta[j] * float(self.alpha):.4g}; lower the weight, "
                    "eta0 or alpha"
                )
        c_after = self._scale * np.cumprod(1.0 - eta * float(self.alpha))
        low = np.flatnonzero(c_after < _FLOOR)
        if low.size:  # shorten the block so that the scale cannot underflow inside it
            b = max(int(low[0]), 1)
            Xb, Yb, times, eta, c_after = Xb[:b], Yb[:b], times[:b], eta[:b], c_after[:b]
        c_before = np.concatenate(([self._scale], c_after[:-1]))
        s = self._schedule.windows(times)
        if s is None:
            w_before, w_after = None, None
        else:
            w_all = np.maximum.accumulate(np.maximum(times - s, self._w))
            w_before = np.concatenate(([self._w], w_all[:-1]))
            w_after = int(w_all[-1])
        old, Kin, lstarts = self._model.block_inputs(Xb, t0, w_before)
        P = Pout[:b]
        blk = BlockInputs(Kin, old, Yb, eta, c_before, c_after, lstarts)
        if self._B is not None and self._grad_fn is grad_squared:
            beta = block_solve_squared(blk, self._B, self._basis, P)
        else:
            beta = block_recursion(blk, self._B, self._grad_fn, float(self.epsilon), P)
        self._check_block(t0, beta, P, Yb)
        self._model.store(Xb, beta, w_after)
        if w_after is not None:
            self._w = w_after
        self._scale = float(c_after[-1])
        self.t_ = t0 + b
        if self._nystrom_pending and self.t_ == int(self.n_features):
            self._model = FeatureExpansion.from_support(cast(SupportExpansion, self._model))
        return b

    # ------------------------------------------------------------------ public API
    def _validate_xy(self, X: Any, y: Any, first: bool) -> tuple[np.ndarray, np.ndarray, bool]:
        check_not_complex(X, "X")
        check_not_complex(y, "y")
        X, y = validate_data(
            self, X, y, reset=first, multi_output=True, y_numeric=True, dtype=np.float64
        )
        y = np.asarray(y, dtype=np.float64)
        y_1d = y.ndim == 1
        Y = y.reshape(-1, 1) if y_1d else y
        if not first:
            if Y.shape[1] != self.n_outputs_:
                raise ValueError(
                    f"y has {Y.shape[1]} output(s), but {self.n_outputs_} were seen in the "
                    "first call to partial_fit"
                )
        return X, Y, y_1d

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> OLOKRegressor:
        """Reset, then one pass of Algorithm 1 over the rows of ``X`` in order.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array-like of shape (n_samples,), default=None
            Weights ``>= 0`` that scale each row's step: row ``t`` takes the step
            ``w_t eta_t`` (its gradient and its decay ``1 - w_t eta_t alpha``), i.e. the
            update of the instantaneous risk ``w_t R_inst``; a row of weight 0 is skipped
            (not counted in ``t``), exactly as if removed. An integer weight ``k`` is one
            step of size ``k eta_t``, not ``k`` steps (``docs/olok.md``).

        Returns
        -------
        self
        """
        for attr in ("kernel_", "t_"):
            if hasattr(self, attr):
                delattr(self, attr)
        X, Y, y_1d = self._validate_xy(X, y, first=True)
        X, Y, w = _drop_zero_weights(X, Y, check_sample_weight(sample_weight, X.shape[0]))
        self._init_state(X, Y.shape[1], y_1d, validated=True)
        self._learn(X, Y, w)
        return self

    def partial_fit(self, X: Any, y: Any, sample_weight: Any = None) -> OLOKRegressor:
        """Continue the stream with the rows of ``X`` (one row or a batch), in order.

        The first call fixes the number of features and outputs and, for an rbf kernel
        without ``gamma``, the bandwidth (from this batch's rows of positive weight).
        Calls on consecutive batches give the model of one :meth:`fit` on the rows in
        the same order (the updates are deterministic); this is what
        ``dask_ml.wrappers.Incremental`` needs (with ``shuffle_blocks=False``, since the
        order is the stream).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array-like of shape (n_samples,), default=None
            As in :meth:`fit`: each row's step scaled by its weight, zero-weight rows
            skipped.

        Returns
        -------
        self
        """
        first = not hasattr(self, "t_")
        X, Y, y_1d = self._validate_xy(X, y, first=first)
        w = check_sample_weight(sample_weight, X.shape[0], allow_all_zero=not first)
        X, Y, w = _drop_zero_weights(X, Y, w, allow_empty=not first)
        if X.shape[0] == 0:
            return self
        if first:
            self._init_state(X, Y.shape[1], y_1d)
        self._learn(X, Y, w)
        return self

    def progressive_predict(self, X: Any, y: Any) -> np.ndarray:
        """Test-then-train on a batch: like :meth:`partial_fit`, but return the online
        predictions ``f_{t-1}(x_t)`` made for each row *before* learning it (progressive
        validation; these are the predictions whose cumulative risk Theorem 1 bounds)."""
        first = not hasattr(self, "t_")
        X, Y, y_1d = self._validate_xy(X, y, first=first)
        if first:
            self._init_state(X, Y.shape[1], y_1d)
        P = self._learn(X, Y)
        return P[:, 0] if self._y_1d else P

    def _decision(self, X: np.ndarray) -> np.ndarray:
        return self._scale * self._model.decision(X)

    def predict(self, X: Any) -> np.ndarray:
        """``f_t(X)``, shape (n_samples,) if fitted on 1-D ``y``, else (n_samples, n_outputs)."""
        check_is_fitted(self, "t_")
        check_not_complex(X, "X")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        P = self._decision(X)
        return P[:, 0] if self._y_1d else P

    def _support(self) -> SupportExpansion:
        check_is_fitted(self, "t_")
        if not isinstance(self._model, SupportExpansion):
            raise AttributeError(
                f"a feature-space model (features={self.features!r}) has no support vectors "
                "or dual coefficients; see coef_ and feature_map_"
            )
        return self._model

    def _features(self) -> FeatureExpansion:
        check_is_fitted(self, "t_")
        if not isinstance(self._model, FeatureExpansion):
            raise AttributeError(
                "coef_ and feature_map_ exist for a feature-space model only (features set; "
                "for 'nystrom' once the first n_features rows are read)"
            )
        return self._model

    @property
    def support_vectors_(self) -> np.ndarray:
        return self._support().support.live()[0].copy()

    @property
    def dual_coef_(self) -> np.ndarray:
        return self._scale * self._support().support.live()[1]

    @property
    def coef_(self) -> np.ndarray:
        model = self._features()
        return self._scale * (model.V @ model.B)

    @property
    def feature_map_(self) -> FeatureMap:
        return self._features().fmap

    # ------------------------------------------------------------------ stream API
    def _x_row(self, x: Any) -> np.ndarray:
        if isinstance(x, Mapping):
            keys = getattr(self, "_x_keys", None)
            if keys is None:
                keys = list(x.keys())
                self._x_keys = keys
            if set(x.keys()) != set(keys):
                raise ValueError(
                    f"feature dict keys {sorted(map(str, x.keys()))} differ from the first "
                    f"ones {sorted(map(str, keys))}"
                )
            row = as_real_array([x[k] for k in keys], "x")
        else:
            row = as_real_array(x, "x")
            if row.ndim != 1:
                raise ValueError(
                    f"learn_one/predict_one take one sample (1-D), got shape {row.shape}"
                )
        return row.reshape(1, -1)

    def learn_one(self, x: Mapping | np.ndarray, y: Any) -> OLOKRegressor:
        """One step of Algorithm 1 on a single sample.

        Parameters
        ----------
        x : dict (feature name -> value) or 1-D array
            A dict's keys are fixed by the first call (order of that dict).
        y : float, 1-D array or dict (output name -> value)
        """
        if isinstance(y, Mapping):
            ykeys = getattr(self, "_y_keys", None)
            if ykeys is None:
                ykeys = list(y.keys())
                self._y_keys = ykeys
            if set(y.keys()) != set(ykeys):
                raise ValueError("target dict keys differ from the first ones")
            Y = as_real_array([[y[k] for k in ykeys]], "y")
        else:
            yy = as_real_array(y, "y")
            if yy.ndim > 1:
                raise ValueError(
                    f"learn_one takes one target (scalar or 1-D), got shape {yy.shape}"
                )
            Y = yy.reshape(1, -1) if yy.ndim == 1 else yy.reshape(1)
        return self.partial_fit(self._x_row(x), Y)

    def predict_one(self, x: Mapping | np.ndarray) -> Any:
        """``f_t(x)`` for one sample: a dict if targets were given as dicts, a float for a
        single scalar output, else a 1-D array. Before any learning: zeros (``f_0 = 0``)."""
        row = self._x_row(x)
        if not hasattr(self, "t_"):
            return 0.0
        p = self.predict(row)[0]
        if getattr(self, "_y_keys", None) is not None:
            return {k: float(v) for k, v in zip(self._y_keys, np.atleast_1d(p))}
        return float(p) if np.ndim(p) == 0 else p


# --------------------------------------------------------------------------- vv-RLS
class VVRLSRegressor(_VectorOutputRegressor):
    """Vector-valued regularised least squares, the batch counterpart of OLOK.

    ``min_f sum_i ||f(x_i) - y_i||^2 + alpha ||f||_H^2`` over the RKHS of ``K``; by the
    representer theorem ``f = sum_i K(., x_i) c_i`` with ``(K_blk + alpha I_{nd}) c = y``,
    where ``K_blk`` is the ``nd x nd`` block kernel matrix.

    For a decomposable kernel ``k(x, x') B`` the system reads ``K C B + alpha C = Y``
    (``C``, ``Y`` of shape (n, d)). With ``B = V diag(s) V^T`` (``eigh``), ``C' = C V`` and
    ``Y' = Y V`` it splits into ``d`` independent ``n x n`` problems
    ``(s_a K + alpha I) c'_a = y'_a``, solved by Cholesky; outputs sharing an eigenvalue share
    one factorisation (the paper's ``J`` has only two distinct eigenvalues), so the cost is
    ``O(n^3)`` per distinct eigenvalue instead of ``O(n^3 d^3)``. Columns with ``s_a = 0``
    do not affect predictions (``c'_a = y'_a / alpha``). General kernels are solved through
    the ``nd x nd`` system.

    Parameters
    ----------
    kernel, kernel_params, output_kernel
        As for :class:`OLOKRegressor`.
    alpha : float, default 1.0
        The regularisation ``lambda`` (> 0).
    random_state : int, RandomState or None
        Subsampling for the default bandwidth.
    max_memory_bytes : int or None, default 2 GiB
        Refuse (``MemoryError``, before building anything) a fit whose kernel matrices
        need more (:meth:`memory_estimate`: ``3 n^2`` float64 for a decomposable kernel,
        ``3 (nd)^2`` otherwise; n=15000 is about 5 GiB). None: no limit. For large n use
        :class:`OLOKRegressor` or a Nystrom approximation.

    Attributes
    ----------
    kernel_ : OperatorKernel
    X_fit_ : ndarray of shape (n, n_features)
    dual_coef_ : ndarray of shape (n, n_outputs)
        ``c_i``.

    See Also
    --------
    OLOKRegressor : The online counterpart (one pass, bounded memory with ``features``).

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels import VVRLSRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 4))
    >>> Y = np.c_[np.sin(X[:, 0]), np.cos(X[:, 1]), X[:, 2]]
    >>> model = VVRLSRegressor(kernel_params={"gamma": 0.2}, alpha=0.1).fit(X, Y)
    >>> model.dual_coef_.shape
    (200, 3)
    >>> bool(model.score(X, Y) > 0.9)
    True
    """

    _parameter_constraints: dict = {
        "kernel": [KernelSpec(allow_list=False, allow_precomputed=False), OperatorKernel],
        "kernel_params": [dict, None],
        "output_kernel": "no_validation",  # checked when the kernel is built
        "alpha": [positive_real()],
        "random_state": ["random_state"],
        "max_memory_bytes": [positive_int(), None],
    }

    def __init__(
        self,
        kernel: str | Callable | OperatorKernel = "rbf",
        kernel_params: dict | None = None,
        output_kernel: Any = None,
        alpha: float = 1.0,
        random_state: Any = None,
        max_memory_bytes: int | None = 2 * 1024**3,
    ):
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.output_kernel = output_kernel
        self.alpha = alpha
        self.random_state = random_state
        self.max_memory_bytes = max_memory_bytes

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> VVRLSRegressor:
        """Solve the vv-RLS system on ``(X, y)``.

        Raises ``MemoryError`` before any kernel is built when the estimated memory
        (:meth:`memory_estimate`) exceeds ``max_memory_bytes``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights ``>= 0``: ``min_f sum_i w_i ||f(x_i) - y_i||^2 +
            alpha ||f||^2``; an integer weight ``k`` gives the fit of the row repeated
            ``k`` times (the default bandwidth too), a zero weight that of the data
            without the row (rows of zero weight are dropped first).

        Returns
        -------
        self
        """
        check_not_complex(X, "X")
        check_not_complex(y, "y")
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        self._y_1d = y.ndim == 1
        Y = y.reshape(-1, 1) if self._y_1d else y
        w = check_sample_weight(sample_weight, X.shape[0])
        X, Y, w = _drop_zero_weights(X, Y, w)
        n, d = Y.shape
        self._check_memory(n, d)
        if n < 2 and isinstance(self.kernel, str) and not self.kernel_params:
            raise ValueError("got 1 sample; the default bandwidth needs at least 2 samples")
        kern = make_operator_kernel(self.kernel, self.kernel_params, self.output_kernel)
        rng = check_random_state(self.random_state)
        if isinstance(kern, DecomposableKernel):  # default bandwidth in double precision
            kern.fit(X, n_outputs=d, random_state=rng, sample_weight=w, precision="double")
        else:
            kern.fit(X, n_outputs=d, random_state=rng)
        lam = float(self.alpha)
        # weights: with S = diag(sqrt(w)) the weighted system is the unweighted one of
        # S K S and S Y in c' (c = S c')
        s = None if w is None else np.sqrt(w)
        if kern.decomposable:
            C = self._solve_decomposable(cast(DecomposableKernel, kern), X, Y, lam, s)
        else:
            C = self._solve_block(kern, X, Y, lam, s)
        self.kernel_ = kern
        self.X_fit_ = X
        self.dual_coef_ = C
        self.n_outputs_ = d
        return self

    def _check_memory(self, n: int, d: int) -> None:
        """MemoryError, before any kernel is built, above ``max_memory_bytes``."""
        need = self.memory_estimate(n, d)
        if self.max_memory_bytes is not None and need > self.max_memory_bytes:
            raise MemoryError(
                f"VVRLSRegressor needs about {need / 2**30:.2f} GiB for n={n} samples and "
                f"d={d} outputs (three {'n x n' if self._decomposable_hint() else 'nd x nd'} "
                f"float64 matrices), above max_memory_bytes={self.max_memory_bytes} "
                f"({self.max_memory_bytes / 2**30:.2f} GiB). Use OLOKRegressor (online, "
                "truncation=... bounds the memory), a Nystrom approximation (e.g. "
                "MVMLRegressor(n_landmarks=...) or BlockNystrom features with a linear "
                "ridge), or raise max_memory_bytes (None: no limit)."
            )

    def _solve_decomposable(
        self,
        kern: DecomposableKernel,
        X: np.ndarray,
        Y: np.ndarray,
        lam: float,
        sw: np.ndarray | None = None,
    ) -> np.ndarray:
        """``K = k(x, z) B``: in the eigenbasis of ``B = V diag(s) V^T`` the outputs
        decouple into ``(s_a K + lam I) c_a = (Y V)_a``, one Cholesky per distinct ``s_a``.
        ``sw``: square roots of the sample weights (``K`` -> ``S K S``, ``Y`` -> ``S Y``,
        ``C = S C'``)."""
        n, d = Y.shape
        K = kern.scalar(X, X)
        if sw is not None:
            K = sw[:, None] * K * sw[None, :]
            Y = sw[:, None] * Y
        s, V = robust_eigh(kern.B, what="output kernel B")
        Yr = Y @ V
        Cr = np.empty_like(Yr)
        tol = 1e-12 * max(abs(s).max(), 1e-300)
        done = np.zeros(d, dtype=bool)
        for a_idx in range(d):
            if done[a_idx]:
                continue
            group = np.flatnonzero(
                ~done & (np.abs(s - s[a_idx]) <= max(tol, 1e-10 * abs(s[a_idx])))
            )
            done[group] = True
            sa = float(s[a_idx])
            if sa <= tol:
                Cr[:, group] = Yr[:, group] / lam
                continue
            A = sa * K
            A.flat[:: n + 1] += lam
            Cr[:, group] = cho_solve(self._cholesky(A), Yr[:, group])
        C = Cr @ V.T
        return C if sw is None else sw[:, None] * C

    def _solve_block(
        self, kern: Any, X: np.ndarray, Y: np.ndarray, lam: float, sw: np.ndarray | None = None
    ) -> np.ndarray:
        """A general operator kernel: the ``nd x nd`` block system ``(K + lam I) c = y``
        (sample weights: that of ``(S x I) K (S x I)``, as for decomposable kernels)."""
        n, d = Y.shape
        Kb = kern.matrix(X)
        if sw is not None:
            sb = np.repeat(sw, d)  # sample-major blocks
            Kb = sb[:, None] * Kb * sb[None, :]
            Y = sw[:, None] * Y
        scale = max(np.abs(Kb).max(), 1e-300)
        if not np.allclose(Kb, Kb.T, rtol=0, atol=1e-8 * scale):
            raise ValueError(
                "the operator kernel's block matrix is not symmetric: K(x, z) must equal K(z, x)^T"
            )
        A = 0.5 * (Kb + Kb.T)
        A.flat[:: n * d + 1] += lam
        C = cho_solve(self._cholesky(A), Y.reshape(-1)).reshape(n, d)
        return C if sw is None else sw[:, None] * C

    def _decomposable_hint(self) -> bool:
        k = self.kernel
        return not isinstance(k, OperatorKernel) or bool(getattr(k, "decomposable", False))

    def memory_estimate(self, n_samples: int, n_outputs: int) -> int:
        """Bytes the fit needs: about ``3 n^2`` float64 for a decomposable kernel
        (the Gram matrix, the regularised copy and its Cholesky factor), ``3 (n d)^2``
        for a general operator kernel (the ``nd x nd`` block matrix)."""
        m = n_samples if self._decomposable_hint() else n_samples * n_outputs
        return int(3 * 8 * m * m)

    @staticmethod
    def _cholesky(A: np.ndarray) -> tuple[np.ndarray, bool]:
        try:
            return cho_factor(A, lower=True, check_finite=False)
        except np.linalg.LinAlgError as exc:
            raise ValueError(
                "the regularised kernel matrix is not positive definite: the operator "
                "kernel is not positive semi-definite, or alpha is too small"
            ) from exc

    def predict(self, X: Any) -> np.ndarray:
        """``f(X) = sum_i K(X, x_i) c_i``."""
        check_is_fitted(self, "dual_coef_")
        check_not_complex(X, "X")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        out = np.empty((X.shape[0], self.n_outputs_))
        step = max(1, 2**22 // self.X_fit_.shape[0])
        for a in range(0, X.shape[0], step):
            out[a : a + step] = self.kernel_.apply(X[a : a + step], self.X_fit_, self.dual_coef_)
        return out[:, 0] if self._y_1d else out

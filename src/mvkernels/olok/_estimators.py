"""OLOK: online learning with operator-valued kernels, and its batch counterpart vv-RLS.

Audiffren & Kadri (ESANN 2015), "Online Learning with Operator-valued Kernels".

OLOK (Algorithm 1) is NORMA with a matrix-valued kernel ``K(x, x') in R^{d x d}``. With
``f_0 = 0``, at time ``t`` with ``(x_t, y_t)``:

1. ``alpha_{t,t} = -eta_t grad_z l(z, y_t) at z = f_{t-1}(x_t)``;
2. ``alpha_{i,t} = (1 - eta_t lambda) alpha_{i,t-1}`` for ``i < t``;
3. (optional truncation) ``alpha_{i,t} = 0`` for ``i <= t - s_t`` (keep the last ``s_t``);
4. ``f_t(x) = sum_i K(x, x_i) alpha_{i,t}``,

the expansion of the stochastic gradient step of Eq. (1),
``f_t = (1 - eta_t lambda) f_{t-1} - eta_t K(x_t, .) grad_z l(f_{t-1}(x_t), y_t)``.

Implementation (exactly the algorithm above, only reorganised):

* **Lazy decay.** Step 2 is never applied to the stored coefficients. We keep one running
  scale ``c_t = prod_{u <= t} (1 - eta_u lambda)`` and store ``beta_i = alpha_{i,i} / c_i``,
  so ``alpha_{i,t} = c_t beta_i``. When ``c_t`` falls below ``1e-100`` the stored ``beta``
  are multiplied by ``c_t`` and ``c_t`` reset to 1 (renormalisation, no underflow).
* **Support storage** is preallocated and grows geometrically (doubling); truncation only
  moves the start of the live window, and the window is compacted to the front of the
  buffer instead of growing when more than half of the buffer is dead.
* **Block updates.** A batch is processed in blocks of ``b`` rows (``_block_size``, 256).
  The contribution of the support stored before the block to all ``b`` predictions is one
  vectorised kernel evaluation and product (masked by each row's truncation window). Within
  the block, row ``j``'s prediction depends on the coefficients of rows ``< j``, so the
  rows are resolved by a forward recursion over the strictly lower-triangular in-block
  kernel matrix: ``u_j = old_j + sum_{l<j} k(x_j, x_l) beta_l``,
  ``f_{t+j-1}(x_j) = c_{t+j-1} u_j B``, ``beta_j = alpha_{j,j} / c_{t+j}``. This is
  algebraically the per-sample algorithm (tests: to 1e-10 against
  :func:`olok_reference`, with and without truncation). For the squared loss and a
  decomposable kernel the recursion is linear in ``beta`` and is done as ``d`` unit
  lower-triangular solves in the eigenbasis of ``B`` (no Python loop over rows); other
  losses and general operator kernels run the row loop. Batches run with single-threaded
  BLAS (the block products are thin; threaded BLAS was 2-3x slower on shared cores).

Truncation schedules (``truncation``): ``None`` (keep everything), an integer ``s`` (fixed
window of the last ``s`` samples), or ``"theorem"``: Theorem 1's
``s_t = max(ceil(c t^{1/2 + eps}), t_0)`` with ``eps = truncation_eps``, ``c =
truncation_scale`` (default 1, the theorem's form; a constant factor keeps the theorem's
``t^{1/2 + eps}`` growth and only moves the work budget) and ``t_0`` from the theorem,
``t_0 = min{t : eta lambda < sqrt(t), exp(-eta lambda t^eps) <= eta lambda / sqrt(t),
t^{1/2 + eps} <= 0.75 t}`` (:func:`theorem_t0`), unless ``truncation_t0`` is
given. Note that the theorem's ``t_0`` is large (about 3e5 for ``eta lambda = 0.3`` and
``eps = 0.25``), so on shorter streams "theorem" keeps every sample.

Default bandwidth of an online learner: for an rbf (or laplacian) kernel without
``gamma``/``sigma`` the bandwidth is set once, from the *first batch* given to
:meth:`OLOKRegressor.partial_fit` (for :meth:`~OLOKRegressor.fit`, from the whole ``X``),
with MVML's rule (mean pairwise distance, subsampled to 2000 rows with ``random_state``),
and frozen afterwards (changing it later would change the function already learnt). A first
batch of one row (or :meth:`~OLOKRegressor.learn_one`) cannot set it: give ``gamma``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from numbers import Integral, Real
from typing import Any, cast

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular
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
from ..operator_kernels import DecomposableKernel, OperatorKernel

__all__ = ["OLOKRegressor", "VVRLSRegressor", "olok_reference", "theorem_t0"]

_RENORM = 1e-100  # renormalise the running scale below this
_FLOOR = 1e-200  # never let the scale go below this inside a block
# Batches of at least this many rows run on one BLAS thread: the block products are thin
# (measured 38 ms threaded against 16 ms serial for an rbf block 256 x 10000 x 50 on 2
# busy cores); learn_one skips the context switch, which costs more than the work.
_SERIAL_MIN_ROWS = 64


# --------------------------------------------------------------------------- helpers


def theorem_t0(eta: float, lam: float, eps: float, t_max: float = 1e15) -> int:
    """Theorem 1's ``t_0(lambda, eta, eps)``, the smallest integer ``t`` with

    ``eta lambda < sqrt(t)``, ``exp(-eta lambda t^eps) <= eta lambda t^{-1/2}`` and
    ``t^{1/2 + eps} <= 0.75 t``.

    Raises ``ValueError`` when ``eta * lam <= 0``, ``eps`` is not in (0, 1/2), or no such
    ``t`` exists below ``t_max``.
    """
    el = float(eta) * float(lam)
    if not el > 0:
        raise ValueError("the 'theorem' truncation needs eta0 * alpha > 0 (Theorem 1)")
    if not 0 < eps < 0.5:
        raise ValueError(f"truncation_eps must lie in (0, 0.5), got {eps!r}")

    def ok(t: np.ndarray | int) -> np.ndarray:
        t = np.asarray(t, dtype=np.float64)
        return (
            (el < np.sqrt(t))
            & (-el * t**eps <= np.log(el) - 0.5 * np.log(t))
            & (t ** (0.5 + eps) <= 0.75 * t)
        )

    start = 1
    while start <= 2_000_000:  # exact scan over the first two million integers
        t = np.arange(start, start + 200_000)
        hit = np.flatnonzero(ok(t))
        if hit.size:
            return int(t[hit[0]])
        start += 200_000
    # beyond: all three conditions are monotone (the second one's log-ratio is unimodal and
    # decreasing here), so double then bisect
    lo, hi = start - 1, 2 * start
    while not ok(hi):
        lo, hi = hi, 2 * hi
        if hi > t_max:
            raise ValueError(
                f"Theorem 1's t_0 exceeds {t_max:.0e} for eta*lambda={el}, eps={eps}; "
                "increase truncation_eps or give truncation_t0"
            )
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return int(hi)


def _grad_squared(P: np.ndarray, Y: np.ndarray, epsilon: float) -> np.ndarray:
    return P - Y


def _grad_eps(P: np.ndarray, Y: np.ndarray, epsilon: float) -> np.ndarray:
    R = P - Y
    nrm = np.linalg.norm(R, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        G = np.where(nrm > epsilon, R / np.where(nrm > 0, nrm, 1.0), 0.0)
    return G


def _loss_squared(P: np.ndarray, Y: np.ndarray, epsilon: float) -> np.ndarray:
    return 0.5 * np.sum((P - Y) ** 2, axis=-1)


def _loss_eps(P: np.ndarray, Y: np.ndarray, epsilon: float) -> np.ndarray:
    return np.maximum(np.linalg.norm(P - Y, axis=-1) - epsilon, 0.0)


#: growth test (squared loss): online predictions larger than this multiple of the largest
#: target seen so far mean the recursion is unstable (eta_t ||K(x, x)||_op >= 2)
_GROWTH = 1e6

_LOSSES = {
    "squared": (_loss_squared, _grad_squared),
    "squared_error": (_loss_squared, _grad_squared),
    "epsilon_insensitive": (_loss_eps, _grad_eps),
}


def _make_operator_kernel(kernel: Any, kernel_params: Any, output_kernel: Any) -> OperatorKernel:
    """A fresh (unfitted) operator kernel from estimator parameters."""
    if isinstance(kernel, OperatorKernel):
        if kernel_params:
            raise ValueError("kernel_params cannot be combined with an OperatorKernel instance")
        if output_kernel is not None:
            raise ValueError(
                "output_kernel cannot be combined with an OperatorKernel instance; "
                "the kernel defines its own output structure"
            )
        return copy.deepcopy(kernel)
    return DecomposableKernel(kernel, kernel_params, output_kernel)


# --------------------------------------------------------------------------- OLOK
class OLOKRegressor(RegressorMixin, BaseEstimator):
    """Online learning with operator-valued kernels (OLOK, Algorithm 1 of Audiffren & Kadri).

    Stochastic gradient descent on the instantaneous regularised risk
    ``R_inst(f, x, y) = l(f(x), y) + alpha/2 ||f||^2`` in the RKHS of the operator-valued kernel
    ``K(x, x') = k(x, x') B`` (Eq. (1)), with lazy decay, geometric support storage and exact
    block updates (see the module docstring).

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
    truncation_scale : float, default 1.0
        ``c > 0`` in that schedule (only for "theorem"): a constant factor on the window,
        i.e. on the work per step; Theorem 1's bound needs the ``t^{1/2+eps}`` growth only.
    truncation_t0 : int, optional
        ``t_0`` of that schedule; default: Theorem 1's value, :func:`theorem_t0`.
    loss : {"squared", "epsilon_insensitive"}, default "squared"
        ``1/2 ||z - y||^2`` (gradient ``z - y``) or ``max(0, ||z - y||_2 - epsilon)``
        (1-Lipschitz, Assumption 2 of Theorem 1).
    epsilon : float, default 0.1
        Width of the insensitive zone (epsilon-insensitive loss only).
    random_state : int, RandomState or None
        Only used to subsample rows for the default bandwidth; the updates are deterministic
        and follow the order of the rows (no shuffling: order is the stream).

    Attributes
    ----------
    kernel_ : OperatorKernel
        The fitted operator kernel (bandwidth and ``B`` resolved).
    t_ : int
        Number of samples seen (the time ``t``).
    support_vectors_ : ndarray of shape (m, n_features)
        Inputs of the live coefficients (the last ``s_t`` with truncation).
    dual_coef_ : ndarray of shape (m, n_outputs)
        ``alpha_{i,t}`` of the live support, scale factor applied.
    n_features_in_, n_outputs_ : int

    Notes
    -----
    ``learn_one``/``predict_one`` take river-style feature dicts (keys fixed by the first
    call, any order later) or 1-D arrays, and targets as a scalar, 1-D array or dict.
    ``fit`` resets the model and makes one pass; ``partial_fit`` continues the stream.
    """

    _block_size = 256
    _t0: int  # Theorem 1's t_0, set by _check_params for truncation="theorem"
    _parameter_constraints: dict = {
        "kernel": [KernelSpec(allow_list=False, allow_precomputed=False), OperatorKernel],
        "kernel_params": [dict, None],
        "output_kernel": "no_validation",  # checked when the kernel is built
        "eta0": [positive_real()],
        "learning_rate": [StrOptions({"invscaling", "constant"}), callable],
        "power_t": [nonnegative_real()],
        "alpha": [nonnegative_real()],
        "truncation": [Interval(Integral, 1, None, closed="left"), StrOptions({"theorem"}), None],
        "truncation_eps": [Interval(Real, 0, 0.5, closed="neither")],
        "truncation_t0": [positive_int(), None],
        "truncation_scale": [positive_real()],
        "loss": [StrOptions(set(_LOSSES))],
        "epsilon": [nonnegative_real()],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        kernel: str | Callable | OperatorKernel = "rbf",
        kernel_params: dict | None = None,
        output_kernel: Any = None,
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags

    # ------------------------------------------------------------------ parameters
    def _check_params(self) -> None:
        self._validate_params()  # every parameter (_parameter_constraints), then the joint rules

        def pos(name: str, v: Any, strict: bool = True) -> float:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.number)):
                raise TypeError(f"{name} must be a number, got {v!r}")
            v = float(v)
            if not np.isfinite(v) or (v <= 0 if strict else v < 0):
                raise ValueError(f"{name} must be {'>' if strict else '>='} 0, got {v!r}")
            return v

        pos("eta0", self.eta0)
        pos("alpha", self.alpha, strict=False)
        pos("power_t", self.power_t, strict=False)
        pos("epsilon", self.epsilon, strict=False)
        if self.loss not in _LOSSES:
            raise ValueError(f"loss must be one of {sorted(_LOSSES)}, got {self.loss!r}")
        lr = self.learning_rate
        if not (callable(lr) or lr in ("invscaling", "constant")):
            raise ValueError(
                f"learning_rate must be 'invscaling', 'constant' or a callable, got {lr!r}"
            )
        if not callable(lr) and self.eta0 * self.alpha >= 1:
            raise ValueError(
                f"eta_t * alpha must be < 1 for every t (Algorithm 1), but eta_1 * alpha = "
                f"{self.eta0} * {self.alpha} = {self.eta0 * self.alpha:.4g}; lower eta0 or alpha"
            )
        tr = self.truncation
        if tr is None:
            self._window_kind = None
        elif isinstance(tr, str):
            if tr != "theorem":
                raise ValueError(
                    f"truncation must be None, a positive int or 'theorem', got {tr!r}"
                )
            self._window_kind = "theorem"
            c = self.truncation_scale
            if isinstance(c, bool) or not isinstance(c, Real) or not (np.isfinite(c) and c > 0):
                raise ValueError(f"truncation_scale must be a finite number > 0, got {c!r}")
            if self.truncation_t0 is None:
                self._t0 = theorem_t0(self.eta0, self.alpha, float(self.truncation_eps))
            else:
                if int(self.truncation_t0) < 1:
                    raise ValueError(f"truncation_t0 must be >= 1, got {self.truncation_t0!r}")
                if not 0 < float(self.truncation_eps) < 0.5:
                    raise ValueError(
                        f"truncation_eps must lie in (0, 0.5), got {self.truncation_eps!r}"
                    )
                self._t0 = int(self.truncation_t0)
        elif isinstance(tr, (int, np.integer)) and not isinstance(tr, (bool, np.bool_)):
            if tr < 1:
                raise ValueError(f"truncation window must be >= 1, got {tr}")
            self._window_kind = "fixed"
        else:
            raise TypeError(f"truncation must be None, a positive int or 'theorem', got {tr!r}")

    def _etas(self, t: np.ndarray) -> np.ndarray:
        """Learning rates ``eta_t`` for 1-based times ``t``, with the ``eta_t alpha < 1`` check."""
        lr = self.learning_rate
        if lr == "constant":
            eta = np.full(t.shape, float(self.eta0))
        elif lr == "invscaling":
            eta = float(self.eta0) / np.power(t.astype(np.float64), float(self.power_t))
        else:
            schedule = cast(Callable[..., Any], lr)  # validated: a callable here
            eta = np.asarray(schedule(t.copy()), dtype=np.float64)
            if eta.shape != t.shape:
                eta = np.broadcast_to(eta, t.shape).astype(np.float64)
        if not (np.isfinite(eta).all() and (eta > 0).all()):
            raise ValueError("the learning rate eta_t must be finite and > 0")
        bad = eta * float(self.alpha) >= 1
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"eta_t * alpha must be < 1 (Algorithm 1); at t={int(t[i])} it is "
                f"{eta[i]:.4g} * {self.alpha} = {eta[i] * self.alpha:.4g}"
            )
        return eta

    def _windows(self, t: np.ndarray) -> np.ndarray | None:
        """Truncation sizes ``s_t`` (None: no truncation)."""
        if self._window_kind is None:
            return None
        if self._window_kind == "fixed":
            return np.full(t.shape, int(self.truncation), dtype=np.int64)
        s = np.ceil(
            float(self.truncation_scale)
            * np.power(t.astype(np.float64), 0.5 + float(self.truncation_eps))
        )
        return np.maximum(s.astype(np.int64), self._t0)

    # ------------------------------------------------------------------ state
    def _init_state(self, X: np.ndarray, d: int, y_1d: bool) -> None:
        self._check_params()
        self.kernel_ = _make_operator_kernel(self.kernel, self.kernel_params, self.output_kernel)
        if (
            isinstance(self.kernel_, DecomposableKernel)
            and X.shape[0] < 2
            and self.kernel_.scalar_kernel.name in ("rbf", "laplacian")
            and not {"gamma", "sigma"}
            & {k for k, v in self.kernel_.scalar_kernel.params.items() if v is not None}
        ):
            raise ValueError(
                "got 1 sample in the first batch: the default rbf/laplacian bandwidth is set "
                "from the first batch and needs at least 2 rows; pass a larger first batch or "
                "set kernel_params={'gamma': ...}"
            )
        self.kernel_.fit(X, n_outputs=d, random_state=check_random_state(self.random_state))
        self._B = cast(DecomposableKernel, self.kernel_).B if self.kernel_.decomposable else None
        self._B_eig = robust_eigh(self._B, what="output kernel B") if self._B is not None else None
        self.n_outputs_ = d
        self._y_1d = y_1d
        self._loss_fn, self._grad_fn = _LOSSES[self.loss]
        self.t_ = 0
        self._ymax = 0.0  # largest |target| seen (growth test of the squared loss)
        cap = max(1024, X.shape[0] if self._window_kind is None else 1024)
        self._Xs = np.empty((cap, X.shape[1]))
        self._beta = np.empty((cap, d))
        self._lo = 0  # live window [lo, hi) of the buffers
        self._hi = 0
        self._offset = 1  # global (1-based) time of buffer row 0
        self._scale = 1.0  # c_t
        self._w = 0  # coefficients with time <= w are truncated

    def _reserve(self, b: int) -> None:
        cap = self._Xs.shape[0]
        if self._hi + b <= cap:
            return
        live = self._hi - self._lo
        new_cap = cap if live + b <= cap // 2 else max(2 * cap, live + b)
        Xs = np.empty((new_cap, self._Xs.shape[1])) if new_cap != cap else self._Xs
        beta = np.empty((new_cap, self._beta.shape[1])) if new_cap != cap else self._beta
        Xs[:live] = self._Xs[self._lo : self._hi]
        beta[:live] = self._beta[self._lo : self._hi]
        self._Xs, self._beta = Xs, beta
        self._offset += self._lo
        self._lo, self._hi = 0, live

    def _renormalise(self) -> None:
        self._beta[self._lo : self._hi] *= self._scale
        self._scale = 1.0

    # ------------------------------------------------------------------ core
    def _learn(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """Run Algorithm 1 over the rows of ``X``; return the online predictions f_{t-1}(x_t)."""
        n = X.shape[0]
        P = np.empty((n, self.n_outputs_))
        with serial_blas(n, min_size=_SERIAL_MIN_ROWS, max_size=None):
            self._learn_rows(X, Y, P)
        return P

    def _learn_rows(self, X: np.ndarray, Y: np.ndarray, P: np.ndarray) -> None:
        n, start = X.shape[0], 0
        while start < n:
            with np.errstate(over="ignore", invalid="ignore"):  # checked: _diverged
                done = self._learn_block(
                    X[start : start + self._block_size],
                    Y[start : start + self._block_size],
                    P[start : start + self._block_size],
                )
            start += done

    def _diverged(self, t: int, growth: tuple[float, float] | None = None) -> ValueError:
        what = (
            "non-finite prediction or coefficient"
            if growth is None
            else f"online prediction |f| = {growth[0]:.3g}, more than {_GROWTH:.0e} times the "
            f"largest target seen ({growth[1]:.3g}), growing geometrically"
        )
        return ValueError(
            f"OLOK diverged at t={t} ({what}): the step is too "
            f"large for this kernel. With the squared loss keep eta_t ||K(x, x)||_op < 2, here "
            f"eta0={self.eta0!r}; lower eta0, use learning_rate='invscaling', or a smaller "
            "output_kernel"
        )

    def _block_recursion(self, Kin, old, Yb, eta, c_before, c_after, lstarts, Pout):
        """Rows of a block one after the other (any loss, any operator kernel): row ``j``'s
        prediction uses the in-block coefficients ``lstarts[j] <= l < j`` found before it,
        ``u_j = old_j + sum_l K(x_j, x_l) beta_l``, ``f_{t+j-1}(x_j) = c_{t+j-1} u_j``
        (times ``B``), ``beta_j = alpha_{j,j} / c_{t+j}``."""
        B = self._B
        b, d = old.shape
        beta_blk = np.empty((b, d))
        grad, eps = self._grad_fn, float(self.epsilon)
        for j in range(b):
            lstart = int(lstarts[j])
            if j > lstart:
                if B is not None:
                    u = old[j] + Kin[j, lstart:j] @ beta_blk[lstart:j]
                else:
                    u = old[j] + np.einsum("lab,lb->a", Kin[j, lstart:j], beta_blk[lstart:j])
            else:
                u = old[j]
            p = c_before[j] * (u @ B if B is not None else u)
            Pout[j] = p
            beta_blk[j] = (-eta[j] / c_after[j]) * grad(p, Yb[j], eps)
        return beta_blk

    def _block_solve_squared(self, Kin, old, Yb, eta, c_before, c_after, lstarts, Pout):
        """The same recursion for the squared loss and ``K = k B``, as one linear solve.

        With ``a_j = eta_j / c_{t+j}``, ``g_j = a_j c_{t+j-1}`` and ``L`` the strictly lower
        triangular in-block scalar kernel matrix (entries outside the truncation window
        zeroed), the recursion ``beta_j = -a_j (c_{t+j-1} (old_j + L_j beta) B - y_j)`` reads
        ``beta + diag(g) L beta B = diag(a) Y - diag(g) old B``. In the eigenbasis of
        ``B = V diag(s) V^T`` it splits into ``d`` unit lower-triangular systems
        ``(I + s_k diag(g) L) beta'_k = r'_k`` (forward substitution: the same sums as the
        per-sample algorithm, in a different order)."""
        b = old.shape[0]
        B = self._B
        a = eta / c_after
        g = a * c_before
        L = np.tril(Kin, -1)
        if lstarts.any():
            L[np.arange(b)[None, :] < lstarts[:, None]] = 0.0
        R = a[:, None] * Yb - g[:, None] * (old @ B)
        s, V = self._B_eig
        Rr = R @ V
        gL = g[:, None] * L
        beta_r = np.empty_like(Rr)
        for k in range(s.size):
            M = s[k] * gL
            M.flat[:: b + 1] = 1.0
            beta_r[:, k] = solve_triangular(
                M, Rr[:, k], lower=True, unit_diagonal=True, check_finite=False
            )
        beta_blk = beta_r @ V.T
        Pout[:b] = c_before[:, None] * ((old + L @ beta_blk) @ B)
        return beta_blk

    def _learn_block(self, Xb: np.ndarray, Yb: np.ndarray, Pout: np.ndarray) -> int:
        if self._scale < _RENORM:
            self._renormalise()
        t0 = self.t_
        b = Xb.shape[0]
        times = np.arange(t0 + 1, t0 + b + 1)
        eta = self._etas(times)
        factors = 1.0 - eta * float(self.alpha)
        c_after = self._scale * np.cumprod(factors)
        low = np.flatnonzero(c_after < _FLOOR)
        if low.size:  # shorten the block so that the scale cannot underflow inside it
            b = max(int(low[0]), 1)
            Xb, Yb, times, eta, c_after = Xb[:b], Yb[:b], times[:b], eta[:b], c_after[:b]
        c_before = np.concatenate(([self._scale], c_after[:-1]))
        s = self._windows(times)
        if s is None:
            w_before = None
            w_after_last = self._w
        else:
            w_after = np.maximum.accumulate(np.maximum(times - s, self._w))
            w_before = np.concatenate(([self._w], w_after[:-1]))
            w_after_last = int(w_after[-1])

        K = self.kernel_
        B = self._B
        d = self.n_outputs_
        lo, hi = self._lo, self._hi
        # contribution of the support stored before the block (one vectorised product)
        if hi > lo:
            Xsup, bsup = self._Xs[lo:hi], self._beta[lo:hi]
            gsup = self._offset + np.arange(lo, hi)
            if B is not None:
                S = cast(DecomposableKernel, K).scalar(Xb, Xsup)
                if w_before is not None and w_before[-1] >= gsup[0]:
                    S = S * (gsup[None, :] > w_before[:, None])
                old = S @ bsup
            else:
                G = K.blocks(Xb, Xsup)
                if w_before is not None and w_before[-1] >= gsup[0]:
                    G = G * (gsup[None, :] > w_before[:, None])[:, :, None, None]
                old = np.einsum("jiab,ib->ja", G, bsup)
        else:
            old = np.zeros((b, d))
        Kin = cast(DecomposableKernel, K).scalar(Xb, Xb) if B is not None else K.blocks(Xb, Xb)
        if w_before is None:
            lstarts = np.zeros(b, dtype=np.int64)
        else:  # row j sees the in-block coefficients l >= lstarts[j] (truncation window)
            lstarts = np.maximum(0, w_before.astype(np.int64) - t0)
        if B is not None and self._grad_fn is _grad_squared:
            beta_blk = self._block_solve_squared(
                Kin, old, Yb, eta, c_before, c_after, lstarts, Pout
            )
        else:
            beta_blk = self._block_recursion(Kin, old, Yb, eta, c_before, c_after, lstarts, Pout)
        if not (np.isfinite(beta_blk).all() and np.isfinite(Pout[:b]).all()):
            bad = np.flatnonzero(~(np.isfinite(beta_blk).all(1) & np.isfinite(Pout[:b]).all(1)))
            raise self._diverged(t0 + 1 + int(bad[0]))  # state left at time t0, unchanged
        if self._grad_fn is _grad_squared:
            # growth test: with the squared loss a stable step keeps the online predictions
            # within a modest multiple of the targets; an unstable one multiplies them by
            # |1 - eta k| > 1 at every step, so |f| > GROWTH x max|y| flags it after a few
            # rows instead of after overflow (the model stays at time t0)
            ymax = np.maximum.accumulate(np.max(np.abs(Yb), axis=1))
            ymax = np.maximum(ymax, self._ymax)
            pmax = np.max(np.abs(Pout[:b]), axis=1)
            grown = np.flatnonzero(pmax > _GROWTH * ymax)
            if grown.size:
                j = int(grown[0])
                raise self._diverged(t0 + 1 + j, growth=(float(pmax[j]), float(ymax[j])))
            self._ymax = float(ymax[-1])
        # store the block, then truncate and advance the clock
        self._reserve(b)
        self._Xs[self._hi : self._hi + b] = Xb
        self._beta[self._hi : self._hi + b] = beta_blk
        self._hi += b
        self._w = w_after_last
        self._lo = max(self._lo, min(self._hi, self._w + 1 - self._offset))
        self._scale = float(c_after[-1])
        self.t_ = t0 + b
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

    def fit(self, X: Any, y: Any) -> OLOKRegressor:
        """Reset, then one pass of Algorithm 1 over the rows of ``X`` in order.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        """
        for attr in ("kernel_", "t_"):
            if hasattr(self, attr):
                delattr(self, attr)
        X, Y, y_1d = self._validate_xy(X, y, first=True)
        self._init_state(X, Y.shape[1], y_1d)
        self._learn(X, Y)
        return self

    def partial_fit(self, X: Any, y: Any) -> OLOKRegressor:
        """Continue the stream with the rows of ``X`` (one row or a batch), in order.

        The first call fixes the number of features and outputs and, for an rbf kernel
        without ``gamma``, the bandwidth (from this batch).
        """
        first = not hasattr(self, "t_")
        X, Y, y_1d = self._validate_xy(X, y, first=first)
        if first:
            self._init_state(X, Y.shape[1], y_1d)
        self._learn(X, Y)
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
        out = np.zeros((X.shape[0], self.n_outputs_))
        lo, hi = self._lo, self._hi
        if hi > lo:
            Xsup, bsup = self._Xs[lo:hi], self._beta[lo:hi]
            step = max(1, 2**22 // max(hi - lo, 1))
            for a in range(0, X.shape[0], step):
                out[a : a + step] = self.kernel_.apply(X[a : a + step], Xsup, bsup)
            out *= self._scale
        return out

    def predict(self, X: Any) -> np.ndarray:
        """``f_t(X)``, shape (n_samples,) if fitted on 1-D ``y``, else (n_samples, n_outputs)."""
        check_is_fitted(self, "t_")
        check_not_complex(X, "X")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        P = self._decision(X)
        return P[:, 0] if self._y_1d else P

    @property
    def support_vectors_(self) -> np.ndarray:
        check_is_fitted(self, "t_")
        return self._Xs[self._lo : self._hi].copy()

    @property
    def dual_coef_(self) -> np.ndarray:
        check_is_fitted(self, "t_")
        return self._scale * self._beta[self._lo : self._hi]

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


# --------------------------------------------------------------------------- reference
def olok_reference(
    est: OLOKRegressor, X: np.ndarray, Y: np.ndarray, snapshots: tuple[int, ...] = ()
) -> dict[str, Any]:
    """Plain per-sample Algorithm 1, literally: explicit decay of every coefficient at every
    step, explicit zeroing for truncation, full-kernel prediction ``O(t d)`` per step.

    Uses the kernel, schedules and loss of the (unfitted) estimator ``est``, with the
    bandwidth set from ``X`` as :meth:`OLOKRegressor.fit` does. Reference for the tests and
    the speed comparison of the benchmark, not for use.

    Returns
    -------
    dict with ``predictions`` (T, d) = ``f_{t-1}(x_t)``, ``alpha`` (T, d) = ``alpha_{i,T}``,
    ``snapshots`` {t: alpha (t, d)}, ``kernel`` (the fitted OperatorKernel).
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    Y = Y.reshape(-1, 1) if Y.ndim == 1 else Y
    T, d = Y.shape
    est = copy.deepcopy(est)
    est._check_params()
    kernel = _make_operator_kernel(est.kernel, est.kernel_params, est.output_kernel)
    kernel.fit(X, n_outputs=d, random_state=check_random_state(est.random_state))
    _, grad = _LOSSES[est.loss]
    times = np.arange(1, T + 1)
    etas = est._etas(times)
    windows = est._windows(times)
    lam = float(est.alpha)
    alpha = np.zeros((T, d))
    P = np.zeros((T, d))
    snaps = {}
    for t in range(T):
        if t > 0:
            P[t] = kernel.apply(X[t : t + 1], X[:t], alpha[:t])[0]  # f_{t-1}(x_t)
        a_new = -etas[t] * grad(P[t], Y[t], float(est.epsilon))  # step 1
        alpha[:t] *= 1.0 - etas[t] * lam  # step 2
        alpha[t] = a_new
        if windows is not None:  # step 3
            alpha[: max(0, t + 1 - int(windows[t]))] = 0.0
        if t + 1 in snapshots:
            snaps[t + 1] = alpha[: t + 1].copy()
    return {"predictions": P, "alpha": alpha, "snapshots": snaps, "kernel": kernel}


# --------------------------------------------------------------------------- vv-RLS
class VVRLSRegressor(RegressorMixin, BaseEstimator):
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> VVRLSRegressor:
        """Solve the vv-RLS system on ``(X, y)``.

        Raises ``MemoryError`` before any kernel is built when the estimated memory
        (:meth:`memory_estimate`) exceeds ``max_memory_bytes``.
        """
        a = self.alpha
        check_not_complex(X, "X")
        check_not_complex(y, "y")
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        self._y_1d = y.ndim == 1
        Y = y.reshape(-1, 1) if self._y_1d else y
        n, d = Y.shape
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
        if n < 2 and isinstance(self.kernel, str) and not self.kernel_params:
            raise ValueError("got 1 sample; the default bandwidth needs at least 2 samples")
        kern = _make_operator_kernel(self.kernel, self.kernel_params, self.output_kernel)
        kern.fit(X, n_outputs=d, random_state=check_random_state(self.random_state))
        lam = float(a)
        if kern.decomposable:
            dkern = cast(DecomposableKernel, kern)
            K = dkern.scalar(X, X)
            s, V = robust_eigh(dkern.B, what="output kernel B")
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
        else:
            Kb = kern.matrix(X)
            scale = max(np.abs(Kb).max(), 1e-300)
            if not np.allclose(Kb, Kb.T, rtol=0, atol=1e-8 * scale):
                raise ValueError(
                    "the operator kernel's block matrix is not symmetric: K(x, z) must equal "
                    "K(z, x)^T"
                )
            A = 0.5 * (Kb + Kb.T)
            A.flat[:: n * d + 1] += lam
            C = cho_solve(self._cholesky(A), Y.reshape(-1)).reshape(n, d)
        self.kernel_ = kern
        self.X_fit_ = X
        self.dual_coef_ = C
        self.n_outputs_ = d
        return self

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

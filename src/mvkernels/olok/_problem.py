"""Problem data of OLOK: losses, the operator kernel, the step and truncation schedules."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ..operator_kernels import DecomposableKernel, OperatorKernel

#: growth test (squared loss): online predictions larger than this multiple of the largest
#: target seen so far mean the recursion is unstable (eta_t ||K(x, x)||_op >= 2)
GROWTH = 1e6


def grad_squared(P: np.ndarray, Y: np.ndarray, epsilon: float) -> np.ndarray:
    """Gradient of ``1/2 ||z - y||^2`` in ``z``."""
    return P - Y


def grad_eps(P: np.ndarray, Y: np.ndarray, epsilon: float) -> np.ndarray:
    """A subgradient of ``max(0, ||z - y||_2 - epsilon)`` in ``z`` (0 at the kink)."""
    R = P - Y
    nrm = np.linalg.norm(R, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        G = np.where(nrm > epsilon, R / np.where(nrm > 0, nrm, 1.0), 0.0)
    return G


def loss_squared(P: np.ndarray, Y: np.ndarray, epsilon: float) -> np.ndarray:
    return 0.5 * np.sum((P - Y) ** 2, axis=-1)


def loss_eps(P: np.ndarray, Y: np.ndarray, epsilon: float) -> np.ndarray:
    return np.maximum(np.linalg.norm(P - Y, axis=-1) - epsilon, 0.0)


LOSSES = {
    "squared": (loss_squared, grad_squared),
    "squared_error": (loss_squared, grad_squared),
    "epsilon_insensitive": (loss_eps, grad_eps),
}


def make_operator_kernel(kernel: Any, kernel_params: Any, output_kernel: Any) -> OperatorKernel:
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


def theorem_t0(eta: float, lam: float, eps: float, t_max: float = 1e15) -> int:
    """Theorem 1's ``t_0(lambda, eta, eps)``, the smallest integer ``t`` with

    ``eta lambda < sqrt(t)``, ``exp(-eta lambda t^eps) <= eta lambda t^{-1/2}`` and
    ``t^{1/2 + eps} <= 0.75 t``.

    Parameters
    ----------
    eta : float
        The step-size constant ``eta`` of Theorem 1.
    lam : float
        The regularisation ``lambda``.
    eps : float in (0, 1/2)
        The exponent ``epsilon`` of the truncation window ``t^{1/2 + eps}``.
    t_max : float, default=1e15
        Search limit.

    Returns
    -------
    int
        ``t_0``.

    Raises
    ------
    ValueError
        When ``eta * lam <= 0``, ``eps`` is not in (0, 1/2), or no such ``t`` exists below
        ``t_max``.

    Examples
    --------
    >>> from mvkernels.olok import theorem_t0
    >>> theorem_t0(0.1, 3.0, 0.25) > 100_000  # the second condition makes it large
    True
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


@dataclass(frozen=True)
class Schedule:
    """Step sizes ``eta_t`` and truncation windows ``s_t`` of one stream (1-based ``t``).

    ``window_kind``: None (no truncation), ``"fixed"`` (``s_t = window``) or ``"theorem"``
    (``s_t = max(ceil(scale t^{1/2 + eps}), t0)``).
    """

    learning_rate: str | Callable
    eta0: float
    power_t: float
    alpha: float
    window_kind: str | None = None
    window: int = 0
    eps: float = 0.25
    scale: float = 1.0
    t0: int = 1

    def etas(self, t: np.ndarray) -> np.ndarray:
        """Learning rates ``eta_t`` for 1-based times ``t``, with the ``eta_t alpha < 1``
        check of Algorithm 1 (a clear error naming the first bad ``t``)."""
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

    def windows(self, t: np.ndarray) -> np.ndarray | None:
        """Truncation sizes ``s_t`` (None: no truncation)."""
        if self.window_kind is None:
            return None
        if self.window_kind == "fixed":
            return np.full(t.shape, int(self.window), dtype=np.int64)
        s = np.ceil(self.scale * np.power(t.astype(np.float64), 0.5 + self.eps))
        return np.maximum(s.astype(np.int64), self.t0)

"""The metric part of MVML: the metric kinds, the backtracking A-step (eq. 9/12, 16/18)
and the metric storage.

The formulas on one metric matrix (factorisations, the dense and sparse A-step updates,
the penalties, the fixed Cov metric's value, the view weights of eq. 10/17) are pure
functions in :mod:`mvkernels.mvml._metric_algebra`, imported from there by their users
(not re-exported here). This module holds what Algorithm 1 does with them, shared by
every MVML estimator (square and hinge loss): the dense reference path
(:func:`mvkernels.mvml._driver.reference_paths`) and the structured solvers of
:mod:`mvkernels.mvml._lowrank`. The kinds and the storage live together: a kind
builds its initial metric (:meth:`MetricKind.initial`, a :class:`Metric`) and the
storage runs the kind's A-step.

One backtracking rule for the A-steps on one matrix (:func:`metric_step`, a batch of one)
and on a batch (:meth:`~mvkernels.mvml._lowrank.LowRankMetrics.a_step`): the cap
(:meth:`MetricKind.capped_step`), the test (:func:`sufficient_decrease`), the halving and
the give-up (:func:`backtrack`) and the first size each A-step tries
(:func:`first_step_size`, :func:`next_step_size`), written once. The step is a method of
the metric kind (:meth:`MetricKind.candidate`), not a comparison of names.

Storage. Every metric a path holds or hands on is a :class:`Metric`: ``dense()``,
``matvec(x)``, ``factor`` (``A = F F^T`` for the g-step), ``penalty(kind)``,
``min_eigenvalue()``, ``a_step(...)`` and ``low_rank_form()``, behind two storages:
:class:`MatrixMetric` (the dense matrix and its :class:`PSDFactor`: the reference path's
iterate, which also tracks ``s I + V V^T`` from ``A = I`` under dense steps, and the fixed
metrics) and :class:`~mvkernels.mvml._lowrank.LowRankMetric` (``s I + V V^T``: the
structured paths' metrics, taken out of their batch by
:meth:`~mvkernels.mvml._lowrank.LowRankMetrics.take`). The initial metric of a fit
(``A0``) is one :class:`Metric`, built once by its kind with its factorisation
(:meth:`MetricKind.initial`) and handed to every path of the fit, which read its
factor instead of factoring it again. A path's result holds its metric under
``"metric"``; the estimators build their fitted store from those
(:meth:`~mvkernels.mvml._lowrank.MetricStack.from_metrics`, each in its most compact
form, one store for every problem, one-vs-one's pairs included) and never ask which
storage they hold.

Adding a metric: a :class:`MetricKind` registered in :data:`METRIC_KINDS` (whether it is
learned, its initial value, its penalty and, if learned, its A-step candidate and the
smooth part of its objective; whether the structured paths cover it). A new storage
(e.g. a block-diagonal one) is a :class:`Metric` subclass implementing the accessors
above (``dense`` and ``factor`` at least; the others have dense defaults), with its own
compact form in :meth:`~mvkernels.mvml._lowrank.MetricStack.from_metrics` if it has one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._metric_algebra import (
    NotPSDError,
    PSDFactor,
    dense_metric_update,
    metric_penalty,
    min_eigenvalue,
    sparse_metric_update,
)

__all__ = [
    "MAX_BACKTRACK",
    "STEP_CAP",
    "dense_step_cap",
    "first_step_size",
    "next_step_size",
    "sufficient_decrease",
    "backtrack",
    "metric_step",
    "Metric",
    "MatrixMetric",
    "MetricKind",
    "DenseMetric",
    "SparseMetric",
    "IdentityMetric",
    "CovMetric",
    "METRIC_KINDS",
    "METRICS",
    "LEARNED_METRICS",
    "metric_kind",
    "learned_kind",
]


#: halvings of the A-step size before a step is given up (the step is then 0)
MAX_BACKTRACK = 40
#: what an attempt on a batch of one returns (:func:`metric_step`)
_ACCEPTED, _REJECTED = np.ones(1, dtype=bool), np.zeros(1, dtype=bool)
#: the dense A-step's size is capped at ``STEP_CAP / eta`` (< 1/(2 eta): eq. 9 / 16 keep
#: ``A+ = (1 - 2 mu eta) A + mu alpha q q^T`` positive definite)
STEP_CAP = 0.499


def dense_step_cap(mu: Any, eta: Any) -> Any:
    """The dense A-step size ``mu`` capped at ``STEP_CAP / eta`` (scalars or arrays)."""
    return np.minimum(mu, STEP_CAP / eta) if isinstance(mu, np.ndarray) else min(mu, STEP_CAP / eta)


def first_step_size(norm_A: Any, grad_norm: Any, eta: Any) -> Any:
    """``step_size="auto"``: the first A-step's size ``mu0 = ||A||_F / ||grad||_F`` (the step
    moves ``A`` by at most ``||A||_F``), ``1 / eta`` where the gradient of the smooth part
    is zero (scalars or arrays: one per problem of a batch). The one rule of the dense
    reference path (:func:`~mvkernels.mvml._driver.initial_step`) and the low-rank
    batched step (:meth:`~mvkernels.mvml._lowrank.LowRankMetrics.a_step`)."""
    if isinstance(grad_norm, np.ndarray):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(grad_norm > 0, norm_A / grad_norm, 1.0 / eta)
    return norm_A / grad_norm if grad_norm > 0 else 1.0 / eta


def next_step_size(accepted: Any, mu: Any, prev: Any) -> Any:
    """The first size the next A-step tries: twice the accepted step ``mu``; after a step
    given up, half the previous first size ``prev``, or none yet (``step_size="auto"``'s
    :func:`first_step_size` again: None for a scalar, NaN in an array). Scalars or arrays
    (one per problem of a batch), for the same two paths as :func:`first_step_size`."""
    if isinstance(accepted, np.ndarray):
        return np.where(accepted, 2.0 * mu, np.where(np.isnan(prev), np.nan, 0.5 * prev))
    if accepted:
        return 2.0 * mu
    return None if prev is None else 0.5 * prev


def sufficient_decrease(s_new: Any, s0: Any, lin: Any, dist2: Any, mu: Any) -> Any:
    """The backtracking test of (proximal) gradient descent (Beck & Teboulle)::

        s(A+) <= s(A) + <grad s(A), A+ - A> + ||A+ - A||_F^2 / (2 mu)

    with ``s_new = s(A+)``, ``s0 = s(A)``, ``lin = <grad s(A), A+ - A>`` and
    ``dist2 = ||A+ - A||_F^2``, plus a relative slack of 1e-12 ``|s0|`` for rounding
    (scalars or arrays: one test per problem of a batch)."""
    return s_new <= s0 + lin + dist2 / (2.0 * mu) + 1e-12 * np.abs(s0)


def backtrack(
    mu0: np.ndarray,
    attempt: Callable[[np.ndarray, np.ndarray], np.ndarray],
    max_halvings: int = MAX_BACKTRACK,
) -> tuple[np.ndarray, np.ndarray]:
    """Halve the step size of every problem of a batch until its step is accepted.

    ``attempt(idx, mu)`` tries the step sizes ``mu`` for the pending problems ``idx`` and
    returns which are accepted (it keeps what it needs of those). A problem is given up
    after ``max_halvings`` halvings. This is the one halving loop of the A-steps: the
    low-rank dense step of a batch
    (:meth:`~mvkernels.mvml._lowrank.LowRankMetrics.a_step`) and :func:`metric_step` (the
    dense and sparse steps on one metric matrix, a batch of one) both run it, with the
    same test (:func:`sufficient_decrease`) and cap (:meth:`MetricKind.capped_step`:
    :func:`dense_step_cap` for the dense step).

    An ``attempt`` that knows the outcome of later calls (:func:`~mvkernels.mvml._lowrank.
    halvings_ahead`) may say so: ``attempt.settled(idx)`` returns, for the pending
    problems ``idx``, the call at which each one's step is accepted (``max_halvings``:
    never), or None while one is unknown; the loop then ends at once with the same
    result (each step is the current one times a power of two, exact as the halvings).
    It is read only from an ``attempt`` whose ``max_halvings`` attribute is this loop's.

    Returns
    -------
    accepted : ndarray of bool
    mu : ndarray
        The last step size tried (the accepted one where accepted).
    """
    mu = np.array(mu0, dtype=np.float64, copy=True)
    accepted = np.zeros(mu.shape[0], dtype=bool)
    idx = np.arange(mu.shape[0])  # the pending problems, in order
    settled = getattr(attempt, "settled", None)
    if getattr(attempt, "max_halvings", None) != max_halvings:  # built for another bound
        settled = None
    for c in range(max_halvings):
        if idx.size == 0:
            break
        ok = np.asarray(attempt(idx, mu[idx]), dtype=bool)
        accepted[idx[ok]] = True
        idx = idx[~ok]
        mu[idx] *= 0.5
        at = None if settled is None or idx.size == 0 else settled(idx)
        if at is not None:  # the calls left are known: the step of each problem's last
            mu[idx] *= np.ldexp(1.0, -(np.minimum(at, max_halvings) - c - 1))
            accepted[idx[at < max_halvings]] = True
            break
    return accepted, mu


def metric_step(
    A: np.ndarray,
    factor: PSDFactor,
    g: np.ndarray,
    alpha: float,
    eta: float,
    kind: str | MetricKind,
    n_views: int,
    mu0: float,
    *,
    threshold: str = "mu_eta",
    eig_floor: float = 1e-10,
    max_backtrack: int = MAX_BACKTRACK,
    range_tol: float = 1e-8,
) -> tuple[np.ndarray, PSDFactor, float]:
    """One backtracked A-step (dense gradient step or sparse proximal step).

    Starting from ``mu = mu0`` the step is halved until (i) the new metric is
    positive definite (dense; guaranteed once ``mu eta < 1/2``) or positive
    semi-definite (sparse, see :class:`PSDFactor`) and (ii) the sufficient-decrease
    condition of (proximal) gradient descent holds::

        s(A+) <= s(A) + <grad s(A), A+ - A> + ||A+ - A||_F^2 / (2 mu)

    with ``s = F = alpha <g, A^+ g> + eta ||A||_F^2`` (dense) or ``s = h = alpha <g, A^+ g>``
    (sparse). This makes every accepted step decrease the A-part of the objective
    (Beck & Teboulle's backtracking rule). If no step is accepted after
    ``max_backtrack`` halvings, ``A`` is returned unchanged with ``mu = 0``. The halving
    is :func:`backtrack` on a batch of one (the loop the low-rank batched step runs).

    ``<g, A^+ g>`` is ``+inf`` when ``g`` is not in the range of ``A`` (the convex
    extension of ``<g, A^{-1} g>`` to singular PSD ``A``). The sparse proximal step can
    zero whole blocks (or all of ``A``) and so leave such a candidate, on which the
    pseudo-inverse would give a *finite* value; a candidate whose range misses ``g`` by
    more than ``range_tol`` (relative residual, :meth:`PSDFactor.range_residual`) counts
    as ``s = +inf`` and is rejected (the step is halved).

    Parameters
    ----------
    A : ndarray of shape (d, d)
        Current metric.
    factor : PSDFactor
        Its factorisation.
    g : ndarray of shape (d,)
        Current g-step solution.
    alpha, eta : float
        Weights of ``<g, A^+ g>`` and of the metric penalty.
    kind : {"dense", "sparse"} or MetricKind
        The learned metric kind (:data:`METRIC_KINDS`) whose step it is: its
        :meth:`MetricKind.candidate` is the gradient step (eq. 9 / 16, dense) or the
        proximal step (eq. 12 / 18, sparse).
    n_views : int
        Number of views.
    mu0 : float
        Initial step size (capped by :meth:`MetricKind.capped_step`).
    threshold : {"mu_eta", "eta"}, default="mu_eta"
        Shrinkage threshold of the sparse step (:func:`sparse_metric_update`).
    eig_floor : float, default=1e-10
        Relative eigenvalue floor of the factorisations.
    max_backtrack : int, default=40
        Halvings of the step at most.
    range_tol : float, default=1e-8
        Tolerance on the range residual of ``g`` (sparse step).

    Returns
    -------
    A_new, factor_new, mu : the accepted metric, its factorisation and step size.
    """
    step = learned_kind(kind)
    q = factor.solve(g)
    s0 = alpha * float(g @ q) + step.smooth_penalty(A, eta)
    # the last candidate and its factor (kept alive until the next is built, like a loop)
    last: list[Any] = [A, factor]

    def attempt(idx: np.ndarray, mus: np.ndarray) -> np.ndarray:
        mu = float(mus[0])
        last[0] = A_new = step.candidate(A, q, alpha, eta, mu, n_views, threshold)
        try:
            last[1] = f_new = PSDFactor(A_new, eig_floor=eig_floor, require_pd=step.require_pd)
        except NotPSDError:
            return _REJECTED
        if f_new.range_residual(g) > range_tol:  # <g, A_new^+ g> = +inf
            return _REJECTED
        D = A_new - A
        # <grad s(A), D> = -alpha q^T D q + <grad of the smooth penalty, D>
        lin = -alpha * float(q @ D @ q) + step.smooth_lin(A, D, eta)
        s_new = alpha * f_new.quad(g) + step.smooth_penalty(A_new, eta)
        ok = sufficient_decrease(s_new, s0, lin, float(np.sum(D * D)), mu)
        return _ACCEPTED if ok else _REJECTED

    accepted, mu = backtrack(np.array([step.capped_step(float(mu0), eta)]), attempt, max_backtrack)
    if not accepted[0]:
        return A, factor, 0.0
    return last[0], last[1], float(mu[0])


# ============================================================================ metric storage
class Metric:
    """One metric ``A`` (``d x d``, symmetric positive semi-definite) as Algorithm 1 holds it.

    Every metric the driver, the losses' paths and the estimators hand on is a
    :class:`Metric`, whatever its storage: the dense matrix (:class:`MatrixMetric`, the
    reference path's iterate and the fixed metrics) or ``s I + V V^T``
    (:class:`~mvkernels.mvml._lowrank.LowRankMetric`, the structured paths' dense metric
    and the identity). Callers read it through this interface only and never ask which
    storage they hold: the fitted model's store
    (:meth:`~mvkernels.mvml._lowrank.MetricStack.from_metrics`) keeps each in its most
    compact form.

    Attributes
    ----------
    dim : int
        ``d``.
    """

    dim: int

    def dense(self) -> np.ndarray:
        """``A`` as a ``(d, d)`` array (the stored array itself where there is one)."""
        raise NotImplementedError

    def matvec(self, x: np.ndarray) -> np.ndarray:
        """``A x`` for ``x`` of shape ``(d,)`` or ``(d, k)``."""
        return self.dense() @ x

    @property
    def factor(self) -> PSDFactor:
        """``A = F F^T`` (:class:`PSDFactor`): what the g-step reads (eq. 7 / 15)."""
        raise NotImplementedError

    def penalty(self, kind: MetricKind, n_views: int) -> float:
        """``R(A)`` of the metric kind ``kind`` (0 for a fixed metric)."""
        return kind.penalty(self.dense(), n_views)

    def min_eigenvalue(self) -> float:
        """The smallest eigenvalue of ``A`` (the estimators' ``metric_min_eigenvalue_``)."""
        return min_eigenvalue(self.dense())

    def max_abs(self) -> float:
        """``max |A_ij|`` (a PSD matrix's largest entry is on its diagonal)."""
        return float(np.abs(self.dense()).max())

    def is_identity(self) -> bool:
        """``A = I`` exactly (the fitted model then stores nothing but its size)."""
        return bool(np.array_equal(self.dense(), np.eye(self.dim)))

    def low_rank_form(self) -> tuple[float, np.ndarray] | None:
        """``(s, V)`` with ``A = s I + V V^T`` where the storage knows that form
        (the dense A-step from ``A = I``), else None."""
        return None

    def a_step(
        self,
        g: np.ndarray,
        alpha: float,
        eta: float,
        kind: str | MetricKind,
        n_views: int,
        mu0: float,
        *,
        threshold: str = "mu_eta",
        eig_floor: float = 1e-10,
    ) -> tuple[Metric, float]:
        """One backtracked A-step (:func:`metric_step`, eq. 9 / 16 dense, eq. 12 / 18
        sparse) from this metric. Returns the new metric (this one where no step was
        accepted) and the accepted step size (0: none)."""
        raise NotImplementedError


class MatrixMetric(Metric):
    """A :class:`Metric` stored as its dense matrix, with its factorisation.

    The dense reference path's iterate (any metric kind, :func:`metric_step`) and the
    fixed Cov metric. A metric started at ``A = I`` and moved by dense steps also tracks
    its form ``s I + V V^T`` (one column per accepted step, :meth:`low_rank_form`), which
    the fitted model stores instead of the matrix.

    Parameters
    ----------
    A : ndarray of shape (d, d)
        The metric.
    factor : PSDFactor or None, default=None
        Its factorisation (None: computed on first use, with ``eig_floor``).
    eig_floor : float, default=1e-10
        Relative eigenvalue floor of the factorisation and of the A-steps'.
    low_rank : tuple (s, V) or None, default=None
        ``A = s I + V V^T``, tracked through the dense A-steps (None: not tracked).

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.mvml._metric import MatrixMetric
    >>> m = MatrixMetric.start(np.eye(4), track_low_rank=True)
    >>> g = np.array([1.0, -2.0, 0.5, 0.0])
    >>> m1, mu = m.a_step(g, alpha=1.0, eta=0.5, kind="dense", n_views=2, mu0=0.1)
    >>> s, V = m1.low_rank_form()
    >>> bool(mu > 0), V.shape, bool(np.allclose(m1.dense(), s * np.eye(4) + V @ V.T))
    (True, (4, 1), True)
    """

    def __init__(
        self,
        A: np.ndarray,
        factor: PSDFactor | None = None,
        eig_floor: float = 1e-10,
        low_rank: tuple[float, np.ndarray] | None = None,
    ):
        self.A = A
        self.dim = int(A.shape[0])
        self._factor = factor
        self.eig_floor = eig_floor
        self._low_rank = low_rank
        self._min_eig: float | None = None

    @classmethod
    def start(
        cls, A0: np.ndarray, eig_floor: float = 1e-10, track_low_rank: bool = False
    ) -> MatrixMetric:
        """The initial metric ``A0`` of a path: the identity's factor is ``I`` exactly
        (:meth:`PSDFactor.identity`, which the g-steps may skip), and, with
        ``track_low_rank`` (the dense A-step), a start at ``I`` tracks ``s I + V V^T``."""
        d = A0.shape[0]
        identity = bool(np.array_equal(A0, np.eye(d)))
        factor = PSDFactor.identity(d) if identity else PSDFactor(A0, eig_floor=eig_floor)
        low_rank = (1.0, np.zeros((d, 0))) if track_low_rank and identity else None
        out = cls(A0, factor, eig_floor, low_rank)
        if identity:
            out._min_eig = 1.0
        return out

    def dense(self) -> np.ndarray:
        return self.A

    @property
    def factor(self) -> PSDFactor:
        if self._factor is None:
            self._factor = PSDFactor(self.A, eig_floor=self.eig_floor)
        return self._factor

    def min_eigenvalue(self) -> float:
        if self._min_eig is None:  # a fixed metric shared by every target: computed once
            self._min_eig = min_eigenvalue(self.A)
        return self._min_eig

    def low_rank_form(self) -> tuple[float, np.ndarray] | None:
        return self._low_rank

    def a_step(
        self,
        g: np.ndarray,
        alpha: float,
        eta: float,
        kind: str | MetricKind,
        n_views: int,
        mu0: float,
        *,
        threshold: str = "mu_eta",
        eig_floor: float = 1e-10,
    ) -> tuple[Metric, float]:
        q = self.factor.solve(g) if self._low_rank is not None else None
        A, factor, mu = metric_step(
            self.A,
            self.factor,
            g,
            alpha,
            eta,
            kind,
            n_views,
            mu0,
            threshold=threshold,
            eig_floor=eig_floor,
        )
        if mu == 0.0:
            return self, 0.0
        low_rank = None
        if self._low_rank is not None:  # A+ = c A + mu alpha q q^T, c = 1 - 2 mu eta
            c = 1.0 - 2.0 * mu * eta
            s, V = self._low_rank
            low_rank = (s * c, np.column_stack([np.sqrt(c) * V, np.sqrt(mu * alpha) * q]))
        return MatrixMetric(A, factor, eig_floor, low_rank), mu


# ============================================================================ metric kinds
class MetricKind:
    """One value of the ``metric`` parameter: what Algorithm 1 does with the metric.

    The estimators, the loss parts, the driver and the CV read these properties instead
    of comparing names. A new metric is a subclass registered in :data:`METRIC_KINDS`
    (its initial value, its penalty and, if learned, its A-step: :meth:`candidate`,
    :meth:`smooth_penalty`, :meth:`smooth_lin` and :meth:`capped_step`, which
    :func:`metric_step` runs through the one backtracking loop; and whether the
    structured paths cover it).

    Attributes
    ----------
    name : str
        The value of the ``metric`` parameter.
    learned : bool
        Moved by A-steps, with the penalty ``eta R(A)`` (``eta`` is searched by the CV).
    step : {"dense", "sparse"} or None
        The name of its A-step (None: a fixed metric); :func:`metric_step` reads the kind
        itself (:meth:`candidate`), not this name.
    structured : bool
        Covered by the structured paths (fixed weights): a fixed metric with one shared
        factorisation, or the dense step that keeps ``A = s I + W W^T`` from ``A0 = I``.
    low_rank : bool
        The A-step keeps ``A = s I + W W^T`` from ``A0 = I`` (stored so, not as a matrix).
    identity : bool
        ``A = I`` exactly: the g-step is ridge regression on the weighted features.
    needs_statistics : bool
        The initial value reads the problem's feature moments (sufficient statistics).
    """

    name: str = ""
    learned: bool = False
    step: str | None = None
    structured: bool = False
    low_rank: bool = False
    identity: bool = False
    needs_statistics: bool = False
    #: the A-step's candidates must be positive definite (:class:`PSDFactor`'s require_pd)
    require_pd: bool = False

    def initial(self, problem: Any) -> np.ndarray:
        """``A0`` as an array, the metric before any A-step (the identity here)."""
        return np.eye(problem.dim)

    def initial_metric(self, problem: Any, eig_floor: float = 1e-10) -> Metric:
        """``A0`` as the :class:`Metric` every path of a fit starts from, built once.

        A :class:`MatrixMetric` with its factorisation ``A0 = F F^T``
        (:class:`PSDFactor` with ``eig_floor``; the identity's factor is ``I`` exactly,
        :meth:`PSDFactor.identity`, which the g-steps may leave out of their products),
        so that the losses' paths read ``metric.factor`` instead of factoring ``A0``
        again; a kind whose A-step keeps ``s I + V V^T`` (:attr:`low_rank`) tracks that
        form from ``A0 = I``. The fit's reference path moves it by A-steps
        (:meth:`Metric.a_step`); a fixed metric's structured paths hand it on as it is.

        Examples
        --------
        >>> from types import SimpleNamespace
        >>> from mvkernels.mvml._metric import metric_kind
        >>> m = metric_kind("dense").initial_metric(SimpleNamespace(dim=3))
        >>> m.factor.is_identity, m.low_rank_form()[0], m.min_eigenvalue()
        (True, 1.0, 1.0)
        """
        return MatrixMetric.start(self.initial(problem), eig_floor, track_low_rank=self.low_rank)

    def penalty(self, A: np.ndarray, n_views: int) -> float:
        """``R(A)`` (0 for a fixed metric)."""
        return metric_penalty(A, self.step, n_views) if self.step is not None else 0.0

    def smooth_gradient(self, A: np.ndarray, eta: float) -> np.ndarray | float:
        """Gradient of ``eta R(A)`` in the smooth part of the A-step (the dense step's
        ``2 eta A``; 0 where the penalty is handled by a proximal step or absent)."""
        return 0.0

    def capped_step(self, mu: Any, eta: Any) -> Any:
        """The first step size tried from ``mu`` (scalars or arrays; no cap here)."""
        return mu

    def candidate(
        self,
        A: np.ndarray,
        q: np.ndarray,
        alpha: float,
        eta: float,
        mu: float,
        n_views: int,
        threshold: str,
    ) -> np.ndarray:
        """The A-step's candidate ``A+`` at step size ``mu`` (``q = A^+ g``)."""
        raise ValueError(f"metric {self.name!r} is fixed: it has no A-step")

    def smooth_penalty(self, A: np.ndarray, eta: float) -> float:
        """The penalty's share of the A-step's smooth objective ``s`` (0: none)."""
        return 0.0

    def smooth_lin(self, A: np.ndarray, D: np.ndarray, eta: float) -> float:
        """``<grad smooth_penalty(A), D>``: its share of :func:`sufficient_decrease`'s ``lin``."""
        return 0.0

    def __repr__(self) -> str:
        return f"MetricKind({self.name!r})"


class DenseMetric(MetricKind):
    """``metric="dense"``: learned, ``R(A) = ||A||_F^2``, gradient step (eq. 9 / 16)."""

    name, learned, step, structured, low_rank = "dense", True, "dense", True, True
    require_pd = True

    def smooth_gradient(self, A: np.ndarray, eta: float) -> np.ndarray | float:
        return 2.0 * eta * A

    def capped_step(self, mu: Any, eta: Any) -> Any:
        """:func:`dense_step_cap` (``mu eta < 1/2``: eq. 9 / 16 stay positive definite)."""
        return dense_step_cap(mu, eta)

    def candidate(
        self,
        A: np.ndarray,
        q: np.ndarray,
        alpha: float,
        eta: float,
        mu: float,
        n_views: int,
        threshold: str,
    ) -> np.ndarray:
        return dense_metric_update(A, q, alpha, eta, mu)

    def smooth_penalty(self, A: np.ndarray, eta: float) -> float:
        return eta * float(np.sum(A * A))

    def smooth_lin(self, A: np.ndarray, D: np.ndarray, eta: float) -> float:
        return 2.0 * eta * float(np.sum(A * D))


class SparseMetric(MetricKind):
    """``metric="sparse"``: learned, the view-pair group norm, proximal step (eq. 12 / 18)."""

    name, learned, step = "sparse", True, "sparse"

    def candidate(
        self,
        A: np.ndarray,
        q: np.ndarray,
        alpha: float,
        eta: float,
        mu: float,
        n_views: int,
        threshold: str,
    ) -> np.ndarray:
        return sparse_metric_update(A, q, alpha, eta, mu, n_views, threshold)


class IdentityMetric(MetricKind):
    """``metric="identity"``: ``A = I`` (MVML_I), fixed."""

    name, structured, identity = "identity", True, True


class CovMetric(MetricKind):
    """``metric="cov"``: the cross-covariance metric (MVML_Cov), fixed."""

    name, structured, needs_statistics = "cov", True, True

    def initial(self, problem: Any) -> np.ndarray:
        return problem.cov_metric()  # each mode's (cov_metric_full / cov_metric_nystrom)


#: the values of the ``metric`` parameter and what each does
METRIC_KINDS: dict[str, MetricKind] = {
    kind.name: kind for kind in (DenseMetric(), SparseMetric(), IdentityMetric(), CovMetric())
}
METRICS = tuple(METRIC_KINDS)
LEARNED_METRICS = tuple(name for name, kind in METRIC_KINDS.items() if kind.learned)


def metric_kind(name: str) -> MetricKind:
    """The :class:`MetricKind` of a ``metric`` parameter value."""
    try:
        return METRIC_KINDS[name]
    except KeyError:
        raise ValueError(f"unknown metric {name!r}; use one of {', '.join(METRICS)}") from None


def learned_kind(kind: str | MetricKind) -> MetricKind:
    """The learned :class:`MetricKind` ``kind`` (or named so) whose A-step to run."""
    out = kind if isinstance(kind, MetricKind) else METRIC_KINDS.get(kind)
    if out is None or not out.learned:
        raise ValueError(f"kind must be one of {', '.join(LEARNED_METRICS)}, got {kind!r}")
    return out

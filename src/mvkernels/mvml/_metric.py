"""The metric part of MVML: factorisations, A-steps (eq. 9/12, 16/18), the metric storage,
fixed metrics (MVML_Cov), view weights (eq. 10/17) and the metric kinds.

The A-step pieces act on one metric matrix at a time (``nv x nv`` in full-kernel mode,
``vp x vp`` in block Nystrom mode) and are shared by every MVML estimator (square and
hinge loss): the dense reference path of Algorithm 1
(:func:`mvkernels.mvml._driver.reference_paths`) and the structured solvers of
:mod:`mvkernels.mvml._lowrank`.

One backtracking rule for the A-steps on one matrix (:func:`metric_step`, a batch of one)
and on a batch (:meth:`~mvkernels.mvml._lowrank.LowRankMetrics.a_step`): the cap
(:meth:`MetricKind.capped_step`), the test (:func:`sufficient_decrease`), the halving and
the give-up (:func:`backtrack`), written once. The step is a method of the metric kind
(:meth:`MetricKind.candidate`), not a comparison of names.

Storage. Every metric a path holds or hands on is a :class:`Metric`: ``dense()``,
``matvec(x)``, ``factor`` (``A = F F^T`` for the g-step), ``penalty(kind)``,
``min_eigenvalue()``, ``a_step(...)`` and ``low_rank_form()``, behind two storages:
:class:`MatrixMetric` (the dense matrix and its :class:`PSDFactor`: the reference path's
iterate, which also tracks ``s I + V V^T`` from ``A = I`` under dense steps, and the fixed
Cov metric) and :class:`~mvkernels.mvml._lowrank.LowRankMetric` (``s I + V V^T``: the
structured paths' metrics, taken out of their batch by
:meth:`~mvkernels.mvml._lowrank.LowRankMetrics.take`, and the identity). A path's
result holds its metric under ``"metric"``
(:class:`~mvkernels.mvml._driver.PathResult`); the estimators build their fitted store
from those (:meth:`~mvkernels.mvml._lowrank.MetricStack.from_metrics`, each in its most
compact form) and never ask which storage they hold.

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
from scipy import linalg

from .._linalg import floored_eigh, robust_eigvalsh
from .._linalg import sym as _sym
from ..nystrom import FeatureMoments


def objective_converged(history: list[float], tol: float | None) -> bool:
    """The outer loop's stopping rule: the last relative decrease of the objective,
    ``|h[-2] - h[-1]| <= tol |h[-2]|``, is at most ``tol`` (``tol=None``: never)."""
    if tol is None or len(history) < 2:
        return False
    return abs(history[-2] - history[-1]) <= tol * max(abs(history[-2]), np.finfo(float).tiny)


# ============================================================================ linear algebra
class NotPSDError(ValueError):
    """A matrix expected to be positive (semi-)definite is not."""


class PSDFactor:
    """Factorisation ``A = F F^T`` of a symmetric positive semi-definite matrix.

    A Cholesky factorisation is tried first (``F = L``, lower triangular). When it
    fails (``A`` singular or indefinite) and ``require_pd`` is False, the
    eigendecomposition ``A = V diag(s) V^T`` is used: eigenvalues ``s_i`` must satisfy
    ``s_i >= -psd_tol * max|s|`` (else :class:`NotPSDError`), and those
    ``<= eig_floor * max|s|`` are treated as zero, so ``F = V_+ diag(s_+)^{1/2}`` and
    the pseudo-inverse ``A^+`` acts on the kept eigen-directions only. No inverse or
    pseudo-inverse matrix is ever formed: :meth:`solve` applies ``A^+`` to vectors.

    Parameters
    ----------
    A : ndarray of shape (d, d)
    eig_floor : float, default=1e-10
        Relative eigenvalue floor of the pseudo-inverse (eigh path).
    psd_tol : float, default=1e-10
        Relative tolerance on negative eigenvalues (eigh path).
    require_pd : bool, default=False
        Raise :class:`NotPSDError` when the Cholesky factorisation fails.
    """

    #: the factor of the identity matrix (:meth:`identity`): ``F = I``, which a g-step
    #: may leave out of its products (multiplying by ``I`` changes no digit)
    is_identity: bool = False

    @classmethod
    def identity(cls, d: int) -> PSDFactor:
        """The factor of ``I_d``: what ``PSDFactor(np.eye(d))`` computes (``L = I``),
        marked :attr:`is_identity`, without the factorisation."""
        out = cls.__new__(cls)
        out.shape = (d, d)
        out._min_eig = None
        out.L = out.F = np.eye(d)
        out.kind = "cholesky"
        out.is_identity = True
        return out

    def __init__(
        self,
        A: np.ndarray,
        eig_floor: float = 1e-10,
        psd_tol: float = 1e-10,
        require_pd: bool = False,
    ):
        A = _sym(A)
        self.shape = A.shape
        self._min_eig: float | None = None
        try:
            self.L = linalg.cholesky(A, lower=True, check_finite=False)
            if not np.all(np.isfinite(self.L)):
                raise linalg.LinAlgError("non-finite Cholesky factor")
            self.kind = "cholesky"
            self.F = self.L
            return
        except linalg.LinAlgError as exc:
            if require_pd:
                raise NotPSDError("matrix is not positive definite (Cholesky failed)") from exc
        if not np.all(np.isfinite(A)):
            raise NotPSDError("matrix holds NaN or inf")
        s, V, keep = floored_eigh(A, eig_floor, what="metric")
        top = float(max(abs(s[0]), abs(s[-1]))) if s.size else 0.0
        self._min_eig = float(s[0]) if s.size else 0.0
        if s.size and s[0] < -psd_tol * top:
            raise NotPSDError(
                f"matrix is indefinite: smallest eigenvalue {s[0]:.3g}, largest {s[-1]:.3g}"
            )
        self.kind = "eigh"
        self.s = s[keep]
        self.V = V[:, keep]
        self.F = self.V * np.sqrt(self.s)

    @property
    def rank(self) -> int:
        return self.shape[0] if self.kind == "cholesky" else int(self.s.size)

    def solve(self, b: np.ndarray) -> np.ndarray:
        """``A^+ b`` (``A^{-1} b`` on the Cholesky path)."""
        if self.kind == "cholesky":
            return linalg.cho_solve((self.L, True), b, check_finite=False)
        return self.V @ ((self.V.T @ b) / (self.s if b.ndim == 1 else self.s[:, None]))

    def range_residual(self, g: np.ndarray) -> float:
        """Relative distance of ``g`` from ``range(A)``: ``||g - P g|| / ||g||``.

        ``P`` projects on the kept eigen-directions (0 on the Cholesky path, where ``A``
        is invertible; 0 for ``g = 0``). When it is not ~0, ``<g, A^+ g>`` (what
        :meth:`quad` returns) is not ``<g, A^{-1} g>``: the true value is ``+inf``.
        """
        if self.kind == "cholesky":
            return 0.0
        gn = float(np.linalg.norm(g))
        if gn == 0.0:
            return 0.0
        return float(np.linalg.norm(g - self.V @ (self.V.T @ g))) / gn

    def quad(self, g: np.ndarray) -> float:
        """``<g, A^+ g>`` (the pseudo-inverse: see :meth:`range_residual`)."""
        if self.kind == "cholesky":
            z = linalg.solve_triangular(self.L, g, lower=True, check_finite=False)
            return float(z @ z)
        z = self.V.T @ g
        return float(z @ (z / self.s))


def min_eigenvalue(A: np.ndarray) -> float:
    """Smallest eigenvalue of the symmetric part of ``A``.

    Parameters
    ----------
    A : ndarray of shape (d, d)

    Returns
    -------
    float
    """
    return float(robust_eigvalsh(A, subset_by_index=[0, 0], what="metric")[0])


# ============================================================================ A-step pieces
def group_norms(A: np.ndarray, n_views: int) -> np.ndarray:
    """Frobenius norms of the view-pair groups of ``A`` (v x v, symmetric).

    Entry ``(l, m)`` is ``||(A_lm, A_ml)||_F = sqrt(||A_lm||^2 + ||A_ml||^2)`` for
    ``l != m`` (the group of a view *pair* holds both blocks) and ``||A_ll||_F`` on the
    diagonal: the ``v (v + 1) / 2`` groups of eq. (11).

    Parameters
    ----------
    A : ndarray of shape (d, d)
        Symmetric matrix of ``n_views x n_views`` equal blocks.
    n_views : int
        Number of views.

    Returns
    -------
    ndarray of shape (n_views, n_views)
    """
    b = A.shape[0] // n_views
    sq = (A.reshape(n_views, b, n_views, b) ** 2).sum(axis=(1, 3))
    N = sq + sq.T
    N[np.diag_indices(n_views)] *= 0.5
    return np.sqrt(N)


def metric_penalty(A: np.ndarray, kind: str, n_views: int) -> float:
    """``R(A)``: ``||A||_F^2`` (dense) or ``sum_{l <= m}`` group norms (sparse).

    Parameters
    ----------
    A : ndarray of shape (d, d)
        The metric.
    kind : {"dense", "sparse"}
        Which penalty.
    n_views : int
        Number of views (the groups of the sparse penalty).

    Returns
    -------
    float
    """
    if kind == "sparse":
        return float(np.triu(group_norms(A, n_views)).sum())
    return float(np.sum(A * A))


def prox_group_frobenius(B: np.ndarray, threshold: float, n_views: int) -> np.ndarray:
    """Group soft-thresholding: the proximal operator of ``threshold * sum ||B_gamma||_F``.

    ``[prox(B)]_gamma = max(0, 1 - threshold / ||B_gamma||_F) B_gamma`` for each view-pair
    group ``gamma`` (see :func:`group_norms`); a group of norm 0 stays 0. A symmetric
    ``B`` gives a symmetric result (both blocks of a pair get the same factor).

    Parameters
    ----------
    B : ndarray of shape (d, d)
        Matrix of ``n_views x n_views`` equal blocks.
    threshold : float
        Shrinkage threshold, >= 0.
    n_views : int
        Number of views.

    Returns
    -------
    ndarray of shape (d, d)
    """
    N = group_norms(B, n_views)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(N > 0, np.maximum(0.0, 1.0 - threshold / N), 0.0)
    b = B.shape[0] // n_views
    out = (B.reshape(n_views, b, n_views, b) * factor[:, None, :, None]).reshape(B.shape)
    return _sym(out)


def dense_metric_update(
    A: np.ndarray, q: np.ndarray, alpha: float, eta: float, mu: float
) -> np.ndarray:
    """One gradient step on the metric, eq. (9) / (16).

    ``A+ = (1 - 2 mu eta) A + mu alpha q q^T`` with ``q = A^+ g``; it is
    ``A - mu grad F(A)`` for ``F(A) = alpha <g, A^+ g> + eta ||A||_F^2``
    (``grad F = -alpha A^+ g g^T A^+ + 2 eta A``). Symmetric, and positive definite
    whenever ``A`` is and ``mu eta < 1/2``.

    Parameters
    ----------
    A : ndarray of shape (d, d)
        Current metric.
    q : ndarray of shape (d,)
        ``A^+ g``.
    alpha, eta : float
        Weights of ``<g, A^+ g>`` and of ``||A||_F^2``.
    mu : float
        Step size.

    Returns
    -------
    ndarray of shape (d, d)
    """
    return _sym((1.0 - 2.0 * mu * eta) * A + (mu * alpha) * np.outer(q, q))


def sparse_metric_update(
    A: np.ndarray,
    q: np.ndarray,
    alpha: float,
    eta: float,
    mu: float,
    n_views: int,
    threshold: str = "mu_eta",
) -> np.ndarray:
    """One proximal-gradient step for the block-sparse metric, eq. (12) / (18).

    ``B = A - mu grad h(A) = A + mu alpha q q^T`` (``h(A) = alpha <g, A^+ g>``,
    ``q = A^+ g``), then group soft-thresholding of ``B`` with threshold ``mu * eta``
    (``threshold="mu_eta"``: the proximal operator of ``mu * eta * sum ||.||_F``, so the
    fixed points are the minimisers of eq. 11) or ``eta`` (``threshold="eta"``: the
    paper's printed formula, whose threshold does not scale with the step).

    Parameters
    ----------
    A, q, alpha, mu
        As in :func:`dense_metric_update`.
    eta : float
        Weight of the group penalty.
    n_views : int
        Number of views (the groups).
    threshold : {"mu_eta", "eta"}, default="mu_eta"
        Shrinkage threshold (see above).

    Returns
    -------
    ndarray of shape (d, d)
    """
    if threshold == "mu_eta":
        t = mu * eta
    elif threshold == "eta":
        t = eta
    else:
        raise ValueError(f"sparse_threshold must be 'mu_eta' or 'eta', got {threshold!r}")
    B = A + (mu * alpha) * np.outer(q, q)
    return prox_group_frobenius(B, t, n_views)


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

    Returns
    -------
    accepted : ndarray of bool
    mu : ndarray
        The last step size tried (the accepted one where accepted).
    """
    mu = np.array(mu0, dtype=np.float64, copy=True)
    accepted = np.zeros(mu.shape[0], dtype=bool)
    idx = np.arange(mu.shape[0])  # the pending problems, in order
    for _ in range(max_halvings):
        if idx.size == 0:
            break
        ok = np.asarray(attempt(idx, mu[idx]), dtype=bool)
        accepted[idx[ok]] = True
        idx = idx[~ok]
        mu[idx] *= 0.5
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
        return cls(A0, factor, eig_floor, low_rank)

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


def rank_one_metric_minimiser(g: np.ndarray, alpha: float, eta: float) -> np.ndarray:
    """Closed-form minimiser of ``alpha <g, A^+ g> + eta ||A||_F^2`` over PSD ``A``.

    ``A* = t g g^T / ||g||^2`` with ``t = (alpha ||g||^2 / (2 eta))^{1/3}``; the minimum
    is ``3 eta t^2``. Provided for reference and tests: the estimators do *not* jump to
    it (see ``docs/mvml.md``, "What the alternating scheme converges to").

    Parameters
    ----------
    g : ndarray of shape (d,)
        The vector of the quadratic form (nonzero).
    alpha, eta : float
        Weights of ``<g, A^+ g>`` and of ``||A||_F^2``, > 0.

    Returns
    -------
    A : ndarray of shape (d, d)
    """
    gg = float(g @ g)
    t = (alpha * gg / (2.0 * eta)) ** (1.0 / 3.0)
    return t * np.outer(g, g) / gg


def cov_metric_full(Ks: list[np.ndarray], sample_weight: np.ndarray | None = None) -> np.ndarray:
    """MVML_Cov metric in full-kernel mode (fixed, not learned).

    The cross-covariance multi-view kernel of Kadri et al. (2013) uses, between views
    ``l`` and ``m``, the empirical *centred* cross-covariance operator
    ``C_lm = (1/n) sum_i (Phi_l(x_i) - mean_l) (Phi_m(x_i) - mean_m)^T = Phi_l (M / n) Phi_m^T``
    (``M = I - 11^T / n``). In MVML's parametrisation ``C_lm = Phi_l A_lm Phi_m^T``
    this is ``A_lm = M / n`` for every pair, i.e. ``A = (1_v 1_v^T) (x) M / n``.
    ``A`` is then rescaled so that the multi-view training kernel has the trace of
    ``H``: ``tr(H A H) = sum_l tr(K_l)`` (a scalar rescaling is equivalent to rescaling
    ``alpha``; this one makes ``alpha`` comparable across metric variants and makes the
    full and Nystrom (:func:`cov_metric_nystrom`) versions coincide with all landmarks).

    Parameters
    ----------
    Ks : list of ndarray of shape (n, n)
        Training kernel matrix of each view.
    sample_weight : ndarray of shape (n,) or None, default=None
        Frequency weights ``s`` of the rows: the weighted covariance, ``A_lm = M_s / S``
        with ``M_s = D_s - s s^T / S`` (``S = sum s``, ``D_s = diag(s)``), rescaled so
        that ``sum_l tr(M_s K_l D_s K_l) / S`` equals the weighted trace
        ``sum_l sum_i s_i (K_l)_ii`` (the Nystrom version's weighted ``C``).

    Returns
    -------
    A : ndarray of shape (v n, v n)
    """
    n = Ks[0].shape[0]
    v = len(Ks)
    if sample_weight is not None:
        sw = np.asarray(sample_weight, dtype=np.float64)
        total = float(sw.sum())
        Ms = np.diag(sw) - np.outer(sw, sw) / total
        raw = sum(float(np.sum((Ms @ K) * (K * sw[None, :]))) for K in Ks) / total
        goal = sum(float(sw @ np.diag(K)) for K in Ks)
        return _sym(np.kron(np.ones((v, v)), Ms) * ((goal / raw if raw > 0 else 1.0) / total))
    M = np.eye(n) - 1.0 / n
    raw_trace = sum(float(np.sum((M @ K) ** 2)) for K in Ks) / n  # tr(K M K) / n
    target = sum(float(np.trace(K)) for K in Ks)
    scale = target / raw_trace if raw_trace > 0 else 1.0
    return _sym(np.kron(np.ones((v, v)), M) * (scale / n))


def cov_metric_nystrom(
    gram: np.ndarray,
    feature_sum: np.ndarray,
    n_samples: int,
    n_views: int,
    scatter: np.ndarray | None = None,
) -> np.ndarray:
    """MVML_Cov metric in Nystrom mode: ``A~ = U^T A U`` for the metric of :func:`cov_metric_full`.

    ``U = blockdiag(U_1..U_v)``, so ``A~_lm = U_l^T M U_m / n``: the joint empirical
    covariance of the Nystrom features, ``C / n - mean mean^T``, from the sufficient
    statistics. Rescaled so that the multi-view training kernel ``U A~ U^T`` has the
    trace of the Nystrom ``H``: ``sum_l tr(A~_ll C_ll) = sum_l tr(C_ll) = tr(C)``.

    ``scatter`` (``sum_i (u_i - mean)(u_i - mean)^T``, :attr:`FeatureMoments.scatter`), when
    given, replaces the cancellation-prone ``gram - n mean mean^T``; the result is the same
    in exact arithmetic, but reproducible to rounding whatever the summation order.

    Parameters
    ----------
    gram : ndarray of shape (v p, v p)
        ``C = sum_i u_i u_i^T`` of the Nystrom features.
    feature_sum : ndarray of shape (v p,)
        ``sum_i u_i``.
    n_samples : int
        Number of training samples.
    n_views : int
        Number of views.
    scatter : ndarray of shape (v p, v p) or None, default=None
        Centred scatter of the features, when available.

    Returns
    -------
    A : ndarray of shape (v p, v p)
    """
    cov = FeatureMoments(n_samples, feature_sum, gram, scatter=scatter).covariance()
    b = gram.shape[0] // n_views
    raw_trace = sum(
        float(
            np.sum(
                cov[l * b : (l + 1) * b, l * b : (l + 1) * b]
                * gram[l * b : (l + 1) * b, l * b : (l + 1) * b]
            )
        )
        for l in range(n_views)
    )
    target = float(np.trace(gram))
    scale = target / raw_trace if raw_trace > 0 else 1.0
    return cov * scale


def least_squares_weights(ZtZ: np.ndarray, Zty: np.ndarray, sum_to_one: bool = True) -> np.ndarray:
    """View weights from ``Z^T Z`` and ``Z^T y``: eq. (10) / (17), optionally scale-fixed.

    ``sum_to_one=False``: the paper's ``w = argmin ||y - Z w||^2`` (minimum-norm
    least-squares solution of the normal equations, ``scipy.linalg.lstsq``).

    ``sum_to_one=True`` (used by the estimators): the same least squares under
    ``sum_l w_l = 1``, from the KKT system ``[[Z^T Z, 1], [1^T, 0]] [w; nu] = [Z^T y; 1]``.
    Without a scale constraint the alternating scheme is degenerate: ``(c w, g / c)``
    leaves ``W H g`` unchanged and divides ``alpha <g, A^+ g>`` by ``c^2``, so repeated
    unconstrained w-steps grow ``w`` without bound and switch the regularisation off.
    ``sum w = 1`` is the scale of the paper's default ``w = 1/v``.

    Parameters
    ----------
    ZtZ : ndarray of shape (v, v)
        ``Z^T Z``.
    Zty : ndarray of shape (v,)
        ``Z^T y``.
    sum_to_one : bool, default=True
        Constrain ``sum_l w_l = 1``.

    Returns
    -------
    w : ndarray of shape (v,)
    """
    ZtZ = _sym(np.asarray(ZtZ, dtype=np.float64))
    Zty = np.asarray(Zty, dtype=np.float64)
    if not sum_to_one:
        w, *_ = linalg.lstsq(ZtZ, Zty, check_finite=False)
        return np.asarray(w, dtype=np.float64)
    v = ZtZ.shape[0]
    K = np.zeros((v + 1, v + 1))
    K[:v, :v] = ZtZ
    K[:v, v] = K[v, :v] = 1.0
    rhs = np.append(Zty, 1.0)
    sol, *_ = linalg.lstsq(K, rhs, check_finite=False)
    return np.asarray(sol[:v], dtype=np.float64)


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
        """``A0``, the metric before any A-step (the identity here)."""
        return np.eye(problem.dim)

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

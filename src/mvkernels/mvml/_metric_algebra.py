"""The metric's algebra: the formulas of the MVML papers on one metric matrix.

Pure functions of arrays (no estimator, no kind, no storage), on which the metric part
(:mod:`mvkernels.mvml._metric`: the metric kinds, the backtracking A-step and the
storage) stands:

* linear algebra: :class:`PSDFactor` (``A = F F^T``, Cholesky or floored
  eigendecomposition; ``A^+`` applied, never formed), :func:`min_eigenvalue`;
* the A-step formulas: the dense gradient step (eq. 9 / 16,
  :func:`dense_metric_update`), the block-sparse proximal step (eq. 12 / 18,
  :func:`sparse_metric_update`, :func:`prox_group_frobenius`, :func:`group_norms`), the
  penalties ``R(A)`` (:func:`metric_penalty`) and the closed-form rank-one minimiser;
* the fixed metrics' values (MVML_Cov, :func:`cov_metric_full`,
  :func:`cov_metric_nystrom`) and the view weights (eq. 10 / 17,
  :func:`least_squares_weights`).

Their users import them from here (:mod:`mvkernels.mvml._metric` does not re-export
them).
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from .._linalg import floored_eigh, robust_eigvalsh
from .._linalg import sym as _sym
from ..nystrom import FeatureMoments

__all__ = [
    "NotPSDError",
    "PSDFactor",
    "min_eigenvalue",
    "group_norms",
    "metric_penalty",
    "prox_group_frobenius",
    "dense_metric_update",
    "sparse_metric_update",
    "rank_one_metric_minimiser",
    "cov_metric_full",
    "cov_metric_nystrom",
    "least_squares_weights",
]


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


# ====================================================================== fixed metrics, weights
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

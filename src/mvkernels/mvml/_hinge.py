"""g-step of MVML-SVM: the dual of the hinge-loss problem (paper eq. 6-8).

Problem and dual constant
-------------------------
For a fixed metric ``A`` (symmetric positive semi-definite) and view weights ``w``, the
g-step of MVML-SVM solves (paper eq. 6 with the slack form of the hinge loss)

    min_g   C sum_i max(0, 1 - y_i <phi_i, g>)  +  lambda <g, A^+ g>,     g in range(A)

with ``phi_i = H_{x_i}^T w`` (full kernels, length ``n v``) or ``phi_i = z_i = D_w u(x_i)``
(block Nystrom features, length ``v p``). The paper fixes ``C = 1/n``.

Lagrangian with slacks ``xi_i >= 0``, multipliers ``alpha_i >= 0`` (margin constraints) and
``beta_i >= 0`` (``xi_i >= 0``)::

    L = C sum xi_i + lambda <g, A^+ g> - sum alpha_i (y_i <phi_i, g> - 1 + xi_i) - sum beta_i xi_i

KKT stationarity: ``dL/dxi_i = C - alpha_i - beta_i = 0`` gives the box
``0 <= alpha_i <= C``; ``dL/dg = 2 lambda A^+ g - sum_i alpha_i y_i phi_i = 0`` gives, for
``g`` in ``range(A)``,

    g = 1/(2 lambda) A sum_i alpha_i y_i phi_i                                  (eq. 8, as printed)

and substituting back (``<g, A^+ g> = 1/(4 lambda^2) r^T A r`` with ``r = sum alpha_i y_i phi_i``)

    max_{0 <= alpha <= C}  sum_i alpha_i
                           - 1/(4 lambda) sum_{ij} alpha_i alpha_j y_i y_j phi_i^T A phi_j.

So the constant of the quadratic term is **1/(4 lambda)**, not the printed 1/(2 lambda) of
eq. 7. The printed pair (eq. 7 with 1/(2 lambda), eq. 8 with 1/(2 lambda)) is not
consistent for any single primal: eq. 7 as printed is the dual of the regulariser
``lambda/2 <g, A^+ g>``, whose map would be ``g = (1/lambda) A sum alpha_i y_i phi_i``.
This module keeps the primal of eq. 6 (``lambda <g, A^+ g>``, the same ``lambda`` as
MVML's ridge ``alpha``), the map of eq. 8 and the dual with ``1/(4 lambda)``; strong
duality (zero gap) is tested, and the printed constant is tested to leave a gap.

Reduction to a standard bias-free linear SVM
--------------------------------------------
Write ``A = F F^T`` and ``x_i = F^T phi_i``. With ``g = F v`` (``v`` in ``range(F^T)``)
one has ``<g, A^+ g> = ||v||^2`` and ``<phi_i, g> = <x_i, v>``, so the g-step is

    2 lambda * [ 1/2 ||v||^2 + C' sum_i max(0, 1 - y_i <x_i, v>) ],    C' = C / (2 lambda),

the textbook L1-loss SVM without bias on the features ``x_i``. Its dual
``max sum a_i - 1/2 a^T Q a``, ``0 <= a_i <= C'``, ``Q_ij = y_i y_j <x_i, x_j>``, has
``a = alpha / (2 lambda)`` and ``v = sum_i a_i y_i x_i``. ``F`` need not be square: the
dense A-step keeps ``A = s I + W W^T`` and then ``F = [sqrt(s) I, W]`` (``d + r``
features, no factorisation at all).

Solver
------
:func:`linear_svm` solves it with scikit-learn's liblinear (the solver of
``LinearSVC(loss="hinge", dual=True, fit_intercept=False)``: dual coordinate descent
with shrinking, Hsieh et al. 2008, in C). liblinear returns ``v`` only, and its
interface has no warm start; :func:`dual_from_primal` recovers multipliers ``a`` from
``v`` through the KKT conditions when they are wanted (the estimator's ``dual_coef_``).
:func:`polish_active_set` solves the KKT conditions exactly from a guess of the active
set: from liblinear's loose solution (:func:`linear_svm_polished`) or, across the outer
iterations of MVML-SVM, from the previous g-step's solution (the estimator's warm start).
:func:`active_set_svm` needs no guess: it grows the active set from scratch, for several
problems on the same rows at once (the first g-step's one-vs-all problems), and no
liblinear run is needed when it settles.
Row weights
-----------
With loss weights ``s_i >= 0`` (``sample_weight`` times ``class_weight``) the data term
is ``C sum_i s_i max(0, 1 - y_i <phi_i, g>)``; the same derivation gives the box
``0 <= alpha_i <= C_i = s_i C`` (``0 <= a_i <= s_i C'``) and nothing else changes. Every
solver here takes the rows' weights as ``weight`` (None: 1 each, the unweighted code
path): liblinear's per-row weights (its ``C_i = s_i C'``), the per-row bounds of the
active sets, and the KKT recovery; a row of weight 0 has ``a_i = 0`` whatever its margin.

libsvm (``SVC(kernel="precomputed")``) is not used: its dual always carries the
equality constraint ``sum_i a_i y_i = 0`` of the bias, which this problem does not have.
The full-kernel variant therefore also runs liblinear, on ``x_i = F^T H_{x_i}^T w``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import linalg
from scipy.optimize import linprog
from sklearn.svm import _liblinear
from sklearn.utils import check_random_state

from ._hinge_active import active_set_svm, polish_active_set

__all__ = [
    "svm_c_prime",
    "LinearSVMResult",
    "linear_svm",
    "linear_svm_working_set",
    "polish_applies",
    "linear_svm_polished",
    "dual_from_primal",
    "hinge_offsets",
    "hinge_view_weights",
]

#: liblinear's solver type for the L2-regularised L1-loss (hinge) SVM, dual form
_L2R_L1LOSS_SVC_DUAL = 3

#: :func:`linear_svm_polished`: liblinear's tolerance before the active-set solve
PRESOLVE_TOL = 0.03

#: :func:`linear_svm_polished` runs liblinear at the loose tolerance when
#: ``C' mean_i ||x_i||^2`` is at least this. Below 1, one row at the bound
#: (``v = C' y_i x_i``) cannot reach margin 1 on its own: a soft-margin regime with many
#: rows at the bound and near the margin, where a loose solution rarely settles the active
#: set (measured on the digits g-steps of MVMLSVCCV: the solve failed for most problems
#: below 1, for none above 1; the loose run saved time from 2 on)
POLISH_MIN_BOX = 2.0

#: :func:`linear_svm_polished`: band (in units of ``tol``) of the active-set solve tried on
#: liblinear's solution at ``tol`` itself
FALLBACK_BAND = 3.0


#: :func:`active_set_svm` is tried from scratch when ``C mean_i ||x_i||^2`` is at least
#: this (below :data:`POLISH_MIN_BOX`, where liblinear's loose solution rarely settles
#: the sets, growing them from scratch still does: measured on the first g-steps of the
#: default MVMLSVCCV, uWave at 12 % landmarks and digits in 2 views, whose ``alpha=1e-4``
#: and ``1e-3`` give boxes of about 1.7 and 0.17: every problem settled, with the same
#: solutions, and the searches took 7 % and 11 % less time than with liblinear there)
COLD_MIN_BOX = 0.1


def svm_c_prime(C: float, lam: float) -> float:
    """Box bound ``C' = C / (2 lambda)`` of the standard SVM equivalent to the g-step."""
    if not lam > 0:
        raise ValueError(f"lambda (alpha) must be > 0, got {lam!r}")
    return float(C) / (2.0 * float(lam))


@dataclass
class LinearSVMResult:
    """Result of :func:`linear_svm` for one problem.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
        ``v`` of ``min_v 1/2 ||v||^2 + C' sum_i max(0, 1 - y_i <x_i, v>)``.
    n_iter : int
        liblinear iterations (passes over the active coordinates).
    converged : bool
        Whether liblinear stopped on its tolerance before ``max_iter``.
    """

    coef: np.ndarray
    n_iter: int
    converged: bool


def linear_svm(
    X: np.ndarray,
    y: np.ndarray,
    C: float,
    *,
    tol: float = 1e-3,
    max_iter: int = 1000,
    random_state: Any = None,
    weight: np.ndarray | None = None,
) -> LinearSVMResult:
    """Bias-free L1-loss linear SVM by liblinear's dual coordinate descent.

    Solves ``min_v 1/2 ||v||^2 + C sum_i max(0, 1 - y_i <x_i, v>)``, the problem of
    ``LinearSVC(loss="hinge", dual=True, fit_intercept=False, C=C)``, through
    scikit-learn's compiled liblinear without the estimator's overhead.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Labels in {-1, +1} (one label only is allowed: the problem is then
        ``min 1/2 ||v||^2 + C sum_i max(0, 1 - y_0 <x_i, v>)``).
    C : float
        Box bound of the dual (> 0).
    tol : float
        liblinear's stopping tolerance: the spread of the projected gradients (margins
        minus 1 on free multipliers) is at most ``tol``.
    max_iter : int
        Maximum liblinear iterations.
    random_state : int, RandomState or None
        Seeds liblinear's coordinate order.
    weight : ndarray of shape (n,) or None
        The rows' weights ``s_i >= 0``: the problem ``min_v 1/2 ||v||^2 + C sum_i s_i
        max(0, 1 - y_i <x_i, v>)``, whose dual box is ``0 <= a_i <= s_i C`` (None: 1 each).

    Returns
    -------
    LinearSVMResult

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.mvml._hinge import linear_svm
    >>> X = np.array([[2.0, 0.0], [1.0, 1.0], [-1.0, -2.0], [-2.0, 1.0]])
    >>> res = linear_svm(X, np.array([1, 1, -1, -1]), C=10.0, tol=1e-8, random_state=0)
    >>> bool(np.all(np.array([1, 1, -1, -1]) * (X @ res.coef) >= 1 - 1e-6))
    True
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).ravel()
    if X.ndim != 2 or y.shape[0] != X.shape[0]:
        raise ValueError(f"X must be 2-D with one row per label, got {X.shape} and {y.shape}")
    if not np.all(np.abs(y) == 1.0):
        raise ValueError("labels must be -1 or +1")
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"C must be positive and finite, got {C!r}")
    n, d = X.shape
    if d == 0:
        return LinearSVMResult(np.zeros(0), 0, True)
    seed = check_random_state(random_state).randint(np.iinfo("i").max)
    _liblinear.set_verbosity_wrap(0)
    single = bool(np.all(y == y[0]))
    # liblinear classes 0 / 1 (sorted): its coefficients point towards class 1 = +1. With
    # one label (a one-vs-all column of a class absent from a training fold) liblinear
    # solves the one-class problem of margins >= 1 for its only class, 0: v = y_0 w.
    labels = np.zeros(n) if single else (y > 0).astype(np.float64)
    w, n_iter = _liblinear.train_wrap(
        X,
        labels,
        False,
        _L2R_L1LOSS_SVC_DUAL,
        float(tol),
        -1.0,  # no bias
        float(C),
        np.ones(1 if single else 2),
        int(max_iter),
        seed,
        0.1,
        np.ones(n) if weight is None else np.ascontiguousarray(weight, dtype=np.float64),
    )
    if single:
        w = w * y[0]
    it = int(np.max(n_iter))
    return LinearSVMResult(np.asarray(w[0], dtype=np.float64), it, it < max_iter)


def linear_svm_working_set(
    X: np.ndarray,
    y: np.ndarray,
    C: float,
    margins: np.ndarray | None,
    *,
    slack: float = 0.5,
    tol: float = 1e-3,
    max_iter: int = 1000,
    random_state: Any = None,
    weight: np.ndarray | None = None,
) -> tuple[LinearSVMResult, np.ndarray]:
    """:func:`linear_svm` on a working set of rows chosen from previous margins, exact.

    liblinear cannot be warm-started. Across the outer iterations of MVML-SVM the support
    vectors change little, so the previous g-step's margins ``m_i = y_i f(x_i)`` pick
    the rows likely to matter, ``S = {i : m_i < 1 + slack}`` (with at least one row of
    each label). The SVM is solved on ``S``; every other row is then checked: a row with
    margin ``< 1`` violates the KKT conditions of ``a_i = 0`` and is added (with the rows
    within ``slack`` of it), and the problem solved again. When no row outside ``S``
    violates them, ``v`` solves the full problem (the rows outside ``S`` have ``a_i = 0``
    and a zero projected gradient, so liblinear's stopping test holds on all rows).

    Returns the result (``n_iter`` summed over the solves) and the margins of all rows.
    ``margins=None`` solves on all rows. ``weight``: the rows' weights (as
    :func:`linear_svm`; a row of weight 0 never violates a condition).
    """
    y = np.asarray(y, dtype=np.float64).ravel()
    rng = check_random_state(random_state)
    n = y.shape[0]
    S = np.ones(n, dtype=bool) if margins is None else np.asarray(margins) < 1.0 + slack
    for label in (-1.0, 1.0):  # at least one row of each label that occurs
        mine = y == label
        if mine.any() and not (S & mine).any():
            idx = np.flatnonzero(mine)
            S[idx[np.argmin(np.asarray(margins)[idx])]] = True
    total = 0
    while True:
        res = linear_svm(
            X[S] if not S.all() else X,
            y[S],
            C,
            tol=tol,
            max_iter=max_iter,
            random_state=rng,
            weight=None if weight is None else weight[S],
        )
        total += res.n_iter
        m = y * (X @ res.coef)
        viol = ~S & (m < 1.0)
        if weight is not None:
            viol &= weight > 0
        if not viol.any() or not res.converged:
            return LinearSVMResult(res.coef, total, res.converged), m
        S |= viol


def polish_applies(
    X: np.ndarray,
    C: float,
    tol: float,
    presolve_tol: float = PRESOLVE_TOL,
    min_box: float = POLISH_MIN_BOX,
    weight: np.ndarray | None = None,
) -> bool:
    """Whether :func:`linear_svm_polished` tries the exact active-set solutions: when
    ``presolve_tol`` is looser than ``tol`` and ``C mean_i ||x_i||^2 >= min_box``
    (:data:`POLISH_MIN_BOX` for the polish of liblinear's loose solution, a regime where
    the active set settles early; :data:`COLD_MIN_BOX` for :func:`active_set_svm` from
    scratch); with ``weight``, ``C mean_i s_i ||x_i||^2``."""
    return presolve_tol > tol and _box(X, C, weight) >= min_box


def _box(X: np.ndarray, C: float, weight: np.ndarray | None = None) -> float:
    """``C mean_i ||x_i||^2`` (``C mean_i s_i ||x_i||^2`` with the rows' weights): how
    far one row at the bound reaches towards margin 1."""
    if weight is None:
        return C * float(np.vdot(X, X)) / max(X.shape[0], 1)
    return C * float(np.einsum("ij,ij,i->", X, X, weight)) / max(X.shape[0], 1)


def linear_svm_polished(
    X: np.ndarray,
    y: np.ndarray,
    C: float,
    margins: np.ndarray | None,
    *,
    tol: float = 1e-3,
    max_iter: int = 1000,
    random_state: Any = None,
    presolve_tol: float = PRESOLVE_TOL,
    weight: np.ndarray | None = None,
) -> tuple[LinearSVMResult, np.ndarray, np.ndarray | None]:
    """Exact bias-free L1-loss SVM: liblinear at a loose tolerance, then the active set.

    liblinear's dual coordinate descent spends most of its passes on the last digits of
    the multipliers; the *sets* of rows at the bound, free and inactive are settled much
    earlier. With no ``margins`` to start from (and ``C mean_i ||x_i||^2 >=``
    :data:`COLD_MIN_BOX`), :func:`active_set_svm` grows the sets from scratch first.
    Otherwise :func:`linear_svm_working_set` runs at ``presolve_tol`` (when it is looser
    than ``tol`` and ``C mean_i ||x_i||^2 >=`` :data:`POLISH_MIN_BOX`), and
    :func:`polish_active_set` solves the KKT conditions exactly from its margins. When
    that fails (a singular or unsettled active set) or is not tried, liblinear runs at
    ``tol`` on its working set, and the active-set solve is tried once more from that
    solution (band :data:`FALLBACK_BAND` ``* tol``); when it fails again the result is
    liblinear's, as without the polish.

    Returns the result (``n_iter`` summed over the liblinear runs), the margins of all
    rows and the multipliers ``a`` (``[0, C]``, all rows) when the polish succeeded, else
    None (recover them with :func:`dual_from_primal`). ``weight`` (n,): the rows' weights
    (boxes ``C s_i``, None: 1 each), passed to every solver.

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.mvml._hinge import linear_svm, linear_svm_polished
    >>> rng = np.random.RandomState(0)
    >>> X, y = rng.randn(60, 4), np.repeat([1.0, -1.0], 30)
    >>> res, m, a = linear_svm_polished(X, y, 2.0, None, tol=1e-3, random_state=0)
    >>> tight = linear_svm(X, y, 2.0, tol=1e-10, max_iter=100000, random_state=0)
    >>> a is not None and bool(np.allclose(res.coef, tight.coef, atol=1e-6))
    True
    """
    rng = check_random_state(random_state)
    y = np.asarray(y, dtype=np.float64).ravel()
    box, loose = _box(X, C, weight), presolve_tol > tol  # (polish_applies, one pass over X)
    if margins is None and loose and box >= COLD_MIN_BOX:
        # nothing to start from: from scratch
        [exact] = active_set_svm(X, y[:, None], C, weight=weight)
        if exact is not None:
            v, a, m = exact
            return LinearSVMResult(v, 0, True), m, a
    polish = loose and box >= POLISH_MIN_BOX
    if polish:
        res, m = linear_svm_working_set(
            X, y, C, margins, tol=presolve_tol, max_iter=max_iter, random_state=rng, weight=weight
        )
        if res.converged:
            exact = polish_active_set(X, y, C, m, presolve_tol, weight=weight)
            if exact is not None:
                v, a, m = exact
                return LinearSVMResult(v, res.n_iter, True), m, a
        margins = m
        first = res.n_iter
    else:
        first = 0
    res, m = linear_svm_working_set(
        X, y, C, margins, tol=tol, max_iter=max_iter, random_state=rng, weight=weight
    )
    total = first + res.n_iter
    if res.converged:  # the active set at liblinear's own tolerance
        exact = polish_active_set(X, y, C, m, FALLBACK_BAND * tol, weight=weight)
        if exact is not None:
            v, a, m = exact
            return LinearSVMResult(v, total, True), m, a
    return LinearSVMResult(res.coef, total, res.converged), m, None


def dual_from_primal(
    X: np.ndarray,
    y: np.ndarray,
    v: np.ndarray,
    C: float,
    *,
    band: float = 1e-6,
    margins: np.ndarray | None = None,
    weight: np.ndarray | None = None,
) -> np.ndarray:
    """Dual multipliers ``a`` (in ``[0, C]``) of a bias-free L1-loss SVM from its ``v``.

    KKT conditions: ``a_i = C`` where the margin ``m_i = y_i <x_i, v>`` is below 1,
    ``a_i = 0`` above 1, and ``v = sum_i a_i y_i x_i``. Margins within ``band`` of 1
    are free: their ``a_i`` solve ``X_F^T (y_F a_F) = v - C X_L^T y_L`` in the least-squares
    sense (minimum norm), clipped to the box. Exact when ``v`` is optimal and the free
    rows are linearly independent (the generic case). ``margins`` (``y_i <x_i, v>``) may be
    given; rows with a margin above ``1 + band`` have ``a_i = 0`` and may be left out of
    ``X`` by the caller. ``weight`` (n,): the rows' weights, boxes ``C s_i`` (a row of
    weight 0 has ``a_i = 0``).
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    m = y * (X @ v) if margins is None else np.asarray(margins)
    box: Any = float(C) if weight is None else float(C) * np.asarray(weight, dtype=np.float64)
    a = np.where(m < 1.0 - band, box, 0.0)
    free = np.abs(m - 1.0) <= band
    if weight is not None:
        free &= box > 0
    if free.any():
        rhs = v - X[a > 0].T @ ((C if weight is None else a[a > 0]) * y[a > 0])
        XF = X[free]
        b = None
        if XF.shape[0] <= XF.shape[1]:  # normal equations on the (smaller) free side
            try:
                b = linalg.cho_solve(
                    linalg.cho_factor(XF @ XF.T, check_finite=False), XF @ rhs, check_finite=False
                )
            except linalg.LinAlgError:
                b = None
        if b is None or not np.all(np.isfinite(b)):
            b = linalg.lstsq(XF.T, rhs, lapack_driver="gelsy", check_finite=False)[0]
        a[free] = np.clip(y[free] * b, 0.0, C if weight is None else box[free])
    return a


def hinge_offsets(
    F: np.ndarray, Y: np.ndarray, kappa: float, weight: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The offsets ``b`` minimising ``sum_i max(0, 1 - y_i (f_i + b)) + b^2 / (2 kappa)``,
    one per column of the decision values ``F`` (n, m) and labels ``Y`` (n, m), and the
    minimum values (m,). ``weight`` (n,): the rows' weights, ``sum_i s_i max(...)`` (the
    counts below become sums of weights).

    The function of ``b`` is convex and piecewise quadratic, with kinks at
    ``k_i = y_i - f_i`` (where row ``i`` reaches margin 1); its derivative between two
    consecutive kinks is ``b / kappa + c``, with ``c`` the rows with ``y_i = -1`` and
    ``k_i < b`` minus the rows with ``y_i = +1`` and ``k_i > b``. Its root lies in the
    first interval (kinks sorted) whose stationary point ``-kappa c`` does not exceed the
    interval's upper end, clipped to the interval (a kink when it lies below): exact, in
    ``O(n log n)`` per column. The hinge loss's offset given ``g``
    (:meth:`~mvkernels.mvml._hinge_loss.HingeLoss.intercepts`).

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.mvml._hinge import hinge_offsets
    >>> f, y = np.array([[4.0], [3.5], [1.0], [0.5]]), np.array([[1.0], [1.0], [-1.0], [-1.0]])
    >>> b, val = hinge_offsets(f, y, 1e6)  # every margin >= 1 for -2.5 <= b <= -2
    >>> float(b[0]), bool(np.all(y * (f + b) >= 1)), float(val[0]) == 2.0 / 1e6
    (-2.0, True, True)
    """
    F = np.asarray(F, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    n, m = F.shape
    kinks = Y - F
    order = np.argsort(kinks, axis=0, kind="stable")
    ks = np.take_along_axis(kinks, order, axis=0)
    ys = np.take_along_axis(Y, order, axis=0)
    zero = np.zeros((1, m))
    neg: np.ndarray
    pos: np.ndarray
    if weight is None:
        neg, pos = ys < 0, ys > 0
    else:
        ws = np.asarray(weight, dtype=np.float64)[order]  # (n, m): each column's order
        neg, pos = (ys < 0) * ws, (ys > 0) * ws
    neg_left = np.concatenate([zero, np.cumsum(neg, axis=0)])  # (n + 1, m)
    pos_left = np.concatenate([zero, np.cumsum(pos, axis=0)])
    count = neg_left - (pos_left[-1] - pos_left)  # slope count on each interval
    cand = -float(kappa) * count
    inf = np.full((1, m), np.inf)
    lo, hi = np.concatenate([-inf, ks]), np.concatenate([ks, inf])
    j = np.sum(cand > hi, axis=0)[None]  # intervals wholly left of the root
    b = np.clip(*(np.take_along_axis(a, j, axis=0)[0] for a in (cand, lo, hi)))
    hinge = np.maximum(0.0, 1.0 - Y * (F + b))
    vals = (hinge.sum(axis=0) if weight is None else weight @ hinge) + b**2 / (2.0 * float(kappa))
    return b, vals


def hinge_view_weights(
    Z: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    sw: np.ndarray | None = None,
    offset_loss: Callable[[np.ndarray], float] | None = None,
) -> np.ndarray:
    """Hinge-loss view weights: ``min_w sum_i s_i max(0, 1 - y_i Z_i w)`` over the simplex.

    ``Z`` (n x v) holds the per-view outputs (paper eq. 10 / 17). Only the loss depends on
    ``w``, so this is the exact w-minimiser of MVML-SVM; it is the linear program ``min
    sum s_i xi_i`` s.t. ``xi_i >= 1 - y_i Z_i w``, ``xi >= 0``, ``w >= 0``, ``sum w = 1``
    (HiGHS). The simplex fixes the scale as MVML's ``sum w = 1`` does (see
    :func:`mvkernels.mvml.least_squares_weights`), and ``w >= 0`` keeps the LP's vertex
    solutions from flipping the sign of a view. The current ``w`` is kept if the LP fails
    or does not improve the loss. ``offset_loss`` (the outputs ``f`` to the loss minimised
    over an offset): the LP has a free offset too, and the losses compared are
    ``offset_loss(Z w)``. ``sw``: the rows' weights ``s_i`` (None: 1 each).

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.mvml._hinge import hinge_view_weights
    >>> Z = np.array([[2.0, -1.0], [-2.0, 1.0], [1.5, 0.2]])
    >>> hinge_view_weights(Z, np.array([1.0, -1.0, 1.0]), np.array([0.5, 0.5])).round(6)
    array([1., 0.])
    """
    n, v = Z.shape
    k = v + (offset_loss is not None)  # the weights (and the offset)
    c = np.concatenate([np.zeros(k), np.ones(n) if sw is None else sw])
    cols = [-(y[:, None] * Z)] + ([-y[:, None]] if offset_loss is not None else [])
    A_ub = np.hstack([*cols, -np.eye(n)])
    A_eq = np.concatenate([np.ones(v), np.zeros(n + k - v)])[None, :]
    bounds = [(0, None)] * v + [(None, None)] * (k - v) + [(0, None)] * n
    res = linprog(
        c, A_ub=A_ub, b_ub=-np.ones(n), A_eq=A_eq, b_eq=[1.0], bounds=bounds, method="highs"
    )
    if not res.success:
        return w
    w_new = np.asarray(res.x[:v], dtype=np.float64)
    if offset_loss is not None:
        old = offset_loss(Z @ w)
        new = offset_loss(Z @ w_new)
    elif sw is None:
        old = np.maximum(0.0, 1.0 - y * (Z @ w)).sum()
        new = np.maximum(0.0, 1.0 - y * (Z @ w_new)).sum()
    else:
        old = float(sw @ np.maximum(0.0, 1.0 - y * (Z @ w)))
        new = float(sw @ np.maximum(0.0, 1.0 - y * (Z @ w_new)))
    return w_new if new <= old else w

"""Exact bias-free L1-loss SVMs by active sets: the g-step solver of MVML-SVM.

The g-step of MVML-SVM is a bias-free linear SVM on the features ``x_i = F^T phi_i``
(:mod:`mvkernels.mvml._hinge` derives it from paper eq. 6-8). Its KKT conditions split
the rows into three sets: ``Z`` (margin above 1, ``a_i = 0``), ``F`` (on the margin,
``0 <= a_i <= C s_i``, margin exactly 1) and ``B`` (margin below 1, ``a_i = C s_i``).
Given the sets, the multipliers of ``F`` solve one linear system (the free rows' Gram
matrix, by Cholesky); a guess of the sets is corrected until every row meets its
condition:

- :func:`polish_active_set` / :func:`polish_active_sets` start from margins (liblinear's
  loose solution, or the previous g-step's exact one: the warm start across the outer
  iterations of Algorithm 1), for one problem or several problems on the same rows;
- :func:`active_set_svm` grows the sets from scratch for several problems at once (the
  first g-step's one-vs-all problems);
- :func:`rebox_solutions` moves exact solutions to a larger box (the first g-steps of the
  CV's next ``alpha``: the same features, a larger ``C``);
- :func:`reseed_solutions` starts from solutions of the same problems on other rows that
  share the features (the first g-steps of the CV's next fold).

Each returns per problem ``(v, a, m)`` (primal, multipliers, margins), verified on every
row, or None when the sets do not settle; the caller then runs liblinear
(:func:`mvkernels.mvml._hinge.linear_svm_polished`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import linalg

__all__ = [
    "polish_active_set",
    "polish_active_sets",
    "active_set_svm",
    "FirstSolutions",
    "rebox_solutions",
    "reseed_solutions",
]

#: :func:`polish_active_set`: at most this many corrections of the guessed active set
POLISH_ROUNDS = 5

#: :func:`polish_active_set`: its corrections check the rows with a margin below
#: ``1 + POLISH_SLACK`` only, then every row once
POLISH_SLACK = 0.5

#: :func:`active_set_svm` (a g-step with nothing to start from): rows that join the free
#: set per correction at most (the most violated first; all at once make the free set's
#: system singular on a cold start), and the corrections it may take (measured on the
#: default first g-steps: 9 to 19 on uWave and digits; past the cap liblinear runs)
COLD_ADD = 16
COLD_ROUNDS = 40

#: active-set corrections that return to sets they had before cycle (moving every row
#: that breaks a condition at once can): from then on, at most this many rows of each
#: kind of move (those that break their condition most) move per correction, and a
#: second cycle gives up (measured on the warm starts of the default digits fit, one
#: target in 2 views cycled with period 8 until the round limit; with 1, 2, 4 and 8 moves
#: it settled after 36, 30, 30 corrections and not at all)
CYCLE_MOVES = 4

#: warm start of a g-step from the previous exact one (:func:`polish_active_set` on the
#: new features): band of the previous margins read as "on the margin" (an exact
#: solution has them within 1e-9 of 1)
WARM_BAND = 1e-6

#: warm start: at most this many corrections of the previous active set, each letting at
#: most :data:`COLD_ADD` rows of ``Z`` join ``F`` (measured: 3 to 7 after an A-step in a
#: default MVMLSVC fit on uWave; in the soft-margin g-steps of MVMLSVCCV on digits a
#: quarter needed 11 to 20 and 5 % did not settle within 20, most of them within 40: a
#: failed warm start costs its corrections and then liblinear, several times more)
WARM_ROUNDS = 40

# Alternatives to these corrections (every row that breaks its condition moves at once,
# at most COLD_ADD joins from Z), measured by replaying the solver's calls of
# MVMLClassifierCV(loss="auto") on two 20-rows-a-class digits draws (2,609 solves, every
# problem settled) and on digits in 3 views (600 rows; 1,982 solves, 6 problems
# unsettled); benchmarks/bench_hinge_solves.py counts them in the fits. None was kept:
# - the sets guessed from margins extrapolated across the outer iterations,
#   m + f (m - m_before), f = 0.5 or 1: the warm starts' corrections of 6 draws 4,942 ->
#   7,713 or 8,180;
# - rows of Z with 1 - m > k C s_i ||x_i||^2 sent to B directly (k = 1, 2, 4): 2,656,
#   2,602, 2,597 solves; 600 rows 1,646, 1,681, 1,638, but 15-16 problems unsettled;
# - COLD_ADD of 2, 4, 8, 12 or 24 to 64 and none, for every caller: 2,581 to 3,322
#   solves; 600 rows 1,782 to 2,340, 4 to 22 unsettled (8: 1,782 and 4, but two problems
#   settle where they did not, or the reverse: results change); 8 for the warm starts
#   alone: 600 rows 1,803 solves, but MVMLSVCCV()'s there 3,439 -> 3,327 with three
#   problems changing outcome, and no change on the small draws;
# - joins from Z deferred (at most 0, 1, 2, 4) while rows leave F: 2,686 to 3,643; 600
#   rows 1,937 to 3,590 with 8 to 33 unsettled;
# - joins from Z deferred while the margin misses 1 by less than 1e-4 to 0.2 and other
#   rows move: 2,611 to 3,350; 600 rows 1,960 to 2,813, 3 to 11 unsettled;
# - the free rows' Gram matrix read from X X^T on the features' side (formed once, 1.4 ms
#   for 600 rows): no faster than the products (the reuse of GRAM_REUSE_MIN_ROWS is lost),
#   nor the whole correction in the dual there (_dual_solves with it);
# - the settled problems' multipliers formed in one pass: no measurable change.
# In the warm starts, 47 % of the problems settle with the sets of the previous g-step on
# the small draws (26 % on 600 rows): one solve each, the least a new g-step needs.

#: :func:`reseed_solutions`: band of the seeds' margins read as "on the margin" (the
#: seeds solve other problems, so their free rows' margins are near 1, not at it;
#: measured on the first g-steps of MVMLClassifierCV(loss="auto") over 6 digits draws of
#: 20 rows a class, landmarks unseeded, one run each: 4.4 corrections a seeded problem
#: with 0.01, 4.8 with 1e-6 and 4.6 with 0.1, against 8.5 grown from scratch)
FOLD_BAND = 0.01

#: an active-set solve updates the free rows' Gram matrix from the previous correction's
#: when at least this share of its free rows was free there (the kept rows' block reused,
#: the new rows' products computed); else it forms it anew
GRAM_REUSE_MIN_KEPT = 0.5

#: ... and when the previous free set had at least this many rows: a smaller Gram matrix
#: costs less to form anew than the bookkeeping of an update (measured on the soft-margin
#: g-steps of the digits MVMLSVCCV, whose free sets hold about 30 rows)
GRAM_REUSE_MIN_ROWS = 32


def polish_active_set(
    X: np.ndarray,
    y: np.ndarray,
    C: float,
    margins: np.ndarray,
    band: float,
    *,
    rounds: int = POLISH_ROUNDS,
    slack: float = POLISH_SLACK,
    max_add: int | None = None,
    weight: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The exact solution of a bias-free L1-loss SVM from an approximate one, or None.

    The KKT conditions of ``min_v 1/2 ||v||^2 + C sum_i max(0, 1 - y_i <x_i, v>)`` with
    ``v = sum_i a_i y_i x_i`` split the rows into three sets: ``B`` (``a_i = C``, margin
    ``m_i <= 1``), ``F`` (``0 <= a_i <= C``, ``m_i = 1``) and ``Z`` (``a_i = 0``,
    ``m_i >= 1``). Guessing them from the ``margins`` of an approximate solution
    (``B: m < 1 - band``, ``F: |m - 1| <= band``, ``Z: m > 1 + band``), the multipliers of
    ``F`` solve the linear system ``m_F = 1``::

        (X_F X_F^T) (y_F a_F) = y_F - X_F v_B,      v_B = C sum_{i in B} y_i x_i

    (a Cholesky solve of size ``|F|``). The guess is right when every condition holds on
    every row (to 1e-9; a free row whose margin misses 1 by more, an ill-conditioned
    system, returns None); the rows that break one are moved (``a_i < 0`` to ``Z``,
    ``a_i > C`` to ``B``, violating rows of ``B`` or ``Z`` to ``F``) and the system solved
    again, at most ``rounds`` times. The corrections check the rows with a guessed margin
    below ``1 + max(band, slack)`` only (the others are far inside ``Z``); every row is
    checked once they settle, and a violating row of the rest joins ``F`` (one more
    correction). Returns ``(v, a, m)`` (``a`` in ``[0, C]``, ``m`` the margins of all
    rows) when the conditions hold on every row, None otherwise (singular system, or not
    settled within ``rounds``). ``weight`` (n,): the rows' weights, boxes ``C s_i``
    (None: 1 each); a row of weight 0 stays in ``Z``.

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.mvml._hinge import linear_svm
    >>> from mvkernels.mvml._hinge_active import polish_active_set
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(40, 5)
    >>> y = np.where(X[:, 0] + 0.5 * rng.randn(40) > 0, 1.0, -1.0)
    >>> res = linear_svm(X, y, C=1.0, tol=0.03, random_state=0)
    >>> v, a, m = polish_active_set(X, y, 1.0, y * (X @ res.coef), band=0.03)
    >>> free = (a > 0) & (a < 1)
    >>> bool(np.allclose(v, (a * y) @ X) and np.allclose(m[free], 1.0))
    True
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    m = np.asarray(margins, dtype=np.float64)
    C = float(C)
    eps = 1e-9
    n = m.shape[0]
    at_c, free = m < 1.0 - band, np.abs(m - 1.0) <= band
    checked = m < 1.0 + max(band, slack)  # the rows outside it are in Z
    while True:
        sub = np.flatnonzero(checked)
        at_s, free_s = at_c[sub], free[sub]
        w_s = None if weight is None else weight[sub]
        settled = _settle_active_set(X[sub], y[sub], C, at_s, free_s, rounds, eps, max_add, w_s)
        if settled is None:
            return None
        v, a_s, used = settled
        m = y * (X @ v)
        grow = ~checked & (m < 1.0 - eps)  # rows of Z outside S that break a condition
        if weight is not None:
            grow &= weight > 0
        if not grow.any():
            a = np.zeros(n)
            a[sub] = a_s
            return v, a, m
        rounds -= used + 1
        if rounds < 0:
            return None
        at_c[sub], free[sub] = at_s, free_s  # the settled sets, and the violators join F
        free |= grow
        checked |= grow


def _settle_active_set(
    X: np.ndarray,
    y: np.ndarray,
    C: float,
    at_c: np.ndarray,
    free: np.ndarray,
    rounds: int,
    eps: float,
    max_add: int | None = None,
    weight: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, int] | None:
    """:func:`polish_active_set` on the rows given: ``(v, a, corrections used)`` once the
    KKT conditions hold on these rows within ``rounds`` corrections, else None (see
    :func:`_correct_sets` for ``max_add``): :func:`_settle_active_sets` for one problem
    (``at_c`` and ``free`` updated in place through their row views)."""
    [settled] = _settle_active_sets(
        X, y[:, None], C, at_c[None], free[None], rounds, eps, max_add, weight=weight
    )
    return None if settled is None else settled[:3]


def _free_solve(G: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
    """``G^{-1} rhs`` for the free rows' Gram matrix ``G = X_F X_F^T`` by Cholesky (LAPACK
    directly: it runs once per problem and correction, where
    :func:`~mvkernels._linalg.robust_cholesky`'s symmetrising copy and checks cost as much
    as the factorisation), or None when not positive definite."""
    _, b, info = linalg.lapack.dposv(G, rhs, lower=True)  # factor and solve in one call
    if info != 0 or not math.isfinite(b.sum()):  # a NaN or inf anywhere makes the sum one
        return None
    return b


@dataclass
class _FreeGram:
    """A problem's free rows at its last solve (``idx``, in the order of ``G``; ``mask``
    the same rows as a boolean row mask) and their Gram matrix ``G``, for its next solve."""

    idx: np.ndarray
    mask: np.ndarray
    G: np.ndarray


def _free_rows_gram(
    X: np.ndarray,
    E: np.ndarray | None,
    free: np.ndarray,
    prev: _FreeGram | None,
    gram: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
    """The free rows ``idx``, their features ``X_F`` and ``E_F`` (None without ``E``) and
    ``G = X_F X_F^T`` (plus ``E_F E_F^T`` with ``E``). ``gram``: ``X X^T`` of all the
    rows (:func:`_settle_active_sets` forms it when the rows are fewer than the
    features), whose free block is then read instead of a product (rows in increasing
    order). Else, when the previous solve's free rows ``prev`` (at least
    :data:`GRAM_REUSE_MIN_ROWS` of them) hold at least :data:`GRAM_REUSE_MIN_KEPT` of the
    free rows, ``G`` is updated from ``prev.G``: the kept rows come first, in their
    previous order, with their block of ``prev.G``, and only the new rows' products are
    computed (a correction moves a few rows; the Gram matrix of the
    free set is the largest cost of a solve); otherwise ``G`` is formed anew (rows in
    increasing order)."""
    if gram is not None:
        idx = np.flatnonzero(free)
        XF = X[idx]
        G = gram[idx[:, None], idx]
        EF = None if E is None else E[idx]
        if EF is not None:
            G += EF @ EF.T
        return idx, XF, EF, G
    if prev is not None and prev.idx.size >= GRAM_REUSE_MIN_ROWS:
        kept = free[prev.idx]
        n_kept = int(np.count_nonzero(kept))
        new = np.flatnonzero(free > prev.mask)  # free now, not then
        if n_kept and n_kept >= GRAM_REUSE_MIN_KEPT * (n_kept + new.size):
            idx = np.concatenate([prev.idx[kept], new])
            XF = X[idx]
            EF = None if E is None else E[idx]
            G = np.empty((idx.size, idx.size))
            G[:n_kept, :n_kept] = prev.G[kept][:, kept]
            if new.size:
                XN = XF[n_kept:]
                cross = XN @ XF[:n_kept].T
                corner = XN @ XN.T
                if EF is not None:
                    EN = EF[n_kept:]
                    cross += EN @ EF[:n_kept].T
                    corner += EN @ EN.T
                G[n_kept:, :n_kept] = cross
                G[:n_kept, n_kept:] = cross.T
                G[n_kept:, n_kept:] = corner
            return idx, XF, EF, G
    idx = np.flatnonzero(free)
    XF = X[idx]
    G = XF @ XF.T
    EF = None if E is None else E[idx]
    if EF is not None:
        G += EF @ EF.T
    return idx, XF, EF, G


def _solve_sets(
    X: np.ndarray,
    y: np.ndarray,
    C: float,
    at_c: np.ndarray,
    free: np.ndarray,
    E: np.ndarray | None = None,
    prev: _FreeGram | None = None,
    weight: np.ndarray | None = None,
    vb: np.ndarray | None = None,
    gram: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, _FreeGram | None] | None:
    """``v`` of the sets (``B`` = ``at_c`` at ``C``, ``F`` = ``free`` on the margin), the
    free rows, their multipliers and their Gram matrix (for the next solve, see
    :func:`_free_rows_gram` for ``prev``), or None when ``X_F X_F^T`` is singular. With
    ``E`` (n, r) the features are ``[X, E]`` (``v`` has ``d + r`` entries; ``[X, E]`` is
    not formed). ``weight``: the rows' weights (``B``'s rows at ``C s_i``). ``vb``: ``B``'s
    part of ``v``, ``sum_{i in B} C s_i y_i [x_i, e_i]``, when the caller has it (from one
    product for several problems); else computed here. ``gram``: ``X X^T`` (see
    :func:`_free_rows_gram`; no Gram matrix is then kept for the next solve)."""
    d = X.shape[1]
    if vb is not None:  # given: B's part of v
        v = vb
    else:
        nb = at_c.nonzero()[0]
        cy = C * y[nb]
        if weight is not None:
            cy = cy * weight[nb]
        v = cy @ X[nb] if E is None else np.concatenate([cy @ X[nb], cy @ E[nb]])
    if not free.any():
        return v, np.zeros(0, dtype=np.intp), np.zeros(0), None
    idx, XF, EF, G = _free_rows_gram(X, E, free, prev, gram)
    rhs = y[idx] - XF @ v[:d]
    if EF is not None:
        rhs -= EF @ v[d:]
    b = _free_solve(G, rhs)  # G itself is kept (the solve factors a copy)
    if b is None:
        return None
    step = b @ XF if EF is None else np.concatenate([b @ XF, b @ EF])
    kept = None if gram is not None else _FreeGram(idx, free.copy(), G)  # (read from gram)
    return v + step, idx, y[idx] * b, kept


def _correct_sets(
    m: np.ndarray,
    free_rows: list[tuple[np.ndarray, np.ndarray]],
    at_c: np.ndarray,
    free: np.ndarray,
    C: np.ndarray,
    eps: float,
    max_add: int | None,
    max_free: np.ndarray,
    cautious: np.ndarray,
    weight: np.ndarray | None = None,
) -> np.ndarray:
    """One correction of the sets of ``J`` problems at once, from the margins ``m``
    (J, n) of their solutions; ``free_rows[j]`` holds problem ``j``'s free rows and their
    multipliers, ``C`` (J,) the boxes. Returns each problem's status: 1 when every KKT
    condition holds (to ``eps``), 0 after moving the rows that break one (``at_c``,
    ``free`` (J, n) updated in place; with ``max_add``, at most that many rows of ``Z``
    join ``F``, those of the smallest margins, and ``F`` stays within ``max_free[j]``
    rows), -1 when the solution misses its own margins (ill-conditioned) or ``F`` is full
    (the rows of problems whose status is not 0 may have been changed too: the caller
    keeps the sets of status 0 only). ``cautious[j]``: of each kind of move (``F`` to
    ``Z``, ``F`` to ``B``, ``B`` to ``F``, ``Z`` to ``F``) only the :data:`CYCLE_MOVES`
    rows that break their condition most move. Every test is one operation over all the
    problems' rows (a round of the lockstep corrections costs a few array passes, not a
    few per problem). ``weight`` (n,) or (J, n): the rows' weights (shared, or one row per
    problem), row ``i``'s box ``C[j] s_i`` (a row of weight 0 never moves: it stays in
    ``Z``)."""
    a = np.zeros(m.shape)
    for j, (idx, a_free) in enumerate(free_rows):
        a[j, idx] = a_free
    Cc = C[:, None] if weight is None else C[:, None] * weight
    ill = (free & (np.abs(m - 1.0) > eps)).any(axis=1)  # ill-conditioned X_F X_F^T
    # a is 0 off F and the boxes are >= 0: these tests hold on rows of F only
    low = a < -eps * Cc
    high = a > Cc * (1.0 + eps)
    viol_zero = m < 1.0 - eps
    viol_zero &= ~(at_c | free)
    if weight is not None:
        viol_zero &= weight > 0
    viol_c = m > 1.0 + eps
    viol_c &= at_c
    moves = low | high
    moved = (moves | viol_zero | viol_c).any(axis=1)
    status = np.where(moved, 0, 1).astype(np.int8)
    status[ill] = -1
    if cautious.any():
        for j in np.flatnonzero(cautious & (status == 0)).tolist():
            low[j] = _most_violating(low[j], a[j], largest=False)
            high[j] = _most_violating(high[j], a[j], largest=True)
            viol_c[j] = _most_violating(viol_c[j], m[j], largest=True)
            viol_zero[j] = _most_violating(viol_zero[j], m[j], largest=False)
        moves = low | high
    free &= ~moves
    at_c |= high
    free |= viol_c
    at_c &= ~viol_c
    if max_add is None:
        free |= viol_zero
        return status
    room = np.minimum(max_add, max_free - free.sum(axis=1))
    status[(status == 0) & (room <= 0)] = -1
    over = (status == 0) & (viol_zero.sum(axis=1) > room)
    if over.any():
        joins = [np.flatnonzero(viol_zero[j]) for j in np.flatnonzero(over).tolist()]
        viol_zero[over] = False
        free |= viol_zero
        for j, join in zip(np.flatnonzero(over).tolist(), joins):
            # the room's worth of the most violated rows join
            free[j, join[np.argpartition(m[j, join], room[j] - 1)[: room[j]]]] = True
    else:
        free |= viol_zero
    return status


def _most_violating(mask: np.ndarray, values: np.ndarray, largest: bool) -> np.ndarray:
    """``mask`` reduced to its :data:`CYCLE_MOVES` entries of the smallest (or
    ``largest``) ``values``."""
    where = np.flatnonzero(mask)
    if where.size <= CYCLE_MOVES:
        return mask
    vals = -values[where] if largest else values[where]
    few = np.zeros_like(mask)
    few[where[np.argpartition(vals, CYCLE_MOVES - 1)[:CYCLE_MOVES]]] = True
    return few


def _multipliers(
    at_c: np.ndarray,
    idx: np.ndarray,
    a_free: np.ndarray,
    C: float,
    weight: np.ndarray | None = None,
) -> np.ndarray:
    """All rows' multipliers: ``C`` (``C s_i`` with ``weight``) on ``B``, the free ones
    (clipped to the box), 0."""
    # (np.minimum of np.maximum: np.clip's checks cost several times more on these
    # small arrays, once per settled problem)
    if weight is None:
        a = np.where(at_c, C, 0.0)
        a[idx] = np.minimum(np.maximum(a_free, 0.0), C)
        return a
    box = C * weight
    a = np.where(at_c, box, 0.0)
    a[idx] = np.minimum(np.maximum(a_free, 0.0), box[idx])
    return a


def _primal_solves(
    X: np.ndarray,
    YT: np.ndarray,
    Cs: np.ndarray,
    CY: np.ndarray,
    at_c: np.ndarray,
    free: np.ndarray,
    live: list[int],
    extras: list[np.ndarray] | None,
    weight: np.ndarray | None,
    grams: list[_FreeGram | None],
) -> tuple[None, dict, np.ndarray]:
    """One solve of the sets of every ``live`` problem of :func:`_settle_active_sets`
    (``CY`` (K, n): the rows' ``C s_i y_i``) on the features: ``(None, sol, M)`` with
    ``sol[k] = (v, free rows, their multipliers)`` for the problems whose free set is not
    singular, ``M`` their margins (in ``sol``'s order). ``grams[k]``: problem ``k``'s
    last free-set Gram matrix (updated)."""
    d = X.shape[1]
    per_problem = weight is not None and weight.ndim == 2
    sol: dict = {}
    # the bound rows' part of every live problem's v in one product: over the rows
    # bound in some live problem when they are under a quarter of the rows (the
    # product over all n rows was the largest cost of a correction on the default
    # one-vs-rest digits fit, ~100 of 1,347 rows bound), else over all rows
    in_b = at_c[live].any(axis=0)
    if 4 * int(np.count_nonzero(in_b)) < X.shape[0]:
        rows = np.flatnonzero(in_b)
        lb = np.ix_(np.asarray(live, dtype=np.intp), rows)
        coef = np.where(at_c[lb], CY[lb], 0.0)
        bound: np.ndarray | slice = rows
    else:
        bound = slice(None)
        coef = np.where(at_c[live], CY[live], 0.0)
    VB = coef @ X[bound]
    for j, k in enumerate(live):
        E = None if extras is None else extras[k]
        vb = VB[j] if E is None else np.concatenate([VB[j], coef[j] @ E[bound]])
        wk = weight[k] if per_problem else weight
        solved = _solve_sets(X, YT[k], float(Cs[k]), at_c[k], free[k], E, grams[k], wk, vb)
        if solved is not None:  # else singular: this problem gives up (None)
            sol[k] = solved[:3]
            grams[k] = solved[3]
    solved_ks = list(sol)
    if not sol:
        return None, sol, np.zeros((0, X.shape[0]))
    M = np.array([sol[k][0][:d] for k in solved_ks]) @ X.T  # (problems, rows)
    if extras is not None:
        for j, k in enumerate(solved_ks):
            M[j] += extras[k] @ sol[k][0][d:]
    M *= YT[solved_ks]  # the margins
    return None, sol, M


def _dual_solves(
    gram: np.ndarray,
    YT: np.ndarray,
    CY: np.ndarray,
    at_c: np.ndarray,
    free: np.ndarray,
    live: list[int],
    extras: list[np.ndarray] | None,
    stacked: np.ndarray | None = None,
) -> tuple[np.ndarray, dict, np.ndarray]:
    """:func:`_primal_solves` in the dual, for fewer rows than features (``gram = X
    X^T``): a problem's ``v`` is ``sum_i c_i [x_i, e_i]`` with the coefficients ``c_i =
    a_i y_i`` (``C s_i y_i`` on ``B``, the solve's ``b`` on ``F``: ``G b = y_F - X_F v_B
    - E_F E_B^T c_B``, ``G = X_F X_F^T + E_F E_F^T``), so ``X_F v_B`` is read from one
    product ``C_B X X^T`` for every live problem (``C_B`` (L, n) their bound rows'
    coefficients), and the margins ``y_i (x_i^T v + e_i^T v_E)`` from one product ``C X
    X^T`` plus ``E (E^T c)`` per problem: no product with ``X`` per problem and correction
    (``v`` itself is formed once, by the caller, from the settled coefficients).
    ``stacked``: the ``extras`` as one (K, n, r) array (all of one width), whose ``E (E^T
    c)`` terms are then two batched products for every live problem; per problem only the
    free rows' Gram block and one Cholesky solve are left, the ``b``'s scattered into the
    coefficients and multiplied into the multipliers once for all problems (the Python
    work per problem was the largest cost of the many small solves of the CV's
    g-steps). Returns ``(coefs, sol, M)``: ``sol[k] = (c, free rows, their
    multipliers)`` (``c`` a row of ``coefs``) of the problems whose free set is not
    singular (nor its solution finite), ``M`` their margins, in ``sol``'s order."""
    CB = np.where(at_c[live], CY[live], 0.0)  # (L, n): the bound rows' c_i
    R = YT[live] - CB @ gram  # row j: y - X v_B of problem live[j] (gram is symmetric)
    EL = None
    if stacked is not None:  # ... - E_k (E_k^T c_B), every live problem at once
        EL = stacked[live]
        R -= np.matmul(EL, np.matmul(CB[:, None, :], EL).transpose(0, 2, 1))[:, :, 0]
    # every live problem's free rows from one pass (row-major: each one's in increasing
    # order); per problem its slice, and ``take`` (a fancy index of ``gram`` costs
    # several times more for these small blocks)
    F = free[live]
    fr, cols = F.nonzero()
    ends = np.cumsum(F.sum(axis=1)).tolist()
    bs = np.zeros(cols.size)  # every problem's b, in the order of its free rows
    sol: dict = {}
    rows: list[int] = []
    start = 0
    for j, k in enumerate(live):
        end = ends[j]
        idx = cols[start:end]
        if idx.size:
            G = gram.take(idx, 0).take(idx, 1)
            rhs = R[j].take(idx)
            if EL is not None:
                EF = EL[j].take(idx, 0)
                G += EF @ EF.T
            elif extras is not None:
                EF = extras[k].take(idx, 0)
                G += EF @ EF.T
                rhs -= EF @ (CB[j] @ extras[k])
            # (_free_solve without its finiteness test: one test for all problems below)
            _, b, info = linalg.lapack.dposv(G, rhs, lower=True)
            if info != 0:  # singular: this problem gives up (None)
                start = end
                continue
            bs[start:end] = b
        sol[k] = (CB[j], idx, (start, end))
        rows.append(j)
        start = end
    # the b's into the coefficients (F and B are disjoint: c_F = b) and the free rows'
    # multipliers y_F b, for every problem at once (a problem that gave up has b = 0)
    CB[fr, cols] += bs
    a_free = YT[live][fr, cols] * bs
    for k, (coef, idx, (start, end)) in sol.items():
        sol[k] = (coef, idx, a_free[start:end])
    coefs = CB[rows]
    bad = ~np.isfinite(coefs.sum(axis=1))  # a NaN or inf in b: that problem gives up too
    if bad.any():
        for k in [k for k, gone in zip(list(sol), bad) if gone]:
            del sol[k]
        rows = [j for j, gone in zip(rows, bad) if not gone]
        coefs = coefs[~bad]
    M = coefs @ gram
    if EL is not None:
        EK = EL[rows]
        M += np.matmul(EK, np.matmul(coefs[:, None, :], EK).transpose(0, 2, 1))[:, :, 0]
    elif extras is not None:
        for j, k in enumerate(sol):
            M[j] += extras[k] @ (coefs[j] @ extras[k])
    M *= YT[list(sol)]  # the margins
    return coefs, sol, M


def _settle_active_sets(
    X: np.ndarray,
    Y: np.ndarray,
    C: float | np.ndarray,
    at_c: np.ndarray,
    free: np.ndarray,
    rounds: int,
    eps: float,
    max_add: int | None = None,
    extras: list[np.ndarray] | None = None,
    weight: np.ndarray | None = None,
    gram: np.ndarray | None = None,
) -> list[tuple[np.ndarray, np.ndarray, int, np.ndarray] | None]:
    """The KKT corrections for the columns of ``Y`` (problems on the same rows ``X``) in
    lockstep: one product ``X V`` gives the margins of every problem per correction.
    ``at_c``, ``free`` (K, n) are updated in place. ``C``: one box or one per problem;
    ``extras``: per problem ``E_k`` (n, r), whose features are then ``[X, E_k]`` (their
    margins: the shared product plus ``E_k v_k``). Returns per problem ``(v, a,
    corrections used, margins)`` once the KKT conditions hold on every row within
    ``rounds`` corrections, else None (see :func:`_correct_sets` for ``max_add``; ``F``
    never has more rows than the features have columns). A problem whose corrections
    return to sets it had before (they cycle) moves at most :data:`CYCLE_MOVES` rows of
    each kind per correction from then on, and gives up when they cycle again.
    ``weight`` (n,): the rows' weights (boxes ``C s_i``; rows of weight 0 are in ``Z``);
    (K, n): one row of weights per problem (problems on subsets of the rows: weight 0
    off a problem's rows, e.g. the class pairs of one-vs-one).
    Per correction the bound rows' part of every live problem's ``v`` is one product
    with ``X`` too (``X`` read once, no copy of the bound rows per problem). With fewer
    rows than features, ``X X^T`` (``gram``, when the caller has it) is formed once and
    the corrections run in the dual (:func:`_dual_solves`: the free sets' Gram matrices
    and every margin read from ``X X^T``; ``v`` formed once a problem settles)."""
    K = Y.shape[1]
    per_problem = weight is not None and weight.ndim == 2
    if weight is not None:  # a row of weight 0 has a_i = 0: never at the bound or free
        zero = weight <= 0
        at_c &= ~zero
        free &= ~zero
    YT = np.ascontiguousarray(Y.T)
    Cs = np.broadcast_to(np.asarray(C, dtype=np.float64), (K,))
    d = X.shape[1]
    out: list[tuple[np.ndarray, np.ndarray, int, np.ndarray] | None] = [None] * K
    live = list(range(K))
    seen: list[set] = [set() for _ in range(K)]  # each problem's sets so far (packed)
    cautious = np.zeros(K, dtype=bool)
    grams: list[_FreeGram | None] = [None] * K  # each problem's last free-set Gram matrix
    widths = np.full(K, d) if extras is None else np.array([d + E.shape[1] for E in extras])
    # fewer rows than features: every free set's Gram matrix is read from X X^T
    if gram is None and X.shape[0] <= d:
        gram = X @ X.T
    CY = Cs[:, None] * YT if weight is None else Cs[:, None] * YT * weight
    stacked = None  # the dual's extras as one array where they have one width
    if gram is not None and extras is not None and len({E.shape for E in extras}) == 1:
        stacked = np.stack(extras)
    for used in range(rounds + 1):
        coefs: np.ndarray | None
        if gram is not None:  # fewer rows than features: the solves in the dual
            coefs, sol, M = _dual_solves(gram, YT, CY, at_c, free, live, extras, stacked)
        else:
            coefs, sol, M = _primal_solves(X, YT, Cs, CY, at_c, free, live, extras, weight, grams)
        if not sol:
            break
        solved_ks = list(sol)
        ks = np.array(solved_ks, dtype=np.intp)
        sets_c, sets_f = at_c[ks], free[ks]
        status = _correct_sets(
            M,
            [sol[k][1:] for k in solved_ks],
            sets_c,
            sets_f,
            Cs[ks],
            eps,
            max_add,
            widths[ks],
            cautious[ks],
            weight[ks] if per_problem else weight,
        )
        moved = status == 0
        ks_moved = ks[moved]
        at_c[ks_moved] = sets_c[moved]
        free[ks_moved] = sets_f[moved]
        done = np.flatnonzero(status == 1).tolist()
        if done:
            V = VE = None
            if coefs is not None:  # the dual's coefficients a_i y_i: v from them, one
                CD = coefs[done]  # product for every problem settled at this correction
                V = CD @ X
                if stacked is not None:
                    VE = np.matmul(CD[:, None, :], stacked[ks[done]])[:, 0, :]
            for i, j in enumerate(done):
                k = solved_ks[j]
                v, idx, a_free = sol[k]
                wk = weight[k] if per_problem else weight
                a = _multipliers(at_c[k], idx, a_free, float(Cs[k]), wk)
                if V is not None:
                    if extras is None:
                        v = V[i]
                    else:
                        ve = v @ extras[k] if VE is None else VE[i]
                        v = np.concatenate([V[i], ve])
                out[k] = (v, a, used, M[j].copy())
        live = []
        if ks_moved.size:  # the new sets of each moved problem, as bytes (cycles)
            keys = np.packbits(np.concatenate([sets_c[moved], sets_f[moved]], axis=1), axis=1)
            for key, k in zip(keys, ks_moved.tolist()):
                state = key.tobytes()
                if state not in seen[k]:
                    seen[k].add(state)
                    live.append(k)
                elif not cautious[k]:  # a cycle: at most CYCLE_MOVES of each kind now
                    cautious[k] = True
                    seen[k] = {state}
                    live.append(k)
        if not live:
            break
    return out


def polish_active_sets(
    X: np.ndarray,
    Y: np.ndarray,
    C: np.ndarray,
    margins: np.ndarray,
    band: float,
    *,
    extras: list[np.ndarray] | None = None,
    rounds: int = WARM_ROUNDS,
    max_add: int | None = COLD_ADD,
    weight: np.ndarray | None = None,
    gram: np.ndarray | None = None,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray] | None]:
    """:func:`polish_active_set` for several problems on the same rows, in lockstep.

    Problem ``k`` has the features ``[X, E_k]`` (``E_k = extras[k]``, (n, r); ``X`` alone
    without ``extras``), the labels ``Y[:, k]``, the box ``C[k]`` and the sets guessed
    from ``margins[k]`` (as :func:`polish_active_set` with ``band``). Every correction
    checks every row (no subset of rows, so no second pass), and one product ``X V`` gives
    the shared part of every problem's margins, which reads ``X`` once per correction for
    all problems (the warm starts of the g-steps of MVML-SVM, one problem per target and
    ``eta``). Returns per problem ``(v, a, m)`` (``v`` of length ``d + r``), or None
    (singular, or not settled within ``rounds`` corrections of at most ``max_add`` new
    free rows each). A problem that settles here may fail :func:`polish_active_set` and
    the reverse (that one checks the rows near its margin first). ``weight`` (n,): the
    rows' weights, shared by the problems (boxes ``C[k] s_i``), or (K, n): one row per
    problem (a problem on a subset of the rows has weight 0 off it; its margins there
    are read as nothing). ``gram``: ``X X^T``, when the caller has it (read where the
    rows are fewer than the features; else formed there).

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.mvml._hinge import linear_svm
    >>> from mvkernels.mvml._hinge_active import polish_active_sets
    >>> rng = np.random.RandomState(0)
    >>> X, E = rng.randn(80, 30), rng.randn(80, 2)
    >>> y = np.where(X[:, 0] + 0.3 * rng.randn(80) > 0, 1.0, -1.0)
    >>> XE = np.hstack([X, E])
    >>> rough = linear_svm(XE, y, 1.0, tol=0.05, random_state=0)
    >>> [(v, a, m)] = polish_active_sets(
    ...     X, y[:, None], np.array([1.0]), (y * (XE @ rough.coef))[None], 0.05, extras=[E]
    ... )
    >>> tight = linear_svm(XE, y, 1.0, tol=1e-10, max_iter=100000, random_state=0)
    >>> bool(np.allclose(v, tight.coef, atol=1e-6) and np.allclose(v, (a * y) @ XE))
    True
    """
    X = np.asarray(X, dtype=np.float64)
    M = np.asarray(margins, dtype=np.float64)
    at_c, free = M < 1.0 - band, np.abs(M - 1.0) <= band
    if weight is not None:
        weight = np.asarray(weight, dtype=np.float64)
    res = _settle_active_sets(X, Y, C, at_c, free, rounds, 1e-9, max_add, extras, weight, gram)
    return [None if r is None else (r[0], r[1], r[3]) for r in res]


def active_set_svm(
    X: np.ndarray,
    Y: np.ndarray,
    C: float | np.ndarray,
    *,
    rounds: int = COLD_ROUNDS,
    max_add: int = COLD_ADD,
    weight: np.ndarray | None = None,
    extras: list[np.ndarray] | None = None,
    gram: np.ndarray | None = None,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray] | None]:
    """Exact bias-free L1-loss SVMs by an active-set method from scratch (or None each).

    For every column ``y`` of ``Y`` (problems sharing the rows ``X``, e.g. one-vs-all):
    the KKT sets of :func:`polish_active_set` grown from an empty free set. The margins
    under the class-mean direction ``X^T y`` choose the first ``max_add`` free rows; each
    correction solves ``m_F = 1`` on the free set (a Cholesky solve of size ``|F|``),
    moves the rows that break a condition (``a_i < 0`` to ``Z``, ``a_i > C`` to ``B``,
    rows of ``B`` with margin above 1 to ``F``) and lets at most ``max_add`` rows of ``Z``
    with margin below 1 join ``F``, the most violated first. A support set of ``s`` rows
    takes about ``s / max_add`` corrections and no liblinear run; the margins of all
    problems come from one product per correction. Returns per problem ``(v, a, m)`` as
    :func:`polish_active_set` (KKT-verified on every row), or None (a singular free set,
    or not settled within ``rounds`` corrections). Suited to problems with fewer support
    vectors on the margin than features (the g-steps of MVML-SVM at its default ``alpha``);
    with more, the free set outgrows the features and it gives up. ``C``: one box, or one
    per problem. ``weight`` (n,): the rows' weights (boxes ``C s_i``; rows of weight 0
    never join ``F``), or (K, n): one row per problem (problems on subsets of the rows,
    weight 0 off them: the class pairs of one-vs-one on the rows of all classes).
    ``extras``: per problem ``E_k`` (n, r), whose features are then ``[X, E_k]``, and
    ``gram`` as :func:`polish_active_sets`.

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.mvml._hinge import linear_svm
    >>> from mvkernels.mvml._hinge_active import active_set_svm
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(200, 100)
    >>> y = np.where(X[:, 0] + 0.1 * rng.randn(200) > 0, 1.0, -1.0)
    >>> [(v, a, m)] = active_set_svm(X, y[:, None], 10.0)
    >>> tight = linear_svm(X, y, 10.0, tol=1e-10, max_iter=100000, random_state=0)
    >>> bool(np.allclose(v, tight.coef, atol=1e-6) and np.allclose(v, (a * y) @ X))
    True
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    n, K = Y.shape
    M0 = X @ (X.T @ Y)
    for k, E in enumerate(extras or ()):
        M0[:, k] += E @ (E.T @ Y[:, k])
    M0 *= Y
    if weight is not None:
        weight = np.asarray(weight, dtype=np.float64)
        # rows of weight 0 are not among the first free rows
        M0[(weight <= 0).T if weight.ndim == 2 else weight <= 0] = np.inf
    free = np.zeros((K, n), dtype=bool)
    k = min(max_add, n)
    first = np.argpartition(M0, k - 1, axis=0)[:k]  # each column's k smallest margins
    free[np.arange(K), first] = True
    res = _settle_active_sets(
        X,
        Y,
        C if np.ndim(C) else float(C),
        np.zeros((K, n), dtype=bool),
        free,
        rounds,
        1e-9,
        max_add=max_add,
        extras=extras,
        weight=weight,
        gram=gram,
    )
    return [None if r is None else (r[0], r[1], r[3]) for r in res]


@dataclass
class FirstSolutions:
    """Exact solutions ``(v, a, m)`` (or None) of problems sharing their rows, at one box
    ``C`` (the first g-steps of :meth:`HingeLoss.dense_paths
    <mvkernels.mvml._hinge_loss.HingeLoss.dense_paths>` at one ``alpha``)."""

    C: float
    solutions: list


def rebox_solutions(
    X: np.ndarray,
    Y: np.ndarray,
    seeds: FirstSolutions,
    C: float,
    *,
    weight: np.ndarray | None = None,
    eps: float = 1e-9,
    gram: np.ndarray | None = None,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray] | None]:
    """The exact solutions at the box ``C >= seeds.C`` of the problems (columns of ``Y``
    on the rows ``X``) whose exact solutions at the box ``seeds.C`` are ``seeds``, or None
    each.

    The KKT conditions of :func:`polish_active_set` read ``C`` only through the rows at
    the bound (``a_i = C s_i``, margin below 1) and the box of the free rows
    (``a_i <= C s_i``). A solution whose margins are all at least 1 (to ``eps``: no row
    below the margin) and whose multipliers lie in the new box meets them at ``C`` as it
    is (the hard-margin case of a large box: the optimum does not move), so it is taken
    unchanged, with its multipliers and margins. The others (rows below the margin, whose
    multipliers grow with the box) are polished from their margins in lockstep
    (:func:`polish_active_sets`, band ``1e-6``); None where that fails too (the caller
    grows the sets from scratch, :func:`active_set_svm`). A seed of None, or of another
    width than ``X``, gives None. ``gram``: ``X X^T`` when the caller has it.

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.mvml._hinge_active import (
    ...     FirstSolutions, active_set_svm, rebox_solutions)
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(40, 60)
    >>> Y = np.sign(rng.randn(40, 3))
    >>> seeds = FirstSolutions(10.0, active_set_svm(X, Y, 10.0))
    >>> moved = rebox_solutions(X, Y, seeds, 100.0)
    >>> direct = active_set_svm(X, Y, 100.0)
    >>> all(np.allclose(m[0], s[0], atol=1e-10) for m, s in zip(moved, direct))
    True
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    K = Y.shape[1]
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = [None] * K
    if C < seeds.C or len(seeds.solutions) != K:
        return out
    box = C if weight is None else C * np.asarray(weight, dtype=np.float64)
    counts = slice(None) if weight is None else np.asarray(weight) > 0
    again = []
    for k, seed in enumerate(seeds.solutions):
        if seed is None or seed[0].shape[0] != X.shape[1]:
            continue
        _, a, m = seed
        if np.all(m[counts] >= 1.0 - eps) and np.all(a <= box * (1.0 + eps)):
            out[k] = seed
        else:
            again.append(k)
    if again:
        margins = np.array([seeds.solutions[k][2] for k in again])
        solved = polish_active_sets(
            X, Y[:, again], np.full(len(again), float(C)), margins, 1e-6, weight=weight, gram=gram
        )
        for k, res in zip(again, solved):
            out[k] = res
    return out


def reseed_solutions(
    X: np.ndarray,
    Y: np.ndarray,
    V: list,
    C: float,
    *,
    band: float = FOLD_BAND,
    weight: np.ndarray | None = None,
    gram: np.ndarray | None = None,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray] | None]:
    """The exact solutions at the box ``C`` of the problems (columns of ``Y`` on the rows
    ``X``) started from primal vectors ``V[k]`` (``v`` of length ``X.shape[1]``, or None),
    or None each.

    ``V`` are e.g. the exact solutions of the same problems on other rows with the same
    features (another CV fold's first g-steps: the folds' Nystrom features of a row are
    the same, and most rows are shared): their margins ``y_i x_i^T v`` on these rows
    guess the KKT sets (as :func:`polish_active_set` with ``band``), which are then
    corrected in lockstep (:func:`polish_active_sets`). The result is the unique exact
    solution whatever the seeds (KKT-verified on every row); a seed only changes how
    many corrections it takes. None where a seed is None or of another width, or the sets
    do not settle (the caller grows them from scratch, :func:`active_set_svm`).

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.mvml._hinge_active import active_set_svm, reseed_solutions
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(50, 60)
    >>> Y = np.sign(rng.randn(50, 3))
    >>> other = active_set_svm(X[10:], Y[10:], 1.0)  # the same problems on other rows
    >>> moved = reseed_solutions(X[:40], Y[:40], [s[0] for s in other], 1.0)
    >>> direct = active_set_svm(X[:40], Y[:40], 1.0)
    >>> all(np.allclose(m[0], s[0], atol=1e-10) for m, s in zip(moved, direct))
    True
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    K = Y.shape[1]
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = [None] * K
    if len(V) != K:
        return out
    todo = [k for k, v in enumerate(V) if v is not None and v.shape == (X.shape[1],)]
    if not todo:
        return out
    margins = (np.array([V[k] for k in todo]) @ X.T) * Y[:, todo].T
    solved = polish_active_sets(
        X, Y[:, todo], np.full(len(todo), float(C)), margins, band, weight=weight, gram=gram
    )
    for k, res in zip(todo, solved):
        out[k] = res
    return out

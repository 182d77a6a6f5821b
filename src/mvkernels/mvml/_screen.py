"""Cheap screening of the CV estimators' grid: leave-one-out ridge on shared features.

The expensive part of a cross-validated MVML search is one eigendecomposition and one
batched metric path per fold and per (joint view, bandwidth factor) pair. Most pairs are
clearly worse than the best ones, and that shows already with the fixed metric ``A = I``
(MVML_I): the pairs' order under MVML_I and under the learned dense metric agree closely
(the metric couples the views' coefficients, the bandwidth decides what the features can
represent). So the search first scores every pair with MVML_I's *exact leave-one-out*
error, which one factorisation of all the rows gives for every ``alpha`` at once, and runs
the full path on the cross-validation folds only for the best pairs.

With uniform view weights ``w_l = 1 / v`` and ``A = I`` the g-step (eq. 15) is ridge
regression on the features ``U / v``: the decision values are
``U (C + alpha v^2 I)^{-1} U^T y`` with ``C = U^T U``. With ``C = Q diag(s) Q^T`` and
``P = U Q`` the hat matrix is ``H = P diag(1 / (s + alpha v^2)) P^T``, and the held-out
outputs of row ``i`` follow without refitting (the leave-one-out identity of linear
smoothers): ``y_i - (y_i - yhat_i) / (1 - H_ii)``.

With an unpenalised intercept (``fit_intercept``) the model is ridge on the centred
features ``U - 1 m^T`` and targets ``y - ybar`` plus the offset ``ybar - m^T g``: still a
linear smoother, with the hat matrix ``H = 11^T / n + P_c diag(1 / (s + alpha v^2)) P_c^T``
(``P_c`` from the centred features), so the same identity gives its leave-one-out outputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import linalg

from .._linalg import robust_cholesky, robust_eigh, sym

__all__ = [
    "N_FINALISTS",
    "MISSING_FINALISTS_FACTOR",
    "ALPHA_WINDOW",
    "ridge_loo_outputs",
    "ScreenGrams",
    "ridge_solve",
    "ridge_rows_solve",
    "ridge_solves",
    "ridge_fold_outputs",
    "kernel_ridge_fold_outputs",
    "finalists",
    "best_index",
    "alpha_window",
]

#: (joint view, bandwidth factor) pairs cross-validated in full after screening (the CV
#: estimators' default ``n_finalists``). One, not two (the default up to 0.1.0): on the
#: 12 sets of ``bench_vs_sklearn.py --quick`` and ``bench_small_data.py`` one pair scored
#: higher on 6 (0.04 to 0.5 point), the same on 5 and 0.1 point lower on one, in 10 to
#: 41 % less CPU time (``benchmarks/bench_cv_speed.py``): each pair costs one
#: eigendecomposition and one batched metric path per fold
N_FINALISTS = 1
#: with missing views in the training rows the screen keeps this many times as many
#: pairs: MVML_I on completed features ranks the pairs less like the learned metric (a
#: completed block is a linear function of the observed ones, and the learned metric
#: and view weights decide how much of it the model uses)
MISSING_FINALISTS_FACTOR = 2
#: a finalist's ``alpha`` values: its screening-best ``alpha`` and this many grid
#: neighbours on each side (in sorted order)
ALPHA_WINDOW = 1


def ridge_loo_outputs(
    U: np.ndarray,
    Y: np.ndarray,
    alphas: np.ndarray,
    n_blocks: int,
    fit_intercept: bool = False,
    sample_weight: np.ndarray | None = None,
    gram: np.ndarray | None = None,
) -> np.ndarray:
    """Leave-one-out outputs of MVML_I (uniform weights) for every ``alpha``.

    Parameters
    ----------
    U : ndarray of shape (n, d)
        Nystrom features of all the training rows.
    Y : ndarray of shape (n, T)
        Target columns (one-vs-all +-1 columns, or real targets).
    alphas : ndarray of shape (m,)
        Regularisation values (the estimators' ``alpha``).
    n_blocks : int
        Number of views ``v`` (feature blocks) behind the uniform weights ``1 / v``.
    fit_intercept : bool, default=False
        Ridge with an unpenalised offset per target (the hat matrix gains ``11^T / n``).
    sample_weight : ndarray of shape (n,) or None, default=None
        Row weights ``s_i > 0`` of the weighted ridge ``sum_i s_i (y_i - f(x_i))^2``: the
        same formulas on the rows scaled by ``r_i = sqrt(s_i)`` (intercept: weighted
        means, the hat matrix gains ``r r^T / sum s``); a row is left out with its whole
        weight (its held-out residual ``e_i / (1 - H_ii)`` in the scaled problem is
        ``r_i`` times the unscaled one).
    gram : ndarray or None, default=None
        The Gram matrix this function factors, when the caller has it already
        (:class:`ScreenGrams`): ``U U^T`` (n x n) if ``n <= d``, else ``U^T U`` (d x d).
        Only read without ``fit_intercept`` and ``sample_weight`` (which transform the rows
        first).

    Returns
    -------
    ndarray of shape (m, n, T)
        Row ``i`` of ``out[j]``: the outputs for row ``i`` of the model fitted without it,
        with ``alphas[j]``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> U, Y = rng.normal(size=(6, 3)), rng.normal(size=(6, 1))
    >>> loo = ridge_loo_outputs(U, Y, np.array([0.5]), n_blocks=1)
    >>> g = np.linalg.solve(U[1:].T @ U[1:] + 0.5 * np.eye(3), U[1:].T @ Y[1:])
    >>> bool(np.allclose(loo[0, 0], U[0] @ g))
    True
    """
    n, d = U.shape
    Y = np.asarray(Y, dtype=np.float64)
    base = np.zeros((1, Y.shape[1]))
    H0: Any = 0.0
    r = None
    if sample_weight is not None:  # the weighted ridge: rows scaled by sqrt(s)
        sw = np.asarray(sample_weight, dtype=np.float64)
        r = np.sqrt(sw)[:, None]
        if fit_intercept:
            total = float(sw.sum())
            base = (sw @ Y)[None, :] / total
            H0 = sw / total
            U, Y = U - (sw @ U) / total, Y - base
        U, Y = U * r, Y * r
    elif fit_intercept:  # centred features and targets; fitted values gain ybar, H gains 1/n
        base, H0 = Y.mean(axis=0, keepdims=True), 1.0 / n
        U, Y = U - U.mean(axis=0), Y - base
    if fit_intercept or sample_weight is not None:
        gram = None  # the Gram matrix of the transformed rows
    if n <= d:
        # no more rows than features: the same P from the n x n side, U U^T = V diag(s) V^T
        # and U Q = V diag(sqrt(s)) (the directions of U^T U's null space give zero columns
        # of P, which add nothing to the hat matrix): an n^3 instead of a d^3 factorisation,
        # and no product U Q
        s, V = robust_eigh(U @ U.T if gram is None else gram, what="row Gram matrix U U^T")
        s = np.maximum(s, 0.0)
        P = V * np.sqrt(s)
    else:
        s, Q = robust_eigh(U.T @ U if gram is None else gram, what="feature Gram matrix U^T U")
        s = np.maximum(s, 0.0)
        P = U @ Q
    return _loo_from_factor(s, P, Y, alphas, n_blocks, base, H0, r)


def _loo_from_factor(
    s: np.ndarray,
    P: np.ndarray,
    Y: np.ndarray,
    alphas: np.ndarray,
    n_blocks: int,
    base: np.ndarray,
    H0: Any,
    r: np.ndarray | None,
) -> np.ndarray:
    """:func:`ridge_loo_outputs` from the factor ``P`` and the spectrum ``s`` of the
    (transformed) rows' Gram matrix: the hat matrix's diagonal and fitted values per
    ``alpha``, then the leave-one-out identity; ``base``, ``H0`` and ``r`` the intercept's
    and the row weights' parts (zeros, 0 and None without them)."""
    PY = P.T @ Y  # (min(n, d), T)
    inv = 1.0 / (s[None, :] + np.asarray(alphas, dtype=np.float64)[:, None] * n_blocks**2)
    H = (P * P) @ inv.T  # (n, m): diagonal of the hat matrix per alpha
    H = H + (H0[:, None] if np.ndim(H0) else H0)
    fitted = np.stack([P @ (w[:, None] * PY) for w in inv])  # (m, n, T)
    with np.errstate(divide="ignore", invalid="ignore"):  # H_ii = 1: no held-out output
        resid = (Y[None] - fitted) / (1.0 - H.T)[:, :, None]
    if r is not None:  # back to the unscaled rows
        return base[None] + (Y[None] - resid) / r[None]
    return base[None] + Y[None] - resid


class ScreenGrams:
    """The Gram matrices that :func:`ridge_loo_outputs` factors for the screen's feature
    sets at one bandwidth, each computed once and, where the algebra allows, from another.

    The sets are column ranges of the features ``U = [U_v, U_J]`` of all the rows (the
    input views' blocks ``U_v``, the first ``d_in`` columns, then the joint view's block
    ``U_J``): ``U`` (joint view with the views), ``U_v`` (without it) and ``U_J`` (the
    joint view alone). A set with ``n <= d`` columns is factored on the row side
    (``U U^T``), else on the feature side (``U^T U``), as :func:`ridge_loo_outputs` does.
    On the row side ``U U^T = U_v U_v^T + U_J U_J^T``, so with both on the row side the
    product over the ``d_in`` columns of the views is not repeated; on the feature side
    ``U_v^T U_v`` and ``U_J^T U_J`` are the diagonal blocks of ``U^T U``. The matrices
    agree with the direct products to rounding.

    Parameters
    ----------
    U : ndarray of shape (n, d)
        Features of all the rows.
    d_in : int
        Columns of the input views' blocks (``d``: no joint block).

    Examples
    --------
    >>> import numpy as np
    >>> U = np.random.default_rng(0).normal(size=(5, 7))
    >>> grams = ScreenGrams(U, 4)
    >>> bool(np.allclose(grams.of(slice(None)), U @ U.T))
    True
    >>> bool(np.allclose(grams.of(slice(4, None)), U[:, 4:].T @ U[:, 4:]))
    True
    """

    def __init__(self, U: np.ndarray | None, d_in: int) -> None:
        self._U, self.d_in = U, int(d_in)
        self._done: dict[tuple, np.ndarray] = {}
        self._map: tuple[Any, list] | None = None
        #: the views' landmark Gram matrices, when every row is a landmark and no
        #: eigenvalue is floored: then ``U_l U_l^T = W_l`` and the features wait
        self._direct: list[np.ndarray] | None = None

    @classmethod
    def of_map(cls, nys: Any, Xs: list, d_in: int) -> ScreenGrams:
        """The Gram matrices of the features of the views ``Xs`` under the Nystrom map
        ``nys`` (a :class:`~mvkernels.nystrom.BlockNystrom` fitted on ``Xs``).

        With every row a landmark (in order) the features of view ``l`` are
        ``U_l = W_l S_l`` with ``S_l = (W_l^+)^{1/2}``, so ``U_l U_l^T = W_l W_l^+ W_l =
        W_l`` when no eigenvalue of ``W_l`` falls under the map's floor (checked by one
        Cholesky factorisation, :func:`_nothing_floored`): the row-side Gram matrices are
        sums of the landmark Gram matrices. A map fitted with deferred normalisers
        (:func:`~mvkernels.nystrom._map.fit_validated_views` with ``defer_normalizers=True``)
        then computes neither
        ``S_l`` (one eigendecomposition a view) nor the features until :attr:`U` or
        :meth:`fitted` asks (the screen's finalists only). Otherwise the features are
        computed at once, as ``ScreenGrams(nys.transform(Xs), d_in)``.

        Examples
        --------
        >>> import numpy as np
        >>> from mvkernels.nystrom import BlockNystrom
        >>> rng = np.random.default_rng(0)
        >>> Xs = [rng.normal(size=(12, 3)), rng.normal(size=(12, 2))]
        >>> nys = BlockNystrom(n_landmarks=12, random_state=0)
        >>> from mvkernels.nystrom._map import fit_validated_views
        >>> nys = fit_validated_views(nys, Xs, defer_normalizers=True)
        >>> grams = ScreenGrams.of_map(nys, Xs, 12)
        >>> U = grams.U  # the features, computed on demand
        >>> bool(np.allclose(grams.of(slice(None)), U @ U.T))
        True
        """
        deferred = "normalizers_" not in nys.__dict__
        n = int(Xs[0].shape[0])
        idx = np.asarray(nys.landmark_indices_)
        if deferred and idx.size == n and np.array_equal(idx, np.arange(n)):
            Ws = nys._landmark_grams()
            if all(_nothing_floored(W, nys.eig_floor) for W in Ws):
                grams = cls(None, d_in)
                grams._map, grams._direct = (nys, Xs), Ws
                return grams
            nys._fit_normalizers(Ws)  # the same S_l as an eager fit, bit for bit
        elif deferred:
            nys._fit_normalizers()
        grams = cls(nys.transform(Xs), d_in)
        grams._map = (nys, Xs)
        return grams

    @property
    def U(self) -> np.ndarray:
        """The features of all the rows (computed on first use from the map)."""
        if self._U is None:
            if self._map is None:
                raise ValueError("ScreenGrams holds neither features nor a Nystrom map")
            nys, Xs = self._map
            if "normalizers_" not in nys.__dict__:
                nys._fit_normalizers(self._direct)
            self._U = nys.transform(Xs)
        return self._U

    @property
    def nystrom(self) -> Any:
        """The Nystrom map (its normalisers possibly deferred: :meth:`fitted` fits them)."""
        if self._map is None:
            raise ValueError("ScreenGrams was built from features, not from a Nystrom map")
        return self._map[0]

    @property
    def row_side(self) -> bool:
        """Whether the row-side Gram matrices are sums of the landmark Gram matrices
        (every row a landmark, nothing floored: :meth:`of_map`), available without the
        features."""
        return self._direct is not None

    def row_gram(self, cols: slice, centred: bool = False) -> np.ndarray:
        """The row-side Gram matrix ``U[:, cols] U[:, cols]^T`` (``centred``: of the
        features minus their column means, :meth:`centred`), as
        :meth:`Loss.row_gram <mvkernels.mvml._losses.SquareLoss.row_gram>` computes it
        from the features; whole view blocks when :attr:`row_side`.

        Examples
        --------
        >>> import numpy as np
        >>> U = np.random.default_rng(0).normal(size=(4, 6))
        >>> bool(np.allclose(ScreenGrams(U, 6).row_gram(slice(0, 3)), U[:, :3] @ U[:, :3].T))
        True
        """
        if self._direct is None:
            B = self.U[:, cols]
            if centred:
                B = B - B.mean(axis=0)
            return B @ B.T
        return self.centred(cols) if centred else self.of(cols)

    def fitted(self) -> tuple[Any, np.ndarray]:
        """The Nystrom map (normalisers fitted) and the features of all the rows."""
        if self._map is None:
            raise ValueError("ScreenGrams was built from features, not from a Nystrom map")
        U = self.U
        return self._map[0], U

    def loo_outputs(
        self,
        cols: slice,
        Y: np.ndarray,
        alphas: np.ndarray,
        n_blocks: int,
        fit_intercept: bool = False,
        sample_weight: np.ndarray | None = None,
    ) -> np.ndarray:
        """:func:`ridge_loo_outputs` of the features ``U[:, cols]``, from this object's
        Gram matrix where the function reads one (neither ``fit_intercept`` nor
        ``sample_weight``): the same computation, without the features when the Gram
        matrix is a sum of landmark Gram matrices."""
        plain = not fit_intercept and sample_weight is None
        if sample_weight is None and self._direct is not None:  # row side: V diag(s) V^T
            Y = np.asarray(Y, dtype=np.float64)
            base, H0 = np.zeros((1, Y.shape[1])), 0.0
            if fit_intercept:  # the centred rows' Gram matrix J U U^T J (J = I - 11^T / n)
                G = self.centred(cols)
                base, H0 = Y.mean(axis=0, keepdims=True), 1.0 / Y.shape[0]
                Y = Y - base
            else:
                G = self.of(cols)
            s, V = robust_eigh(G, what="row Gram matrix U U^T")
            s = np.maximum(s, 0.0)
            return _loo_from_factor(s, V * np.sqrt(s), Y, alphas, n_blocks, base, H0, None)
        return ridge_loo_outputs(
            self.U[:, cols],
            Y,
            alphas,
            n_blocks,
            fit_intercept,
            sample_weight,
            gram=self.of(cols) if plain else None,
        )

    def centred(self, cols: slice) -> np.ndarray:
        """The row-side Gram matrix of the centred features ``U_c = U[:, cols] - 1 m^T``
        (``m`` the column means): ``U_c U_c^T = J G J`` with ``G = U U^T`` (:meth:`of`,
        row side) and ``J = I - 11^T / n``, the row and column means of ``G`` removed and
        its grand mean added back; computed once per column range.

        Examples
        --------
        >>> import numpy as np
        >>> U = np.random.default_rng(0).normal(size=(5, 7))
        >>> Uc = U - U.mean(axis=0)
        >>> bool(np.allclose(ScreenGrams(U, 4).centred(slice(None)), Uc @ Uc.T))
        True
        """
        key = ("centred", *self._key(cols))
        if key not in self._done:
            G = self.of(cols)
            if G.shape[0] != self._rows():
                raise ValueError("the centred Gram matrix needs the row side (n <= d)")
            m = G.mean(axis=0)
            self._done[key] = sym(G - m[None, :] - m[:, None] + m.mean())
        return self._done[key]

    def _rows(self) -> int:
        if self._direct is not None:
            return int(self._direct[0].shape[0])
        return int(self.U.shape[0])

    def _n_columns(self) -> int:
        if self._direct is not None:
            return sum(W.shape[0] for W in self._direct)
        return self.U.shape[1]

    def _key(self, cols: slice) -> tuple[int, int]:
        start, stop, _ = cols.indices(self._n_columns())
        return start, stop

    def of(self, cols: slice) -> np.ndarray:
        """The Gram matrix of ``U[:, cols]`` on the side :func:`ridge_loo_outputs` uses."""
        key = self._key(cols)
        if key not in self._done:
            self._done[key] = self._compute(*key)
        return self._done[key]

    def _compute(self, start: int, stop: int) -> np.ndarray:
        if self._direct is not None:  # whole blocks of n columns: the row side
            p = self._direct[0].shape[0]
            if start % p or stop % p:
                raise ValueError(f"columns {start}:{stop} are not whole view blocks of {p}")
            total = self._direct[start // p]
            for W in self._direct[start // p + 1 : stop // p]:
                total = total + W
            return total
        n, d = self.U.shape
        B = self.U[:, start:stop]
        if n <= stop - start:  # row side
            if (start, stop) == (0, d) and 0 < self.d_in < d and n <= self.d_in:
                J = self.U[:, self.d_in :]
                return self.of(slice(0, self.d_in)) + J @ J.T
            return B @ B.T
        if (start, stop) != (0, d) and n > d:  # a diagonal block of the feature side's
            return self.of(slice(0, d))[start:stop, start:stop]
        return B.T @ B


def _nothing_floored(W: np.ndarray, eig_floor: float) -> bool:
    """Whether every eigenvalue of the PSD matrix ``W`` is above ``eig_floor`` times the
    largest (the Nystrom normaliser then keeps them all): ``W - eig_floor tr(W) I`` is
    positive definite (one Cholesky factorisation) and ``tr(W)`` bounds the largest
    eigenvalue; the floor at least ``n`` machine epsilons, so that an eigenvalue that is
    zero up to rounding never passes. A sufficient test: False may also mean a floor close
    to the smallest."""
    top = float(np.trace(W))
    if not top > 0 or not np.all(np.isfinite(W)):
        return False
    S = np.array(W, dtype=np.float64)
    S[np.diag_indices_from(S)] -= max(eig_floor, S.shape[0] * np.finfo(float).eps) * top
    return robust_cholesky(S) is not None


def ridge_solve(M: np.ndarray, B: np.ndarray, alpha: float) -> np.ndarray:
    """Ridge coefficients ``G[t] = (M + alpha I)^{-1} b_t`` by one Cholesky factorisation
    (an eigendecomposition only if ``M + alpha I`` is numerically not positive definite).

    The g-step of the identity metric (eq. 15 with ``A = I``); ``O(d^3 / 3)``, several
    times cheaper than the eigendecomposition that serves a whole ``alpha`` grid.

    Parameters
    ----------
    M : ndarray of shape (d, d)
        PSD Gram matrix (``D_w C D_w``).
    B : ndarray of shape (T, d)
        Right-hand sides (``b_t = D_w c_t``).
    alpha : float
        Regularisation (> 0).

    Returns
    -------
    ndarray of shape (T, d)

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> U, y = rng.normal(size=(8, 3)), rng.normal(size=(1, 8))
    >>> G = ridge_solve(U.T @ U, y @ U, 0.5)
    >>> bool(np.allclose(G[0], np.linalg.solve(U.T @ U + 0.5 * np.eye(3), U.T @ y[0])))
    True
    """
    S = np.array(M, dtype=np.float64)  # symmetrised by robust_cholesky / robust_eigh
    S[np.diag_indices_from(S)] += alpha
    L = robust_cholesky(S)
    if L is None:
        s, Q = robust_eigh(S, what="ridge system M + alpha I")
        return ((B @ Q) / np.maximum(s, np.finfo(float).tiny)) @ Q.T
    return linalg.cho_solve((L, True), B.T, check_finite=False).T


def ridge_rows_solve(K: np.ndarray, z: np.ndarray, alpha: float) -> np.ndarray | None:
    """The row-space ridge solve ``beta = (K + alpha I)^{-1} z`` by one Cholesky
    factorisation, or None when ``K + alpha I`` is numerically not positive definite.

    The push-through form of the identity metric's g-step (eq. 15 with ``A = I``): with
    ``M = P^T P`` and ``b = P^T z`` (``P`` the rows' scaled features, ``K = P P^T``),
    ``(M + alpha I)^{-1} b = P^T (K + alpha I)^{-1} z``; an ``m x m`` factorisation for
    ``m`` rows instead of a ``d x d`` one. The caller falls back to
    :func:`ridge_solve` on None.

    Parameters
    ----------
    K : ndarray of shape (m, m)
        PSD row Gram matrix ``P P^T``.
    z : ndarray of shape (m,)
        Right-hand side (the rows' scaled targets).
    alpha : float
        Regularisation (> 0).

    Returns
    -------
    ndarray of shape (m,) or None

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> P, z = rng.normal(size=(3, 8)), rng.normal(size=3)
    >>> beta = ridge_rows_solve(P @ P.T, z, 0.5)
    >>> bool(np.allclose(P.T @ beta, ridge_solve(P.T @ P, (P.T @ z)[None], 0.5)[0]))
    True
    """
    S = sym(np.asarray(K, dtype=np.float64))
    S[np.diag_indices_from(S)] += alpha
    potrf, potrs = linalg.get_lapack_funcs(("potrf", "potrs"), (S,))
    L, info = potrf(S, lower=True, overwrite_a=True, clean=True)
    if info != 0 or not np.all(np.isfinite(L)):
        return None
    beta, info = potrs(L, np.asarray(z, dtype=np.float64), lower=True)
    return beta if info == 0 and np.all(np.isfinite(beta)) else None


def ridge_solves(M: np.ndarray, B: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """:func:`ridge_solve` for every ``alpha`` of ``alphas``: the same values (the same
    LAPACK factorisation and solve of the same matrices), the symmetric part of ``M``
    formed once.

    Parameters
    ----------
    M : ndarray of shape (d, d)
        PSD Gram matrix.
    B : ndarray of shape (T, d)
        Right-hand sides.
    alphas : ndarray of shape (m,)
        Regularisation values (> 0).

    Returns
    -------
    ndarray of shape (m, T, d)

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> U, y = rng.normal(size=(8, 3)), rng.normal(size=(1, 8))
    >>> G = ridge_solves(U.T @ U, y @ U, np.array([0.5, 2.0]))
    >>> bool(np.array_equal(G[1], ridge_solve(U.T @ U, y @ U, 2.0)))
    True
    """
    M = np.asarray(M, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    Ms = sym(M)  # sym(M + a I) = sym(M) + a I, bit for bit
    potrf, potrs = linalg.get_lapack_funcs(("potrf", "potrs"), (Ms,))
    diag = np.diag_indices_from(Ms)
    out = np.empty((len(alphas), *B.shape))
    for j, a in enumerate(np.asarray(alphas, dtype=np.float64)):
        S = Ms.copy()
        S[diag] += a
        L, info = potrf(S, lower=True, overwrite_a=True, clean=True)
        if info == 0 and np.all(np.isfinite(L)):
            X, info = potrs(L, B.T, lower=True)
            if info == 0:
                out[j] = X.T
                continue
        out[j] = ridge_solve(M, B, float(a))  # not positive definite: the fallback
    return out


def ridge_fold_outputs(
    U: np.ndarray,
    Y: np.ndarray,
    splits: list,
    alphas: np.ndarray,
    fit_intercept: bool = False,
    sample_weight: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Held-out outputs of ridge regression on the features ``U`` for every fold and
    ``alpha``: fold ``k``'s model is ``g = (U_tr^T U_tr + alpha I)^{-1} U_tr^T y_tr``
    (MVML_I on a single view), its outputs ``U_te g``.

    The training Gram matrix of a fold is the total minus the held-out part's when each
    fold trains on all the rows it does not hold out, the held-out parts disjoint (one
    ``O(n d^2)`` product in all), and each (fold, ``alpha``) costs one Cholesky
    factorisation (:func:`ridge_solve`).

    Parameters
    ----------
    U : ndarray of shape (n, d)
        Features of all the rows.
    Y : ndarray of shape (n, T)
        Target columns.
    splits : list of (train, test) index arrays
    alphas : ndarray of shape (m,)
    fit_intercept : bool, default=False
        An unpenalised offset per target: the fold's Gram matrix and cross moments are
        centred by its training means (from the same sums), ``b = ybar - m^T g``.
    sample_weight : ndarray of shape (n,) or None, default=None
        Row weights ``s_i >= 0`` of the weighted ridge ``sum_i s_i (y_i - f(x_i))^2``:
        ``g = (U_tr^T S U_tr + alpha I)^{-1} U_tr^T S y_tr``, ``S = diag(s_tr)``, and
        weighted means with ``fit_intercept``.

    Returns
    -------
    list of ndarray of shape (m, n_test_k, T)
        One entry per fold.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> U, Y = rng.normal(size=(6, 3)), rng.normal(size=(6, 1))
    >>> tr, te = np.arange(4), np.arange(4, 6)
    >>> D = ridge_fold_outputs(U, Y, [(tr, te)], np.array([0.5]))
    >>> g = np.linalg.solve(U[tr].T @ U[tr] + 0.5 * np.eye(3), U[tr].T @ Y[tr])
    >>> bool(np.allclose(D[0][0], U[te] @ g))
    True
    """
    n = U.shape[0]
    # each fold trains on the rows it does not hold out (disjoint held-out parts; rows
    # never held out train every fold): the totals minus the held-out part's
    covered = np.sort(np.concatenate([te for _, te in splits]))
    partition = bool(np.all(np.diff(covered) > 0)) and all(
        tr.size + te.size == n for tr, te in splits
    )
    # the rows weighted on one side of each product (unweighted: the rows themselves)
    sw = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    Us = U if sw is None else U * sw[:, None]
    Ys = Y if sw is None else Y * sw[:, None]
    C = U.T @ Us if partition else None
    B = U.T @ Ys if partition else None
    u_sum, y_sum = Us.sum(axis=0), Ys.sum(axis=0)
    out = []
    for tr, te in splits:
        U_te = U[te]
        if C is not None and B is not None:
            C_tr, B_tr = C - U_te.T @ Us[te], B - U_te.T @ Ys[te]
        else:
            C_tr, B_tr = U[tr].T @ Us[tr], U[tr].T @ Ys[tr]
        if not fit_intercept:
            out.append(U_te @ np.swapaxes(ridge_solves(C_tr, B_tr.T, alphas), 1, 2))
            continue
        # the fold's (weighted) means from the sums: total minus the held-out part
        m = tr.size if sw is None else float(sw[tr].sum())
        su = u_sum - Us[te].sum(axis=0) if partition else Us[tr].sum(axis=0)
        sy = y_sum - Ys[te].sum(axis=0) if partition else Ys[tr].sum(axis=0)
        mu, ybar = su / m, sy / m
        C_c, B_c = C_tr - np.outer(su, mu), B_tr - np.outer(su, ybar)
        U_c = U_te - mu
        out.append(U_c @ np.swapaxes(ridge_solves(C_c, B_c.T, alphas), 1, 2) + ybar)
    return out


def kernel_ridge_fold_outputs(
    K: np.ndarray,
    Y: np.ndarray,
    splits: list,
    alphas: np.ndarray,
    fit_intercept: bool = False,
    sample_weight: np.ndarray | None = None,
) -> list[np.ndarray]:
    """:func:`ridge_fold_outputs` in kernel form, for features with ``U U^T = K``: by the
    push-through identity fold ``k``'s outputs are ``K_te,tr (K_tr,tr + alpha I)^{-1} y_tr``
    (kernel ridge), one Cholesky factorisation of an ``n_tr x n_tr`` matrix per fold and
    ``alpha`` and no factorisation of ``K`` itself: the cheaper form when every row is a
    landmark.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        PSD kernel matrix of all the rows.
    Y : ndarray of shape (n, T)
    splits : list of (train, test) index arrays
    alphas : ndarray of shape (m,)
    fit_intercept : bool, default=False
        An unpenalised offset per target: with ``J = I - 11^T / n_tr`` the outputs are
        ``(K_te,tr - 1 k^T) J (J K_tr,tr J + alpha I)^{-1} (y_tr - ybar) + ybar``, ``k``
        the column means of ``K_tr,tr`` (ridge on the centred features, push-through).
    sample_weight : ndarray of shape (n,) or None, default=None
        Row weights ``s_i >= 0`` (the weighted ridge of :func:`ridge_fold_outputs`): with
        ``R = diag(sqrt(s_tr))`` the outputs are ``K_te,tr R (R K_tr,tr R + alpha I)^{-1}
        R y_tr`` (push-through of the weighted normal equations), the centring by
        weighted means.

    Returns
    -------
    list of ndarray of shape (m, n_test_k, T)

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> U, Y = rng.normal(size=(6, 8)), rng.normal(size=(6, 1))
    >>> split = [(np.arange(4), np.arange(4, 6))]
    >>> a = kernel_ridge_fold_outputs(U @ U.T, Y, split, np.array([0.5]))
    >>> b = ridge_fold_outputs(U, Y, split, np.array([0.5]))
    >>> bool(np.allclose(a[0], b[0]))
    True
    """
    out = []
    for tr, te in splits:
        K_tr, K_te, Y_tr = K[np.ix_(tr, tr)], K[np.ix_(te, tr)], Y[tr]
        if sample_weight is not None:
            out.append(
                _weighted_kernel_ridge(K_tr, K_te, Y_tr, sample_weight[tr], alphas, fit_intercept)
            )
            continue
        ybar = np.zeros(Y.shape[1])
        if fit_intercept:  # double-centred training kernel, centred test rows
            k_mean = K_tr.mean(axis=0)
            K_te = K_te - k_mean
            K_te = K_te - K_te.mean(axis=1, keepdims=True)
            K_tr = K_tr - k_mean
            K_tr = K_tr - K_tr.mean(axis=1, keepdims=True)
            ybar = Y_tr.mean(axis=0)
            Y_tr = Y_tr - ybar
        out.append(K_te @ np.swapaxes(ridge_solves(K_tr, Y_tr.T, alphas), 1, 2) + ybar)
    return out


def _weighted_kernel_ridge(
    K_tr: np.ndarray,
    K_te: np.ndarray,
    Y_tr: np.ndarray,
    s: np.ndarray,
    alphas: np.ndarray,
    fit_intercept: bool,
) -> np.ndarray:
    """One fold of :func:`kernel_ridge_fold_outputs` with row weights ``s`` (m, n_te, T)."""
    s = np.asarray(s, dtype=np.float64)
    ybar = np.zeros(Y_tr.shape[1])
    if fit_intercept:  # centred by the weighted means of the training features
        total = float(s.sum())
        k_mean = s @ K_tr / total
        K_te = K_te - k_mean
        K_te = K_te - (K_te @ s / total)[:, None]
        K_tr = K_tr - k_mean
        K_tr = K_tr - (K_tr @ s / total)[:, None]
        ybar = s @ Y_tr / total
        Y_tr = Y_tr - ybar
    r = np.sqrt(s)
    K_tr, K_te, Y_tr = K_tr * r[:, None] * r[None, :], K_te * r[None, :], Y_tr * r[:, None]
    return K_te @ np.swapaxes(ridge_solves(K_tr, Y_tr.T, alphas), 1, 2) + ybar


def finalists(
    screen: np.ndarray, k: int = N_FINALISTS, tiebreak: np.ndarray | None = None
) -> np.ndarray:
    """Boolean mask of the ``k`` best screened pairs, and of every pair tied with the
    ``k``-th best.

    Leave-one-out accuracies on a few hundred rows tie often (one row is a fraction of a
    point). With ``tiebreak`` (a second score, higher is better: the estimators pass minus
    the leave-one-out squared error of the outputs) the pairs are ranked by ``screen``
    and then by ``tiebreak``, and only pairs equal on both count as tied; without it,
    every pair tied with the ``k``-th on ``screen`` is kept and the cross-validation
    decides between them.

    Parameters
    ----------
    screen : ndarray of shape (n_joint, n_factor)
        Screening score of each (joint view, bandwidth factor) pair.
    k : int
        How many pairs to keep.
    tiebreak : ndarray of the same shape, optional
        Second score, deciding between pairs with the same ``screen`` score.

    Returns
    -------
    ndarray of bool, same shape as ``screen``.

    Examples
    --------
    >>> finalists(np.array([[0.5, 0.9, 0.9], [0.7, 0.1, 0.2]]), 2)
    array([[False,  True,  True],
           [False, False, False]])
    >>> finalists(np.array([[0.9, 0.9, 0.4]]), 1)  # a tie at the last place: both kept
    array([[ True,  True, False]])
    >>> finalists(np.array([[0.9, 0.9, 0.4]]), 1, tiebreak=np.array([[-0.3, -0.2, 0.0]]))
    array([[False,  True, False]])
    """
    flat = np.where(np.isfinite(screen), screen, -np.inf).ravel()
    second = (
        np.zeros(flat.size)
        if tiebreak is None
        else np.where(np.isfinite(tiebreak), tiebreak, -np.inf).ravel()
    )
    keep = np.zeros(flat.size, dtype=bool)
    order = np.lexsort((-second, -flat))  # by screen, then tiebreak, both descending
    keep[order[:k]] = True
    if 0 < k <= flat.size:
        last = order[k - 1]
        keep |= (flat == flat[last]) & (second == second[last])
    return keep.reshape(screen.shape)


def best_index(scores: np.ndarray, tiebreak: np.ndarray) -> int:
    """Index of the largest ``scores`` entry, ties decided by the largest ``tiebreak``
    (then the first).

    Examples
    --------
    >>> best_index(np.array([0.8, 0.9, 0.9]), np.array([0.0, -2.0, -1.0]))
    2
    """
    return int(np.lexsort((-np.asarray(tiebreak), -np.asarray(scores)))[0])


def alpha_window(alphas: np.ndarray, best: np.ndarray, width: int = ALPHA_WINDOW) -> np.ndarray:
    """Boolean mask of the ``alphas`` within ``width`` grid steps (sorted order) of any of
    the indices ``best``.

    Examples
    --------
    >>> alpha_window(np.array([1.0, 0.01, 0.1, 10.0, 0.001]), np.array([2]))
    array([ True,  True,  True, False, False])
    """
    alphas = np.asarray(alphas)
    rank = np.empty(alphas.size, dtype=int)
    rank[np.argsort(alphas, kind="stable")] = np.arange(alphas.size)
    keep = np.zeros(alphas.size, dtype=bool)
    for b in np.atleast_1d(best):
        keep |= np.abs(rank - rank[int(b)]) <= width
    return keep

"""One-vs-one multi-class MVML (``multi_class="ovo"`` of :class:`~mvkernels.MVMLClassifier`
and :class:`~mvkernels.MVMLSVC`).

With ``K > 2`` classes, one binary MVML problem per pair of classes ``(i, j)``, ``i < j``,
in scikit-learn's ``SVC`` order ``(0, 1), (0, 2), ..., (0, K-1), (1, 2), ...``, trained on
the rows of those two classes with targets ``+1`` for class ``i`` and ``-1`` for class
``j`` (so a positive pairwise decision value votes for ``i``, as in ``SVC``). Each pair is
an ordinary binary problem of the shared machinery (:meth:`_BaseMVML._solve
<mvkernels.mvml._base._BaseMVML._solve>`: its own metric ``A``, weights ``w`` and
coefficients ``g``, any loss and metric); what does not depend on the pair is computed
once on all training rows:

* the kernels' bandwidths and, in Nystrom mode, the block Nystrom map;
* full-kernel mode: the ``n x n`` training kernels, whose ``(rows_ij, rows_ij)``
  sub-blocks are the pairs' kernels;
* Nystrom mode, square loss: the sufficient statistics of every class ``k``
  (``C_k = sum_{y_i = k} u_i u_i^T``, ``s_k = sum_{y_i = k} u_i``, ``n_k``, and the stable
  scatter) in one pass over the data; the pair's statistics are then
  ``C = C_i + C_j``, ``c = s_i - s_j``, ``y^T y = n_i + n_j``
  (:func:`pair_problem`, :meth:`~mvkernels.nystrom.FeatureMoments.merge`);
* Nystrom mode, hinge loss: the training features ``U`` (the pair takes its rows).

With the square loss's structured path (a learned dense metric) the pairs run in one
batched path, each in its own eigenbasis (:meth:`OneVsOneMixin._solve_pairs_batched`); a
pair with fewer rows than features takes its eigenpairs from its rows' features (no
``dim x dim`` statistics or factorisation for it).

Aggregation (:func:`ovo_vote_scores`): the votes of the pairwise decisions plus the sum of
the pairwise decision values of each class mapped monotonically into ``(-1/3, 1/3)``,
the transform of ``SVC(decision_function_shape="ovr")``; ``predict`` is its argmax, i.e.
the class with the most votes, ties broken by the largest summed decision value.
Probabilities (:class:`PairwiseCalibration`): one Platt sigmoid per pair, fitted on
out-of-fold pairwise decision values, coupled by method 2 of Wu, Lin & Weng (2004), as
libsvm does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, overload

import numpy as np
from scipy.special import expit, log_expit
from sklearn.utils._param_validation import StrOptions

from .._targets import one_vs_all_targets
from .._threads import serial_blas
from .._validation import take_rows
from ..nystrom import FeatureMoments
from ._data_part import map_rows
from ._driver import PathResult
from ._losses import SquareLoss
from ._problem import MVMLProblem, NystromProblem, feature_problem
from ._screen import ridge_rows_solve

__all__ = [
    "ovo_pairs",
    "ovo_vote_scores",
    "ovo_predicted_indices",
    "pair_problem",
    "pair_moments",
    "LazyClassMoments",
    "couple_pairwise",
    "PairwiseCalibration",
    "fit_pairwise_calibration",
    "OneVsOneMixin",
]

#: pairwise probabilities are clipped to ``[PAIR_PROB_MIN, 1 - PAIR_PROB_MIN]`` before
#: the coupling (libsvm's ``min_prob``)
PAIR_PROB_MIN = 1e-7


def multiclass_constraints() -> dict:
    """``_parameter_constraints`` entries of ``multi_class`` and ``decision_function_shape``."""
    return {
        "multi_class": [StrOptions({"ovr", "ovo"})],
        "decision_function_shape": [StrOptions({"ovo", "ovr"})],
    }


def ovo_pairs(n_classes: int) -> list[tuple[int, int]]:
    """The class pairs ``(i, j)``, ``i < j``, in scikit-learn's ``SVC`` order.

    Examples
    --------
    >>> ovo_pairs(3)
    [(0, 1), (0, 2), (1, 2)]
    """
    return [(i, j) for i in range(n_classes) for j in range(i + 1, n_classes)]


def ovo_vote_scores(D: np.ndarray, n_classes: int) -> np.ndarray:
    """One-vs-one decision values ``D`` (n, K(K-1)/2) to per-class scores (n, K).

    Pair ``(i, j)`` votes for ``i`` where its value is ``>= 0``, else for ``j``. The score
    of class ``k`` is its number of votes plus ``S_k / (3 (|S_k| + 1))``, ``S_k`` the sum
    of the values of its pairs signed towards ``k`` (``+d`` as ``i``, ``-d`` as ``j``):
    the added term lies in ``(-1/3, 1/3)`` and increases with ``S_k``, so the argmax is the
    class with the most votes, ties broken by the largest ``S_k`` (the rule and the values
    of ``SVC(decision_function_shape="ovr").decision_function``).

    Examples
    --------
    >>> import numpy as np
    >>> ovo_vote_scores(np.array([[1.0, 2.0, -0.5]]), 3).round(3)  # votes: 2, 0, 1
    array([[ 2.25, -0.2 ,  0.8 ]])
    """
    # pair by pair on contiguous rows (the transposes): the same sums in the same order
    DT = np.ascontiguousarray(np.asarray(D, dtype=np.float64).T)
    votes = np.zeros((n_classes, DT.shape[1]))
    conf = np.zeros((n_classes, DT.shape[1]))
    for k, (i, j) in enumerate(ovo_pairs(n_classes)):
        d = DT[k]
        votes[i] += d >= 0
        votes[j] += d < 0
        conf[i] += d
        conf[j] -= d
    return np.ascontiguousarray((votes + conf / (3.0 * (np.abs(conf) + 1.0))).T)


def ovo_predicted_indices(D: np.ndarray, n_classes: int) -> np.ndarray:
    """Class indices of one-vs-one decision values: the argmax of :func:`ovo_vote_scores`."""
    return np.argmax(ovo_vote_scores(D, n_classes), axis=1)


# ============================================================================ pair problems
def _labelled(mom: FeatureMoments, target: float) -> FeatureMoments:
    """Moments of rows that all have the target ``target`` (one column)."""
    n = mom.total  # the rows' total weight (their count when unweighted)
    return FeatureMoments(
        mom.n_samples,
        mom.sum,
        mom.gram,
        cross=target * mom.sum[:, None],
        target_sum=np.array([target * n]),
        target_gram=np.array([[n]]),
        scatter=mom.scatter,
        weight=mom.weight,
    )


def class_moments(
    nys: Any, Xs: Any, yi: np.ndarray, n_classes: int, sample_weight: np.ndarray | None = None
) -> list[FeatureMoments]:
    """Feature moments of every class (no targets; weighted by ``sample_weight``): one
    pass over the rows in all."""
    out = []
    for k in range(n_classes):
        rows = np.flatnonzero(yi == k)
        Xk = take_rows(Xs, rows)
        if sample_weight is None:
            out.append(nys.moments(Xk))
        else:
            out.append(nys.moments(Xk, sample_weight=sample_weight[rows]))
    return out


class LazyClassMoments(Sequence[FeatureMoments]):
    """:func:`class_moments` computed on first access (a sequence of the classes'
    moments): a one-vs-one fit whose pairs read their rows' features
    (:meth:`OneVsOneMixin._solve_pairs_batched` with fewer rows a pair than features) never
    needs them, and one pass over the rows gives the merged moments
    (the class moments merged with their targets, to rounding) without ``n_classes``
    Gram matrices.

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.nystrom import BlockNystrom
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(9, 2)), rng.normal(size=(9, 3))]
    >>> nys = BlockNystrom(n_landmarks=4, random_state=0).fit(Xs)
    >>> yi = np.array([0, 1, 2] * 3)
    >>> lazy = LazyClassMoments(nys, Xs, yi, 3)
    >>> lazy.computed, len(lazy)
    (False, 3)
    >>> bool(np.allclose(lazy[1].gram, class_moments(nys, Xs, yi, 3)[1].gram)), lazy.computed
    (True, True)
    """

    def __init__(
        self,
        nys: Any,
        Xs: Any,
        yi: np.ndarray,
        n_classes: int,
        sample_weight: np.ndarray | None = None,
    ) -> None:
        self._args = (nys, Xs, yi, int(n_classes), sample_weight)
        self._moments: list[FeatureMoments] | None = None

    @property
    def computed(self) -> bool:
        """Whether the classes' moments have been computed."""
        return self._moments is not None

    def __len__(self) -> int:
        return self._args[3]

    @overload
    def __getitem__(self, k: int) -> FeatureMoments: ...

    @overload
    def __getitem__(self, k: slice) -> list[FeatureMoments]: ...

    def __getitem__(self, k: int | slice) -> FeatureMoments | list[FeatureMoments]:
        if self._moments is None:
            self._moments = class_moments(*self._args)
        return self._moments[k]


def pair_moments(moments: Sequence[FeatureMoments], i: int, j: int) -> FeatureMoments:
    """The moments of the pair ``(i, j)`` with targets ``+1`` (class ``i``) and ``-1``
    (``j``) from the class moments ``moments`` (no targets): ``C = C_i + C_j``,
    ``c = s_i - s_j``, ``y^T y = n_i + n_j``."""
    return _labelled(moments[i], 1.0).merge(_labelled(moments[j], -1.0)).symmetrize()


def pair_problem(
    problem: MVMLProblem,
    yi: np.ndarray,
    i: int,
    j: int,
    moments: Sequence[FeatureMoments] | None = None,
) -> tuple[MVMLProblem, np.ndarray]:
    """The binary problem of classes ``i`` (target ``+1``) and ``j`` (``-1``), and its rows.

    Parameters
    ----------
    problem : MVMLProblem
        The problem of all training rows (kernels / Nystrom map fitted on all of them).
    yi : ndarray of int, shape (n,)
        Class index of every training row.
    i, j : int
        The pair's classes.
    moments : sequence of FeatureMoments or None
        Nystrom mode: the feature moments of every class (:func:`class_moments`, or
        :class:`LazyClassMoments`); the
        pair's statistics are ``C_i + C_j``, ``s_i - s_j``, ``n_i + n_j``. Without them
        (a loss that keeps the features ``U``) they are recomputed from the pair's rows,
        and only when ``problem`` has statistics at all.

    Returns
    -------
    problem : MVMLProblem
        Full mode: the kernels' ``(rows, rows)`` sub-blocks. Nystrom mode: the same
        feature map, the pair's rows of the views / features and its statistics.
    rows : ndarray of int
        The pair's training rows (increasing).
    """
    rows = np.flatnonzero((yi == i) | (yi == j))
    y = np.where(yi[rows] == i, 1.0, -1.0)[:, None]
    mom = None if moments is None else pair_moments(moments, i, j)
    return problem.subset(rows, y, mom), rows


# ============================================================================ probabilities
def _fit_sigmoid(d: np.ndarray, pos: np.ndarray) -> tuple[float, float]:
    """Platt's sigmoid ``P(pos | d) = expit(a d + b)`` on values ``d`` (m,).

    Minimises the log-loss with Platt's smoothed targets ``(N+ + 1) / (N+ + 2)`` and
    ``1 / (N- + 2)`` (finite ``a`` on separable values) by Newton steps with a
    backtracking line search (the loss is convex in ``(a, b)``).
    """
    n_pos = float(pos.sum())
    n_neg = float(pos.size - n_pos)
    t = np.where(pos, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    scale = float(np.std(d)) or 1.0
    x = d / scale  # well-scaled Newton steps

    def loss(p: np.ndarray) -> float:
        z = p[0] * x + p[1]
        return float(-np.sum(t * log_expit(z) + (1.0 - t) * log_expit(-z)))

    par = np.array([0.0, np.log((n_pos + 1.0) / (n_neg + 1.0))])  # the prior odds
    f = loss(par)
    for _ in range(100):
        z = par[0] * x + par[1]
        q = expit(z)
        r = q - t
        grad = np.array([r @ x, r.sum()])
        w = q * (1.0 - q)
        H = np.array([[w @ (x * x), w @ x], [w @ x, w.sum()]])
        H[np.diag_indices(2)] += 1e-12 * (1.0 + np.trace(H))
        step = np.linalg.solve(H, -grad)
        dec = float(-grad @ step)
        if dec < 1e-14 * max(1.0, abs(f)):
            break
        s = 1.0
        while s > 1e-10:
            new = par + s * step
            fn = loss(new)
            if fn <= f - 1e-4 * s * dec:
                break
            s *= 0.5
        else:
            break
        par, f = new, fn
    return float(par[0] / scale), float(par[1])


def couple_pairwise(R: np.ndarray) -> np.ndarray:
    """Class probabilities from pairwise ones (Wu, Lin & Weng 2004, method 2).

    ``R`` (n, K, K): ``R[:, i, j] = P(i | i or j, x)``, ``R[:, j, i] = 1 - R[:, i, j]``.
    ``p`` minimises ``sum_{i != j} (r_ji p_i - r_ij p_j)^2`` subject to ``sum p = 1``:
    ``Q p = b e``, ``e^T p = 1`` with ``Q_ii = sum_{s != i} r_si^2`` and
    ``Q_ij = -r_ji r_ij`` (a bordered ``(K+1) x (K+1)`` solve per row; Wu et al. show the
    solution is non-negative, rounding is clipped).

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([0.2, 0.3, 0.5])
    >>> R = p[:, None] / (p[:, None] + p[None, :])  # consistent pairwise probabilities
    >>> couple_pairwise(R[None]).round(6)
    array([[0.2, 0.3, 0.5]])
    """
    R = np.clip(np.asarray(R, dtype=np.float64), PAIR_PROB_MIN, 1.0 - PAIR_PROB_MIN)
    n, K = R.shape[0], R.shape[1]
    off = ~np.eye(K, dtype=bool)
    RT = np.swapaxes(R, 1, 2)  # RT[:, i, j] = r_ji
    Q = -(RT * R) * off
    Q[:, np.arange(K), np.arange(K)] = np.sum((R**2) * off[None], axis=1)  # sum_s r_si^2
    M = np.zeros((n, K + 1, K + 1))
    M[:, :K, :K] = Q
    M[:, :K, K] = 1.0
    M[:, K, :K] = 1.0
    rhs = np.zeros((n, K + 1, 1))
    rhs[:, K, 0] = 1.0
    P = np.linalg.solve(M, rhs)[:, :K, 0]
    P = np.maximum(P, 0.0)
    return P / P.sum(axis=1, keepdims=True)


@dataclass
class PairwiseCalibration:
    """Class probabilities of a one-vs-one model from its pairwise decision values.

    ``r_ij(x) = expit(a_k d_k(x) + b_k)`` for pair ``k = (i, j)`` (Platt), coupled by
    :func:`couple_pairwise`. Same interface as
    :class:`~mvkernels.mvml._proba.SoftmaxCalibration`.

    Attributes
    ----------
    slopes, intercepts : ndarray of shape (K(K-1)/2,)
        The pairs' sigmoids.
    n_classes : int
    """

    slopes: np.ndarray
    intercepts: np.ndarray
    n_classes: int

    def _proba(self, D: np.ndarray) -> np.ndarray:
        K = self.n_classes
        Rk = expit(np.asarray(D, dtype=np.float64) * self.slopes + self.intercepts)
        R = np.full((Rk.shape[0], K, K), 0.5)
        for k, (i, j) in enumerate(ovo_pairs(K)):
            R[:, i, j] = Rk[:, k]
            R[:, j, i] = 1.0 - Rk[:, k]
        return couple_pairwise(R)

    def predict_proba(self, D: Any) -> Any:
        """Probabilities (n, K), rows summing to 1 (a lazy Dask array for Dask ``D``)."""
        return map_rows(D, self._proba, self.n_classes)

    def predict_log_proba(self, D: Any) -> Any:
        """Logarithm of :meth:`predict_proba` (``-inf`` where a probability is 0)."""

        def log(B: np.ndarray) -> np.ndarray:
            with np.errstate(divide="ignore"):
                return np.log(self._proba(B))

        return map_rows(D, log, self.n_classes)


def _fit_sigmoids(X: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_fit_sigmoid` of several problems with the same number of values at once:
    ``X`` (P, m), ``pos`` (P, m) bool; returns the slopes and intercepts (P,).

    Each problem runs the same Newton steps, line search and stopping rule as
    :func:`_fit_sigmoid` (a problem that has stopped is left as it is while the others go
    on); the sums over a problem's values are rows of stacked arrays and its dot products
    stacked matrix products, the operations of the one-problem fit, so the result is that
    of one fit per problem (tested to 1e-12): one call per Newton step and line-search
    halving for all the pairs instead of one per pair.
    """
    P = X.shape[0]
    n_pos = pos.sum(axis=1).astype(np.float64)
    n_neg = pos.shape[1] - n_pos
    t = np.where(pos, ((n_pos + 1.0) / (n_pos + 2.0))[:, None], (1.0 / (n_neg + 2.0))[:, None])
    scale = np.std(X, axis=1)
    scale[scale == 0.0] = 1.0
    x = X / scale[:, None]  # well-scaled Newton steps

    def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Row-wise ``a_p @ b_p`` (one stacked product, as ``a @ b`` per problem)."""
        return np.matmul(a[:, None, :], b[:, :, None])[:, 0, 0]

    def loss(idx: np.ndarray, par: np.ndarray) -> np.ndarray:
        z = par[:, :1] * x[idx] + par[:, 1:]
        ti = t[idx]
        return -np.sum(ti * log_expit(z) + (1.0 - ti) * log_expit(-z), axis=1)

    par = np.zeros((P, 2))
    par[:, 1] = np.log((n_pos + 1.0) / (n_neg + 1.0))  # the prior odds
    f = loss(np.arange(P), par)
    live = np.arange(P)  # the problems still iterating
    for _ in range(100):
        if live.size == 0:
            break
        xl, pl = x[live], par[live]
        z = pl[:, :1] * xl + pl[:, 1:]
        q = expit(z)
        r = q - t[live]
        grad = np.stack([dot(r, xl), r.sum(axis=1)], axis=1)
        w = q * (1.0 - q)
        wx = dot(w, xl)
        H = np.empty((live.size, 2, 2))
        H[:, 0, 0], H[:, 0, 1], H[:, 1, 0], H[:, 1, 1] = dot(w, xl * xl), wx, wx, w.sum(axis=1)
        tr = H[:, 0, 0] + H[:, 1, 1]
        H[:, 0, 0] += 1e-12 * (1.0 + tr)
        H[:, 1, 1] += 1e-12 * (1.0 + tr)
        step = np.linalg.solve(H, -grad[:, :, None])[:, :, 0]
        dec = -dot(grad, step)
        go = ~(dec < 1e-14 * np.maximum(1.0, np.abs(f[live])))
        live, step, dec = live[go], step[go], dec[go]
        # the line search of every problem left, halving the steps not yet accepted
        s = np.ones(live.size)
        new, fn = np.empty((live.size, 2)), np.empty(live.size)
        todo = np.flatnonzero(s > 1e-10)
        while todo.size:
            cand = par[live[todo]] + s[todo, None] * step[todo]
            val = loss(live[todo], cand)
            ok = val <= f[live[todo]] - 1e-4 * s[todo] * dec[todo]
            new[todo[ok]], fn[todo[ok]] = cand[ok], val[ok]
            todo = todo[~ok]
            s[todo] *= 0.5
            todo = todo[s[todo] > 1e-10]
        moved = s > 1e-10  # a line search that failed stops its problem where it is
        par[live[moved]], f[live[moved]] = new[moved], fn[moved]
        live = live[moved]
    return par[:, 0] / scale, par[:, 1]


def fit_pairwise_calibration(D: np.ndarray, yi: np.ndarray, n_classes: int) -> PairwiseCalibration:
    """One Platt sigmoid per pair on out-of-fold pairwise values ``D`` (n, K(K-1)/2) of the
    pair's rows (``yi``: class indices); see :class:`PairwiseCalibration`. The pairs with
    the same number of rows are fitted together (:func:`_fit_sigmoids`; with balanced
    classes, all of them): the sigmoids of one fit per pair (:func:`_fit_sigmoid`).

    Examples
    --------
    >>> import numpy as np
    >>> yi = np.repeat([0, 1, 2], 4)
    >>> D = np.where(yi[:, None] == np.array([0, 0, 1]), 1.0, -1.0) * np.linspace(1, 2, 12)[:, None]
    >>> cal = fit_pairwise_calibration(D, yi, 3)
    >>> a, b = _fit_sigmoid(D[yi < 2, 0], yi[yi < 2] == 0)
    >>> bool(np.isclose(cal.slopes[0], a) and np.isclose(cal.intercepts[0], b))
    True
    """
    pairs = ovo_pairs(n_classes)
    slopes, intercepts = np.zeros(len(pairs)), np.zeros(len(pairs))
    rows = [np.flatnonzero((yi == i) | (yi == j)) for i, j in pairs]
    by_size: dict[int, list[int]] = {}
    for k, r in enumerate(rows):
        by_size.setdefault(r.size, []).append(k)
    for ks in by_size.values():
        R = np.stack([rows[k] for k in ks])  # (P, m)
        X = np.asarray(D, dtype=np.float64)[R, np.asarray(ks)[:, None]]
        pos = yi[R] == np.array([pairs[k][0] for k in ks])[:, None]
        slopes[ks], intercepts[ks] = _fit_sigmoids(X, pos)
    return PairwiseCalibration(slopes, intercepts, int(n_classes))


# ============================================================================ the estimators' part
class OneVsOneMixin:
    """The one-vs-one fit of :class:`~mvkernels.MVMLClassifier` and its subclasses.

    ``_ovo_pairs`` (set by the classifier's ``_fit_labels``) is the list of pairs when the
    fit is one-vs-one (``multi_class="ovo"`` and more than two classes), else None. The
    problem of all rows is then built as for one-vs-rest (targets: the one-vs-all
    columns, from which the class of each row is read); :meth:`_solve` solves one binary
    problem per pair (:func:`pair_problem`) with the estimator's own ``_solve``.
    """

    _ovo_pairs: list[tuple[int, int]] | None = None

    def _ovo_active(self) -> bool:
        return bool(self.__dict__.get("_ovo_pairs"))

    def _training_moments(self, nys: Any, Xs: Any, Y: Any) -> FeatureMoments:
        """One-vs-one: the moments of every class (kept for the pairs), merged."""
        if not self._ovo_active():
            return super()._training_moments(nys, Xs, Y)  # type: ignore[misc]
        Y = np.asarray(Y)
        yi = np.argmax(Y, axis=1)
        # the classes' moments only if a pair reads them (_solve); the merged moments (every
        # row with its class's one-vs-all row of targets) in one pass
        self._ovo_class_moments = LazyClassMoments(
            nys, Xs, yi, Y.shape[1], self.__dict__.get("_loss_weight")
        )
        Y_rows = one_vs_all_targets(yi, Y.shape[1])
        return super()._training_moments(nys, Xs, Y_rows).symmetrize()  # type: ignore[misc]

    def _solve(
        self, problem: MVMLProblem, record_path: bool = False, loss: Any = None
    ) -> list[PathResult]:
        """The fit's problems (one-vs-one: the pairs') solved with the fit's ``loss``
        (None: ``_make_loss()``)."""
        moms = self.__dict__.pop("_ovo_class_moments", None)
        solve = super()._solve  # type: ignore[misc]
        if not self._ovo_active():
            return solve(problem, record_path, loss)
        yi = np.argmax(np.asarray(problem.Y), axis=1)
        # the class index of every row (the pairs' rows follow: _ovo_rows), not the rows
        self._ovo_labels = yi.astype(np.min_scalar_type(np.asarray(problem.Y).shape[1]))
        if loss is None:
            loss = self._make_loss()  # type: ignore[attr-defined]
        if (
            problem.feature_space
            and loss.solver_plan.direct_structured
            and loss.subset_paths_apply()
            and loss.structured_applies(problem)
        ):
            return self._solve_pairs_batched(problem, yi, moms, loss, record_path)
        if loss.row_subsets_apply(problem):
            # a loss that fits the pairs on their rows of the whole problem in batches
            # (the hinge loss: Loss.fit_row_subsets); the pairs read the features U, so
            # their problems take no copy of their rows of the views
            feats = feature_problem(problem)  # (the row subsets share the feature rows)
            rows_only = feats.with_views(None) if feats.row_data.U is not None else feats
            subs = [pair_problem(rows_only, yi, i, j, moms)[0] for i, j in self._ovo_pairs]
            self.solver_ = "structured"
            with serial_blas(problem.dim):
                return loss.fit_row_subsets(problem, subs, self._ovo_rows)
        row_form = self._ridge_row_form(problem, loss)
        results: list[PathResult] = []
        for (i, j), rows in zip(self._ovo_pairs, self._ovo_rows):
            if row_form is not None:
                r = row_form.solve(rows, yi[rows] == i)
                if r is not None:
                    results.append(r)
                    continue
            sub, rows = pair_problem(problem, yi, i, j, moms)
            (r,) = solve(sub, record_path, loss)
            # full mode: g on the pair's rows -> every training row
            results.append(replace(r, g=problem.subset_coefficients(r.g, rows)))
        return results

    def _solve_pairs_batched(
        self,
        problem: MVMLProblem,
        yi: np.ndarray,
        moms: Sequence[FeatureMoments] | None,
        loss: Any,
        record_path: bool,
    ) -> list[PathResult]:
        """The pairs of a Nystrom-mode fit with the square loss's structured path and a
        learned dense metric, in one batched path
        (:meth:`~mvkernels.mvml._losses.SquareLoss.fit_structured_subsets`): a pair with
        fewer rows than features (unweighted, in memory) takes its spectrum from its
        rows' features, computed once for all the rows (no ``dim x dim`` statistics or
        factorisation per pair); the others from their statistics (:func:`pair_problem`).
        The same solutions as one binary fit per pair, to rounding."""
        problem = feature_problem(problem)
        dim = problem.dim
        pair_rows = self._ovo_rows
        feature_rows = problem.row_data
        U = feature_rows.U
        if (
            U is None
            and problem.sample_weight is None
            and min(rows.size for rows in pair_rows) < dim
            and problem.data.in_memory
        ):
            U = problem.features()
        subs, feats = [], []
        for (i, j), rows in zip(self._ovo_pairs, pair_rows):
            sub: MVMLProblem
            if U is not None and problem.sample_weight is None and rows.size < dim:
                y = np.where(yi[rows] == i, 1.0, -1.0)[:, None]
                sub = MVMLProblem.from_rows(U[rows], y, feature_rows.feature_map)
                feats.append(U[rows])
            else:
                sub, _ = pair_problem(problem, yi, i, j, moms)
                feats.append(None)
            subs.append(loss.with_intercept(sub))
        with serial_blas(dim):
            results = loss.fit_structured_subsets(subs, feats, record_path)
        self.solver_ = "structured"
        for r, sub in zip(results, subs):
            GW = (r.g * sub.weight_vector(r.w))[None]
            r.intercept = float(loss.intercepts(sub, GW)[0])
        return results

    def _ridge_row_form(self, problem: MVMLProblem, loss: Any) -> _RidgeRowForm | None:
        """The pairs' row-space ridge fits (:class:`_RidgeRowForm`) when they apply: a
        Nystrom-mode square-loss fit with the identity metric and fixed view weights
        (e.g. the joint-only candidate, kernel ridge on the joint view), its features in
        memory and some pair with fewer rows than features; else None."""
        if not (
            problem.feature_space
            and loss.solver_plan.direct_structured
            and type(loss) is SquareLoss
            and loss.metric_kind.identity
            and loss.structured_applies(problem)
        ):
            return None
        feats = feature_problem(problem)
        if feats.row_data.U is None and not feats.data.in_memory:
            return None
        if min(rows.size for rows in self._ovo_rows) >= feats.dim:
            return None
        self.solver_ = "structured"
        return _RidgeRowForm(self, feats, loss)

    @property
    def _ovo_rows(self) -> list[np.ndarray]:
        """The training rows of each pair (increasing), as :func:`pair_problem` took
        them, from the class index of every training row (``n`` small integers instead
        of ``K - 1`` times ``n`` row indices in the fitted model)."""
        yi = self._ovo_labels
        return [np.flatnonzero((yi == i) | (yi == j)) for i, j in self._ovo_pairs]

    def _row_subsets(self) -> list[np.ndarray] | None:
        """One-vs-one: the training rows of each pair (:attr:`_ovo_rows`); else None
        (every problem on all the rows)."""
        return self._ovo_rows if self._ovo_active() else None

    def _rows_to_columns(self, cols: list[np.ndarray]) -> np.ndarray:
        """Per-problem row vectors (e.g. dual coefficients) as an (n, T) array; one-vs-one:
        each pair's values on its rows, zero elsewhere."""
        if not self._ovo_active():
            return np.column_stack(cols)
        out = np.zeros((self.n_samples_fit_, len(cols)))  # type: ignore[attr-defined]
        for k, (rows, c) in enumerate(zip(self._ovo_rows, cols)):
            out[rows, k] = c
        return out


class _RidgeRowForm:
    """The identity metric's one-vs-one pair fits in the row space.

    A pair's ridge g-step (eq. 15 with ``A = I``, ``w = 1 / v``) is
    ``g = (M + alpha I)^{-1} b`` with ``M = P^T P``, ``b = P^T z``, ``P = S^{1/2} U_c D_w``
    (the pair's features ``U_c``, centred on its weighted means with ``fit_intercept``,
    ``S`` its rows' weights) and ``z = S^{1/2} (y - ybar)``. By the push-through identity
    ``g = P^T beta`` with ``(P P^T + alpha I) beta = z``: one ``m x m`` Cholesky
    factorisation for the pair's ``m`` rows (:func:`~._screen.ridge_rows_solve`) instead
    of the ``dim x dim`` statistics and factorisation of :func:`pair_problem`. The row
    Gram ``P P^T`` is the pair's rows and columns of one ``(U D_w)(U D_w)^T`` of all
    rows, centred by ``(I - 1 p^T) K (I - p 1^T)`` (``p`` the pair's normalised
    weights). The coefficients are stored in the feature space, ``g = D_w U_c^T S^{1/2}
    beta``, as the statistics' form gives them (to rounding); the offset is
    ``ybar - m^T (D_w g)``. :meth:`solve` returns None for a pair with as many rows as
    features or whose factorisation fails (the caller then fits it from its
    statistics)."""

    def __init__(self, estimator: Any, problem: NystromProblem, loss: Any) -> None:
        self.loss = loss
        self.dim = problem.dim
        self.intercept = bool(loss.fit_intercept)
        U = problem.row_data.U
        if U is None:
            U = problem.features()
        # a common shift leaves every centred pair unchanged and keeps the entries small
        self.shift = U.mean(axis=0) if self.intercept else np.zeros(self.dim)
        self.U = U - self.shift if self.intercept else U
        self.w = np.full(problem.n_views, 1.0 / problem.n_views)
        self.wv = problem.weight_vector(self.w)
        self.sample_weight = problem.sample_weight
        with serial_blas(self.dim):
            Uw = self.U * self.wv
            self.K = Uw @ Uw.T
            self.metric0 = estimator._initial_metric(problem)

    def solve(self, rows: np.ndarray, positive: np.ndarray) -> PathResult | None:
        """The result of the pair on ``rows`` (targets ``+1`` where ``positive``, else
        ``-1``), as one binary fit gives it; None where the row form does not apply."""
        m = rows.size
        if m >= self.dim:
            return None
        y = np.where(positive, 1.0, -1.0)
        K = self.K[np.ix_(rows, rows)]
        U = self.U[rows]
        s = None if self.sample_weight is None else np.asarray(self.sample_weight)[rows]
        mean = np.zeros(self.dim)
        ybar = 0.0
        if self.intercept:
            p = np.full(m, 1.0 / m) if s is None else s / np.sum(s)
            Kp = K @ p
            K = K - Kp[:, None] - Kp[None, :] + p @ Kp
            ybar = float(p @ y)
            mean = p @ U
            y = y - ybar
            U = U - mean
        r = None if s is None else np.sqrt(s)
        z = y if r is None else r * y
        if r is not None:
            K = K * r[:, None] * r[None, :]
        alpha = float(self.loss.alpha)
        with serial_blas(self.dim):
            beta = ridge_rows_solve(K, z, alpha)
            if beta is None:
                return None
            g = self.wv * (U.T @ (beta if r is None else r * beta))
        data = alpha**2 * float(beta @ beta)  # ||z - K beta||^2 = ||alpha beta||^2
        (res,) = self.loss._fixed_results(
            self.metric0, g[None], self.w, [data], lambda g: float(g @ g)
        )
        # (no intercept: ybar, mean and shift are zero, so is the offset)
        res.intercept = ybar - float((g * self.wv) @ (mean + self.shift))
        return res

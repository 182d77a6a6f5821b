"""Metric learning for kernel regression (Weinberger & Tesauro 2007)."""

from __future__ import annotations

import warnings
from numbers import Integral
from typing import Any

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.extmath import svd_flip
from sklearn.utils.validation import check_is_fitted

from .._pairwise import laplacian_apply, squared_distances
from .._sparse import refuse_sparse
from .._threads import serial_blas
from .._validation import (
    common_constraints,
    positive_int,
)
from ..nystrom import resolve_n_landmarks, uniform_indices
from ._base import _ClassifierMixin, _fill_doc, _TargetsMixin


# ---------------------------------------------------------------------------- MLKR
def _nw_weights(
    Z: np.ndarray, sample_weight: np.ndarray | None = None, class_weight: np.ndarray | None = None
) -> np.ndarray:
    """Row-normalised leave-one-out weights ``k_ij / sum_{j != i} k_ij``, ``k = exp(-d^2)``.

    With frequency weights ``w`` (> 0) row ``i`` stands for ``w_i`` copies: a copy sees
    the ``w_j`` copies of every other row and the ``w_i - 1`` other copies of itself (at
    distance 0; none when ``w_i <= 1``), ``P_ij ~ w_j k_ij`` and ``P_ii ~ max(w_i - 1, 0)``;
    a class weight ``c_j`` multiplies the weight of every copy of row ``j``.
    """
    D2 = squared_distances(Z)
    if sample_weight is None and class_weight is None:
        np.fill_diagonal(D2, np.inf)
        D2 -= D2.min(axis=1, keepdims=True)  # shift each row: ratios unchanged, no underflow
        P = np.exp(-D2)
        return P / P.sum(axis=1, keepdims=True)
    n = Z.shape[0]
    f = np.ones(n) if sample_weight is None else sample_weight
    c = np.ones(n) if class_weight is None else class_weight
    extra = c * np.maximum(f - 1.0, 0.0)
    np.fill_diagonal(D2, np.where(extra > 0, 0.0, np.inf))
    D2 -= D2.min(axis=1, keepdims=True)
    P = np.exp(-D2)
    diag = np.diag(P) * extra
    P *= (c * f)[None, :]
    np.fill_diagonal(P, diag)
    return P / P.sum(axis=1, keepdims=True)


def _weighted_median_pairs(D2: np.ndarray, w: np.ndarray) -> float:
    """``np.median`` of the squared distances of all pairs of the multiset in which row
    ``i`` appears ``w_i`` times (pairs of copies of one row at distance 0)."""
    iu = np.triu_indices(D2.shape[0], 1)
    vals = np.concatenate([D2[iu], [0.0]])
    wts = np.concatenate([w[iu[0]] * w[iu[1]], [0.5 * np.maximum(w * (w - 1.0), 0.0).sum()]])
    order = np.argsort(vals, kind="stable")
    vals, cum = vals[order], np.cumsum(wts[order])
    total = cum[-1]

    def at(k: float) -> float:
        return float(vals[min(int(np.searchsorted(cum, k, side="right")), vals.size - 1)])

    return 0.5 * (at(np.floor((total - 1) / 2)) + at(np.floor(total / 2)))


def mlkr_loss_grad(
    A: np.ndarray,
    X: np.ndarray,
    Y: np.ndarray,
    sample_weight: np.ndarray | None = None,
    class_weight: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """MLKR loss and gradient (Weinberger & Tesauro 2007, eq. 3-4), vector targets.

    ``loss = sum_i ||yhat_i - y_i||^2`` with the leave-one-out Nadaraya-Watson estimate
    ``yhat_i = sum_{j != i} P_ij y_j``, ``P_ij = k_ij / sum_{j != i} k_ij``,
    ``k_ij = exp(-||A (x_i - x_j)||^2)``. With ``r_i = yhat_i - y_i`` and
    ``W_ij = P_ij <r_i, y_j - yhat_i>`` the gradient is
    ``-4 A sum_ij W_ij (x_i - x_j)(x_i - x_j)^T = -4 A X^T (diag(S 1) - S) X``,
    ``S = W + W^T``.

    With frequency weights ``w`` (row ``i`` stands for ``w_i`` copies) the loss is
    ``sum_i w_i ||yhat_i - y_i||^2`` with the leave-one-out estimate of the copies
    (:func:`_nw_weights`); the gradient is the same formula with ``W_ij`` times ``w_i``
    (the copies' own term has distance 0 and no gradient). Integer weights give the loss
    and gradient of the data with repeated rows. A class weight ``c_i`` multiplies the
    weight of every copy of row ``i`` (in the loss and as a neighbour) without adding
    copies.

    Parameters
    ----------
    A : ndarray of shape (m, d)
        The linear map.
    X, Y : ndarrays of shapes (n, d) and (n, T)
        Inputs and target columns.
    sample_weight : ndarray of shape (n,) or None, default=None
        Frequency weights (> 0).
    class_weight : ndarray of shape (n,) or None, default=None
        Each row's class weight (>= 0).

    Returns
    -------
    loss : float
    grad : ndarray of shape (m, d)
        Gradient of the loss with respect to ``A``.
    """
    XA = X @ A.T
    P = _nw_weights(XA, sample_weight, class_weight)
    Yhat = P @ Y
    R = Yhat - Y
    W = P * (R @ Y.T - np.sum(R * Yhat, axis=1, keepdims=True))
    rw = None
    if sample_weight is not None or class_weight is not None:
        rw = np.ones(X.shape[0])
        for v in (sample_weight, class_weight):
            if v is not None:
                rw = rw * v
        W *= rw[:, None]
    grad = -4.0 * XA.T @ laplacian_apply(W + W.T, X)
    if rw is None:
        return float(np.sum(R * R)), grad
    return float(rw @ np.sum(R * R, axis=1)), grad


def mlkr_fit(
    X: np.ndarray,
    Y: np.ndarray,
    n_components: int | None = None,
    max_iter: int = 100,
    sample_weight: np.ndarray | None = None,
    class_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, Any]:
    """Learn the MLKR map ``A`` (m x d) by L-BFGS from a scaled PCA start.

    Start: the top ``m`` principal directions of ``X`` (all ``d`` when ``n_components`` is
    None), scaled so that the median squared distance between mapped training points is 1
    (so the Gaussian weights neither underflow nor all equal 1). Returns ``A`` and the
    ``scipy.optimize`` result. With ``sample_weight`` (frequency weights) the start is
    that of the data with repeated rows (weighted principal directions and median) and
    the loss is :func:`mlkr_loss_grad`'s weighted one.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Inputs (standardised by the estimators).
    Y : ndarray of shape (n, T)
        Targets (columns).
    n_components : int or None, default=None
        Rows ``m`` of ``A``, in ``[1, d]``.
    max_iter : int, default=100
        L-BFGS iterations.
    sample_weight : ndarray of shape (n,) or None, default=None
        Frequency weights (> 0).
    class_weight : ndarray of shape (n,) or None, default=None
        Each row's class weight, in the loss only (:func:`mlkr_loss_grad`).

    Returns
    -------
    A : ndarray of shape (m, d)
    res : scipy.optimize.OptimizeResult
    """
    from scipy.optimize import minimize

    n, d = X.shape
    m = d if n_components is None else n_components
    if isinstance(m, bool) or not isinstance(m, Integral) or not 1 <= int(m) <= d:
        raise ValueError(
            f"n_components must be an int in [1, {d}] (input columns), got {n_components!r}"
        )
    m = int(m)
    w = sample_weight

    def fun(a):
        loss, g = mlkr_loss_grad(a.reshape(m, d), X, Y, w, class_weight)
        return loss, g.ravel()

    # One BLAS thread for the start and the descent alike (up to SERIAL_BLAS_MAX_SIZE rows):
    # L-BFGS, stopped at max_iter on this non-convex loss, amplifies a start's rounding
    # (the SVD's, which changes with the thread count) to 1e-4 in the predictions.
    with serial_blas(n):
        A0 = _scaled_pca_start(X, m, w)
        res = minimize(fun, A0.ravel(), jac=True, method="L-BFGS-B", options={"maxiter": max_iter})
    return res.x.reshape(m, d), res


def _scaled_pca_start(X: np.ndarray, m: int, w: np.ndarray | None) -> np.ndarray:
    """:func:`mlkr_fit`'s start ``A0`` (m x d): the top ``m`` principal directions of ``X``
    (weighted by ``w``), completed by coordinate axes beyond its rank, scaled so that the
    median squared distance between mapped rows is 1."""
    n, d = X.shape
    if w is None:
        Xc = X - X.mean(axis=0)
    else:
        Xc = np.sqrt(w)[:, None] * (X - (w @ X) / w.sum())
    U, s, Vt = linalg.svd(Xc, full_matrices=False)
    _, Vt = svd_flip(U, Vt, u_based_decision=False)  # signs fixed by Vt: the same start
    # for the same span (weighted rows or repeated ones); directions of the data's span only
    rank = int(np.sum(s > (s[0] if s.size else 0.0) * max(Xc.shape) * np.finfo(float).eps))
    A0 = np.zeros((m, d))
    k = min(m, rank)
    A0[:k] = Vt[:k]
    if k < m:  # more components than the data's rank: complete with coordinate axes
        A0[k:] = np.eye(d)[: m - k]
    D2 = squared_distances(X @ A0.T)
    if w is None:
        med = float(np.median(D2[np.triu_indices(n, 1)])) if n > 1 else 1.0
    else:
        med = _weighted_median_pairs(D2, w)
    if med > 0:
        A0 /= np.sqrt(med)
    return A0


class _MLKR(_TargetsMixin, BaseEstimator):
    """MLKR on the concatenated (standardised) views, Nadaraya-Watson prediction."""

    _parameter_constraints: dict = {
        "n_components": [positive_int(), None],
        "max_iter": [positive_int()],
        "n_landmarks": common_constraints()["n_landmarks"],
        "views": ["array-like", None],
        "random_state": ["random_state"],
        "class_weight": [StrOptions({"balanced"}), dict, None],  # the classifier's
    }

    def __init__(
        self,
        n_components: int | None = None,
        max_iter: int = 100,
        n_landmarks: int | float | None = None,
        views: Any = None,
        random_state: Any = None,
    ):
        self.n_components, self.max_iter = n_components, max_iter
        self.n_landmarks, self.views, self.random_state = n_landmarks, views, random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> _MLKR:
        """Fit on views ``X`` and targets / labels ``y``.

        Parameters
        ----------
        X : list of array-like, or array-like of shape (n_samples, n_columns)
            The training views.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets, or class labels (classifiers).
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights ``>= 0``: a row of integer weight ``k`` counts as ``k``
            copies of it (in the standardisation, the start, the leave-one-out loss and
            the prediction), a row of weight 0 as removed.

        Returns
        -------
        self
        """
        Xs, Y, wc = self._fit_inputs(X, y, sample_weight)
        w, cw = self._fit_sample_weight, self._fit_class_weight
        refuse_sparse(Xs, "MLKR does not take (it learns a dense map of the standardised views)")
        Z = np.hstack(Xs)
        if w is None:
            self.mean_ = Z.mean(axis=0)
            self.scale_ = Z.std(axis=0)
        else:
            self.mean_ = (w @ Z) / w.sum()
            self.scale_ = np.sqrt((w @ (Z - self.mean_) ** 2) / w.sum())
        self.scale_[self.scale_ == 0] = 1.0
        Z = (Z - self.mean_) / self.scale_
        n = Z.shape[0]
        if self.n_landmarks is None:
            idx = np.arange(n)
        else:
            idx = uniform_indices(
                n, resolve_n_landmarks(self.n_landmarks, n), check_random_state(self.random_state)
            )
            if idx.size < 2:
                raise ValueError("MLKR needs at least 2 landmark samples; raise n_landmarks")
        self.landmark_indices_ = idx if self._fit_rows is None else self._fit_rows[idx]
        wl = None if w is None else w[idx]
        cl = None if cw is None else cw[idx]
        self.components_, res = mlkr_fit(Z[idx], Y[idx], self.n_components, self.max_iter, wl, cl)
        self.n_iter_ = int(res.nit)
        self.loss_ = float(res.fun)
        if res.status == 1 or self.n_iter_ >= self.max_iter:  # L-BFGS-B: limit reached
            warnings.warn(
                f"MLKR stopped at max_iter={self.max_iter} L-BFGS iterations before "
                "converging; its metric (and predictions) then depend on the input "
                "scale and start. Increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,  # the caller of fit (through _fit_context)
            )
        self.train_embedding_ = Z[idx] @ self.components_.T
        self.train_targets_ = Y[idx]
        self.train_weights_ = np.ones(idx.size) if wc is None else wc[idx]
        return self

    def _decision(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "components_")
        Xs = self._predict_views(X)
        refuse_sparse(Xs, "MLKR does not take (it learns a dense map of the standardised views)")
        Z = ((np.hstack(Xs) - self.mean_) / self.scale_) @ self.components_.T
        E = self.train_embedding_
        d2 = squared_distances(Z, E)
        W = np.exp(-(d2 - d2.min(axis=1, keepdims=True)))  # shifted: no 0/0 underflow
        W *= self.train_weights_[None, :]
        return (W @ self.train_targets_) / W.sum(axis=1, keepdims=True)


_SECTIONS_DOC = """
    Parameters
    ----------
    n_components : int or None, default=None
        Rows of ``A`` (None: as many as input columns).
    max_iter : int, default=100
        L-BFGS iterations.
    n_landmarks : None, int or float in (0, 1], default=None
        None: learn on all training samples; otherwise on a uniform random subset of that
        size (a fraction when a float).
    views : None or list, default=None
        How to cut a single 2-D array into views (:func:`mvkernels.check_views`).
    random_state : int, RandomState or None, default=None
        The random subset of ``n_landmarks``.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned map ``A`` of the standardised concatenated views.
    landmark_indices_ : ndarray of int
        The training samples the metric is learned on and predicts from (drawn uniformly
        from the rows of positive weight).
    loss_ : float
        Final leave-one-out loss on the (landmark) training points.
    n_iter_ : int
        Number of L-BFGS iterations run.
    mean_, scale_ : ndarray of shape (n_features,)
        The standardisation of the concatenated views.
    train_embedding_ : ndarray of shape (n_landmarks, n_components)
        The mapped training points.
    train_targets_ : ndarray
        Their targets (+-1 columns for the classifier).
    train_weights_ : ndarray of shape (n_landmarks,)
        Their weights (``sample_weight`` times ``class_weight``; 1 without them), which
        weigh them in the Nadaraya-Watson prediction.
    {fit_attributes}

    See Also
    --------
    {counterpart}
    mlkr_fit : The metric learning step.
    {mvml_see_also}

    {examples}
"""

_MLKR_DOC = """
    Metric learning for kernel regression (Weinberger & Tesauro, AISTATS 2007): a linear
    map ``A`` of the concatenated, standardised views is learned (L-BFGS on
    :func:`mlkr_loss_grad`, from a scaled PCA start, :func:`mlkr_fit`) so that the
    leave-one-out Nadaraya-Watson estimate ``sum_j k_ij y_j / sum_j k_ij``,
    ``k_ij = exp(-||A (x_i - x_j)||^2)``, fits the targets; prediction is that estimate
    over the training points. Implemented here (not through ``metric-learn``, whose 0.7.0
    release fails with scikit-learn >= 1.8: it passes the removed ``force_all_finite``
    argument to ``check_X_y``). With ``n_landmarks`` the metric is learned on, and predicts
    from, a uniform random subset of that size (our reading of "MLKR at 6 / 12 / 24 %" in
    the MVML paper's Table 1). Classifiers use the one-vs-all +-1 columns as a vector
    target (one metric for all classes, the vector-valued form of the MLKR loss).
"""


@_fill_doc(
    _SECTIONS_DOC,
    mlkr=_MLKR_DOC,
    example_args="n_components=2, max_iter=500",
    example_extra=">>> model.components_.shape\n(2, 5)",
)
class MLKRRegressor(RegressorMixin, _MLKR):
    """MLKR regression on the concatenated views.

    {mlkr}

    {sections}
    """


@_fill_doc(_SECTIONS_DOC, mlkr=_MLKR_DOC)
class MLKRClassifier(_ClassifierMixin, ClassifierMixin, _MLKR):
    """MLKR classifier: Nadaraya-Watson estimate of the one-vs-all +-1 codes, largest wins.

    {mlkr}

    {sections}
    """

    def __init__(
        self,
        n_components: int | None = None,
        max_iter: int = 100,
        n_landmarks: int | float | None = None,
        views: Any = None,
        random_state: Any = None,
        class_weight: Any = None,
    ):
        self.n_components, self.max_iter = n_components, max_iter
        self.n_landmarks, self.views, self.random_state = n_landmarks, views, random_state
        self.class_weight = class_weight

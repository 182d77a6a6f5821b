"""Calibrated class probabilities for the MVML classifiers.

The decision values ``D(x)`` of a one-vs-all MVML classifier (one column per class; a
single column ``d`` for two classes, positive = ``classes_[1]``) are turned into
probabilities by a softmax with one fitted temperature, i.e. a multinomial logistic model
on the decision values with a single shared slope::

    p(k | x) = exp(a D_k(x)) / sum_j exp(a D_j(x)),   a >= 0

(two classes: the columns are ``(-d, d)``, so ``p(classes_[1] | x) = 1 / (1 + exp(-2 a d))``,
Platt's sigmoid without intercept). ``a`` minimises the log-loss of *out-of-fold* decision
values (values of models that did not see the row, as ``SVC(probability=True)`` obtains
them by an internal cross-validation), with Platt's prior correction of the targets:
``t_i = (n e_{y_i} + 1) / (n + K)`` instead of the one-hot ``e_{y_i}``, which keeps ``a``
finite when the out-of-fold values separate the classes.

Why one shared slope: the map ``D_k -> p_k`` is then the same increasing function for
every class, so ``argmax_k p(k | x)`` is exactly the class that ``predict`` returns (the
argmax of ``D``), and ``predict_proba[:, 1]`` ranks rows as ``decision_function`` does.
Per-class sigmoids (one-vs-rest Platt scaling, then normalised) or a full multinomial
model would fit more parameters but can disagree with ``predict``. The loss is convex in
``a``; it is minimised by a safeguarded Newton iteration on its derivative.

Where the out-of-fold values come from:

* :class:`~mvkernels.MVMLClassifier` / :class:`~mvkernels.MVMLSVC` with ``probability=True``:
  a stratified 5-fold cross-validation of the same estimator (:func:`cross_val_decisions`,
  5 extra fits, hence opt-in);
* the CV estimators: the held-out decision values of the selected candidate, which the
  search computes anyway (:class:`BestOutOfFold`; no extra fit).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.metaestimators import available_if

from .._arrays import compute_if_dask
from .._validation import check_views
from ._data_part import map_rows

__all__ = [
    "SoftmaxCalibration",
    "fit_softmax_calibration",
    "cross_val_decisions",
    "BestOutOfFold",
    "ProbaMixin",
]

#: folds of the internal cross-validation of ``probability=True``
PROBA_FOLDS = 5


def _columns(D: np.ndarray) -> np.ndarray:
    """Decision values as one column per class: binary ``d`` -> ``(-d, d)``."""
    D = np.asarray(D, dtype=np.float64)
    if D.ndim == 1 or D.shape[1] == 1:
        d = D.reshape(-1)
        return np.column_stack([-d, d])
    return D


@dataclass
class SoftmaxCalibration:
    """``p(k | x) = softmax(a D(x))_k`` (see the module docstring).

    Attributes
    ----------
    scale : float
        The fitted slope ``a >= 0`` (``0``: uniform probabilities, uninformative values).
    n_classes : int
    """

    scale: float
    n_classes: int

    def _log_proba(self, D: np.ndarray) -> np.ndarray:
        Z = self.scale * _columns(D)
        return Z - logsumexp(Z, axis=1, keepdims=True)

    def _apply(self, D: Any, fn: Callable) -> Any:
        return map_rows(D[:, None] if D.ndim == 1 else D, fn, self.n_classes)

    def predict_log_proba(self, D: Any) -> Any:
        """Log-probabilities, shape (n, K) (a lazy Dask array for Dask ``D``)."""
        return self._apply(D, self._log_proba)

    def predict_proba(self, D: Any) -> Any:
        """Probabilities, shape (n, K), rows summing to 1."""
        return self._apply(D, lambda B: np.exp(self._log_proba(B)))


def fit_softmax_calibration(D: np.ndarray, yi: np.ndarray, n_classes: int) -> SoftmaxCalibration:
    """Fit ``a`` on out-of-fold decision values ``D`` and class indices ``yi``.

    Minimises ``L(a) = sum_i [logsumexp(a D_i) - a t_i^T D_i]`` over ``a >= 0`` with Platt's
    smoothed targets ``t_i``; ``L'(a) = sum_i (E_{p_i}[D_i] - t_i^T D_i)`` is increasing
    (``L''(a) = sum_i Var_{p_i}(D_i) >= 0``), so its root is bracketed and found by
    Newton steps that fall back to bisection.
    """
    Dc = _columns(D)
    n = Dc.shape[0]
    K = int(n_classes)
    T = np.full((n, K), 1.0 / (n + K))
    T[np.arange(n), np.asarray(yi)] = (n + 1.0) / (n + K)
    target = float(np.sum(T * Dc))

    def derivs(a: float) -> tuple[float, float]:
        Z = a * Dc
        P = np.exp(Z - logsumexp(Z, axis=1, keepdims=True))
        m = np.sum(P * Dc, axis=1)
        g = float(m.sum()) - target
        h = float(np.sum(P * Dc * Dc) - np.sum(m * m))
        return g, h

    g0, _ = derivs(0.0)
    if not g0 < 0:  # uninformative (or anti-informative) values: uniform probabilities
        return SoftmaxCalibration(0.0, K)
    spread = float(np.std(Dc))
    hi = 1.0 / spread if spread > 0 else 1.0
    for _ in range(200):  # bracket the root: L'(hi) > 0
        if derivs(hi)[0] > 0:
            break
        hi *= 2.0
    lo, a = 0.0, 0.5 * hi
    for _ in range(100):
        g, h = derivs(a)
        if g > 0:
            hi = a
        else:
            lo = a
        if abs(g) <= 1e-10 * max(1.0, abs(target)) or hi - lo <= 1e-12 * hi:
            break
        step = a - g / h if h > 0 else np.nan
        a = step if lo < step < hi else 0.5 * (lo + hi)
    return SoftmaxCalibration(float(a), K)


def cross_val_decisions(
    estimator: Any, X: Any, y: np.ndarray, sample_weight: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold decision values of ``estimator`` (fitted: its resolved kernel parameters
    are reused) by a stratified ``min(5, smallest class size)``-fold cross-validation
    (each fold's fit weighted by ``sample_weight``, the rows' frequency weights).

    Returns ``(D, yi)``: the raw outputs (n, T) of the fitted problems (one-vs-all: the
    decision values; one-vs-one: the pairwise values) and class indices. With a class of fewer
    than 2 rows no fold can hold it out: the fitted model's in-sample values are returned
    instead, with a warning (they are over-confident).
    """
    classes = estimator.classes_
    yi = np.searchsorted(classes, y)
    n_splits = min(PROBA_FOLDS, int(np.bincount(yi).min()))
    Xs = check_views(X, views=estimator.views, allow_missing=True)  # as the fit reads them
    if n_splits < 2:
        warnings.warn(
            f"{type(estimator).__name__}(probability=True): a class has fewer than 2 rows, "
            "so the probabilities are calibrated on in-sample decision values",
            UserWarning,
            stacklevel=3,
        )
        D = estimator._decision(Xs)
        D = np.asarray(compute_if_dask(D))
        return D.reshape(len(yi), -1), yi
    precomputed = bool(estimator.kernels_[0].precomputed)
    T = int(estimator._coefs.shape[0])  # problems: 1 (binary), K (one-vs-all), K(K-1)/2
    D = np.empty((len(yi), T))
    relevance = getattr(estimator, "feature_relevance_", None)
    base = clone(estimator).set_params(
        probability=False,
        views=None,
        kernel_params=estimator.kernel_params_,
        feature_relevance="none" if relevance is None else relevance,  # not learned again
    )
    for tr, te in StratifiedKFold(n_splits=n_splits).split(np.zeros((len(yi), 1)), yi):
        if precomputed:
            Xtr = [K[np.ix_(tr, tr)] for K in Xs]
            Xte = [K[np.ix_(te, tr)] for K in Xs]
        else:
            Xtr, Xte = [Xv[tr] for Xv in Xs], [Xv[te] for Xv in Xs]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the fold fits repeat the main fit's warnings
            if sample_weight is None:
                model = clone(base).fit(Xtr, y[tr])
            else:
                model = clone(base).fit(Xtr, y[tr], sample_weight=sample_weight[tr])
        Dk = model._decision(Xte)
        D[te] = np.asarray(compute_if_dask(Dk)).reshape(len(te), T)
    return D, yi


class BestOutOfFold:
    """Keeps the held-out decision values of the best candidate seen so far in a search.

    :meth:`offer` receives one block of candidates (their per-fold scores, in grid order)
    and a function that computes the held-out decision values of one of them; it is
    called only for a block's best candidate when that beats every earlier block
    (ties: the earlier candidate, as the search's own tie rule).
    """

    def __init__(self) -> None:
        self.score = -np.inf
        self.parts: list[tuple[np.ndarray, np.ndarray]] | None = None

    def offer(
        self, scores: np.ndarray, decisions: Callable[[int], list[tuple[np.ndarray, Any]]]
    ) -> None:
        """``scores``: (n_candidates, n_splits); ``decisions(c)``: ``[(test_rows, D_te)]``."""
        mean = scores.mean(axis=1)
        mean = np.where(np.isfinite(mean), mean, -np.inf)
        c = int(np.argmax(mean))
        if mean[c] > self.score:
            self.score = float(mean[c])
            self.parts = [
                (np.asarray(te), np.asarray(compute_if_dask(D))) for te, D in decisions(c)
            ]

    def calibration(self, y: np.ndarray, classes: np.ndarray, fit: Callable | None = None) -> Any:
        """The calibration fitted on the kept held-out values (None if none were kept) by
        ``fit(D, yi, n_classes)`` (None: :func:`fit_softmax_calibration`)."""
        if self.parts is None:
            return None
        D = np.concatenate([D.reshape(len(te), -1) for te, D in self.parts])
        yi = np.searchsorted(classes, np.concatenate([np.asarray(y)[te] for te, _ in self.parts]))
        return (fit or fit_softmax_calibration)(D, yi, len(classes))


def _proba_available(estimator: Any) -> bool:
    estimator._check_proba()  # raises AttributeError (with the reason) when unavailable
    return True


class ProbaMixin:
    """``predict_proba`` / ``predict_log_proba`` from a fitted :class:`SoftmaxCalibration`.

    The estimator provides ``_check_proba()`` (raises AttributeError when probabilities
    are not available) and ``_calibrated_decisions(X) -> (calibration, D)``.
    """

    def _check_proba(self) -> None:  # pragma: no cover - provided by the estimator
        raise NotImplementedError

    def _calibrated_decisions(self, X: Any) -> tuple[SoftmaxCalibration, Any]:  # pragma: no cover
        raise NotImplementedError

    @available_if(_proba_available)
    def predict_proba(self, X: Any) -> Any:
        """Calibrated class probabilities, shape (n, K), columns in ``classes_`` order.

        ``softmax(a D(x))`` of the decision values with one fitted slope ``a`` (see
        ``calibration_``), so the most probable class is the predicted one. A lazy Dask
        array on Dask views.
        """
        cal, D = self._calibrated_decisions(X)
        return cal.predict_proba(D)

    @available_if(_proba_available)
    def predict_log_proba(self, X: Any) -> Any:
        """Logarithm of :meth:`predict_proba` (computed stably), shape (n, K)."""
        cal, D = self._calibrated_decisions(X)
        return cal.predict_log_proba(D)

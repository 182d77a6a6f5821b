"""Scoring held-out outputs of the MVML CV estimators, and the fold statistics as the
total minus the held-out part (:func:`complement_moments`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from ..._targets import predicted_classes
from ...nystrom import FeatureMoments

__all__ = ["complement_moments"]


def complement_moments(total: FeatureMoments, part: FeatureMoments) -> FeatureMoments:
    """Statistics of the rows in ``total`` but not in ``part`` (a fold's training rows).

    Sums, Gram matrices and cross moments subtract. The centred scatter follows from
    the pairwise update of Chan, Golub & LeVeque run backwards: with ``a`` the
    complement, ``S_total = S_a + S_part + (n_a n_part / n) (m_part - m_a)(m_part - m_a)^T``.

    Parameters
    ----------
    total : FeatureMoments
        Statistics of all the rows.
    part : FeatureMoments
        Statistics of a subset of them.

    Returns
    -------
    FeatureMoments
    """

    def sub(x: np.ndarray | None, z: np.ndarray | None) -> np.ndarray | None:
        return None if x is None or z is None else x - z

    n_a = total.n_samples - part.n_samples
    if n_a <= 0:
        raise ValueError("a training fold is empty: every row is held out")
    s_a = total.sum - part.sum
    if total.weight is not None:  # weighted moments: the weights play the counts' part
        return _weighted_complement(total, part, s_a, n_a)
    scatter = None
    if total.scatter is not None and part.scatter is not None:
        scatter = total.scatter - part.scatter
        if part.n_samples > 0:
            delta = part.sum / part.n_samples - s_a / n_a
            scatter = scatter - np.outer(delta, delta) * (n_a * part.n_samples / total.n_samples)
    return FeatureMoments(
        n_a,
        s_a,
        total.gram - part.gram,
        sub(total.cross, part.cross),
        sub(total.target_sum, part.target_sum),
        sub(total.target_gram, part.target_gram),
        scatter,
    ).symmetrize()


def _weighted_complement(
    total: FeatureMoments, part: FeatureMoments, s_a: np.ndarray, n_a: int
) -> FeatureMoments:
    """:func:`complement_moments` of weighted moments (total weights in place of counts)."""
    w_t, w_p = total.total, part.total
    w_a = w_t - w_p
    scatter = None
    if total.scatter is not None and part.scatter is not None:
        scatter = total.scatter - part.scatter
        if w_p > 0:
            delta = part.sum / w_p - s_a / w_a
            scatter = scatter - np.outer(delta, delta) * (w_a * w_p / w_t)
    cross = None if total.cross is None else total.cross - part.cross
    tsum = None if total.target_sum is None else total.target_sum - part.target_sum
    tgram = None if total.target_gram is None else total.target_gram - part.target_gram
    return FeatureMoments(
        n_a, s_a, total.gram - part.gram, cross, tsum, tgram, scatter, w_a
    ).symmetrize()


class _FrozenOutputs(BaseEstimator):
    """Stand-in estimator that returns precomputed outputs, for scikit-learn scorers."""

    def __init__(self, outputs: np.ndarray, classes: np.ndarray | None = None):
        self.outputs = outputs
        self.classes = classes
        if classes is not None:
            self.classes_ = classes

    def decision_function(self, X: Any) -> np.ndarray:
        D = self.outputs
        return D[:, 0] if D.shape[1] == 1 else D

    def predict(self, X: Any) -> np.ndarray:
        D = self.outputs
        if self.classes is None:
            return D[:, 0] if D.shape[1] == 1 else D
        return predicted_classes(D, self.classes)


class _FrozenClassifier(ClassifierMixin, _FrozenOutputs):
    pass


class _FrozenRegressor(RegressorMixin, _FrozenOutputs):
    pass


def _score_outputs(
    D: np.ndarray,
    y_te: np.ndarray,
    classes: np.ndarray | None,
    scorer: Any,
    sample_weight: np.ndarray | None = None,
) -> float:
    """Score of one candidate's held-out outputs ``D`` (n_te, T); with ``sample_weight``
    the weighted accuracy / R^2, or the scorer called with ``sample_weight``."""
    if scorer is not None:
        Frozen = _FrozenClassifier if classes is not None else _FrozenRegressor
        X0 = np.zeros((D.shape[0], 1))
        if sample_weight is None:
            return float(scorer(Frozen(D, classes), X0, y_te))
        return float(scorer(Frozen(D, classes), X0, y_te, sample_weight=sample_weight))
    if classes is not None:
        hit = _FrozenOutputs(D, classes).predict(None) == y_te
        if sample_weight is None:
            return float(np.mean(hit))
        return float(sample_weight @ hit / sample_weight.sum())
    r = y_te.reshape(D.shape) - D
    if sample_weight is None:
        return float(np.mean(_r2_from_sums((r * r).sum(axis=0), y_te)))
    sse = (sample_weight[:, None] * r * r).sum(axis=0)
    return float(np.mean(_r2_from_sums(sse, y_te, sample_weight)))


def _r2_from_sums(
    sse: np.ndarray, y_te: np.ndarray, sample_weight: np.ndarray | None = None
) -> np.ndarray:
    """R^2 per output from residual sums of squares ``sse`` (..., k) and the held-out targets
    (n,) or (n, k) (an output of zero variance scores 1 if predicted exactly, else 0);
    ``sample_weight``: weighted sums (``sse`` then weighted too), as ``r2_score``."""
    Yt = y_te.reshape(y_te.shape[0], -1)
    if sample_weight is None:
        sst = ((Yt - Yt.mean(axis=0)) ** 2).sum(axis=0)
    else:
        mean = sample_weight @ Yt / sample_weight.sum()
        sst = (sample_weight[:, None] * (Yt - mean) ** 2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sst > 0, 1.0 - sse / sst, np.where(sse == 0, 1.0, 0.0))

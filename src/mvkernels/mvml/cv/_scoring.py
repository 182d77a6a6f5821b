"""Scoring held-out outputs of the MVML CV estimators (one candidate,
:func:`_score_outputs`; every candidate of a fold's paths, :func:`candidate_scores` and
:func:`output_scores`), and the fold statistics as the total minus the held-out part
(:func:`complement_moments`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from ..._targets import predicted_class_indices, predicted_classes
from ...nystrom import FeatureMoments, default_chunk_size
from .._data_part import data_part

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


def candidate_scores(
    U: Any,
    y_te: np.ndarray,
    GW: np.ndarray,
    scorer: Any,
    classes: np.ndarray | None,
    offsets: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
    decode: Any = None,
) -> np.ndarray:
    """Scores of every candidate on one held-out part.

    ``GW``: ``(n_cand, T, d)`` weighted coefficients ``w (.) g`` and ``offsets``
    ``(n_cand, T)`` their intercepts (None: none); decision values
    ``U @ GW[c].T + offsets[c]``. Default scoring (accuracy / R^2; ``classes`` None:
    regression) is accumulated over row chunks (Dask blocks run on the workers); a custom
    ``scoring`` materialises one candidate's outputs at a time. ``sample_weight``: the
    held-out rows' weights (weighted accuracy / R^2; passed to ``scoring``). ``decode``:
    maps decision values (..., T) to the values scored (:meth:`_CVSearch.decode`; None: as
    they are).
    """
    n_cand, T, d = GW.shape
    b = np.zeros((n_cand, T)) if offsets is None else offsets
    dec = (lambda D: D) if decode is None else decode
    part = data_part(U)  # the held-out features: in memory or Dask
    if scorer is not None:
        U = part.to_client(U)
        return np.array(
            [
                _score_outputs(dec(U @ GW[c].T + b[c]), y_te, classes, scorer, sample_weight)
                for c in range(n_cand)
            ]
        )
    if sample_weight is not None and part.in_memory:
        return np.array(
            [
                _score_outputs(dec(U @ GW[c].T + b[c]), y_te, classes, None, sample_weight)
                for c in range(n_cand)
            ]
        )
    flat = GW.reshape(n_cand * T, d).T

    def stats(Ub: np.ndarray, yb: np.ndarray, wb: np.ndarray | None = None) -> np.ndarray:
        D = (Ub @ flat).reshape(Ub.shape[0], n_cand, T)
        if offsets is not None:
            D += offsets
        D = dec(D)
        if classes is not None:
            pred = predicted_class_indices(D)
            yi = np.searchsorted(classes, yb)
            hit = pred == yi[:, None]
            if wb is not None:  # the held-out weight of the rows predicted right
                return wb @ hit
            return hit.sum(axis=0).astype(np.float64)
        r = yb.reshape(yb.shape[0], 1, -1) - D
        if wb is not None:
            return np.einsum("i,ict->ct", wb, r * r)
        return (r * r).sum(axis=0)  # (n_cand, T)

    # row chunks in memory, each Dask block on a worker
    chunk = default_chunk_size(max(n_cand * T, d))
    acc = part.row_block_sums(stats, U, y_te, sample_weight, chunk)
    m = y_te.shape[0] if sample_weight is None else sample_weight.sum()
    if classes is not None:
        return acc / m
    # uniform average over outputs
    return _r2_from_sums(acc, y_te, sample_weight).mean(axis=1)


def output_scores(
    D: np.ndarray,
    y_te: np.ndarray,
    scorer: Any,
    classes: np.ndarray | None,
    sample_weight: np.ndarray | None,
    decode: Any,
) -> np.ndarray:
    """Scores of every candidate from its held-out decision values ``D``
    ``(n_te, n_cand, T)`` (as :func:`candidate_scores` scores them); ``decode`` maps
    decision values to the values scored."""
    if scorer is not None or sample_weight is not None or classes is None:
        return np.array(
            [
                _score_outputs(decode(D[:, c]), y_te, classes, scorer, sample_weight)
                for c in range(D.shape[1])
            ]
        )
    hit = predicted_class_indices(decode(D)) == np.searchsorted(classes, y_te)[:, None]
    return hit.sum(axis=0) / y_te.shape[0]

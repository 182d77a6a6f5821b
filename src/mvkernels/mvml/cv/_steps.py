"""Which scoring steps one run of a search takes (:func:`score_candidates`): the screen
and its finalists (:mod:`._folds_screen`), or every bandwidth factor in full (the block
Nystrom folds, :mod:`._folds_nystrom`, and the joint-only candidate,
:mod:`._folds_joint_only`; full-kernel mode, :mod:`._folds_full`)."""

from __future__ import annotations

import numpy as np

from .._joint import JOINT_ONLY
from ._folds import FoldScorer
from ._folds_full import score_full
from ._folds_joint_only import score_joint_only
from ._folds_nystrom import score_nystrom
from ._folds_screen import screened_search, screens
from ._grid import ScoreGrid, ScreenResult, _CVSearch

__all__ = []


def score_candidates(fs: FoldScorer, S: _CVSearch, scores: ScoreGrid) -> ScreenResult | None:
    """Fill ``scores`` (the axes of ``S.grid``); return the screen of the (joint view,
    bandwidth factor) pairs, without its features, when the grid was screened (None:
    searched in full, or abandoned: an earlier part scored 1)."""
    if fs.hopeless(S, np.zeros((1, 0))).all():  # an earlier part scored 1
        fs.say("abandoned: an earlier part of the search has the best possible score")
        return None
    if screens(fs, S):
        return screened_search(fs, S, scores)
    for fi, f in enumerate(S.factors):
        kp = S.kernel_params(fs.search_kernel, f)
        fs.say(f"bandwidth factor {f:g} ({fi + 1}/{len(S.factors)}), {S.n_splits} folds")
        if S.n_landmarks is None:  # one fit per joint-view candidate
            for ji, joint in enumerate(S.joints):
                part = score_full(fs, S, kp if joint else kp[: S.v_in], joint)
                scores.put(part, joint_view=ji, bandwidth_factor=fi)
        else:
            scores.put(score_nystrom(fs, S, kp), bandwidth_factor=fi)
            if JOINT_ONLY in S.joints:
                score_joint_only(fs, S, fi, np.ones(S.alphas.size, dtype=bool), scores)
    return None

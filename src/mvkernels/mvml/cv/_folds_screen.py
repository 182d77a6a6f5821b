"""The leave-one-out screen of a search's (joint view, bandwidth factor) pairs and the
cross-validation of its finalists (:func:`screened_search`; the screen itself,
:mod:`mvkernels.mvml._screen`). Steps of a :class:`~._folds.FoldScorer`."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .._data_part import data_part
from .._joint import JOINT_ONLY
from .._screen import ScreenGrams, alpha_window, best_index, finalists
from ._folds import FoldScorer
from ._folds_joint_only import score_joint_only
from ._folds_nystrom import score_nystrom
from ._grid import ScoreGrid, ScreenResult, _CVSearch

__all__ = []


def screens(fs: FoldScorer, S: _CVSearch) -> bool:
    """Screening applies in Nystrom mode on in-memory views when the grid has more
    (joint view, bandwidth factor) pairs than finalists (the joint-only candidate's
    pairs not counted: it is cross-validated apart)."""
    n_pairs = int(S.multi_view.sum()) * len(S.factors)
    return (
        fs.search == "screen"
        and S.n_landmarks is not None
        and data_part(S.Xs).in_memory
        and n_pairs > fs.finalist_count(S)
    )


def screened_search(fs: FoldScorer, S: _CVSearch, scores: ScoreGrid) -> ScreenResult:
    """Step 1: every (joint view, factor) pair scored by MVML_I's leave-one-out error
    on all the rows at every ``alpha`` (:mod:`._screen`); step 2: the
    loss's ``n_finalists`` best pairs (ties of the score broken by the smaller
    leave-one-out squared error, :func:`finalists`) cross-validated in full, each at its
    screening-best ``alpha`` and the grid neighbours (:func:`alpha_window`), or at
    every ``alpha`` when the screen has its own grid (``screen_alphas``). The
    other candidates keep NaN scores. Returns the screen, without its features.

    The screen reads neither the decomposition nor the loss's paths: the searches on the
    same views with the same values of the part axes that change the screen
    (:attr:`~._grid.PartAxis.changes_screen`: the loss) share it
    (:attr:`FoldScorer.screen_cache`, e.g. ``multi_class="auto"``'s "ovr" and "ovo")."""
    own_grid = fs.loss_search.screen_alphas is not None
    n_keep = fs.finalist_count(S)
    tiebreak_on = fs.loss_search.screen_tiebreak
    cache = fs.screen_cache
    if cache is not None and fs.screen_key in cache:
        screen = cache[fs.screen_key]
    else:
        screen = screen_pairs(fs, S)
        if cache is not None:
            cache[fs.screen_key] = screen
    # the arrays' axes are ScreenResult.axes: [joint view, bandwidth factor]
    only = ~S.multi_view
    tiebreak = screen.closeness if tiebreak_on else None
    best = finalists(np.where(only[:, None], -np.inf, screen.score), n_keep, tiebreak)
    for fi in map(int, np.flatnonzero(best.any(axis=0))):
        sel = (
            np.ones(S.alphas.size, dtype=bool)
            if own_grid
            else alpha_window(S.alphas, screen.best_alpha[best[:, fi], fi])
        )
        fs.say(f"cross-validating bandwidth factor {S.factors[fi]:g}")
        part = score_nystrom(
            fs,
            replace(S, alphas=S.alphas[sel]),
            S.kernel_params(fs.search_kernel, S.factors[fi]),
            joint_mask=best[:, fi],
            grams=screen.kept[fi],
        )
        scores.put(part, bandwidth_factor=fi, alpha=sel)
    for ji in map(int, np.flatnonzero(only)):
        fi = best_index(screen.score[ji], screen.closeness[ji])
        fs.say(f"cross-validating the joint view alone, bandwidth factor {S.factors[fi]:g}")
        window = alpha_window(S.alphas, screen.best_alpha[ji, fi])
        score_joint_only(fs, S, fi, window, scores)
    return screen.without_features()


def screen_pairs(fs: FoldScorer, S: _CVSearch) -> ScreenResult:
    """Step 1 of :func:`screened_search`: the screening score of every (joint view,
    factor) pair, its leave-one-out closeness (minus the squared error) and
    screening-best ``alpha`` index, and the screen's Gram matrices of the finalists'
    factors (:class:`~._grid.ScreenResult`; their maps' normalisers and features are
    computed only for the finalists when every row is a landmark,
    :meth:`ScreenGrams.of_map`, :meth:`ScreenGrams.fitted`)."""
    own_grid = fs.loss_search.screen_alphas is not None
    n_keep = fs.finalist_count(S)
    screen_alphas = np.asarray(fs.loss_search.screen_alphas) if own_grid else S.alphas
    result = ScreenResult.empty(len(S.joints), len(S.factors))
    # ties on the score (leave-one-out accuracy ties often) go to the smaller
    # leave-one-out squared error of the outputs
    tiebreak = result.closeness if fs.loss_search.screen_tiebreak else None
    # the joint-only candidate is screened on the joint block of the same features
    # (its factor and alpha window), then cross-validated apart (score_joint_only)
    only = ~S.multi_view
    for fi, f in enumerate(S.factors):
        params = S.kernel_params(fs.search_kernel, f)
        nys = fs.fit_map(S, params, defer=S.loss_weight is None and not S.missing)
        d_in = S.v_in * nys.n_landmarks_
        grams = ScreenGrams.of_map(nys, S.Xs, d_in)  # shared by the joint-view variants
        for ji, joint in enumerate(S.joints):
            _screen_pair(fs, S, grams, result, ji, fi, joint, d_in, screen_alphas)
        fs.say(f"screened bandwidth factor {f:g}: {result.score[:, fi]}")
        kept = result.kept
        kept[fi] = grams  # maps and features of the factors that are finalists so far
        so_far = np.asarray(
            finalists(np.where(only[:, None], -np.inf, result.score), n_keep, tiebreak).any(axis=0)
        )
        for k in [k for k in kept if not so_far[k]]:
            del kept[k]
    return result


def _screen_pair(
    fs: FoldScorer,
    S: _CVSearch,
    grams: ScreenGrams,
    result: ScreenResult,
    ji: int,
    fi: int,
    joint: object,
    d_in: int,
    screen_alphas: np.ndarray,
) -> None:
    """The screen of the pair (joint view ``ji``, factor ``fi``) at every ``alpha`` of
    ``screen_alphas``, written in place into ``result``: its best score, closeness and
    ``alpha`` index."""
    Y = np.asarray(S.Y)
    if joint == JOINT_ONLY:
        cols, n_blocks = slice(d_in, None), 1
    elif joint or len(S.Xs) == S.v_in:
        cols, n_blocks = slice(None), len(S.Xs)
    else:
        cols, n_blocks = slice(0, d_in), S.v_in
    loo = grams.loo_outputs(cols, Y, screen_alphas, n_blocks, fs.fit_intercept, S.loss_weight)
    per_alpha = np.array([fs.loo_score(D, S) for D in loo])
    per_alpha[~np.isfinite(per_alpha)] = -np.inf
    with np.errstate(invalid="ignore", over="ignore"):
        if S.sample_weight is None:
            close = -np.mean((loo - Y[None]) ** 2, axis=(1, 2))
        else:  # the weighted mean over the rows
            sq = np.mean((loo - Y[None]) ** 2, axis=2) @ S.sample_weight
            close = -sq / S.sample_weight.sum()
    close[~np.isfinite(close)] = -np.inf
    result.best_alpha[ji, fi] = best_index(per_alpha, close)
    result.score[ji, fi] = per_alpha[result.best_alpha[ji, fi]]
    result.closeness[ji, fi] = close[result.best_alpha[ji, fi]]

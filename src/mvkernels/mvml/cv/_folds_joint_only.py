"""The cross-validation of the joint-only candidate (``joint_view="only"``, identity
metric: kernel ridge on the concatenated views, :mod:`mvkernels.mvml._joint`):
:func:`score_joint_only`, a step of a :class:`~._folds.FoldScorer`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from sklearn.utils import check_random_state

from ...kernels import make_view_kernels
from ...nystrom import resolve_n_landmarks
from .._joint import JOINT_ONLY
from .._screen import kernel_ridge_fold_outputs, ridge_fold_outputs
from ._folds import FoldScorer
from ._grid import ScoreGrid, _CVSearch
from ._scoring import _score_outputs

__all__ = []

#: ``fold_outputs(Y, splits, alphas)``: per split, the held-out outputs (n_alpha, n_te, T)
FoldOutputs = Callable[[np.ndarray, list, np.ndarray], list[np.ndarray]]


def score_joint_only(
    fs: FoldScorer, S: _CVSearch, fi: int, sel: np.ndarray, scores: ScoreGrid
) -> None:
    """Cross-validate the joint-only candidate at bandwidth factor ``S.factors[fi]`` and
    the ``alphas`` selected by ``sel``, on the search's folds.

    Its own Nystrom map of ``S.n_landmarks_only`` landmarks on the joint view (every
    row up to 3000 rows, then a cost-bounded count), fitted once on all rows as
    the other candidates' maps; per fold and ``alpha`` one Cholesky factorisation of
    the training Gram matrix (:func:`~.._screen.ridge_fold_outputs`). The scores go to
    the first ``eta`` and iteration of its row of ``scores`` (the identity metric has
    neither); the other entries of that row stay NaN. Beside earlier parts of the
    search (:attr:`FoldScorer.to_beat`) in the kernel form, the folds run one at a time in
    :meth:`FoldScorer.folds_in_order`, an ``alpha`` dropped once it cannot win
    (:meth:`FoldScorer.hopeless`: NaN on its folds left), as the other candidates'."""
    ji = S.joints.index(JOINT_ONLY)
    alphas = S.alphas[sel]
    fold_outputs, kernel_form = _joint_ridge(fs, S, fi)
    every = np.arange(alphas.size)
    if fs.to_beat is None or not kernel_form:
        outs = _outputs(S, fold_outputs, S.splits, alphas)
        part = _fold_scores(fs, S, outs, list(range(S.n_splits)))  # (n_alpha_sel, n_splits)
    else:  # beside earlier parts: fold by fold (kernel form: each fold on its own), an
        # alpha dropped once it cannot win (hopeless); its other folds stay NaN
        part = np.full((alphas.size, S.n_splits), np.nan)
        outs = [np.full((alphas.size, 0, 0), np.nan)] * S.n_splits
        live = np.ones(alphas.size, dtype=bool)
        order = fs.folds_in_order(S.n_splits)
        for done, k in enumerate(order, start=1):
            at = every[live]
            (D,) = _outputs(S, fold_outputs, [S.splits[k]], alphas[at])
            part[at, k] = _fold_scores(fs, S, [D], [k])[:, 0]
            outs[k] = np.full((alphas.size, *D.shape[1:]), np.nan)
            outs[k][at] = D
            ran = np.sort(order[:done])
            live &= ~fs.hopeless(S, part[:, ran], ran)
            if not live.any():
                break
    scores.put(part, joint_view=ji, bandwidth_factor=fi, alpha=sel, eta=0, max_iter=0)
    if fs.oof is not None:
        fs.oof.offer(part, lambda c: [(te, D[c]) for D, (_, te) in zip(outs, S.splits)])


def _joint_ridge(fs: FoldScorer, S: _CVSearch, fi: int) -> tuple[FoldOutputs, bool]:
    """The ridge fold outputs of the joint view at factor ``S.factors[fi]``, and whether
    they are in the kernel form (every row a landmark: ``U U^T = K``, so no factorisation
    of ``K``); else on the features of its own Nystrom map."""
    kernel = fs.search_kernel
    kernel = kernel[-1] if isinstance(kernel, (list, tuple)) else kernel
    kernel_params = S.kernel_params(fs.search_kernel, S.factors[fi])[-1:]
    Xj = S.Xs[-1:]
    n = Xj[0].shape[0]
    if resolve_n_landmarks(S.n_landmarks_only, n) >= n:
        kern = make_view_kernels(kernel, kernel_params, 1)[0]
        kern.fit(Xj[0], random_state=check_random_state(fs.random_state))
        Kj = kern(Xj[0], Xj[0])

        def kernel_outputs(Yc: np.ndarray, splits: list, a: np.ndarray) -> list[np.ndarray]:
            return kernel_ridge_fold_outputs(Kj, Yc, splits, a, fs.fit_intercept, S.loss_weight)

        return kernel_outputs, True
    nys = fs.fit_map(S, kernel_params, Xj, kernel, S.n_landmarks_only)
    Uj = nys.transform(Xj)

    def feature_outputs(Yc: np.ndarray, splits: list, a: np.ndarray) -> list[np.ndarray]:
        return ridge_fold_outputs(Uj, Yc, splits, a, fs.fit_intercept, S.loss_weight)

    return feature_outputs, False


def _outputs(
    S: _CVSearch, fold_outputs: FoldOutputs, splits: list, alphas: np.ndarray
) -> list[np.ndarray]:
    """Per split, the outputs (n_alpha, n_te, T or pairs) at ``alphas``; one-vs-one: one
    ridge per pair on its training rows, outputs on every held-out row."""
    Y = np.asarray(S.Y)
    if not S.pairs:
        return fold_outputs(Y, splits, alphas)
    yi = np.argmax(Y, axis=1)
    per_pair = []
    for i, j in S.pairs:
        keep = (yi == i) | (yi == j)
        y_pair = np.where(yi == i, 1.0, -1.0)[:, None]
        per_pair.append(fold_outputs(y_pair, [(tr[keep[tr]], te) for tr, te in splits], alphas))
    return [np.concatenate(D_k, axis=2) for D_k in zip(*per_pair)]


def _fold_scores(
    fs: FoldScorer, S: _CVSearch, outs: list[np.ndarray], folds: list[int]
) -> np.ndarray:
    """The scores (n_alpha of ``outs``, len(folds)) of the outputs of ``folds``."""
    sw = S.sample_weight
    return np.array(
        [
            [
                _score_outputs(
                    S.decode(D[ai]),
                    S.y_score[S.splits[k][1]],
                    fs.classes,
                    S.scorer,
                    None if sw is None else sw[S.splits[k][1]],
                )
                for D, k in zip(outs, folds)
            ]
            for ai in range(outs[0].shape[0])
        ]
    ).reshape(-1, len(folds))

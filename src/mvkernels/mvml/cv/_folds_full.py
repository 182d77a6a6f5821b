"""The full-kernel folds (``n_landmarks=None``): :func:`score_full`, a step of a
:class:`~._folds.FoldScorer`. Per fold the kernels are built once and every candidate
runs the reference solver on them (its path scored at every iteration)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._joint import joint_views
from .._multiclass import pair_problem
from ._folds import FoldScorer, _path_index, fold_views
from ._grid import ScoreGrid, _CVSearch
from ._scoring import _score_outputs

__all__ = []


def _path_point(r: Any, it: int, n_views: int) -> np.ndarray:
    """The weighted coefficients ``w (.) g`` (v, m) of the ``it``-th iterate of a
    recorded path ``r`` (a path's result, with ``path`` and ``path_w``; its last iterate
    past its end)."""
    at = min(it, len(r.path) - 1)
    return r.path[at].reshape(n_views, -1) * r.path_w[at][:, None]


def score_full(fs: FoldScorer, S: _CVSearch, kernel_params: list, joint: bool = False) -> ScoreGrid:
    """The scores of one (joint view, bandwidth factor) in full-kernel mode, on the other
    axes (by name): per fold, an estimator of the search fitted through its seam
    (:meth:`FoldScorer.engine`) and its paths scored (:func:`_score_fold`)."""
    alphas, etas, K = S.alphas, S.etas, S.K
    out = ScoreGrid.empty(S.grid.without("joint_view", "bandwidth_factor"), len(S.splits))
    shape = (alphas.size, etas.size, K)
    kept: list | None = [] if fs.oof is not None else None
    for k, (tr, te) in enumerate(S.splits):
        est = fs.estimator().set_params(
            kernel_params=kernel_params, n_landmarks=None, views=None, joint_view=joint
        )
        D = _score_fold(fs, S, est, k, tr, te, joint, out)
        if kept is not None:
            kept.append((te, D))
    if kept is not None:
        fs.oof.offer(
            out.values.reshape(-1, len(S.splits)),
            lambda c: [
                (te, D.reshape(-1, *D.shape[-2:])[_path_index(out.position(c), shape)])
                for te, D in kept
            ],
        )
    return out


def _score_fold(
    fs: FoldScorer,
    S: _CVSearch,
    est: Any,
    k: int,
    tr: np.ndarray,
    te: np.ndarray,
    joint: bool,
    out: ScoreGrid,
) -> np.ndarray:
    """Score every candidate of fold ``k`` into ``out``; returns their held-out outputs
    ``(n_alpha, n_eta, K, n_te, n_outputs)``. The problems solved: all the rows
    (one-vs-rest), or one per pair on its rows (one-vs-one: the kernels' sub-blocks),
    each with its centred form (offsets); every ``(alpha, eta)`` of a problem in one
    batch (``CVEngine.solve_path``)."""
    Y, alphas, etas, K = S.Y, S.alphas, S.etas, S.K
    Xtr, Xte = fold_views(S.Xs[: S.v_in], tr, te, fs.kernel)
    if joint:
        Xte = joint_views(Xte, fs.kernel)
    engine = est._cv_engine()  # the estimator's one seam, fitted on this fold
    engine.check_params()
    lw_tr = None if S.loss_weight is None else S.loss_weight[tr]  # the fold's rows'
    problem = engine.fold_problem(Xtr, Y[tr], lw_tr)
    loss = engine.loss
    pairs: list = [(problem, None)]
    if S.pairs:
        yi = np.argmax(np.asarray(Y[tr]), axis=1)
        pairs = [pair_problem(problem, yi, i, j) for i, j in S.pairs]
    subs = [(sub, rows, loss.with_intercept(sub)) for sub, rows in pairs]
    sw_te = None if S.sample_weight is None else S.sample_weight[te]
    D_all = np.zeros((alphas.size, etas.size, K, te.size, S.n_outputs))
    grid = [(a, e if fs.learned else est.eta) for a in alphas for e in etas]
    paths = [engine.solve_path(sub, grid) for sub, _, _ in subs]
    for p, (ai, ei) in enumerate(np.ndindex(alphas.size, etas.size)):
        solved = [(path[p], rows, c) for path, (_, rows, c) in zip(paths, subs)]
        for it in range(K):
            Gws, bs = [], []
            for res, rows, centred in solved:
                Gw = np.stack([_path_point(r, it, problem.n_views) for r in res])
                bs.append(loss.intercepts(centred, Gw.reshape(Gw.shape[0], -1)))
                if rows is not None:  # g on the pair's rows -> the fold's rows
                    on_rows = np.zeros((Gw.shape[0], problem.n_views, tr.size))
                    on_rows[:, :, rows] = Gw
                    Gw = on_rows
                Gws.append(Gw)
            D = engine.outputs(np.concatenate(Gws), np.concatenate(bs), Xte)
            score = _score_outputs(S.decode(D), S.y_score[te], fs.classes, S.scorer, sw_te)
            out.put(score, alpha=ai, eta=ei, max_iter=it, folds=k)
            D_all[ai, ei, it] = D
    return D_all

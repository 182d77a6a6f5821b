"""The folds of the block Nystrom search at one bandwidth (:func:`score_nystrom`, a step
of a :class:`~._folds.FoldScorer`), in named steps: fit the map (:func:`_fold_map`), read
each held-out part once for its features and statistics (:func:`_held_out_parts`), the
training statistics as the total minus the held-out part (:func:`_total_moments`), the
paths of every candidate through the loss (:class:`_NystromFolds`), the folds run and
abandoned (:func:`_run_folds`) and the held-out values of the best candidate
(:func:`_offer_held_out`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs

from ..._validation import take_rows
from ...nystrom import BlockNystrom, FeatureMoments
from .._data_part import data_part
from .._joint import drop_joint_block, leading_moments
from .._multiclass import pair_moments
from .._problem import MVMLProblem
from .._screen import ScreenGrams
from ._folds import PATH_AXES, FoldScorer, _class_moments, _on_grid, _path_index
from ._grid import ScoreGrid, _CVSearch
from ._scoring import candidate_scores, complement_moments, output_scores

__all__ = []


def _largest_pair(yi: np.ndarray, splits: list) -> int:
    """The most training rows of a class pair in any fold (one-vs-one)."""
    n_classes = int(yi.max()) + 1
    most = 0
    for tr, _ in splits:
        counts = np.sort(np.bincount(yi[tr], minlength=n_classes))
        most = max(most, int(counts[-2:].sum()))
    return most


def score_nystrom(
    fs: FoldScorer,
    S: _CVSearch,
    kernel_params: list,
    joint_mask: np.ndarray | None = None,
    grams: ScreenGrams | None = None,
) -> ScoreGrid:
    """Scores of one bandwidth, on every axis of ``S.grid`` but the bandwidth factor
    (the joint view, ``alpha``, ``eta``, the iterations; by name). With a
    joint-view candidate ``S.Xs`` holds the joint view last; the candidate without it
    uses the same features minus the joint block (same landmarks, statistics
    restricted). ``joint_mask``: the joint-view candidates to score (others: NaN);
    ``grams``: the screen's map and Gram matrices of this bandwidth
    (:class:`~.._screen.ScreenGrams`), when already computed: the batched folds read
    its row-side Gram matrix (a sum of landmark Gram matrices when every row is a
    landmark, :meth:`~.._screen.ScreenGrams.row_gram`), and neither the map's
    normalisers nor the features are computed then."""
    folds = _NystromFolds.build(fs, S, kernel_params, joint_mask, grams)
    out = ScoreGrid.empty(S.grid.without("bandwidth_factor"), len(S.splits))
    _run_folds(folds, out)
    if folds.kept is not None:
        _offer_held_out(folds, out)
    return out


def _fold_map(
    fs: FoldScorer, S: _CVSearch, grams: ScreenGrams | None, batched: bool, nys: BlockNystrom
) -> tuple[BlockNystrom, np.ndarray | None, BlockNystrom | None]:
    """The map of the folds (the screen's when given), every row's features (None: the
    batched folds read the screen's Gram matrices alone, or Dask views), and the map
    without the joint block (its normalisers: only when they are fitted)."""
    U_all: np.ndarray | None = None
    if batched and grams is not None and grams.row_side:  # the Gram matrices alone
        pass
    elif grams is not None:
        nys, U_all = grams.fitted()
    elif data_part(S.Xs).in_memory:  # in memory: every row's features, once
        U_all = nys.transform(S.Xs)
    dask_input = not data_part(S.Xs).in_memory
    small = None if U_all is None and not dask_input else drop_joint_block(nys, S.v_in)
    return nys, U_all, small


def _held_out_parts(
    S: _CVSearch, nys: BlockNystrom, U_all: np.ndarray | None, yi: np.ndarray | None
) -> tuple[list, list]:
    """Each held-out part read once: its features (for scoring) and statistics
    (one-vs-one: the statistics of each class, no targets; in memory only)."""
    Y = S.Y
    test_U: list = []
    test_mom: list = []  # FeatureMoments, or (one-vs-one) a list of them per class
    for _, te in S.splits:
        lw_te = None if S.loss_weight is None else S.loss_weight[te]
        if U_all is None:  # Dask views
            Xte = take_rows(S.Xs, te)
            test_U.append(nys.transform(Xte))
            test_mom.append(nys.moments(Xte, Y[te], sample_weight=lw_te).symmetrize())
        else:
            U = U_all[te]
            test_U.append(U)
            if yi is None:
                test_mom.append(FeatureMoments.from_features(U, Y[te], lw_te))
            else:
                test_mom.append(_class_moments(U, yi[te], Y.shape[1], lw_te))
    return test_U, test_mom


def _total_moments(
    S: _CVSearch,
    nys: BlockNystrom,
    U_all: np.ndarray | None,
    yi: np.ndarray | None,
    test_mom: list,
) -> tuple[bool, Any]:
    """Whether the held-out parts are disjoint and each fold trains on every row it does
    not hold out (then its statistics are the total minus its held-out part's), and the
    total statistics (None: not a partition). Rows never held out (e.g. those a learned
    relevance was fitted on) count in the total."""
    Xs, Y, n = S.Xs, S.Y, S.Xs[0].shape[0]
    all_te = np.sort(np.concatenate([te for _, te in S.splits]))
    partition = bool(
        all_te.size <= n
        and np.all(np.diff(all_te) > 0)
        and all(tr.size + te.size == n for tr, te in S.splits)
    )
    if not partition:
        return False, None
    parts = list(test_mom)
    if all_te.size < n:
        rest = np.setdiff1d(np.arange(n), all_te)
        lw_rest = None if S.loss_weight is None else S.loss_weight[rest]
        if U_all is None:
            Xr = take_rows(Xs, rest)
            parts.append(nys.moments(Xr, Y[rest], sample_weight=lw_rest).symmetrize())
        elif yi is None:
            parts.append(FeatureMoments.from_features(U_all[rest], Y[rest], lw_rest))
        else:
            parts.append(_class_moments(U_all[rest], yi[rest], Y.shape[1], lw_rest))
    total = parts[0]
    for mom in parts[1:]:
        total = total.merge(mom) if yi is None else [a.merge(b) for a, b in zip(total, mom)]
    return True, total


@dataclass
class _NystromFolds:
    """The shared data of one bandwidth's folds (built once by :meth:`build`) and the
    steps that score a fold's candidates."""

    fs: FoldScorer
    S: _CVSearch
    engine: Any
    nys: BlockNystrom
    #: the map without the joint block (None: not needed)
    small: BlockNystrom | None
    #: every row's features (None: Dask views, or the screen's Gram matrices alone)
    U_all: np.ndarray | None
    #: the features of the input views (without the joint block)
    d_in: int
    #: one-vs-one: the rows' class indices (None: one-vs-rest or regression)
    yi: np.ndarray | None
    joint_mask: np.ndarray
    #: a fold's problems in one batch from its rows' Gram blocks (Loss.subset_fold_outputs)
    batched: bool
    #: one-vs-one with a loss that fits a fold's pairs in batches (Loss.fold_row_subsets)
    pairs_in_one_batch: bool
    test_U: list
    test_mom: list
    partition: bool
    total: Any
    #: per joint-view candidate of the batched folds: its views, width and row Gram matrix
    row_grams: dict
    #: the held-out outputs of every fold (the out-of-fold keeper's; None: not kept)
    kept: list | None

    @classmethod
    def build(
        cls,
        fs: FoldScorer,
        S: _CVSearch,
        kernel_params: list,
        joint_mask: np.ndarray | None,
        grams: ScreenGrams | None,
    ) -> _NystromFolds:
        """Fit the map, read the held-out parts and total the statistics (the joint-only
        candidate is scored apart: never in ``joint_mask``)."""
        joint_mask = S.multi_view if joint_mask is None else joint_mask & S.multi_view
        nys = grams.nystrom if grams is not None else fs.fit_map(S, kernel_params)
        yi = np.argmax(np.asarray(S.Y), axis=1) if S.pairs else None
        engine = fs.engine()  # the estimator's one seam
        loss = engine.loss
        d_in = S.v_in * int(nys.n_landmarks_)
        # classification with fewer training rows per problem than features (unweighted,
        # in memory): the problems of a fold (one-vs-one: its pairs; one-vs-rest: its
        # classes) in one batch from the Gram blocks of its rows, without the statistics
        largest = max(tr.size for tr, _ in S.splits) if yi is None else _largest_pair(yi, S.splits)
        batched = (
            (yi is not None or fs.classes is not None)
            and data_part(S.Xs).in_memory
            and S.loss_weight is None
            and loss.subset_paths_apply()
            and largest < d_in
        )
        nys, U_all, small = _fold_map(fs, S, grams, batched, nys)
        pairs_in_one_batch = (
            yi is not None and U_all is not None and not batched and loss.row_subsets_apply()
        )
        test_U: list = []
        test_mom: list = []
        partition, total = False, None
        if not batched:  # the batched folds read the row Gram matrix only
            test_U, test_mom = _held_out_parts(S, nys, U_all, yi)
            partition, total = _total_moments(S, nys, U_all, yi, test_mom)
        row_grams: dict[int, tuple] = {}
        for ji in map(int, np.flatnonzero(joint_mask)) if batched else ():
            n_views = len(S.Xs) if S.joints[ji] or len(S.Xs) == S.v_in else S.v_in
            width = n_views * int(nys.n_landmarks_)
            if U_all is None:  # the screen's Gram matrix (every row a landmark)
                gram = grams.row_gram(slice(0, width), loss.fit_intercept)
            else:
                gram = loss.row_gram(U_all[:, :width])
            row_grams[ji] = (n_views, width, gram)
        kept: list | None = [] if fs.oof is not None else None
        return cls(
            fs, S, engine, nys, small, U_all, d_in, yi, joint_mask, batched,
            pairs_in_one_batch, test_U, test_mom, partition, total, row_grams, kept,
        )  # fmt: skip

    @property
    def dask_input(self) -> bool:
        return not data_part(self.S.Xs).in_memory

    def training_moments(self, k: int, tr: np.ndarray) -> Any:
        """Fold ``k``'s training statistics (one-vs-one: of each class): the total minus
        its held-out part's, else from its training rows."""
        S, Y = self.S, self.S.Y
        lw_tr = None if S.loss_weight is None else S.loss_weight[tr]
        if self.yi is not None:
            if self.partition:
                return [complement_moments(a, b) for a, b in zip(self.total, self.test_mom[k])]
            return _class_moments(self.U_all[tr], self.yi[tr], Y.shape[1], lw_tr)
        if self.partition:
            return complement_moments(self.total, self.test_mom[k])
        return self.nys.moments(take_rows(S.Xs, tr), Y[tr], sample_weight=lw_tr).symmetrize()

    def paths(
        self,
        mom: FeatureMoments,
        nys_j: BlockNystrom,
        Xj: list,
        tr: np.ndarray,
        Y_tr: np.ndarray,
        width: int,
        live: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, Any]:
        """The weighted coefficients ``(n_cand, T, k)``, offsets ``(n_cand, T)`` and
        basis of every candidate at the ``alphas`` still searched (``live``) on the
        training rows ``tr`` (targets ``Y_tr``) whose statistics are ``mom``, in the
        first ``width`` features."""
        S, loss, U_all = self.S, self.engine.loss, self.U_all
        lw_tr = None if S.loss_weight is None else S.loss_weight[tr]
        problem = MVMLProblem.from_moments(mom, nys_j, Y_tr, sample_weight=lw_tr)
        Xtr = take_rows(Xj, tr)
        if loss.needs_rows and self.dask_input:  # e.g. the hinge loss: no statistics
            problem = problem.with_rows(None, np.asarray(nys_j.transform(Xtr).compute()))
        # fit_intercept: the fold's centred problem (means of its training rows);
        # a loss that fits its offsets from the rows (the hinge loss) reads them
        problem = loss.with_intercept(problem)
        if self.fs.fit_intercept and loss.needs_rows and problem.row_data.U is None:
            problem = problem.with_rows(Xtr, None if U_all is None else U_all[tr, :width])
        rows = None
        if U_all is not None and tr.size < width and lw_tr is None:
            # fewer rows than features (weighted: the d x d statistics instead)
            rows = U_all[tr, :width]
        GW, basis = self.engine.fold_paths(problem, Xtr, S.alphas[live], S.etas, S.K, rows)
        GW = GW.reshape(-1, *GW.shape[-2:])
        return GW, loss.intercepts(problem, GW, basis), basis

    def candidate_paths(
        self, ji: int, k: int, tr: np.ndarray, moms: Any, live: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The coefficients, offsets and held-out features of every candidate of the
        joint-view candidate ``ji`` on fold ``k`` (one-vs-one: of every pair)."""
        S, yi, d_in = self.S, self.yi, self.d_in
        full_width = S.joints[ji] or len(S.Xs) == S.v_in
        nys_j, Xj = (self.nys, S.Xs) if full_width else (self.small, S.Xs[: S.v_in])
        U_te = self.test_U[k] if full_width else self.test_U[k][:, :d_in]
        width = U_te.shape[1]
        if yi is None:
            mom = moms if full_width else leading_moments(moms, d_in)
            GW, b, basis = self.paths(mom, nys_j, Xj, tr, S.Y[tr], width, live)
            return GW, b, (U_te if basis is None else U_te @ basis)
        if self.pairs_in_one_batch:  # the loss fits the fold's pairs in batches
            lw_tr = None if S.loss_weight is None else S.loss_weight[tr]
            yt = yi[tr]
            keeps = [np.flatnonzero((yt == i) | (yt == j)) for i, j in S.pairs]
            ys = [np.where(yt[r] == i, 1.0, -1.0) for r, (i, _) in zip(keeps, S.pairs)]
            GW, b = self.engine.fold_row_subsets(
                nys_j, self.U_all[tr, :width], keeps, ys, lw_tr, S.alphas[live], S.etas, S.K
            )
            return GW, b, U_te
        # a problem per pair, its coefficients in the feature basis
        cls = moms if full_width else [leading_moments(m, d_in) for m in moms]
        GWs, bs = [], []
        for i, j in S.pairs:
            mom, keep = pair_moments(cls, i, j), (yi[tr] == i) | (yi[tr] == j)
            y_pair = np.where(yi[tr][keep] == i, 1.0, -1.0)[:, None]
            GW_p, b_p, basis = self.paths(mom, nys_j, Xj, tr[keep], y_pair, width, live)
            GWs.append(GW_p if basis is None else GW_p @ basis.T)
            bs.append(b_p)
        return np.concatenate(GWs, axis=1), np.concatenate(bs, axis=1), U_te

    def fold(self, k: int, tr: np.ndarray, te: np.ndarray, live: np.ndarray) -> list[tuple]:
        """Scores of every candidate on fold ``k`` (and what the held-out keeper needs),
        per joint-view candidate ``(ji, scores, (ji, te, outputs))``; the ``alphas`` not
        ``live`` are not fitted (NaN scores)."""
        if self.batched:
            return self.batched_fold(tr, te, live)
        S = self.S
        sw_te = None if S.sample_weight is None else S.sample_weight[te]
        per_alpha = S.etas.size * S.K
        moms = self.training_moments(k, tr)
        results = []
        for ji in map(int, np.flatnonzero(self.joint_mask)):
            GW, b, U = self.candidate_paths(ji, k, tr, moms, live)
            sc = np.full((S.alphas.size, per_alpha), np.nan)
            sc[live] = candidate_scores(
                U, S.y_score[te], GW, S.scorer, self.fs.classes, b, sw_te, S.decode
            ).reshape(-1, per_alpha)
            if self.kept is not None and not live.all():  # the keeper indexes every candidate
                GW, b = _on_grid(GW, live, per_alpha), _on_grid(b, live, per_alpha)
            item = (ji, te, lambda c, U=U, GW=GW, b=b: U @ GW[c].T + b[c])
            results.append((ji, sc.reshape(S.alphas.size, S.etas.size, S.K), item))
        return results

    def batched_fold(self, tr: np.ndarray, te: np.ndarray, live: np.ndarray) -> list[tuple]:
        """:meth:`fold` by :meth:`Loss.subset_fold_outputs` (the ``alphas`` not
        ``live`` are not fitted: NaN scores)."""
        S, loss = self.S, self.engine.loss
        sw_te = None if S.sample_weight is None else S.sample_weight[te]
        per_alpha = S.etas.size * S.K
        if self.yi is None:  # one-vs-rest: every target column on every training row
            subsets = [(np.arange(tr.size), np.asarray(S.Y[tr]))]
        else:
            yi_tr = self.yi[tr]
            subsets = [
                (rows, np.where(yi_tr[rows] == i, 1.0, -1.0))
                for i, j in S.pairs
                for rows in [np.flatnonzero((yi_tr == i) | (yi_tr == j))]
            ]
        results = []
        for ji in map(int, np.flatnonzero(self.joint_mask)):
            n_views, width, gram = self.row_grams[ji]
            D = loss.subset_fold_outputs(
                gram, tr, te, subsets, S.alphas[live], S.etas, n_views, width
            )
            D = D.reshape(-1, *D.shape[-2:])  # (n_cand, n_te, P)
            sc = np.full((S.alphas.size, per_alpha), np.nan)
            sc[live] = output_scores(
                np.moveaxis(D, 0, 1), S.y_score[te], S.scorer, self.fs.classes, sw_te, S.decode
            ).reshape(-1, per_alpha)
            if self.kept is not None and not live.all():  # the keeper indexes every candidate
                D = _on_grid(D, live, per_alpha)
            item = (ji, te, lambda c, D=D: D[c])
            results.append((ji, sc.reshape(S.alphas.size, S.etas.size, S.K), item))
        return results


def _run_folds(folds: _NystromFolds, out: ScoreGrid) -> None:
    """Score the folds into ``out`` (and keep their held-out outputs in ``folds.kept``).

    Folds in parallel threads (``n_jobs``; BLAS is single-threaded inside the search);
    Dask views keep one fold at a time (their work is already parallel), and so does a
    loss whose solver is not thread-safe (the hinge loss: liblinear's random number
    generator is process-wide, so threads would make its coordinate order, hence the last
    digits, depend on scheduling). Beside earlier parts of the search
    (:meth:`FoldScorer.hopeless`): the folds in batches of ``n_jobs``, an ``alpha``
    dropped once none of its candidates can win any more."""
    fs, S = folds.fs, folds.S
    splits = S.splits
    n_jobs = 1 if folds.dask_input or not folds.engine.loss.thread_safe else fs.n_jobs
    batch = len(splits) if fs.to_beat is None else effective_n_jobs(n_jobs)
    order = fs.folds_in_order(len(splits))
    live = np.ones(S.alphas.size, dtype=bool)
    for start in range(0, len(splits), batch):
        ks = order[start : start + batch]
        per_fold = Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(folds.fold)(k, *splits[k], live.copy()) for k in ks
        )
        for k, results in zip(ks, per_fold):
            for ji, sc, item in results:
                out.put(sc, axes=PATH_AXES, joint_view=ji, folds=k)
                if folds.kept is not None:
                    folds.kept.append((k, item))
        # the folds scored so far: (n_joint, n_alpha, n_eta, K, folds)
        ran = np.sort(order[: start + len(ks)])
        done = out.take(joint_view=folds.joint_mask, folds=ran)
        others = tuple(i for i, name in enumerate(out.grid.names) if name != "alpha")
        live &= ~fs.hopeless(S, done, ran).all(axis=others)
        if not live.any():
            fs.say(f"abandoned the rest of the folds after {start + len(ks)}")
            break


def _offer_held_out(folds: _NystromFolds, out: ScoreGrid) -> None:
    """Offer the out-of-fold keeper (:attr:`FoldScorer.oof`) this block's scores and the
    held-out decision values of its best candidate."""
    S, kept = folds.S, folds.kept
    assert kept is not None
    kept.sort(key=lambda entry: entry[0])  # in fold order, whatever order they ran in
    shape = (S.alphas.size, S.etas.size, S.K)

    def held_out(c: int) -> list:
        at = out.position(c)  # a fold's outputs index its candidates in path order
        path_index = _path_index(at, shape)
        ji = at["joint_view"]
        return [(te, outputs(path_index)) for _, (j, te, outputs) in kept if j == ji]

    folds.fs.oof.offer(out.values.reshape(-1, len(S.splits)), held_out)

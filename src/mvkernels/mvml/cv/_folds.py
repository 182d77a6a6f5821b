"""How the candidates of a cross-validated search are scored (:class:`_FoldScoring`, a
part of the CV estimators' base :class:`~._search._MVMLCVBase`): the leave-one-out screen
of the (joint view, bandwidth factor) pairs, the folds of the block Nystrom search (one map
per bandwidth, fold statistics as the total minus the held-out part, the paths of every
candidate through the loss's :meth:`~mvkernels.mvml._losses.Loss.fold_paths`), the
joint-only candidate, the full-kernel search and the held-out scores. The estimator is
reached only through its seam, ``estimator._cv_engine()``
(:class:`~mvkernels.mvml._cv_engine.CVEngine`); the scores are written by axis name
(:class:`~._grid.ScoreGrid`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.utils import check_random_state

from ..._kernel_families import names_precomputed
from ..._targets import predicted_class_indices
from ..._validation import take_rows
from ...kernels import make_view_kernels
from ...nystrom import BlockNystrom, FeatureMoments, default_chunk_size, resolve_n_landmarks
from ...nystrom._map import fit_validated_views, weight_missing_model
from .._base import landmarks_of_rows
from .._data_part import data_part
from .._joint import (
    JOINT_ONLY,
    drop_joint_block,
    joint_views,
    leading_moments,
)
from .._multiclass import pair_moments, pair_problem
from .._problem import MVMLProblem
from .._screen import (
    MISSING_FINALISTS_FACTOR,
    ScreenGrams,
    alpha_window,
    best_index,
    finalists,
    kernel_ridge_fold_outputs,
    ridge_fold_outputs,
)
from ._grid import ScoreGrid, ScreenResult, _CVSearch
from ._scoring import _r2_from_sums, _score_outputs, complement_moments

__all__ = []

#: the largest score of one fold with the default scoring (accuracy, R^2)
SCORE_CEILING = 1.0


def _class_moments(
    U: np.ndarray, yi: np.ndarray, n_classes: int, sample_weight: np.ndarray | None = None
) -> list[FeatureMoments]:
    """The feature moments (no targets) of the rows of each class (one-vs-one folds)."""
    out = []
    for c in range(n_classes):
        rows = yi == c
        sw = None if sample_weight is None else sample_weight[rows]
        out.append(FeatureMoments.from_features(U[rows], None, sw))
    return out


def _on_grid(values: np.ndarray, live: np.ndarray, per_alpha: int) -> np.ndarray:
    """Per-candidate ``values`` of the live ``alpha`` values (``per_alpha`` candidates
    each) placed at their rows among every ``alpha``'s candidates (zeros elsewhere)."""
    out = np.zeros((live.size * per_alpha, *values.shape[1:]), dtype=values.dtype)
    out[np.repeat(live, per_alpha)] = values
    return out


def _largest_pair(yi: np.ndarray, splits: list) -> int:
    """The most training rows of a class pair in any fold (one-vs-one)."""
    n_classes = int(yi.max()) + 1
    most = 0
    for tr, _ in splits:
        counts = np.sort(np.bincount(yi[tr], minlength=n_classes))
        most = max(most, int(counts[-2:].sum()))
    return most


#: the axes of the candidates of one fold's paths, in the order of their scores and
#: outputs (:meth:`~mvkernels.mvml._losses.Loss.fold_paths`: ``(n_alpha, n_eta, K, ...)``)
PATH_AXES = ("alpha", "eta", "max_iter")


def _path_index(at: dict[str, int], shape: tuple[int, ...]) -> int:
    """The index among a fold's path candidates (:data:`PATH_AXES` order, ``shape``) of
    the candidate at the axis positions ``at``."""
    return int(np.ravel_multi_index(tuple(at[name] for name in PATH_AXES), shape))


def fold_views(Xs: list, tr: np.ndarray, te: np.ndarray, kernel: Any) -> tuple[list, list]:
    """The training and held-out views of a fold (rows ``tr``, ``te``): the rows of each
    view, or, for precomputed Gram matrices (``kernel`` naming them once or per view,
    :func:`~mvkernels._kernel_families.names_precomputed`), their rows and the training
    columns.

    Examples
    --------
    >>> import numpy as np
    >>> K = np.arange(16.0).reshape(4, 4)
    >>> Ktr, Kte = fold_views([K], np.array([0, 1]), np.array([3]), ["precomputed"])
    >>> Ktr[0].tolist(), Kte[0].tolist()
    ([[0.0, 1.0], [4.0, 5.0]], [[12.0, 13.0]])
    """
    if names_precomputed(kernel):  # (a mix with column views is refused at validation)
        return [Kv[np.ix_(tr, tr)] for Kv in Xs], [Kv[np.ix_(te, tr)] for Kv in Xs]
    return take_rows(Xs, tr), take_rows(Xs, te)


def _path_point(r: dict, it: int, n_views: int) -> np.ndarray:
    """The weighted coefficients ``w (.) g`` (v, m) of the ``it``-th iterate of a
    recorded path ``r`` (its last iterate past its end)."""
    at = min(it, len(r["path"]) - 1)
    return r["path"][at].reshape(n_views, -1) * r["path_w"][at][:, None]


class _FoldScoring:
    """The scoring steps of :class:`~._search._MVMLCVBase` (see the module docstring).

    A mixin: it reads the CV estimator's parameters and search state, declared below for
    the type checker."""

    search: str
    n_finalists: int | None
    fit_intercept: bool
    n_landmarks: Any
    landmarks: Any
    kernel: Any
    eig_floor: float
    chunk_size: int | None
    random_state: Any
    verbose: int
    n_jobs: int | None
    _search_kernel: Any
    _oof: Any
    _loss_search: Any

    #: the best mean score of the earlier parts of a search along the part axes (None:
    #: none, or an axis that does not abandon, :class:`~._grid.PartAxis`); a candidate
    #: of this search is chosen only if it scores more (:meth:`_hopeless`)
    _to_beat: float | None = None

    #: beside earlier parts (with ``_to_beat``): the folds in the order they are run,
    #: the earlier parts' best candidate's worst fold first (a candidate that fails there
    #: is abandoned sooner); None: in order (:meth:`_folds_in_order`)
    _fold_order: np.ndarray | None = None

    def _base_estimator(self) -> Any:
        raise NotImplementedError

    def _learned(self) -> bool:
        raise NotImplementedError

    def _say(self, msg: str) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ screening
    def _screens(self, S: _CVSearch) -> bool:
        """Screening applies in Nystrom mode on in-memory views when the grid has more
        (joint view, bandwidth factor) pairs than finalists (the joint-only candidate's
        pairs not counted: it is cross-validated apart)."""
        n_pairs = int(S.multi_view.sum()) * len(S.factors)
        return (
            self.search == "screen"
            and S.n_landmarks is not None
            and data_part(S.Xs).in_memory
            and n_pairs > self._finalist_count(S)
        )

    def _finalist_count(self, S: _CVSearch) -> int:
        """Pairs kept by the screen: ``n_finalists`` (None: the loss's), times
        ``MISSING_FINALISTS_FACTOR`` when training views have missing rows (:mod:`._screen`)."""
        k = self._loss_search.n_finalists if self.n_finalists is None else self.n_finalists
        return k * (MISSING_FINALISTS_FACTOR if S.missing else 1)

    def _screened_search(self, S: _CVSearch, scores: ScoreGrid) -> ScreenResult:
        """Step 1: every (joint view, factor) pair scored by MVML_I's leave-one-out error
        on all the rows at every ``alpha`` (:mod:`._screen`); step 2: the
        loss's ``n_finalists`` best pairs (ties of the score broken by the smaller
        leave-one-out squared error, :func:`finalists`) cross-validated in full, each at its
        screening-best ``alpha`` and the grid neighbours (:func:`alpha_window`), or at
        every ``alpha`` when the screen has its own grid (``screen_alphas``). The
        other candidates keep NaN scores. Returns the screen, without its features."""
        own_grid = self._loss_search.screen_alphas is not None
        n_keep = self._finalist_count(S)
        tiebreak_on = self._loss_search.screen_tiebreak
        # the screen reads neither the decomposition nor the loss's paths: the searches
        # of one loss on the same folds (multi_class="auto": "ovr" and "ovo") share it
        cache = self.__dict__.get("_screen_cache")
        key = getattr(self, "_current_loss", None)
        if cache is not None and key in cache:
            screen = cache[key]
        else:
            screen = self._screen_pairs(S)
            if cache is not None:
                cache[key] = screen
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
            self._say(f"cross-validating bandwidth factor {S.factors[fi]:g}")
            part = self._score_nystrom(
                replace(S, alphas=S.alphas[sel]),
                S.kernel_params(self._search_kernel, S.factors[fi]),
                joint_mask=best[:, fi],
                grams=screen.kept[fi],
            )
            scores.put(part, bandwidth_factor=fi, alpha=sel)
        for ji in map(int, np.flatnonzero(only)):
            fi = best_index(screen.score[ji], screen.closeness[ji])
            self._say(f"cross-validating the joint view alone, bandwidth factor {S.factors[fi]:g}")
            window = alpha_window(S.alphas, screen.best_alpha[ji, fi])
            self._score_joint_only(S, fi, window, scores)
        return screen.without_features()

    def _screen_pairs(self, S: _CVSearch) -> ScreenResult:
        """Step 1 of :meth:`_screened_search`: the screening score of every (joint view,
        factor) pair, its leave-one-out closeness (minus the squared error) and
        screening-best ``alpha`` index, and the screen's Gram matrices of the finalists'
        factors (:class:`~._grid.ScreenResult`; their maps' normalisers and features are
        computed only for the finalists when every row is a landmark,
        :meth:`ScreenGrams.of_map`, :meth:`ScreenGrams.fitted`)."""
        own_grid = self._loss_search.screen_alphas is not None
        n_keep = self._finalist_count(S)
        screen_alphas = np.asarray(self._loss_search.screen_alphas) if own_grid else S.alphas
        result = ScreenResult.empty(len(S.joints), len(S.factors))
        # the result's arrays, filled in place below; ties on the score (leave-one-out
        # accuracy ties often) go to the smaller leave-one-out squared error of the outputs
        screen, closeness, best_alpha = result.score, result.closeness, result.best_alpha
        tiebreak = closeness if self._loss_search.screen_tiebreak else None
        kept = result.kept
        Y = np.asarray(S.Y)
        # the joint-only candidate is screened on the joint block of the same features
        # (its factor and alpha window), then cross-validated apart (_score_joint_only)
        only = ~S.multi_view
        for fi, f in enumerate(S.factors):
            params = S.kernel_params(self._search_kernel, f)
            nys = self._fit_map(S, params, defer=S.loss_weight is None and not S.missing)
            d_in = S.v_in * nys.n_landmarks_
            grams = ScreenGrams.of_map(nys, S.Xs, d_in)  # shared by the joint-view variants
            for ji, joint in enumerate(S.joints):
                if joint == JOINT_ONLY:
                    cols, n_blocks = slice(d_in, None), 1
                elif joint or len(S.Xs) == S.v_in:
                    cols, n_blocks = slice(None), len(S.Xs)
                else:
                    cols, n_blocks = slice(0, d_in), S.v_in
                loo = grams.loo_outputs(
                    cols, Y, screen_alphas, n_blocks, self.fit_intercept, S.loss_weight
                )
                per_alpha = np.array([self._loo_score(D, S) for D in loo])
                per_alpha[~np.isfinite(per_alpha)] = -np.inf
                with np.errstate(invalid="ignore", over="ignore"):
                    if S.sample_weight is None:
                        close = -np.mean((loo - Y[None]) ** 2, axis=(1, 2))
                    else:  # the weighted mean over the rows
                        sq = np.mean((loo - Y[None]) ** 2, axis=2) @ S.sample_weight
                        close = -sq / S.sample_weight.sum()
                close[~np.isfinite(close)] = -np.inf
                best_alpha[ji, fi] = best_index(per_alpha, close)
                screen[ji, fi] = per_alpha[best_alpha[ji, fi]]
                closeness[ji, fi] = close[best_alpha[ji, fi]]
            self._say(f"screened bandwidth factor {f:g}: {screen[:, fi]}")
            kept[fi] = grams  # maps and features of the factors that are finalists so far
            so_far = np.asarray(
                finalists(np.where(only[:, None], -np.inf, screen), n_keep, tiebreak).any(axis=0)
            )
            for k in [k for k in kept if not so_far[k]]:
                del kept[k]
        return result

    def _score_joint_only(self, S: _CVSearch, fi: int, sel: np.ndarray, scores: ScoreGrid) -> None:
        """Cross-validate the joint-only candidate (``joint_view="only"``, identity metric:
        kernel ridge on the concatenated views, :mod:`._joint`) at bandwidth factor
        ``S.factors[fi]`` and the ``alphas`` selected by ``sel``, on the search's folds.

        Its own Nystrom map of ``S.n_landmarks_only`` landmarks on the joint view (every
        row up to 3000 rows, then a cost-bounded count), fitted once on all rows as
        the other candidates' maps; per fold and ``alpha`` one Cholesky factorisation of
        the training Gram matrix (:func:`~._screen.ridge_fold_outputs`). The scores go to
        the first ``eta`` and iteration of its row of ``scores`` (the identity metric has
        neither); the other entries of that row stay NaN. Beside earlier parts of the
        search (``_to_beat``) in the kernel form, the folds run one at a time in
        :meth:`_folds_in_order`, an ``alpha`` dropped once it cannot win
        (:meth:`_hopeless`: NaN on its folds left), as the other candidates'."""
        ji = S.joints.index(JOINT_ONLY)
        kernel = self._search_kernel
        kernel = kernel[-1] if isinstance(kernel, (list, tuple)) else kernel
        kernel_params = S.kernel_params(self._search_kernel, S.factors[fi])[-1:]
        Xj, Y, alphas = S.Xs[-1:], np.asarray(S.Y), S.alphas[sel]
        n = Xj[0].shape[0]
        if resolve_n_landmarks(S.n_landmarks_only, n) >= n:
            # every row a landmark: U U^T = K, so the kernel form (no factorisation of K)
            kern = make_view_kernels(kernel, kernel_params, 1)[0]
            kern.fit(Xj[0], random_state=check_random_state(self.random_state))
            Kj = kern(Xj[0], Xj[0])

            def fold_outputs(Yc: np.ndarray, splits: list, a: np.ndarray) -> list[np.ndarray]:
                return kernel_ridge_fold_outputs(
                    Kj, Yc, splits, a, self.fit_intercept, S.loss_weight
                )
        else:
            Kj = None
            nys = self._fit_map(S, kernel_params, Xj, kernel, S.n_landmarks_only)
            Uj = nys.transform(Xj)

            def fold_outputs(Yc: np.ndarray, splits: list, a: np.ndarray) -> list[np.ndarray]:
                return ridge_fold_outputs(Uj, Yc, splits, a, self.fit_intercept, S.loss_weight)

        classes = getattr(self, "classes_", None)
        sw = S.sample_weight
        yi = np.argmax(Y, axis=1) if S.pairs else None

        def fold_scores(outs: list[np.ndarray], folds: list[int]) -> np.ndarray:
            """The scores (n_alpha of ``outs``, len(folds)) of the outputs of ``folds``."""
            return np.array(
                [
                    [
                        _score_outputs(
                            S.decode(D[ai]),
                            S.y_score[S.splits[k][1]],
                            classes,
                            S.scorer,
                            None if sw is None else sw[S.splits[k][1]],
                        )
                        for D, k in zip(outs, folds)
                    ]
                    for ai in range(outs[0].shape[0])
                ]
            ).reshape(-1, len(folds))

        def outputs(splits: list, at: np.ndarray) -> list[np.ndarray]:
            """Per split, the outputs (n_alpha, n_te, T or pairs) at ``alphas[at]``; one
            ridge per pair on its training rows, outputs on every held-out row."""
            if not S.pairs:
                return fold_outputs(Y, splits, alphas[at])
            per_pair = []
            for i, j in S.pairs:
                keep = (yi == i) | (yi == j)
                y_pair = np.where(yi == i, 1.0, -1.0)[:, None]
                per_pair.append(
                    fold_outputs(y_pair, [(tr[keep[tr]], te) for tr, te in splits], alphas[at])
                )
            return [np.concatenate(D_k, axis=2) for D_k in zip(*per_pair)]

        every = np.arange(alphas.size)
        if self._to_beat is None or Kj is None:
            outs = outputs(S.splits, every)
            part = fold_scores(outs, list(range(S.n_splits)))  # (n_alpha_sel, n_splits)
        else:  # beside earlier parts: fold by fold (kernel form: each fold on its own), an
            # alpha dropped once it cannot win (_hopeless); its other folds stay NaN
            part = np.full((alphas.size, S.n_splits), np.nan)
            outs = [np.full((alphas.size, 0, 0), np.nan)] * S.n_splits
            live = np.ones(alphas.size, dtype=bool)
            order = self._folds_in_order(S.n_splits)
            for done, k in enumerate(order, start=1):
                at = every[live]
                (D,) = outputs([S.splits[k]], at)
                part[at, k] = fold_scores([D], [k])[:, 0]
                outs[k] = np.full((alphas.size, *D.shape[1:]), np.nan)
                outs[k][at] = D
                ran = np.sort(order[:done])
                live &= ~self._hopeless(S, part[:, ran], ran)
                if not live.any():
                    break
        scores.put(part, joint_view=ji, bandwidth_factor=fi, alpha=sel, eta=0, max_iter=0)
        if getattr(self, "_oof", None) is not None:
            self._oof.offer(part, lambda c: [(te, D[c]) for D, (_, te) in zip(outs, S.splits)])

    def _loo_score(self, D: np.ndarray, S: _CVSearch) -> float:
        """Score of the leave-one-out outputs ``D`` (n, T) of all the rows (-inf when a
        row has none)."""
        if not np.all(np.isfinite(D)):
            return -np.inf
        return _score_outputs(
            D, S.y_score, getattr(self, "classes_", None), S.scorer, S.sample_weight
        )

    # ------------------------------------------------------------------ abandoning
    def _hopeless(
        self, S: _CVSearch, scores: np.ndarray, folds: np.ndarray | None = None
    ) -> np.ndarray:
        """Which candidates can no longer be chosen, from their scores ``scores`` (...,
        k) on the folds ``folds`` (their indices, increasing; None: the first ``k``)
        (NaN: not scored, hence never chosen).

        Beside earlier parts of the search (``_to_beat``, their best mean score; ties go
        to them), a candidate is chosen only if its mean score over the ``S.n_splits``
        folds exceeds ``_to_beat``. With the default scores (accuracy, R^2: at most 1 a
        fold; a ``scoring`` has no known bound, so nothing is abandoned) its mean is at
        most the mean of its ``k`` scores and ``n_splits - k`` scores of 1 on the other
        folds; where that is not above ``_to_beat``, the candidate is hopeless and its
        remaining folds need not be fitted. That bound is averaged as ``cv_results_``'s
        mean is (NumPy's mean over the folds in order): a rounded sum is nondecreasing in
        each term, so no scores of the folds left give a larger rounded mean, and a
        candidate that could at best tie ``_to_beat`` is abandoned (the tie would go to
        the earlier part). Every candidate is hopeless when ``_to_beat`` is 1 already.
        The choice is the one of the full search."""
        if self._to_beat is None or S.scorer is not None:
            return np.zeros(scores.shape[:-1], dtype=bool)
        if self._to_beat >= SCORE_CEILING:
            return np.ones(scores.shape[:-1], dtype=bool)
        k = scores.shape[-1]
        at = np.arange(k) if folds is None else np.asarray(folds)
        full = np.full((*scores.shape[:-1], S.n_splits), SCORE_CEILING)
        full[..., at] = scores
        with np.errstate(invalid="ignore"):
            return ~(full.mean(axis=-1) > self._to_beat)

    def _folds_in_order(self, n_splits: int) -> list[int]:
        """The order the folds of a search beside earlier parts are run in
        (:attr:`_fold_order`; None: in order). A fold's scores do not depend on the folds
        run before it (its statistics are its own, and the solvers that draw random
        numbers seed them per problem: the hinge loss's liblinear by ``solver_rng``), so
        every score is the same in any order; only the folds at which a hopeless
        candidate stops move."""
        order = self._fold_order
        return list(range(n_splits)) if order is None else [int(k) for k in order]

    # ------------------------------------------------------------------ scoring
    def _candidate_scores(
        self,
        U: Any,
        y_te: np.ndarray,
        GW: np.ndarray,
        scorer: Any,
        offsets: np.ndarray | None = None,
        sample_weight: np.ndarray | None = None,
        decode: Any = None,
    ) -> np.ndarray:
        """Scores of every candidate on one held-out part.

        ``GW``: ``(n_cand, T, d)`` weighted coefficients ``w (.) g`` and ``offsets``
        ``(n_cand, T)`` their intercepts (None: none); decision values
        ``U @ GW[c].T + offsets[c]``. Default scoring (accuracy / R^2) is accumulated over row
        chunks (Dask blocks run on the workers); a custom ``scoring`` materialises one
        candidate's outputs at a time. ``sample_weight``: the held-out rows' weights
        (weighted accuracy / R^2; passed to ``scoring``). ``decode``: maps decision values
        (..., T) to the values scored (:meth:`_CVSearch.decode`; None: as they are).
        """
        n_cand, T, d = GW.shape
        classes = getattr(self, "classes_", None)
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

    def _output_scores(
        self,
        D: np.ndarray,
        y_te: np.ndarray,
        scorer: Any,
        sample_weight: np.ndarray | None,
        decode: Any,
    ) -> np.ndarray:
        """Scores of every candidate from its held-out decision values ``D``
        ``(n_te, n_cand, T)`` (as :meth:`_candidate_scores` scores them); ``decode``
        maps decision values to the values scored."""
        classes = getattr(self, "classes_", None)
        if scorer is not None or sample_weight is not None or classes is None:
            return np.array(
                [
                    _score_outputs(decode(D[:, c]), y_te, classes, scorer, sample_weight)
                    for c in range(D.shape[1])
                ]
            )
        hit = predicted_class_indices(decode(D)) == np.searchsorted(classes, y_te)[:, None]
        return hit.sum(axis=0) / y_te.shape[0]

    # ------------------------------------------------------------------ Nystrom CV
    def _fit_map(
        self,
        S: _CVSearch,
        kernel_params: list,
        Xs: list | None = None,
        kernel: Any = None,
        n_landmarks: Any = None,
        defer: bool = False,
    ) -> BlockNystrom:
        """The Nystrom map of one bandwidth (all training rows, every fold); by default of
        the searched views with the search's kernel and landmark count. ``defer``: the
        normalisers left to the caller (:meth:`ScreenGrams.of_map`)."""
        nys = BlockNystrom(
            kernel=self._search_kernel if kernel is None else kernel,
            kernel_params=kernel_params,
            n_landmarks=S.n_landmarks if n_landmarks is None else n_landmarks,
            landmarks=landmarks_of_rows(
                self.landmarks, self.__dict__.get("_cv_rows"), self.__dict__.get("_cv_n_in")
            ),
            eig_floor=self.eig_floor,
            chunk_size=self.chunk_size,
            random_state=self.random_state,
        )
        fit_validated_views(nys, S.Xs if Xs is None else Xs, defer_normalizers=defer)
        if S.missing and Xs is None and S.loss_weight is not None:
            # missing views: the completion statistics weighted as the loss (as the refit's)
            weight_missing_model(nys, S.Xs, S.loss_weight)
        return nys

    def _score_nystrom(
        self,
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
        Xs, Y, y_score, splits = S.Xs, S.Y, S.y_score, S.splits
        alphas, etas, K, scorer, v_in = S.alphas, S.etas, S.K, S.scorer, S.v_in
        # the joint-only candidate is scored apart
        joint_mask = S.multi_view if joint_mask is None else joint_mask & S.multi_view
        nys = grams.nystrom if grams is not None else self._fit_map(S, kernel_params)
        dask_input = not data_part(Xs).in_memory
        n = Xs[0].shape[0]
        # held-out parts: features (for scoring) and statistics, each row read once
        # (one-vs-one: the statistics of each class, no targets; in memory only)
        yi = np.argmax(np.asarray(Y), axis=1) if S.pairs else None
        engine = self._base_estimator()._cv_engine()  # the estimator's one seam
        loss = engine.loss
        d_in = v_in * int(nys.n_landmarks_)
        # classification with fewer training rows per problem than features (unweighted,
        # in memory): the problems of a fold (one-vs-one: its pairs; one-vs-rest: its
        # classes) in one batch from the Gram blocks of its rows
        # (Loss.subset_fold_outputs), without the fold or class statistics
        largest = max(tr.size for tr, _ in splits) if yi is None else _largest_pair(yi, splits)
        batched = (
            (yi is not None or getattr(self, "classes_", None) is not None)
            and not dask_input
            and S.loss_weight is None
            and loss.subset_paths_apply()
            and largest < d_in
        )
        U_all: np.ndarray | None = None
        if batched and grams is not None and grams.row_side:  # the Gram matrices alone
            pass
        elif grams is not None:
            nys, U_all = grams.fitted()
        elif not dask_input:  # in memory: every row's features, once
            U_all = nys.transform(Xs)
        # the map without the joint block (its normalisers: only when they are fitted)
        small = None if U_all is None and not dask_input else drop_joint_block(nys, v_in)
        # one-vs-one with a loss that fits a fold's pairs in batches on its rows' features
        # (the hinge loss: Loss.fold_row_subsets), in memory
        pairs_in_one_batch = (
            yi is not None and U_all is not None and not batched and loss.row_subsets_apply()
        )
        test_U: list = []
        test_mom: list = []  # FeatureMoments, or (one-vs-one) a list of them per class
        for _, te in splits:
            lw_te = None if S.loss_weight is None else S.loss_weight[te]
            if batched:  # the batched folds read the row Gram matrix only
                continue
            if U_all is None:  # Dask views
                Xte = take_rows(Xs, te)
                test_U.append(nys.transform(Xte))
                test_mom.append(nys.moments(Xte, Y[te], sample_weight=lw_te).symmetrize())
            else:
                U = U_all[te]
                test_U.append(U)
                if yi is None:
                    test_mom.append(FeatureMoments.from_features(U, Y[te], lw_te))
                else:
                    test_mom.append(_class_moments(U, yi[te], Y.shape[1], lw_te))
        # each fold trains on the rows it does not hold out (disjoint held-out parts):
        # its statistics are the total minus its held-out part's; rows never held out
        # (e.g. those a learned relevance was fitted on) count in the total
        all_te = np.sort(np.concatenate([te for _, te in splits]))
        partition = (
            all_te.size <= n
            and np.all(np.diff(all_te) > 0)
            and all(tr.size + te.size == n for tr, te in splits)
        )
        total: Any = None
        if partition and not batched:
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
        # the scores of this bandwidth, by axis name (every axis of the grid but the factor)
        out = ScoreGrid.empty(S.grid.without("bandwidth_factor"), len(splits))
        kept: list | None = [] if getattr(self, "_oof", None) is not None else None

        def paths(
            mom: FeatureMoments,
            nys_j: BlockNystrom,
            Xj: list,
            tr: np.ndarray,
            Y_tr: np.ndarray,
            width: int,
            live: np.ndarray,
        ) -> tuple[np.ndarray, np.ndarray, Any, Any]:
            """The weighted coefficients ``(n_cand, T, k)``, offsets ``(n_cand, T)`` and
            basis of every candidate at the ``alphas`` still searched (``live``) on the
            training rows ``tr`` (targets ``Y_tr``) whose statistics are ``mom``, in the
            first ``width`` features, and the problem."""
            lw_tr = None if S.loss_weight is None else S.loss_weight[tr]
            problem = MVMLProblem.from_moments(mom, nys_j, Y_tr, sample_weight=lw_tr)
            Xtr = take_rows(Xj, tr)
            if loss.needs_rows and dask_input:  # e.g. the hinge loss: no statistics
                problem = problem.with_rows(None, np.asarray(nys_j.transform(Xtr).compute()))
            # fit_intercept: the fold's centred problem (means of its training rows);
            # a loss that fits its offsets from the rows (the hinge loss) reads them
            problem = loss.with_intercept(problem)
            if self.fit_intercept and loss.needs_rows and problem.U is None:
                problem = problem.with_rows(Xtr, None if U_all is None else U_all[tr, :width])
            rows = None
            if U_all is not None and tr.size < width and lw_tr is None:
                # fewer rows than features (weighted: the d x d statistics instead)
                rows = U_all[tr, :width]
            GW, basis = engine.fold_paths(problem, Xtr, alphas[live], etas, K, rows)
            GW = GW.reshape(-1, *GW.shape[-2:])
            return GW, loss.intercepts(problem, GW, basis), basis, problem

        def fold(k: int, tr: np.ndarray, te: np.ndarray, live: np.ndarray) -> list[tuple]:
            """Scores of every candidate on fold ``k`` (and what the held-out keeper needs);
            the ``alphas`` not ``live`` are not fitted (NaN scores)."""
            lw_tr = None if S.loss_weight is None else S.loss_weight[tr]
            sw_te = None if S.sample_weight is None else S.sample_weight[te]
            if batched:
                return batched_pairs(k, tr, te, sw_te, live)
            if yi is not None:  # one-vs-one: each class's fold statistics
                if partition:
                    moms = [complement_moments(a, b) for a, b in zip(total, test_mom[k])]
                else:
                    moms = _class_moments(U_all[tr], yi[tr], Y.shape[1], lw_tr)
            elif partition:
                mom_all = complement_moments(total, test_mom[k])
            else:
                mom_all = nys.moments(take_rows(Xs, tr), Y[tr], sample_weight=lw_tr).symmetrize()
            results = []
            for ji, joint in enumerate(S.joints):
                if not joint_mask[ji]:
                    continue
                full_width = joint or len(Xs) == v_in
                nys_j, Xj = (nys, Xs) if full_width else (small, Xs[:v_in])
                U_te = test_U[k] if full_width else test_U[k][:, :d_in]
                width = U_te.shape[1]
                if yi is None:
                    mom = mom_all if full_width else leading_moments(mom_all, d_in)
                    GW, b, basis, _ = paths(mom, nys_j, Xj, tr, Y[tr], width, live)
                    U = U_te if basis is None else U_te @ basis
                elif pairs_in_one_batch:  # the loss fits the fold's pairs in batches
                    yt = yi[tr]
                    keeps = [np.flatnonzero((yt == i) | (yt == j)) for i, j in S.pairs]
                    ys = [np.where(yt[r] == i, 1.0, -1.0) for r, (i, _) in zip(keeps, S.pairs)]
                    GW, b = engine.fold_row_subsets(
                        nys_j, U_all[tr, :width], keeps, ys, lw_tr, alphas[live], etas, K
                    )
                    U = U_te
                else:  # a problem per pair, its coefficients in the feature basis
                    cls = moms if full_width else [leading_moments(m, d_in) for m in moms]
                    GWs, bs = [], []
                    for i, j in S.pairs:
                        mom, keep = pair_moments(cls, i, j), (yi[tr] == i) | (yi[tr] == j)
                        y_pair = np.where(yi[tr][keep] == i, 1.0, -1.0)[:, None]
                        GW_p, b_p, basis, _ = paths(mom, nys_j, Xj, tr[keep], y_pair, width, live)
                        GWs.append(GW_p if basis is None else GW_p @ basis.T)
                        bs.append(b_p)
                    GW, b, U = np.concatenate(GWs, axis=1), np.concatenate(bs, axis=1), U_te
                sc = np.full((alphas.size, etas.size * K), np.nan)
                sc[live] = self._candidate_scores(
                    U, y_score[te], GW, scorer, b, sw_te, S.decode
                ).reshape(-1, etas.size * K)
                if kept is not None and not live.all():  # the keeper indexes every candidate
                    GW, b = _on_grid(GW, live, etas.size * K), _on_grid(b, live, etas.size * K)
                results.append(
                    (
                        ji,
                        sc.reshape(alphas.size, etas.size, K),
                        (ji, te, lambda c, U=U, GW=GW, b=b: U @ GW[c].T + b[c]),
                    )
                )
            return results

        def batched_pairs(
            k: int, tr: np.ndarray, te: np.ndarray, sw_te: Any, live: np.ndarray
        ) -> list[tuple]:
            """:func:`fold` by :meth:`Loss.subset_fold_outputs` (the ``alphas`` not
            ``live`` are not fitted: NaN scores)."""
            if yi is None:  # one-vs-rest: every target column on every training row
                subsets = [(np.arange(tr.size), np.asarray(Y[tr]))]
            else:
                yi_tr = yi[tr]
                subsets = [
                    (rows, np.where(yi_tr[rows] == i, 1.0, -1.0))
                    for i, j in S.pairs
                    for rows in [np.flatnonzero((yi_tr == i) | (yi_tr == j))]
                ]
            results = []
            for ji in map(int, np.flatnonzero(joint_mask)):
                n_views, width, gram = row_grams[ji]
                D = loss.subset_fold_outputs(
                    gram, tr, te, subsets, alphas[live], etas, n_views, width
                )
                D = D.reshape(-1, *D.shape[-2:])  # (n_cand, n_te, P)
                sc = np.full((alphas.size, etas.size * K), np.nan)
                sc[live] = self._output_scores(
                    np.moveaxis(D, 0, 1), y_score[te], scorer, sw_te, S.decode
                ).reshape(-1, etas.size * K)
                if kept is not None and not live.all():  # the keeper indexes every candidate
                    D = _on_grid(D, live, etas.size * K)
                results.append(
                    (ji, sc.reshape(alphas.size, etas.size, K), (ji, te, lambda c, D=D: D[c]))
                )
            return results

        row_grams: dict[int, tuple] = {}  # per joint-view candidate: map, width, Gram
        for ji in map(int, np.flatnonzero(joint_mask)) if batched else ():
            n_views = len(Xs) if S.joints[ji] or len(Xs) == v_in else v_in
            width = n_views * int(nys.n_landmarks_)
            if U_all is None:  # the screen's Gram matrix (every row a landmark)
                gram = grams.row_gram(slice(0, width), loss.fit_intercept)
            else:
                gram = loss.row_gram(U_all[:, :width])
            row_grams[ji] = (n_views, width, gram)
        # folds in parallel threads (n_jobs; BLAS is single-threaded inside the search);
        # Dask views keep one fold at a time (their work is already parallel), and so does
        # a loss whose solver is not thread-safe (the hinge loss: liblinear's random number
        # generator is process-wide, so threads would make its coordinate order, hence the
        # last digits, depend on scheduling)
        n_jobs = 1 if dask_input or not loss.thread_safe else self.n_jobs
        # beside earlier parts of the search (:meth:`_hopeless`): the folds in batches of
        # n_jobs, an alpha dropped once none of its candidates can win any more
        batch = len(splits) if self._to_beat is None else effective_n_jobs(n_jobs)
        order = self._folds_in_order(len(splits))
        live = np.ones(alphas.size, dtype=bool)
        for start in range(0, len(splits), batch):
            ks = order[start : start + batch]
            per_fold = Parallel(n_jobs=n_jobs, prefer="threads")(
                delayed(fold)(k, *splits[k], live.copy()) for k in ks
            )
            for k, results in zip(ks, per_fold):
                for ji, sc, item in results:
                    out.put(sc, axes=PATH_AXES, joint_view=ji, folds=k)
                    if kept is not None:
                        kept.append((k, item))
            # the folds scored so far: (n_joint, n_alpha, n_eta, K, folds)
            ran = np.sort(order[: start + len(ks)])
            done = out.take(joint_view=joint_mask, folds=ran)
            others = tuple(i for i, name in enumerate(out.grid.names) if name != "alpha")
            live &= ~self._hopeless(S, done, ran).all(axis=others)
            if not live.any():
                self._say(f"abandoned the rest of the folds after {start + len(ks)}")
                break
        if kept is not None:  # held-out decision values of this block's best candidate
            kept.sort(key=lambda entry: entry[0])  # in fold order, whatever order they ran in

            def held_out(c: int) -> list:
                at = out.position(c)  # a fold's outputs index its candidates in path order
                path_index = _path_index(at, (alphas.size, etas.size, K))
                return [
                    (te, outputs(path_index))
                    for _, (ji, te, outputs) in kept
                    if ji == at["joint_view"]
                ]

            self._oof.offer(out.values.reshape(-1, len(splits)), held_out)
        return out

    # ------------------------------------------------------------------ full-kernel CV
    def _score_full(self, S: _CVSearch, kernel_params: list, joint: bool = False) -> ScoreGrid:
        """Full-kernel mode: per fold, the kernels are built once and every candidate
        runs the reference solver on them (its path scored at every iteration). The
        scores of one (joint view, bandwidth factor), on the other axes (by name)."""
        Xs, Y, y_score, splits = S.Xs[: S.v_in], S.Y, S.y_score, S.splits
        alphas, etas, K, scorer = S.alphas, S.etas, S.K, S.scorer
        out = ScoreGrid.empty(S.grid.without("joint_view", "bandwidth_factor"), len(splits))
        shape = (alphas.size, etas.size, K)
        classes = getattr(self, "classes_", None)
        kept: list | None = [] if getattr(self, "_oof", None) is not None else None
        for k, (tr, te) in enumerate(splits):
            Xtr, Xte = fold_views(Xs, tr, te, self.kernel)
            if joint:
                Xte = joint_views(Xte, self.kernel)
            est = self._base_estimator().set_params(
                kernel_params=kernel_params, n_landmarks=None, views=None, joint_view=joint
            )
            engine = est._cv_engine()  # the estimator's one seam, fitted on this fold
            engine.check_params()
            lw_tr = None if S.loss_weight is None else S.loss_weight[tr]  # the fold's rows'
            problem = engine.fold_problem(Xtr, Y[tr], lw_tr)
            loss = engine.loss
            # the problems solved: all the rows (one-vs-rest), or one per pair on its rows
            # (one-vs-one: the kernels' sub-blocks), each with its centred form (offsets)
            pairs: list = [(problem, None)]
            if S.pairs:
                yi = np.argmax(np.asarray(Y[tr]), axis=1)
                pairs = [pair_problem(problem, yi, i, j) for i, j in S.pairs]
            subs = [(sub, rows, loss.with_intercept(sub)) for sub, rows in pairs]
            sw_te = None if S.sample_weight is None else S.sample_weight[te]
            if kept is not None:
                kept.append((te, np.zeros((alphas.size, etas.size, K, te.size, S.n_outputs))))
            # every (alpha, eta) of a problem in one batch (CVEngine.solve_path)
            grid = [(a, e if self._learned() else est.eta) for a in alphas for e in etas]
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
                    score = _score_outputs(S.decode(D), y_score[te], classes, scorer, sw_te)
                    out.put(score, alpha=ai, eta=ei, max_iter=it, folds=k)
                    if kept is not None:
                        kept[-1][1][ai, ei, it] = D
        if kept is not None:
            self._oof.offer(
                out.values.reshape(-1, len(splits)),
                lambda c: [
                    (te, D.reshape(-1, *D.shape[-2:])[_path_index(out.position(c), shape)])
                    for te, D in kept
                ],
            )
        return out

"""The fold-scoring object of a cross-validated search (:class:`FoldScorer`) and the
helpers its steps share.

A :class:`FoldScorer` is built by the CV estimator for one run of its search
(``_MVMLCVBase._fold_scorer``) from the estimator's parameters and the run's state (the
searched kernel, the out-of-fold keeper, the earlier parts' best score, the screen cache):
it holds no estimator. The steps that score the candidates take it as their first
argument, one concern a module: which step runs (:func:`~._steps.score_candidates`), the
leave-one-out screen (:mod:`._folds_screen`), the block Nystrom folds
(:mod:`._folds_nystrom`), the joint-only candidate (:mod:`._folds_joint_only`), the
full-kernel folds (:mod:`._folds_full`); the held-out scores are in :mod:`._scoring`. The
searched estimator is reached only through its seam, ``estimator._cv_engine()``
(:class:`~mvkernels.mvml._cv_engine.CVEngine`, :meth:`FoldScorer.engine`); the scores are
written by axis name (:class:`~._grid.ScoreGrid`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._kernel_families import names_precomputed
from ..._validation import take_rows
from ...nystrom import BlockNystrom, FeatureMoments
from ...nystrom._map import fit_validated_views, weight_missing_model
from .._base import landmarks_of_rows
from .._screen import MISSING_FINALISTS_FACTOR
from ._grid import LossSearch, _CVSearch
from ._scoring import _score_outputs

__all__ = []

#: the largest score of one fold with the default scoring (accuracy, R^2)
SCORE_CEILING = 1.0

#: the axes of the candidates of one fold's paths, in the order of their scores and
#: outputs (:meth:`~mvkernels.mvml._losses.Loss.fold_paths`: ``(n_alpha, n_eta, K, ...)``)
PATH_AXES = ("alpha", "eta", "max_iter")


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


def hopeless(
    to_beat: float | None,
    n_splits: int,
    scorer: Any,
    scores: np.ndarray,
    folds: np.ndarray | None = None,
) -> np.ndarray:
    """Which candidates can no longer be chosen, from their scores ``scores`` (..., k)
    on the folds ``folds`` (their indices, increasing; None: the first ``k``) of
    ``n_splits`` (NaN: not scored, hence never chosen).

    Beside earlier parts of the search (``to_beat``, their best mean score; ties go to
    them; None: no earlier part), a candidate is chosen only if its mean score over the
    ``n_splits`` folds exceeds ``to_beat``. With the default scores (``scorer`` None:
    accuracy, R^2, at most 1 a fold; a ``scoring`` has no known bound, so nothing is
    abandoned) its mean is at most the mean of its ``k`` scores and ``n_splits - k``
    scores of 1 on the other folds; where that is not above ``to_beat``, the candidate is
    hopeless and its remaining folds need not be fitted. That bound is averaged as
    ``cv_results_``'s mean is (NumPy's mean over the folds in order): a rounded sum is
    nondecreasing in each term, so no scores of the folds left give a larger rounded
    mean, and a candidate that could at best tie ``to_beat`` is abandoned (the tie would
    go to the earlier part). Every candidate is hopeless when ``to_beat`` is 1 already.
    The choice is the one of the full search.

    Examples
    --------
    >>> import numpy as np
    >>> hopeless(0.9, 2, None, np.array([[0.8], [0.9]])).tolist()  # at best 0.9, 0.95
    [True, False]
    """
    if to_beat is None or scorer is not None:
        return np.zeros(scores.shape[:-1], dtype=bool)
    if to_beat >= SCORE_CEILING:
        return np.ones(scores.shape[:-1], dtype=bool)
    k = scores.shape[-1]
    at = np.arange(k) if folds is None else np.asarray(folds)
    full = np.full((*scores.shape[:-1], n_splits), SCORE_CEILING)
    full[..., at] = scores
    with np.errstate(invalid="ignore"):
        return ~(full.mean(axis=-1) > to_beat)


def _silent(msg: str) -> None:
    """The progress messages of a search that is not verbose."""


def progress_printer(name: str, verbose: int) -> Callable[[str], None]:
    """Prints a search's progress messages, prefixed by the estimator's ``name``, when
    ``verbose``; else discards them."""
    if not verbose:
        return _silent

    def say(msg: str) -> None:
        print(f"[{name}] {msg}")

    return say


@dataclass
class FoldScorer:
    """What the scoring steps of one run of a search read: the CV estimator's
    parameters, the searched estimator's class and parameters (its seam,
    :meth:`engine`), and the run's state. Built by ``_MVMLCVBase._fold_scorer``; holds
    no estimator.

    Attributes
    ----------
    search, n_finalists, fit_intercept, landmarks, kernel, eig_floor, chunk_size, \
random_state, n_jobs
        The CV estimator's parameters of those names (``kernel``: as given).
    search_kernel : kernel spec
        The kernel of the searched views (with a joint-view candidate, its kernel last).
    classes : ndarray or None
        The classes (classifiers), None for a regressor.
    loss : str
        The loss of this run (a part's, under ``loss="auto"``).
    loss_search : LossSearch
        The default grids and screen of :attr:`loss`.
    learned : bool
        Whether the metric is learned (an ``eta`` axis).
    estimator_class, estimator_params
        The estimator searched: ``estimator_class(**estimator_params)``.
    rows, n_in
        The rows of the input kept by the search (None: all) and their count (the
        landmark indices name rows of the input).
    oof : BestOutOfFold or None
        The keeper of the best candidate's held-out decision values (classifiers with
        ``refit``), offered each block of scores.
    to_beat : float or None
        The best mean score of the earlier parts of a search along the part axes (None:
        none, or an axis that does not abandon): a candidate is chosen only if it scores
        more (:meth:`hopeless`).
    fold_order : ndarray or None
        Beside earlier parts: the order the folds are run in, the earlier parts' best
        candidate's worst fold first (None: in order, :meth:`folds_in_order`).
    screen_cache : dict or None
        The screens shared by the parts on the same views (None: not shared), keyed by
        :attr:`screen_key`.
    screen_key : tuple
        This run's values of the part axes that change the screen
        (:attr:`~._grid.PartAxis.changes_screen`).
    say : callable
        Prints a progress message (verbose estimators).
    """

    search: str
    n_finalists: int | None
    fit_intercept: bool
    landmarks: Any
    kernel: Any
    search_kernel: Any
    eig_floor: float
    chunk_size: int | None
    random_state: Any
    n_jobs: int | None
    classes: np.ndarray | None
    loss: str
    loss_search: LossSearch
    learned: bool
    estimator_class: type
    estimator_params: dict[str, Any]
    rows: np.ndarray | None = None
    n_in: int | None = None
    oof: Any = None
    to_beat: float | None = None
    fold_order: np.ndarray | None = None
    screen_cache: dict | None = None
    screen_key: tuple = ()
    say: Callable[[str], None] = _silent

    def estimator(self) -> Any:
        """A new (unfitted) estimator of the search."""
        return self.estimator_class(**self.estimator_params)

    def engine(self) -> Any:
        """The searched estimator's seam (:class:`~mvkernels.mvml._cv_engine.CVEngine`)."""
        return self.estimator()._cv_engine()

    def hopeless(
        self, S: _CVSearch, scores: np.ndarray, folds: np.ndarray | None = None
    ) -> np.ndarray:
        """:func:`hopeless` beside the earlier parts (:attr:`to_beat`) of ``S``'s folds."""
        return hopeless(self.to_beat, S.n_splits, S.scorer, scores, folds)

    def folds_in_order(self, n_splits: int) -> list[int]:
        """The order the folds of a search beside earlier parts are run in
        (:attr:`fold_order`; None: in order). A fold's scores do not depend on the folds
        run before it (its statistics are its own, and the solvers that draw random
        numbers seed them per problem: the hinge loss's liblinear by ``solver_rng``), so
        every score is the same in any order; only the folds at which a hopeless
        candidate stops move."""
        order = self.fold_order
        return list(range(n_splits)) if order is None else [int(k) for k in order]

    def finalist_count(self, S: _CVSearch) -> int:
        """Pairs kept by the screen: ``n_finalists`` (None: the loss's), times
        ``MISSING_FINALISTS_FACTOR`` when training views have missing rows (:mod:`._screen`)."""
        k = self.loss_search.n_finalists if self.n_finalists is None else self.n_finalists
        return k * (MISSING_FINALISTS_FACTOR if S.missing else 1)

    def loo_score(self, D: np.ndarray, S: _CVSearch) -> float:
        """Score of the leave-one-out outputs ``D`` (n, T) of all the rows (-inf when a
        row has none)."""
        if not np.all(np.isfinite(D)):
            return -np.inf
        return _score_outputs(D, S.y_score, self.classes, S.scorer, S.sample_weight)

    def fit_map(
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
            kernel=self.search_kernel if kernel is None else kernel,
            kernel_params=kernel_params,
            n_landmarks=S.n_landmarks if n_landmarks is None else n_landmarks,
            landmarks=landmarks_of_rows(self.landmarks, self.rows, self.n_in),
            eig_floor=self.eig_floor,
            chunk_size=self.chunk_size,
            random_state=self.random_state,
        )
        fit_validated_views(nys, S.Xs if Xs is None else Xs, defer_normalizers=defer)
        if S.missing and Xs is None and S.loss_weight is not None:
            # missing views: the completion statistics weighted as the loss (as the refit's)
            weight_missing_model(nys, S.Xs, S.loss_weight)
        return nys

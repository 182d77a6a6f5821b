"""The data of a cross-validated search (:class:`_SearchData`): the validated views, the
encoded targets, the folds, the scorer, the learned column scales, the rows' weights and,
for large data, the subsample searched (:func:`search_data`, :func:`weighted_data`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import is_classifier
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils import check_random_state
from sklearn.utils.validation import column_or_1d

from ..._arrays import MIN_OBSERVED_ROWS
from ..._kernel_families import names_precomputed
from ..._validation import check_views, observed_mask, take_rows
from ..._weights import class_weight_of_rows
from ...kernels import subsample_indices
from ...nystrom._landmarks import is_index_landmarks
from .._base import refuse_dropped_rows_of_kernels, weighted_input
from .._data_part import data_part
from .._relevance import RELEVANCE_MAX_ROWS, resolve_feature_relevance_rows, scale_views

__all__ = []


@dataclass(frozen=True)
class _SearchData:
    """The validated training data of one cross-validated search and its folds (shared by
    the searches of every loss)."""

    Xs: list
    y: Any
    mask: np.ndarray | None
    Y: Any
    y_score: np.ndarray
    splits: list
    scorer: Any
    #: the input views (``Xs`` are these with their columns scaled by ``relevance``)
    Xs_input: list
    relevance: list | None
    #: the rows' frequency weights and loss weights (times class weights; None: 1)
    sample_weight: np.ndarray | None = None
    loss_weight: np.ndarray | None = None
    #: with sample_weight: the views, labels and weights as given (the refit's input)
    given: tuple | None = None
    #: a search on a subsample of the rows (``max_search_rows``): the views and labels of
    #: all the rows, the refit's input
    full: tuple | None = None
    #: the rows of the input the search keeps (None: all; sample weights drop those of
    #: zero weight) and the number of rows the folds are cut from (the landmark indices
    #: name rows of the input)
    rows: np.ndarray | None = None
    n_in: int | None = None


#: rows above which ``max_search_rows="auto"`` searches a subsample of this many rows
SEARCH_MAX_ROWS = 20_000
#: complete rows from which ``feature_relevance="auto"`` searches the learned relevance:
#: its full subsample (2 x RELEVANCE_MAX_ROWS) is then at most half the rows
RELEVANCE_MIN_ROWS = 4 * RELEVANCE_MAX_ROWS


def search_subsample(n: int, size: int, labels: np.ndarray | None, random_state: Any) -> np.ndarray:
    """Sorted indices of ``size`` of ``n`` rows drawn uniformly, stratified by ``labels``
    when given (each class its share of ``size``, largest remainders first, at least 2
    rows of a class that has them, taken from the largest classes' shares).

    Parameters
    ----------
    n : int
        Number of rows.
    size : int
        Number of rows to draw (``< n``).
    labels : ndarray of shape (n,) or None
        Class labels (classifiers), None for a uniform draw.
    random_state : int, RandomState or None

    Returns
    -------
    ndarray of int

    Examples
    --------
    >>> import numpy as np
    >>> y = np.repeat([0, 1, 2], [600, 300, 100])
    >>> rows = search_subsample(1000, 100, y, random_state=0)
    >>> np.bincount(y[rows]).tolist()
    [60, 30, 10]
    """
    rng = check_random_state(random_state)
    if labels is None:
        return subsample_indices(n, size, rng)
    _, yi, counts = np.unique(labels, return_inverse=True, return_counts=True)
    quota = counts * (size / n)
    take = np.floor(quota).astype(int)
    take[np.argsort(take - quota, kind="stable")[: size - int(take.sum())]] += 1
    take = np.minimum(np.maximum(take, np.minimum(counts, 2)), counts)
    for _ in range(int(take.sum()) - size):  # the rows added to small classes: from the largest
        take[np.argmax(take)] -= 1
    order = np.argsort(yi, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)])
    rows = [
        order[starts[c] : starts[c + 1]][subsample_indices(int(counts[c]), int(take[c]), rng)]
        for c in range(counts.size)
    ]
    return np.sort(np.concatenate(rows))


def _held_out_elsewhere(splits: list, rows: np.ndarray, n: int) -> list:
    """The folds with ``rows`` (those a learned relevance was fitted on) moved from every
    held-out part to its training part: each fold scores the other rows only. The folds
    as given when a held-out part would be left empty."""
    inside = np.zeros(n, dtype=bool)
    inside[rows] = True
    moved = [(np.sort(np.concatenate([tr, te[inside[te]]])), te[~inside[te]]) for tr, te in splits]
    return splits if any(te.size == 0 for _, te in moved) else moved


def search_data(est: Any, X: Any, y: Any) -> _SearchData:
    """The search's data of the CV estimator ``est`` without weights (every row kept,
    or a subsample of them searched): the validated views, the encoded targets
    (``est._encode``), the folds, the scorer and the learned column scales."""
    Xs = check_views(X, views=est.views, ensure_min_samples=2, allow_missing=True)
    n = Xs[0].shape[0]
    mask = observed_mask(Xs, min_observed=MIN_OBSERVED_ROWS)  # Dask: one pass
    Y, y_split, y_score = est._encode(y)
    if Y.shape[0] != n:
        raise ValueError(f"y has {Y.shape[0]} samples but the views have {n}")
    # large data: the search on a (stratified) subsample, the refit on every row
    full = None
    size = search_size(est, Xs, mask, n)
    if size is not None:
        rows = search_subsample(n, size, y_split, est.random_state)
        full = (Xs, y)
        Xs, y, n = take_rows(Xs, rows), np.asarray(y)[rows], size
        Y, y_score = Y[rows], y_score[rows]
        y_split = None if y_split is None else y_split[rows]
    splitter = check_cv(est.cv, y_split, classifier=is_classifier(est))
    splits = [
        (np.asarray(tr), np.asarray(te)) for tr, te in splitter.split(np.zeros((n, 1)), y_split)
    ]
    scorer = None if est.scoring is None else check_scoring(est, scoring=est.scoring)
    # the column scales, learned once (not per fold) on a subsample of at most half
    # the rows, before the search of every loss; the folds score the other rows only
    # (the subsample trains every fold), so that the scores of the scaled views are
    # not those of the rows the scales were fitted to
    spec = est.feature_relevance
    n_complete = n if mask is None else int(mask.all(axis=1).sum())
    if isinstance(spec, str) and spec == "auto":  # learned where there are columns
        few = n_complete < RELEVANCE_MIN_ROWS  # and rows to learn on and to score
        spec = "none" if few or names_precomputed(est.kernel) else "ard"
    relevance, learned_rows = resolve_feature_relevance_rows(
        spec,
        Xs,
        Y,
        mask,
        est.kernel,
        est.random_state,
        max_rows=max(1, min(RELEVANCE_MAX_ROWS, n_complete // 4)),
    )
    flat = all(np.all(r == 1.0) for r in relevance or ())
    if not flat:
        splits = _held_out_elsewhere(splits, learned_rows, n)
    return _SearchData(
        scale_views(Xs, relevance),
        y,
        mask,
        Y,
        y_score,
        splits,
        scorer,
        Xs_input=Xs,
        relevance=relevance,
        full=full,
        n_in=n,
    )


def search_size(est: Any, Xs: Any, mask: np.ndarray | None, n: int) -> int | None:
    """The rows of the search's subsample (``max_search_rows``), None to search every
    row: in-memory complete views, column inputs (no precomputed kernel) and no
    landmark indices (they name rows of all the data)."""
    limit = est.max_search_rows
    if isinstance(limit, str):  # "auto"
        limit = SEARCH_MAX_ROWS
    if (
        limit is None
        or n <= limit
        or mask is not None
        or not data_part(Xs).in_memory
        or names_precomputed(est.kernel)
        or is_index_landmarks(est.landmarks)
    ):
        return None
    return int(limit)


def weighted_data(est: Any, X: Any, y: Any, sample_weight: Any) -> _SearchData:
    """The search's data of the CV estimator ``est`` with ``sample_weight`` or
    ``class_weight`` (see its ``fit``):
    the rows of positive weight, their weights and the folds renumbered among them;
    either loss, no learned column scales."""
    # Dask views stay lazy (the rows of zero weight dropped by a lazy row selection)
    Xs_in, y_in, w_in, rows = weighted_input(X, y, sample_weight, est.views)
    n = Xs_in[0].shape[0]
    y_split = column_or_1d(y_in) if is_classifier(est) else None
    splitter = check_cv(est.cv, y_split, classifier=is_classifier(est))
    splits = [
        (np.asarray(tr), np.asarray(te)) for tr, te in splitter.split(np.zeros((n, 1)), y_split)
    ]
    Xs, y_kept, w = Xs_in, y_in, w_in
    if w is not None and rows is None and (w == 1.0).all():
        w = None  # unit weights: the unweighted statistics
    labels_seen = np.unique(column_or_1d(y_in)) if is_classifier(est) else None
    if rows is not None:
        Xs, y_kept, w = take_rows(Xs_in, rows), y_in[rows], w_in[rows]
    # missing views: the observed rows of each view among the rows kept
    mask = observed_mask(Xs, min_observed=MIN_OBSERVED_ROWS)
    Y, _, y_score = est._encode(y_kept)  # classifiers: at least 2 classes kept
    if rows is not None:
        refuse_dropped_rows_of_kernels(est.kernel)
        new = np.full(n, -1)
        new[rows] = np.arange(rows.size)
        splits = [(new[tr][new[tr] >= 0], new[te][new[te] >= 0]) for tr, te in splits]
        if any(tr.size < 2 or te.size == 0 for tr, te in splits):
            raise ValueError(
                "a fold has no held-out row or fewer than 2 training rows of positive sample_weight"
            )
    lw = w
    cw = None
    if is_classifier(est):
        yi = np.searchsorted(est.classes_, column_or_1d(y_kept))
        cw = class_weight_of_rows(
            getattr(est, "class_weight", None), est.classes_, yi, w, labels_seen
        )
    if cw is not None and not (cw == 1.0).all():
        lw = cw if w is None else cw * w
    scorer = None if est.scoring is None else check_scoring(est, scoring=est.scoring)
    if not (isinstance(est.feature_relevance, str) and est.feature_relevance in ("none", "auto")):
        raise ValueError(
            f"{type(est).__name__}: feature_relevance with sample_weight or class_weight "
            "is not supported yet; use feature_relevance='none' (or 'auto', which then "
            "searches 'none' alone)"
        )
    return _SearchData(
        Xs,
        y_kept,
        mask,
        Y,
        y_score,
        splits,
        scorer,
        Xs_input=Xs,
        relevance=None,
        sample_weight=w,
        loss_weight=lw,
        given=(Xs_in, y_in, w_in),
        rows=rows,
        n_in=n,
    )

"""The search grid of the MVML CV estimators: default grids, parameter constraints, the
named axes (:class:`Axis`, :class:`PartAxis`), the scores indexed by axis name
(:class:`ScoreGrid`) and the search's declaration (:class:`_CVSearch`)."""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from numbers import Integral
from operator import itemgetter
from typing import Any, ClassVar

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._bandwidth import scale_bandwidths
from .._base import mvml_constraints
from .._joint import JOINT_ONLY
from .._multiclass import ovo_vote_scores
from .._relevance import FEATURE_RELEVANCE
from .._screen import N_FINALISTS

__all__ = [
    "Axis",
    "SearchGrid",
    "ScoreGrid",
    "ScreenResult",
    "LossSearch",
    "LOSS_SEARCHES",
    "PartAxis",
    "PART_AXES",
    "part_axis",
    "union_results",
    "RELEVANCE_SEARCH",
    "DEFAULT_ALPHAS",
    "DEFAULT_ETAS",
    "DEFAULT_BANDWIDTH_FACTORS",
    "SVC_DEFAULT_ALPHAS",
    "SVC_DEFAULT_ETAS",
    "SVC_DEFAULT_BANDWIDTH_FACTORS",
]

#: default ``alpha`` grid (the paper's lambda, searched in [1e-8, 10])
DEFAULT_ALPHAS = tuple(float(a) for a in np.logspace(-4, 1, 6))
#: default ``eta`` grid (the paper's range is [1e-3, 100]; above ~10 the step cap
#: ``mu < 0.499 / eta`` already collapses the metric to its rank-one part in a few steps)
DEFAULT_ETAS = tuple(float(e) for e in np.logspace(-3, 1, 5))
#: default bandwidth factors on the per-view mean-distance heuristic
DEFAULT_BANDWIDTH_FACTORS = (1.0, 2.0, 4.0, 8.0, 16.0)
#: MVMLSVCCV's defaults (every candidate runs the dual solver: a grid sized for it)
SVC_DEFAULT_ALPHAS = (1e-5, 1e-4, 1e-3)
SVC_DEFAULT_ETAS = (1e-2, 1.0)
SVC_DEFAULT_BANDWIDTH_FACTORS = (2.0, 8.0)
#: the values of the relevance axis of ``feature_relevance="auto"`` (ties go to the first)
RELEVANCE_SEARCH = ("none", "ard")
#: the longest path of the hinge-loss candidates of a search over both losses
HINGE_MAX_ITER = 2


@dataclass(frozen=True)
class LossSearch:
    """How the search runs for one loss: its default grids and its screen.

    Attributes
    ----------
    alphas, etas, bandwidth_factors : tuple
        The default grids (used where the estimator's grid parameter is None).
    n_finalists : int
        ``(joint view, bandwidth factor)`` pairs cross-validated after the screen.
    screen_alphas : tuple or None
        The ``alpha`` values of the leave-one-out screen. None: the searched ``alphas``,
        each finalist then cross-validated at its screening-best ``alpha`` and the grid
        neighbours; a tuple: the finalists keep every ``alpha`` (for a loss whose
        ``alpha`` is on another scale than the screen's ridge).
    screen_tiebreak : bool
        Ties of the screening score broken by the leave-one-out squared error (True), or
        every pair tied with the last finalist cross-validated too (False).
    joint_only : bool
        ``joint_view="auto"`` also searches the joint view alone (kernel ridge on the
        concatenation).
    max_iter : int or None
        Beside another loss (``loss="auto"``): the longest path of this loss's candidates
        (None: the estimator's ``max_iter``).
    auto_joint_view : bool or str
        Beside another loss: what ``joint_view="auto"`` means for this loss's candidates.
    """

    alphas: tuple
    etas: tuple
    bandwidth_factors: tuple
    n_finalists: int = N_FINALISTS
    screen_alphas: tuple | None = None
    screen_tiebreak: bool = True
    joint_only: bool = True
    max_iter: int | None = None
    auto_joint_view: bool | str = "auto"

    def beside(self, est: Any) -> dict[str, Any]:
        """The parameters of ``est``'s search of this loss beside its own loss (a part of
        ``loss="auto"``): the path capped at :attr:`max_iter`, and ``joint_view="auto"``
        read as :attr:`auto_joint_view`."""
        params: dict[str, Any] = {}
        if self.max_iter is not None:
            params["max_iter"] = min(est.max_iter, self.max_iter)
        if _is_auto(est.joint_view):
            params["joint_view"] = self.auto_joint_view
        return params


#: The search of each loss. The hinge loss: every candidate runs the dual solver (no
#: sufficient statistics to share), so its grid is smaller. Its screen chooses the
#: bandwidth only: one finalist pair, scored by the ridge's leave-one-out error over the
#: square loss's alpha grid, then cross-validated at every searched alpha. The ridge's
#: leave-one-out error is a weaker guide between bandwidths tied on its accuracy for the
#: hinge loss, so tied bandwidths are all cross-validated (on uWave the tie-break picked a
#: bandwidth 0.6 points worse in test accuracy). No joint-only candidate: no shared
#: factorisation runs it cheaply. Beside the square loss its candidates are those of
#: MVMLSVCCV's defaults: paths of 1 and 2 outer iterations, no joint view unless
#: ``joint_view=True``.
LOSS_SEARCHES: dict[str, LossSearch] = {
    "squared": LossSearch(DEFAULT_ALPHAS, DEFAULT_ETAS, DEFAULT_BANDWIDTH_FACTORS),
    "hinge": LossSearch(
        SVC_DEFAULT_ALPHAS,
        SVC_DEFAULT_ETAS,
        SVC_DEFAULT_BANDWIDTH_FACTORS,
        n_finalists=1,
        screen_alphas=DEFAULT_ALPHAS,
        screen_tiebreak=False,
        joint_only=False,
        max_iter=HINGE_MAX_ITER,
        auto_joint_view=False,
    ),
}


@dataclass(frozen=True)
class PartAxis:
    """An axis of the search whose values are whole searches, each with its own grid, run
    on the same folds and joined by :func:`union_results` (the loss: each loss has its own
    ``alpha`` scale; the multi-class decomposition: its own problems per fold; the
    feature relevance: its own views).

    Attributes
    ----------
    name : str
        The CV estimator's parameter, its key in ``best_params_`` and its
        ``param_<name>`` column (reported when the estimator does not search the value
        itself, e.g. under ``"auto"``).
    auto : callable
        The values ``"auto"`` searches for a CV estimator (after its labels are encoded
        and its search data prepared), in the order ties are broken.
    own : callable
        The value a CV estimator searches itself (other values: a search apart each).
    abandon : bool
        Each part's candidates are abandoned once they cannot beat the best mean score
        of the earlier parts (ties go to those): the folds a candidate has left are not
        fitted once even scores of 1 on them would not lift its mean above that best
        (default scoring only; :func:`~._folds.hopeless`). The choice is the
        full search's; ``cv_results_`` has NaN scores on the folds a candidate was not
        fitted on (every fold when an earlier part scored 1). A part's folds are run
        hardest first: in the order of the per-fold scores of the earlier parts' best
        candidate (:attr:`~._folds.FoldScorer.fold_order`). With several part axes,
        every part after the first abandons when one of them does.
    data : callable or None
        ``data(value, data)``: the search data of a part from the search's (the
        relevance: the views as given for ``"none"``); None: the same data.
    alias : callable or None
        ``alias(value, data)``: the value whose search is this value's (its candidates
        and scores copied, not searched again: a flat learned relevance scales nothing);
        None: each value its own search.
    reported_single : bool
        Whether ``"auto"`` reports the axis when it searches a single value (the
        decomposition with two classes: yes; the relevance where nothing is learned: no).
    configure : callable or None
        ``configure(value, est)``: the parameters of ``est``'s part searching ``value``
        besides the axis's own parameter (set after it; the loss: its
        :meth:`LossSearch.beside`); None: the axis's parameter alone.
    to_estimator : bool
        Whether the value is also a parameter of the estimator searched (the
        decomposition: ``MVMLClassifier(multi_class=...)``, the intercept); False: the CV
        estimator's alone (the loss picks the estimator's class, the relevance the part's
        views).
    first : callable or None
        ``first(est)``: the value of a search under ``"auto"`` before it is split in
        parts (the decomposition: ``"ovr"``); None: the first value ``auto`` gives.
    changes_screen : bool
        Whether the leave-one-out screen of a part depends on the value (the loss: its
        screen's ``alpha`` grid and tie-break, :class:`LossSearch`; the relevance: the
        part's views; the intercept: ridge with or without the offset). The parts on the
        same views share one screen per combination of the values of these axes
        (:attr:`~._folds.FoldScorer.screen_key`); the other axes' parts (the
        decomposition) read the screen of the first (:func:`~._folds_screen.screened_search`).

    A part reads its values by name (``_MVMLCVBase._current``); ``cv_results_``'s
    ``param_<name>`` column, ``best_params_``, the tie order (the first value first) and
    the abandoning follow from this declaration: a new part axis is one entry of
    :data:`PART_AXES` (``tests/mvml/cv/test_cv_grid.py`` declares one).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> est = SimpleNamespace(multi_class="auto", classes_=[0, 1, 2])
    >>> part_axis("multi_class").searched(est)
    ('ovr', 'ovo')
    """

    name: str
    auto: Callable[[Any], tuple]
    own: Callable[[Any], Any]
    abandon: bool = False
    data: Callable[[Any, Any], Any] | None = None
    alias: Callable[[Any, Any], Any] | None = None
    reported_single: bool = True
    configure: Callable[[Any, Any], dict[str, Any]] | None = None
    to_estimator: bool = False
    first: Callable[[Any], Any] | None = None
    changes_screen: bool = False

    def searched(self, est: Any) -> tuple:
        """The values of this axis that ``est`` searches (none: it has no such parameter)."""
        if not hasattr(est, self.name):
            return ()
        value = getattr(est, self.name)
        return tuple(self.auto(est)) if _is_auto(value) else (value,)

    def reported(self, est: Any) -> bool:
        """Whether ``est``'s search reports the axis (``"auto"``, or a value searched apart)."""
        values = self.searched(est)
        if not values:
            return False
        if _is_auto(getattr(est, self.name)):
            return len(values) > 1 or self.reported_single
        return values != (self.own(est),)

    def unsplit(self, est: Any) -> Any:
        """The value of ``est``'s search before it is split in parts: its parameter, or
        under ``"auto"`` :attr:`first` (None: ``est`` has no such parameter)."""
        if not hasattr(est, self.name):
            return None
        value = getattr(est, self.name)
        if not _is_auto(value):
            return value
        return self.first(est) if self.first is not None else self.auto(est)[0]


def _is_auto(value: Any) -> bool:
    return isinstance(value, str) and value == "auto"


def _default(est: Any, name: str) -> Any:
    """The default of ``est``'s parameter ``name`` (its class's ``__init__`` signature)."""
    return inspect.signature(type(est)).parameters[name].default


def _flat(relevance: list | None) -> bool:
    """Whether learned column scales are all ones (they scale nothing)."""
    return all(np.all(r == 1.0) for r in relevance or ())


#: The axes whose values are whole searches, in the order of their product (ties go to
#: the first value of the first axis): the feature relevance
#: (``feature_relevance="auto"``: the views as given, then scaled by the column scales
#: learned before the search, when it learned any; both on the same folds, those that
#: score only rows the scales were not learned on), the loss
#: (``MVMLClassifierCV(loss="auto")``: the class's own loss first), the multi-class
#: decomposition (``multi_class="auto"``: one-vs-rest first; with two classes one-vs-one
#: is the same model, so only "ovr") and the intercept (``fit_intercept="auto"``: the
#: class's default first, False for the classifiers, True for the regressor; the screen
#: reads it, and it is the searched estimator's parameter too). All abandon
#: (``abandon``): a later part's candidates (the learned relevance's, the hinge loss's,
#: one-vs-one's, the other intercept's) stop where they can no longer beat the earlier
#: parts' best (the same choice; ``docs/mvml.md``, "The loss is a search axis too").
PART_AXES: tuple[PartAxis, ...] = (
    PartAxis(
        "feature_relevance",
        auto=lambda est: ("none",) if est.feature_relevance_ is None else RELEVANCE_SEARCH,
        own=lambda est: est.feature_relevance,
        abandon=True,
        data=lambda value, data: (
            replace(data, Xs=data.Xs_input, relevance=None) if value == "none" else data
        ),
        alias=lambda value, data: "none" if value == "ard" and _flat(data.relevance) else value,
        reported_single=False,
        changes_screen=True,
    ),
    PartAxis(
        "loss",
        auto=lambda est: tuple(sorted(est._base_classes, key=lambda k: k != est._native_loss)),
        own=lambda est: est._native_loss,
        abandon=True,
        configure=lambda loss, est: (
            {} if loss == est._native_loss else LOSS_SEARCHES[loss].beside(est)
        ),
        changes_screen=True,
    ),
    PartAxis(
        "multi_class",
        auto=lambda est: ("ovr", "ovo") if len(est.classes_) > 2 else ("ovr",),
        own=lambda est: est.multi_class,
        abandon=True,
        to_estimator=True,
        first=lambda est: "ovr",
    ),
    PartAxis(
        "fit_intercept",
        auto=lambda est: (_default(est, "fit_intercept"), not _default(est, "fit_intercept")),
        own=lambda est: est.fit_intercept,
        abandon=True,
        to_estimator=True,
        changes_screen=True,
    ),
)


def part_axis(name: str) -> PartAxis:
    """The part axis ``name`` of :data:`PART_AXES`."""
    return next(a for a in PART_AXES if a.name == name)


def _cv_constraints() -> dict:
    base = mvml_constraints()
    for name in ("alpha", "eta", "tol", "solver"):
        base.pop(name)
    base.update(
        {
            "joint_view": ["boolean", StrOptions({"auto"})],
            "alphas": ["array-like", None],
            "etas": ["array-like", None],
            "bandwidth_factors": ["array-like", None],
            "cv": ["cv_object"],
            "scoring": [str, callable, None],
            "n_jobs": [Integral, None],
            "refit": ["boolean"],
            "verbose": ["verbose"],
            "search": [StrOptions({"screen", "exhaustive"})],
            "n_finalists": [Interval(Integral, 1, None, closed="left"), None],
            "missing_views": [StrOptions({"reduced", "complete"})],
            "loss": [StrOptions({"squared"})],
            "fit_intercept": ["boolean", StrOptions({"auto"})],
        }
    )
    base["feature_relevance"] = [StrOptions({*FEATURE_RELEVANCE, "auto"}), list]
    base["max_search_rows"] = [
        StrOptions({"auto"}),
        Interval(Integral, 2, None, closed="left"),
        None,
    ]
    return base


@dataclass(frozen=True)
class Axis:
    """One named axis of the search grid.

    Attributes
    ----------
    name : str
        The parameter the axis sets: its key in ``best_params_`` and its
        ``param_<name>`` column in ``cv_results_``.
    values : tuple
        The candidates, in grid order (ties go to the first in grid order).
    reported : bool
        Whether the axis appears in ``best_params_`` / ``cv_results_`` (an axis with a
        single value that is not searched, e.g. ``eta`` of a fixed metric, is not).
    as_param : callable
        Maps a value to the parameter value reported (e.g. the iteration index to
        ``max_iter``).
    batched : bool
        Whether the scoring steps (the screen, the fold paths) score every value of the
        axis at once (the axes of :attr:`_CVSearch.grid`). False: the search runs once
        per value, with the CV estimator's parameter ``name`` set to it for that run and
        for the refit of a best candidate there (the axes of
        ``_MVMLCVBase._looped_axes``, outermost in the grid).
    """

    name: str
    values: tuple
    reported: bool = True
    as_param: Callable[[Any], Any] = float
    batched: bool = True

    @property
    def size(self) -> int:
        return len(self.values)


@dataclass(frozen=True)
class SearchGrid:
    """The grid of a cross-validated search as an ordered product of named axes.

    The score array of a search has the shape :attr:`shape` plus one last axis, the
    folds; its axes are those of :attr:`axes`, in order. :meth:`candidates` flattens the
    grid in that (C) order: the rows of ``cv_results_`` (:meth:`results`). A new search axis is
    one more :class:`Axis` in :meth:`_CVSearch.grid` (and the search code that fills its
    scores by name, :class:`ScoreGrid`), or an ``Axis(batched=False)`` of
    ``_MVMLCVBase._looped_axes`` (the search runs once per value); ``cv_results_`` and
    ``best_params_`` follow from the declaration.

    Examples
    --------
    >>> iterations = Axis("max_iter", (0, 1), as_param=lambda i: i + 1)
    >>> g = SearchGrid((Axis("alpha", (0.1, 1.0)), iterations))
    >>> g.shape, g.position("max_iter")
    ((2, 2), 1)
    >>> [p for _, p in g.candidates()][:2]
    [{'alpha': 0.1, 'max_iter': 1}, {'alpha': 0.1, 'max_iter': 2}]
    """

    axes: tuple[Axis, ...]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(a.size for a in self.axes)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def names(self) -> tuple[str, ...]:
        """The axes' names, in order."""
        return tuple(a.name for a in self.axes)

    def without(self, *names: str) -> SearchGrid:
        """The grid of the other axes (a block of the scores at one value of each of
        ``names``, as :meth:`ScoreGrid.fix` gives)."""
        for name in names:
            self.position(name)  # KeyError naming an unknown axis
        return SearchGrid(tuple(a for a in self.axes if a.name not in names))

    def position(self, name: str) -> int:
        """Index of the axis ``name`` in the score array."""
        for i, a in enumerate(self.axes):
            if a.name == name:
                return i
        raise KeyError(f"no search axis named {name!r}")

    def candidates(self) -> Iterator[tuple[tuple[int, ...], dict[str, Any]]]:
        """``(index, params)`` of every candidate, in grid (C) order."""
        # each reported axis's parameter values converted once, not once per candidate
        # (a default "auto" search has thousands of candidates)
        shown = [
            (k, a.name, [a.as_param(v) for v in a.values])
            for k, a in enumerate(self.axes)
            if a.reported
        ]
        for index in itertools.product(*(range(a.size) for a in self.axes)):
            yield index, {name: values[index[k]] for k, name, values in shown}

    def expand(self, values: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
        """``values`` indexed by the axes ``names`` (its axes in that order), one per
        candidate."""
        for name in names:
            self.position(name)  # KeyError naming an unknown axis
        in_grid = [a.name for a in self.axes if a.name in names]
        values = np.transpose(values, [tuple(names).index(name) for name in in_grid])
        shape = [a.size if a.name in names else 1 for a in self.axes]
        return np.broadcast_to(np.reshape(values, shape), self.shape).ravel()

    def results(
        self,
        scores: np.ndarray,
        extra: dict[str, np.ndarray] | None = None,
    ) -> tuple[dict[str, Any], int]:
        """``cv_results_`` from the scores (:attr:`shape` plus the folds) and the index
        of the best candidate (the first of the best mean score in grid order).

        Candidates left unscored (NaN) rank after every scored one; equal mean scores
        share a rank, as in ``GridSearchCV``. ``extra``: more per-candidate columns.
        """
        n_splits = scores.shape[-1]
        flat = np.asarray(scores, dtype=np.float64).reshape(self.size, n_splits)
        params = [p for _, p in self.candidates()]  # in grid order, a dict each
        mean = flat.mean(axis=1)
        std = flat.std(axis=1)
        rank, best = _ranks(mean)
        results: dict[str, Any] = {"params": params}
        for a in self.axes:
            if a.reported:
                results[f"param_{a.name}"] = np.ma.MaskedArray(
                    [p[a.name] for p in params], mask=False
                )
        for k in range(n_splits):
            results[f"split{k}_test_score"] = flat[:, k]
        results["mean_test_score"] = mean
        results["std_test_score"] = std
        results["rank_test_score"] = rank
        results.update(extra or {})
        return results, best


class ScoreGrid:
    """The scores of a search, indexed by axis name: an array of the shape of ``grid``
    (its named axes, in order) plus one last axis, the folds.

    The scoring steps write and read it by name (:meth:`put`, :meth:`take`,
    :meth:`fix`), so that they do not depend on the order of the axes;
    :meth:`results` gives ``cv_results_`` and the best candidate from the declarations.
    A selector of an axis is an index (the axis is dropped from the block), a boolean
    mask or an array of indices over its values (the axis is kept); the axes not named
    are whole; ``folds`` selects the folds alike (None: all). Blocks have the kept axes
    in grid order, then the folds; a block written in another order names its axes
    (``put(block, axes=(...))``, or a :class:`ScoreGrid` block, which names them itself).

    Parameters
    ----------
    grid : SearchGrid
        The named axes.
    values : ndarray of shape ``grid.shape + (n_splits,)``
        The scores (NaN: not scored); written in place.

    Examples
    --------
    >>> import numpy as np
    >>> g = SearchGrid((Axis("bandwidth_factor", (1.0, 2.0)), Axis("alpha", (0.1, 1.0, 10.0))))
    >>> scores = ScoreGrid.empty(g, n_splits=2)
    >>> scores.put(np.array([[0.5, 0.6], [0.7, 0.8]]), bandwidth_factor=1, alpha=[0, 2])
    >>> scores.take(alpha=2).tolist()
    [[nan, nan], [0.7, 0.8]]
    >>> scores.fix(bandwidth_factor=1).grid.shape
    (3,)
    >>> scores.best()
    {'bandwidth_factor': 1, 'alpha': 2}
    >>> scores.put(np.array([0.1, 0.2]), axes=("bandwidth_factor",), alpha=0, folds=1)
    >>> scores.take(alpha=0).tolist()
    [[nan, 0.1], [0.5, 0.2]]
    """

    def __init__(self, grid: SearchGrid, values: np.ndarray):
        if values.shape[:-1] != grid.shape:
            raise ValueError(f"scores of shape {values.shape} for a grid of shape {grid.shape}")
        self.grid = grid
        self.values = values

    @classmethod
    def empty(cls, grid: SearchGrid, n_splits: int) -> ScoreGrid:
        """Every candidate unscored (NaN)."""
        return cls(grid, np.full((*grid.shape, n_splits), np.nan))

    @property
    def n_splits(self) -> int:
        return int(self.values.shape[-1])

    def _check_names(self, named: dict[str, Any]) -> None:
        for name in named:
            self.grid.position(name)  # KeyError naming an unknown axis

    def _index(self, named: dict[str, Any], folds: Any = None) -> tuple[tuple, tuple[int, ...]]:
        """The open-mesh index of the selectors ``named`` and ``folds`` and the positions
        of the axes they drop (a single index)."""
        self._check_names(named)
        sels, dropped = [], []
        for pos, sel in enumerate([named.get(a.name) for a in self.grid.axes] + [folds]):
            size = self.grid.axes[pos].size if pos < len(self.grid.axes) else self.n_splits
            if isinstance(sel, (Integral, np.integer)):
                dropped.append(pos)
                sel = [int(sel)]
            sels.append(np.arange(size)[slice(None) if sel is None else sel])
        return np.ix_(*sels), tuple(dropped)

    def _kept(self, named: dict[str, Any]) -> tuple[str, ...]:
        """The names of the axes a block at the selectors ``named`` keeps, in grid order."""
        return tuple(
            a.name
            for a in self.grid.axes
            if not isinstance(named.get(a.name), (Integral, np.integer))
        )

    def take(self, *, folds: Any = None, **named: Any) -> np.ndarray:
        """The scores at the selectors ``named`` and ``folds`` (a copy)."""
        index, dropped = self._index(named, folds)
        return np.squeeze(self.values[index], axis=dropped)

    def put(
        self, block: Any, *, axes: tuple[str, ...] | None = None, folds: Any = None, **named: Any
    ) -> None:
        """Write ``block`` (broadcast to the selected candidates) at the selectors ``named``
        and ``folds``. ``axes``: the names of the block's axes before its folds (every
        axis the selectors keep, in any order; None: the kept axes in grid order, or a
        :class:`ScoreGrid` block's own axes)."""
        index, dropped = self._index(named, folds)
        if isinstance(block, ScoreGrid):
            axes = block.grid.names if axes is None else axes
            block = block.values
        block = np.asarray(block)
        if axes is not None:
            kept = self._kept(named)
            if sorted(axes) != sorted(kept):
                raise ValueError(f"a block of the axes {tuple(axes)} written where {kept} are kept")
            order = [tuple(axes).index(name) for name in kept]
            block = np.transpose(block, order + list(range(len(order), block.ndim)))
        self.values[index] = np.expand_dims(block, dropped)

    def fix(self, **named: int) -> ScoreGrid:
        """The scores at one value of each axis ``named`` (an index each), a view: its grid
        has the other axes, and writes to it are writes to these scores."""
        self._check_names(named)
        index = tuple(
            int(named[a.name]) if a.name in named else slice(None) for a in self.grid.axes
        )
        axes = tuple(a for a in self.grid.axes if a.name not in named)
        return ScoreGrid(SearchGrid(axes), self.values[index])

    def position(self, flat: int) -> dict[str, int]:
        """The value index of each axis of the candidate at ``flat`` (grid, C order)."""
        index = np.unravel_index(int(flat), self.grid.shape)
        return {a.name: int(i) for a, i in zip(self.grid.axes, index)}

    def best(self) -> dict[str, int]:
        """:meth:`position` of the best candidate (the first of the best mean score in
        grid order; unscored candidates after every scored one)."""
        return self.position(self.results()[1])

    def results(self, extra: dict[str, np.ndarray] | None = None) -> tuple[dict[str, Any], int]:
        """``cv_results_`` and the index of the best candidate (:meth:`SearchGrid.results`)."""
        return self.grid.results(self.values, extra)


@dataclass(frozen=True)
class ScreenResult:
    """The leave-one-out screen of a search's (joint view, bandwidth factor) pairs
    (:func:`~._folds_screen.screened_search`): arrays whose axes are :attr:`axes`, the two
    axes of :attr:`_CVSearch.grid` the screen ranks, in that order.

    Attributes
    ----------
    score : ndarray of shape (n_joint, n_factor)
        The screening score of each pair at its screening-best ``alpha`` (-inf: not
        screened, as the joint-only candidate's row, or not finite).
    closeness : ndarray of shape (n_joint, n_factor)
        Minus the leave-one-out squared error there (the tie-break of equal scores).
    best_alpha : ndarray of int, shape (n_joint, n_factor)
        The index of the screening-best ``alpha`` in the screen's ``alpha`` grid.
    kept : dict
        ``factor index -> ScreenGrams`` (:class:`~mvkernels.mvml._screen.ScreenGrams`:
        the map, and its features of every row once asked) of the finalists' factors,
        reused by their folds (empty once the folds no longer need them).

    Examples
    --------
    >>> r = ScreenResult.empty(n_joint=2, n_factor=3)
    >>> r.score.shape, ScreenResult.axes
    ((2, 3), ('joint_view', 'bandwidth_factor'))
    >>> r.score[1, 2] = 0.75
    >>> joint, factor = Axis("joint_view", (False, True)), Axis("bandwidth_factor", (1.0, 2.0, 4.0))
    >>> g = SearchGrid((factor, joint, Axis("alpha", (0.1, 1.0))))  # any order of the axes
    >>> columns = ScreenResult.columns({(): r}, g, looped=())
    >>> columns["screen_score"].reshape(3, 2, 2)[2, 1].tolist()  # factor 4, joint view, each alpha
    [0.75, 0.75]
    """

    #: the axes of the arrays, by name (:attr:`_CVSearch.grid`'s)
    axes: ClassVar[tuple[str, str]] = ("joint_view", "bandwidth_factor")

    score: np.ndarray
    closeness: np.ndarray
    best_alpha: np.ndarray
    kept: dict[int, Any] = field(default_factory=dict)

    @classmethod
    def empty(cls, n_joint: int, n_factor: int) -> ScreenResult:
        """Nothing screened yet: -inf scores and closeness, ``alpha`` index 0."""
        return cls(
            score=np.full((n_joint, n_factor), -np.inf),
            closeness=np.full((n_joint, n_factor), -np.inf),
            best_alpha=np.zeros((n_joint, n_factor), dtype=int),
        )

    @property
    def squared_error(self) -> np.ndarray:
        """The leave-one-out squared error of each pair (minus :attr:`closeness`)."""
        return -self.closeness

    def without_features(self) -> ScreenResult:
        """The same result without the finalists' maps and features (:attr:`kept`)."""
        return replace(self, kept={})

    @classmethod
    def columns(
        cls, runs: dict[tuple[int, ...], ScreenResult], grid: SearchGrid, looped: tuple[str, ...]
    ) -> dict[str, np.ndarray]:
        """``screen_score`` and ``screen_squared_error`` of every candidate of ``grid``
        (those of its pair) from the screens of the runs (keys: the indices of the
        ``looped`` axes of ``grid``, one run each); candidates of runs without a screen
        get NaN."""
        names = (*looped, *cls.axes)
        shape = tuple(grid.axes[grid.position(name)].size for name in names)
        score, squared_error = np.full(shape, np.nan), np.full(shape, np.nan)
        for at, r in runs.items():
            score[at], squared_error[at] = r.score, r.squared_error
        return {
            "screen_score": grid.expand(score, names),
            "screen_squared_error": grid.expand(squared_error, names),
        }


def _ranks(mean: np.ndarray) -> tuple[np.ndarray, int]:
    """``rank_test_score`` of the mean scores (NaN ranks after every scored candidate,
    equal scores share a rank, as in ``GridSearchCV``) and the index of the best one (the
    first of the best mean score)."""
    finite = np.where(np.isfinite(mean), mean, -np.inf)
    order = np.argsort(-finite, kind="stable")
    rank = np.empty(len(mean), dtype=np.int32)
    rank[order] = np.searchsorted(-finite[order], -finite[order], side="left") + 1
    return rank, int(order[0])


def union_results(
    parts: list[dict], name: str | tuple[str, ...], values: tuple | list
) -> tuple[dict[str, Any], int, int]:
    """``cv_results_`` of a search along axes whose values are whole searches, each with
    its own grid (:class:`PartAxis`: the loss, the multi-class decomposition), on the
    same folds.

    The candidates are those of ``parts`` (the ``cv_results_`` of each search, in the
    order of ``values``), each with its value of the axis ``name`` in ``params`` and in
    ``param_<name>``; several axes: ``name`` a tuple of names and each value a tuple
    (one per name). A parameter that a part does not report is masked in its rows (as
    ``GridSearchCV`` does for a list of grids); another per-candidate column that a part
    lacks is NaN there. Ranks are recomputed over the union. Returns the results, the
    index of the best candidate (the first of the best mean score: ties go to the first
    value of the axis) and the index of the part it belongs to.

    Examples
    --------
    >>> import numpy as np
    >>> a = {"params": [{"alpha": 1.0}], "param_alpha": np.ma.MaskedArray([1.0]),
    ...      "split0_test_score": np.array([0.5]), "mean_test_score": np.array([0.5]),
    ...      "std_test_score": np.array([0.0]), "rank_test_score": np.array([1])}
    >>> b = {**a, "split0_test_score": np.array([0.75]), "mean_test_score": np.array([0.75])}
    >>> res, best, part = union_results([a, b], "loss", ("squared", "hinge"))
    >>> res["params"][best], part, res["rank_test_score"].tolist()
    ({'loss': 'hinge', 'alpha': 1.0}, 1, [2, 1])
    >>> res, best, part = union_results(
    ...     [a, b], ("loss", "multi_class"), (("squared", "ovr"), ("squared", "ovo")))
    >>> res["params"][best]
    {'loss': 'squared', 'multi_class': 'ovo', 'alpha': 1.0}
    """
    names = (name,) if isinstance(name, str) else tuple(name)
    combos = [(val,) if isinstance(name, str) else tuple(val) for val in values]
    params = []
    shapes = []  # per part: its candidates' keys (their tuples, first seen first)
    for combo, part in zip(combos, parts):
        head = dict(zip(names, combo))
        params += [{**head, **p} for p in part["params"]]
        shapes.append(list(dict.fromkeys(map(tuple, part["params"]))))
    results: dict[str, Any] = {"params": params}
    keys = list(names) + list(
        dict.fromkeys(k for part in shapes for ks in part for k in ks if k not in names)
    )
    starts = np.cumsum([0] + [len(part["params"]) for part in parts]).tolist()
    for key in keys:
        # part by part: at once where every candidate of a part has the key (from the
        # part's own dicts or its axis value) or none has it; else candidate by candidate
        column: list = []
        mask: list = []
        for i, (combo, part, ks) in enumerate(zip(combos, parts, shapes)):
            n_part = len(part["params"])
            own = [key in k for k in ks]
            if not any(own) and key in names:
                column += [combo[names.index(key)]] * n_part
                mask += [False] * n_part
            elif all(own) and ks:
                column += map(itemgetter(key), part["params"])
                mask += [False] * n_part
            elif not any(own):
                column += [None] * n_part
                mask += [True] * n_part
            else:
                merged = params[starts[i] : starts[i + 1]]
                column += [p.get(key) for p in merged]
                mask += [key not in p for p in merged]
        results[f"param_{key}"] = np.ma.MaskedArray(column, mask=mask, dtype=object)
    scored = [k for k in parts[0] if k.startswith("split") or k.endswith("_test_score")]
    for key in scored:
        if key != "rank_test_score":
            results[key] = np.concatenate([np.asarray(part[key]) for part in parts])
    results["rank_test_score"], best = _ranks(results["mean_test_score"])
    named = {"params", *scored}
    for key in dict.fromkeys(
        k for part in parts for k in part if k not in named and not k.startswith("param_")
    ):
        results[key] = np.concatenate(
            [np.asarray(part.get(key, np.full(len(part["params"]), np.nan))) for part in parts]
        )
    sizes = np.cumsum([len(part["params"]) for part in parts])
    return results, best, int(np.searchsorted(sizes, best, side="right"))


def _iterations(it: int) -> int:
    """Outer iterations of the ``it``-th point of Algorithm 1's path (0-based)."""
    return int(it) + 1


@dataclass
class _CVSearch:
    """What every step of one cross-validated search reads, built once by ``fit``."""

    #: the searched views (with the joint view last when it is a candidate)
    Xs: list
    #: target columns (+-1 one-vs-all or real), and the values scored against
    Y: Any
    y_score: np.ndarray
    splits: list
    #: per-view kernel parameters at bandwidth factor 1, and the grids
    base_params: list
    factors: np.ndarray
    alphas: np.ndarray
    etas: np.ndarray
    #: longest path searched (outer iterations 1 .. K)
    K: int
    n_landmarks: Any
    scorer: Any
    #: joint-view candidates (grid order) and the number of input views
    joints: tuple
    v_in: int
    #: landmarks of the joint-only candidate (None: not searched)
    n_landmarks_only: int | None = None
    #: some training views have missing rows (the screen then keeps more finalists)
    missing: bool = False
    #: a learned metric (``eta`` searched)
    learned: bool = False
    #: the rows' frequency weights (scores, screen) and loss weights (times class
    #: weights: statistics, fits); None: unweighted
    sample_weight: np.ndarray | None = None
    loss_weight: np.ndarray | None = None
    #: one-vs-one (``multi_class="ovo"``, more than two classes): the class pairs in
    #: ``SVC``'s order (each fold solves one binary problem per pair and the held-out
    #: scores use the pairs' votes); None: one-vs-rest, the columns of ``Y``
    pairs: list | None = None

    @property
    def n_splits(self) -> int:
        return len(self.splits)

    @property
    def multi_view(self) -> np.ndarray:
        """Boolean mask of the joint-view candidates other than the joint view alone (the
        screen ranks these; the joint-only candidate is cross-validated apart)."""
        return np.array([joint != JOINT_ONLY for joint in self.joints])

    @property
    def grid(self) -> SearchGrid:
        """The named axes of the search, in the order of the score array: the joint-view
        candidate (reported when there are several), the bandwidth factor, ``alpha``,
        ``eta`` (reported for a learned metric) and the outer iterations (reported as
        ``max_iter`` when more than one). Ties go to the first candidate in this order:
        no joint view, the smaller factor, then the smaller ``alpha``, ``eta`` and the
        fewer iterations (preferring the larger ``alpha`` instead was measured on 40-row
        sets, uWave and digits, 4 classes, 5-6 draws: +0.15 and -0.35 points)."""
        return SearchGrid(
            (
                Axis(
                    "joint_view",
                    tuple(self.joints),
                    reported=len(self.joints) > 1,
                    as_param=lambda j: j if j == JOINT_ONLY else bool(j),
                ),
                Axis("bandwidth_factor", tuple(float(f) for f in self.factors)),
                Axis("alpha", tuple(float(a) for a in self.alphas)),
                Axis("eta", tuple(float(e) for e in self.etas), reported=self.learned),
                Axis("max_iter", tuple(range(self.K)), reported=self.K > 1, as_param=_iterations),
            )
        )

    @property
    def n_outputs(self) -> int:
        """Decision values per row of one candidate: the pairs, or the columns of ``Y``."""
        return len(self.pairs) if self.pairs else int(np.shape(self.Y)[1])

    def decode(self, D: np.ndarray) -> np.ndarray:
        """Held-out decision values ``D`` (..., n_outputs) as scored: one-vs-one, the
        per-class vote scores of the pairs (:func:`~mvkernels.mvml._multiclass.ovo_vote_scores`:
        ``SVC``'s rule, whose argmax is the predicted class); one-vs-rest, ``D`` itself."""
        if not self.pairs:
            return D
        n_classes = int(np.shape(self.Y)[1])
        flat = np.reshape(D, (-1, D.shape[-1]))
        return ovo_vote_scores(flat, n_classes).reshape(*D.shape[:-1], n_classes)

    def kernel_params(self, kernel: Any, factor: float) -> list:
        """Per-view kernel parameters at one bandwidth factor."""
        return scale_bandwidths(kernel, self.base_params, factor)

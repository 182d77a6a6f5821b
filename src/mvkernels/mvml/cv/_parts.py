"""The part axes of a cross-validated search (:data:`~._grid.PART_AXES`: the feature
relevance, the loss, the multi-class decomposition, the intercept): axes whose values are whole
searches, each with its own grid, run on the same folds and joined by
:func:`~._grid.union_results`.

:class:`PartSplit` says how a CV estimator's search is split (the axes it reports and the
values of every part, their product in order); :func:`search_parts` runs one search per
part (a copy of the CV estimator, :func:`part_estimator`) and returns their union as a
:class:`PartsResult`, whose :meth:`~PartsResult.attributes` the CV estimator adopts
(``_MVMLCVBase.fit``). What the parts share: the search data of the same views (the
axes' ``data``), one leave-one-out screen per combination of the values that change it
(``changes_screen``; the other axes' parts read it), and, where an axis abandons, the
earlier parts' best mean score and its per-fold order (:attr:`~._folds.FoldScorer.to_beat`,
:attr:`~._folds.FoldScorer.fold_order`). A part's probability calibration is fitted for
the best part alone.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone

from ._data import _SearchData
from ._grid import PART_AXES, PartAxis, union_results

__all__ = []

#: what a CV estimator adopts from the best part besides the union's results (when the
#: part has it)
_FROM_WINNER = (
    "best_kernel_params_",
    "best_joint_view_",
    "n_splits_",
    "calibration_",
    "_joints",
    "_search_kernel",
)


def _itself(value: Any, data: Any) -> Any:
    """A part axis's value without an alias (:attr:`~._grid.PartAxis.alias`)."""
    return value


@dataclass(frozen=True)
class PartSplit:
    """How a CV estimator's search is split along the part axes (:data:`PART_AXES`).

    Attributes
    ----------
    axes : tuple of PartAxis
        The axes the estimator searches (those of its parameters), in the order of
        :data:`PART_AXES`.
    names : tuple of str
        The axes the search reports (a ``param_<name>`` column); none: the estimator
        searches itself, as one part.
    values : tuple of dict
        Each part's value of every searched axis, keyed by name: the product of the
        axes' values, in order (ties go to the first). Without a reported axis, one
        part (an axis not reported has one value).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> est = SimpleNamespace(multi_class="auto", classes_=[0, 1, 2])
    >>> split = PartSplit.of(est)
    >>> split.names, split.values
    (('multi_class',), ({'multi_class': 'ovr'}, {'multi_class': 'ovo'}))
    """

    axes: tuple[PartAxis, ...]
    names: tuple[str, ...]
    values: tuple[dict[str, Any], ...]

    @classmethod
    def of(cls, est: Any) -> PartSplit:
        """The split of the CV estimator ``est``'s search (after its labels are encoded
        and its search data prepared: ``"auto"`` reads them)."""
        axes = tuple(a for a in PART_AXES if a.searched(est))
        names = tuple(a.name for a in axes if a.reported(est))
        combos = itertools.product(*(a.searched(est) for a in axes))
        return cls(axes, names, tuple({a.name: v for a, v in zip(axes, c)} for c in combos))

    @property
    def abandon(self) -> bool:
        """Whether every part after the first abandons its hopeless candidates (one of
        the reported axes does, :attr:`PartAxis.abandon`)."""
        return any(a.abandon for a in self.axes if a.name in self.names)


@dataclass(frozen=True)
class PartsResult:
    """The union of the parts' searches (:func:`search_parts`)."""

    #: the union's ``cv_results_`` (a ``param_<name>`` column per reported axis)
    cv_results: dict[str, Any]
    #: the index of the best candidate in the union
    best_index: int
    #: the part whose search holds the best candidate (the one to refit)
    winner: Any
    #: the winner's search data
    data: _SearchData

    def attributes(self) -> dict[str, Any]:
        """What the CV estimator adopts, by name: its fitted attributes (the union's
        results, the best part's choices, its column scales as ``feature_relevance_``)
        and the best part's values of the part axes and search state (``_part_values``,
        ``_joints``, ``_search_kernel``)."""
        winner = self.winner
        attrs = {
            "cv_results_": self.cv_results,
            "best_index_": self.best_index,
            "best_params_": dict(self.cv_results["params"][self.best_index]),
            "best_score_": winner.best_score_,
            "_part_values": dict(winner._part_values),
        }
        attrs |= {name: getattr(winner, name) for name in _FROM_WINNER if hasattr(winner, name)}
        attrs["feature_relevance_"] = self.data.relevance
        return attrs


def part_estimator(est: Any, values: dict[str, Any]) -> Any:
    """A copy of the CV estimator ``est`` searching one value of each part axis
    (``values``), on the same folds: each axis's parameter set to its value, and the
    parameters its :attr:`PartAxis.configure` gives (a loss other than the class's own:
    its :class:`~._grid.LossSearch` path length and joint-view candidates); the labels
    and input names of ``est``'s fit kept."""
    params = dict(values)
    for axis in PART_AXES:
        if axis.name in values and axis.configure is not None:
            params.update(axis.configure(values[axis.name], est))
    part = clone(est).set_params(**params)
    part._part_values = dict(values)
    for name in ("classes_", "n_features_in_", "feature_names_in_"):
        if hasattr(est, name):
            setattr(part, name, getattr(est, name))
    return part


def search_parts(est: Any, data: _SearchData, split: PartSplit) -> PartsResult:
    """Search each part of ``split`` (a reported axis at least) on ``data``'s folds and
    join them (:func:`union_results`).

    The parts of one loss on the same views share its screen
    (:func:`~._folds_screen.screened_search`); a value whose search is an earlier
    value's (:attr:`PartAxis.alias`) takes that part's candidates; where an axis
    abandons, each part's candidates are abandoned once they cannot beat the earlier
    parts' best (:meth:`~._folds.FoldScorer.hopeless`), the folds run in the order of
    that best's per-fold scores, worst first: the same choice. The best part's
    probability calibration alone is fitted.
    """
    abandon = split.abandon
    to_beat, order = est._to_beat, est._fold_order
    parts: list[Any] = []
    datas: list[_SearchData] = []
    per_views: dict[tuple, tuple[_SearchData, dict]] = {}  # the data and screens of views
    for value in split.values:
        same = {a.name: (a.alias or _itself)(value[a.name], data) for a in split.axes}
        if same != value:  # the same search as an earlier part's: its candidates
            parts.append(parts[split.values.index(same)])
            datas.append(datas[split.values.index(same)])
            continue
        key = tuple(value[a.name] for a in split.axes if a.data is not None)
        if key not in per_views:
            part_data = data
            for a in split.axes:
                if a.data is not None:
                    part_data = a.data(value[a.name], part_data)
            per_views[key] = (part_data, {})
        part_data, screens = per_views[key]
        part = part_estimator(est, value)
        est._say(", ".join(f"{k}={v!r}" for k, v in value.items() if k in split.names))
        part._to_beat = to_beat if abandon else None
        part._fold_order = order if abandon else None
        part._screen_cache = screens
        part._calibrate_later = True
        part._search_and_store(part_data)
        del part._screen_cache
        parts.append(part)
        datas.append(part_data)
        best = part.best_score_
        if abandon and np.isfinite(best) and (to_beat is None or best > to_beat):
            folds = [part.cv_results_[f"split{k}_test_score"] for k in range(part.n_splits_)]
            to_beat = best
            order = np.argsort([f[part.best_index_] for f in folds], kind="stable")
    names = split.names
    results, best_index, which = union_results(
        [p.cv_results_ for p in parts], names, [tuple(v[k] for k in names) for v in split.values]
    )
    winner = parts[which]
    if "_calibrate" in winner.__dict__:  # the calibration of the best part alone
        winner.calibration_ = winner.__dict__.pop("_calibrate")()
    for part in parts:
        part.__dict__.pop("_calibrate", None)
    return PartsResult(results, best_index, winner, datas[which])

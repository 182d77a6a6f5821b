"""The results of a cross-validated search (:func:`search_results`): ``cv_results_`` and
the best candidate, from the scores of its named axes and the runs of its looped axes
(:class:`_Run`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._bandwidth import scale_bandwidths
from .._joint import JOINT_ONLY
from ._grid import ScoreGrid, ScreenResult, _CVSearch

__all__ = []


@dataclass(frozen=True)
class _Run:
    """One run of the search at one value of each looped axis (``_looped_axes``)."""

    search: _CVSearch
    #: the screen of the (joint view, bandwidth factor) pairs, without its features
    #: (None: searched in full)
    screen: ScreenResult | None
    joints: tuple
    kernel: Any
    #: the landmark counts of the search (the joint-only candidate's second)
    n_landmarks: tuple
    #: the looped axes' values of this run
    looped: dict[str, Any]


@dataclass(frozen=True)
class SearchResults:
    """What a search stores: its fitted attributes (:meth:`attributes`) and the run of
    its best candidate."""

    cv_results: dict[str, Any]
    best_index: int
    best_params: dict[str, Any]
    best_score: float
    best_joint_view: Any
    best_kernel_params: list
    n_splits: int
    run: _Run

    def attributes(self) -> dict[str, Any]:
        """The CV estimator's fitted attributes, by name."""
        return {
            "cv_results_": self.cv_results,
            "best_index_": self.best_index,
            "best_params_": self.best_params,
            "best_score_": self.best_score,
            "best_joint_view_": self.best_joint_view,
            "best_kernel_params_": self.best_kernel_params,
            "n_splits_": self.n_splits,
        }


def search_results(scores: ScoreGrid, runs: dict[tuple[int, ...], _Run]) -> SearchResults:
    """``cv_results_`` and the best candidate, from the search's named axes
    (``scores.grid``: the looped axes, then :attr:`_CVSearch.grid`) and its runs (keys:
    the indices of the looped axes). Candidates left out by the screening have NaN split
    / mean / std scores and rank after every scored candidate; with screening,
    ``screen_score`` and ``screen_squared_error`` hold the screening score of each
    candidate's (joint view, bandwidth factor) pair and its leave-one-out squared error
    (the tie-break). The best candidate's kernel parameters are those of its joint-view
    candidate's views (the joint view alone: its own)."""
    grid = scores.grid
    looped = tuple(a.name for a in grid.axes if not a.batched)
    screens = {combo: run.screen for combo, run in runs.items() if run.screen is not None}
    extra = ScreenResult.columns(screens, grid, looped) if screens else None
    cv_results, best_index = scores.results(extra)
    best_params = dict(cv_results["params"][best_index])
    at = scores.position(best_index)
    run = runs[tuple(at[name] for name in looped)]
    base_params, joints = run.search.base_params, run.joints
    best_joint = joints[at["joint_view"]]
    best_joint_view = best_joint if best_joint == JOINT_ONLY else bool(best_joint)
    best_kp = scale_bandwidths(run.kernel, base_params, best_params["bandwidth_factor"])
    n_in = len(base_params) - bool(joints[-1])
    if best_joint_view == JOINT_ONLY:
        best_kernel_params = best_kp[-1:]
    else:
        best_kernel_params = best_kp if best_joint_view else best_kp[:n_in]
    return SearchResults(
        cv_results=cv_results,
        best_index=best_index,
        best_params=best_params,
        best_score=float(cv_results["mean_test_score"][best_index]),
        best_joint_view=best_joint_view,
        best_kernel_params=best_kernel_params,
        n_splits=scores.n_splits,
        run=run,
    )

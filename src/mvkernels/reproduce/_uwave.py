"""Shared pieces of the uWave reproductions (``mvml-uwave``, ``mvml-svm-uwave``).

* :func:`load_split`: the 896 / 3582 UCR split as stacked arrays (3 views x 315 columns)
  plus the paper's Gaussian bandwidths (mean pairwise training distance per view, and of
  the concatenated views for early fusion);
* :func:`cv_search`: hyperparameters by stratified k-fold CV on the *training set only*,
  with the Gaussian bandwidth searched as a multiple ``f`` of the paper's default
  (``gamma = f / (2 sigma^2)``);
* :func:`score_draws`: refit the selected model with independent Nystrom draws and score
  it on the test set (the paper: mean and std over 4 draws).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from ..datasets import fetch_uwave
from ..kernels import mean_pairwise_distance

VIEW_SIZES = [315, 315, 315]


@dataclass
class UWaveSplit:
    """uWave train / test arrays (views side by side) and the paper's bandwidths."""

    X: np.ndarray
    y: np.ndarray
    Xt: np.ndarray
    yt: np.ndarray
    sigmas: list[float]
    sigma_concat: float

    def view_gammas(self, factor: float) -> list[dict[str, float]]:
        """Per-view Gaussian parameters ``gamma_l = factor / (2 sigma_l^2)``."""
        return [{"gamma": factor / (2 * s**2)} for s in self.sigmas]

    def concat_gamma(self, factor: float) -> dict[str, float]:
        """Gaussian parameter of the concatenated views (early fusion)."""
        return {"gamma": factor / (2 * self.sigma_concat**2)}


def load_split(data_dir: str | None = None) -> UWaveSplit:
    """Load uWave (raises :class:`mvkernels.datasets.DataNotFoundError` when absent)."""
    d = fetch_uwave(data_dir)
    X = np.hstack(d["Xs_train"])
    return UWaveSplit(
        X=X,
        y=d["y_train"],
        Xt=np.hstack(d["Xs_test"]),
        yt=d["y_test"],
        sigmas=[mean_pairwise_distance(V) for V in d["Xs_train"]],
        sigma_concat=mean_pairwise_distance(X),
    )


def cv_search(
    est: Any,
    grid: dict[str, list],
    X: np.ndarray,
    y: np.ndarray,
    bandwidth_params: Callable[[float], Any] | None,
    random_state: int,
    folds: int = 3,
) -> tuple[Any, dict[str, Any], float]:
    """Grid search by stratified ``folds``-fold CV on the training set.

    ``grid`` may hold ``"bandwidth"``: factors ``f`` turned into ``kernel_params`` by
    ``bandwidth_params(f)``. A grid with a single candidate is not cross-validated (the
    model is just returned unfitted with those parameters). Returns the selected (unfitted)
    estimator, its parameters (with ``"bandwidth"`` as the factor) and the CV time.
    """
    grid = {k: list(v) for k, v in grid.items()}
    factors = grid.pop("bandwidth", None)
    if factors is not None:
        grid["kernel_params"] = [bandwidth_params(f) for f in factors]
    t0 = time.perf_counter()
    if all(len(v) == 1 for v in grid.values()):
        best = {k: v[0] for k, v in grid.items()}
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            gs = GridSearchCV(
                est,
                grid,
                cv=StratifiedKFold(folds, shuffle=True, random_state=random_state),
                refit=False,
            )
            gs.fit(X, y)
        best = dict(gs.best_params_)
    seconds = time.perf_counter() - t0
    chosen = clone(est).set_params(**best)
    if factors is not None:
        best["bandwidth"] = factors[grid["kernel_params"].index(best.pop("kernel_params"))]
    return chosen, best, seconds


def score_draws(
    est: Any,
    data: UWaveSplit,
    n_draws: int,
    random_state: int,
    on_fit: Callable[[Any], None] | None = None,
) -> tuple[list[float], list[float]]:
    """Refit ``est`` with seeds ``random_state .. + n_draws - 1`` (Nystrom draws).

    Returns the test accuracies (in %) and fit times (s) of the draws; ``on_fit(model)``
    is called with each fitted model (e.g. to record which view was chosen).
    """
    accs, fits = [], []
    for draw in range(n_draws):
        model = clone(est)
        if "random_state" in model.get_params():
            model.set_params(random_state=random_state + draw)
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(data.X, data.y)
        fits.append(time.perf_counter() - t)
        if on_fit is not None:
            on_fit(model)
        accs.append(100.0 * model.score(data.Xt, data.yt))
    return accs, fits

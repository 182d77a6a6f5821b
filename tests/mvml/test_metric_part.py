"""The Metric part: the one backtracking loop of the A-steps (``mvml._metric.backtrack``)
and the metric kinds (``mvml._metric.METRIC_KINDS``)."""

from __future__ import annotations

import numpy as np
import pytest

from mvkernels.mvml._metric import (
    MAX_BACKTRACK,
    STEP_CAP,
    PSDFactor,
    backtrack,
    dense_step_cap,
    metric_step,
    sufficient_decrease,
)


def test_backtrack_halves_each_problem_until_accepted_or_given_up():
    limits = np.array([1.0, 0.1, 0.0])  # accepted at mu <= limit; the last never
    tried = []

    def attempt(idx, mu):
        tried.append(idx.copy())
        return mu <= limits[idx]

    accepted, mu = backtrack(np.array([1.0, 1.0, 1.0]), attempt)
    np.testing.assert_array_equal(accepted, [True, True, False])
    assert mu[0] == 1.0 and mu[1] == 0.0625  # 1 / 16, the first halving <= 0.1
    assert mu[2] == 0.5**MAX_BACKTRACK
    assert len(tried) == MAX_BACKTRACK and list(tried[1]) == [1, 2]
    accepted, _ = backtrack(np.array([1.0]), lambda i, m: m < 0.3, max_halvings=1)
    assert not accepted[0]


def test_sufficient_decrease_and_cap():
    assert sufficient_decrease(1.0, 1.0, 0.0, 0.0, 1.0)
    assert not sufficient_decrease(1.1, 1.0, 0.0, 0.1, 1.0)
    np.testing.assert_array_equal(
        sufficient_decrease(np.array([1.0, 1.1]), np.ones(2), 0.0, np.array([0.0, 0.1]), 1.0),
        [True, False],
    )
    assert dense_step_cap(10.0, 2.0) == STEP_CAP / 2.0
    np.testing.assert_array_equal(dense_step_cap(np.array([0.1, 10.0]), 2.0), [0.1, STEP_CAP / 2])


def test_metric_step_without_halvings_keeps_the_metric():
    rng = np.random.default_rng(0)
    A = np.eye(4)
    g = rng.normal(size=4)
    # no halving allowed: the first (capped) step is not even tried, A is kept
    A0, f0, mu = metric_step(A, PSDFactor(A), g, 1.0, 1.0, "dense", 2, 1e6, max_backtrack=0)
    assert mu == 0.0 and A0 is A
    A1, _, mu1 = metric_step(A, PSDFactor(A), g, 1.0, 1.0, "dense", 2, 1e6)
    assert 0 < mu1 <= STEP_CAP and not np.array_equal(A1, A)


def test_metric_kinds_say_what_each_metric_does():
    from mvkernels.mvml._metric import (
        LEARNED_METRICS,
        METRIC_KINDS,
        METRICS,
        metric_kind,
        metric_penalty,
    )

    assert METRICS == ("dense", "sparse", "identity", "cov")
    assert LEARNED_METRICS == ("dense", "sparse")
    assert {k for k, m in METRIC_KINDS.items() if m.structured} == {"dense", "identity", "cov"}
    assert [k for k, m in METRIC_KINDS.items() if m.low_rank] == ["dense"]
    assert [k for k, m in METRIC_KINDS.items() if m.identity] == ["identity"]
    rng = np.random.default_rng(1)
    A = rng.normal(size=(6, 6))
    A = A @ A.T
    assert metric_kind("dense").penalty(A, 3) == metric_penalty(A, "dense", 3)
    assert metric_kind("sparse").penalty(A, 3) == metric_penalty(A, "sparse", 3)
    assert metric_kind("identity").penalty(A, 3) == 0.0
    np.testing.assert_array_equal(metric_kind("dense").smooth_gradient(A, 0.5), A)
    assert metric_kind("sparse").smooth_gradient(A, 0.5) == 0.0
    with pytest.raises(ValueError, match="unknown metric 'diag'"):
        metric_kind("diag")


def test_cov_kind_initial_value_is_the_cov_metric():
    from mvkernels.mvml import MVMLProblem, cov_metric_full
    from mvkernels.mvml._metric import metric_kind

    rng = np.random.default_rng(2)
    Xs = [rng.normal(size=(12, 2)), rng.normal(size=(12, 3))]
    Ks = [X @ X.T for X in Xs]
    problem = MVMLProblem("full", 12, 2, 12, rng.normal(size=(12, 1)), Ks=Ks)
    np.testing.assert_array_equal(metric_kind("cov").initial(problem), cov_metric_full(Ks))
    np.testing.assert_array_equal(metric_kind("dense").initial(problem), np.eye(24))

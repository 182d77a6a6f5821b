"""The batched A-step's test of several halvings per call (``_lowrank.halvings_ahead``)
gives the steps, values and paths of one halving per call, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from mvkernels.mvml import _lowrank
from mvkernels.mvml._lowrank import halvings_ahead
from mvkernels.mvml._metric import backtrack
from mvkernels.mvml._square_paths import dense_metric_path


def _problems(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Starting steps and the largest step each problem accepts (inf: any; 0: none)."""
    rng = np.random.default_rng(seed)
    mu0 = 10.0 ** rng.uniform(-3, 2, n)
    largest = mu0 * 0.5 ** rng.integers(0, 12, n) * rng.uniform(0.6, 1.0, n)
    largest[rng.random(n) < 0.1] = 0.0  # given up after max_halvings
    largest[rng.random(n) < 0.2] = np.inf  # accepted at once
    return mu0, largest


@pytest.mark.parametrize(
    "first, later, budget", [(1, 1, 0), (2, 4, 0), (3, 8, 0), (1, 16, 0), (40, 40, 0), (2, 4, 2048)]
)
@pytest.mark.parametrize("max_halvings", [40, 5, 1])
def test_halvings_ahead_equals_one_halving_per_call(first, later, budget, max_halvings):
    """Any number of halvings per call (``later``, and more on a call with few problems
    left: ``budget``) gives the steps and kept values of one halving per call."""
    mu0, largest = _problems(0, 200)

    def evaluate(pi, mu):
        return mu <= largest[pi], (np.sin(pi * mu), pi + mu)

    def run(attempt_of):
        kept = {"a": np.full(mu0.size, np.nan), "b": np.full(mu0.size, np.nan)}

        def commit(p, values):
            kept["a"][p], kept["b"][p] = values

        calls = []

        def counted(pi, mu):
            calls.append(pi.size)
            return attempt_of(evaluate, commit)(pi, mu)

        accepted, mu = backtrack(mu0, counted, max_halvings=max_halvings)
        return accepted, mu, kept, len(calls)

    def one_at_a_time(evaluate, commit):
        def attempt(pi, mu):
            ok, values = evaluate(pi, mu)
            commit(pi[ok], tuple(v[ok] for v in values))
            return ok

        return attempt

    state = {}

    def ahead(evaluate, commit):  # one attempt object for the whole loop
        if "f" not in state:
            state["f"] = halvings_ahead(
                evaluate, commit, mu0.size, first, later, max_halvings, budget
            )
        return state["f"]

    acc1, mu1, kept1, _ = run(one_at_a_time)
    acc2, mu2, kept2, _ = run(ahead)
    assert np.array_equal(acc1, acc2)
    assert np.array_equal(mu1, mu2)
    for key in kept1:
        assert np.array_equal(kept1[key], kept2[key], equal_nan=True)
    assert acc1.sum() > 0 and (~acc1).sum() > 0


def test_halvings_ahead_evaluates_fewer_times():
    """Fewer calls of the test than halving rounds (the point of it)."""
    mu0, largest = _problems(1, 300)
    n_eval = []

    def evaluate(pi, mu):
        n_eval.append(pi.size)
        return mu <= largest[pi], (mu,)

    backtrack(mu0, halvings_ahead(evaluate, lambda p, v: None, mu0.size, 2, 8))
    rounds = []
    backtrack(mu0, lambda pi, mu: (rounds.append(pi.size), mu <= largest[pi])[1])
    assert len(n_eval) < len(rounds) / 2


@pytest.mark.parametrize("seed", [0, 1])
def test_dense_metric_path_bitwise_with_halvings_ahead(monkeypatch, seed):
    """The structured path (its A-steps, with many halvings: eta and alpha spread over
    decades) is the same bit for bit with one halving per call."""
    rng = np.random.default_rng(seed)
    n, d = 60, 12
    lam = np.sort(rng.uniform(0.0, 5.0, (n, d)), axis=1)
    Bb = rng.normal(size=(n, d)) * np.sqrt(lam)
    yy = (Bb**2).sum(axis=1) + 1.0
    alpha = 10.0 ** rng.uniform(-4, 1, n)
    eta = 10.0 ** rng.uniform(-3, 1, n)

    def path():
        return dense_metric_path(lam, Bb, yy, alpha, eta, max_iter=8, record_path=True)

    monkeypatch.setattr(_lowrank, "HALVINGS_FIRST", 1)
    monkeypatch.setattr(_lowrank, "HALVINGS_LATER", 1)
    monkeypatch.setattr(_lowrank, "HALVINGS_BUDGET", 0)
    ref = path()
    monkeypatch.setattr(_lowrank, "HALVINGS_FIRST", 2)
    monkeypatch.setattr(_lowrank, "HALVINGS_LATER", 4)
    monkeypatch.setattr(_lowrank, "HALVINGS_BUDGET", 2048)
    new = path()
    for name in ("G", "s", "W", "path"):
        assert np.array_equal(getattr(ref, name), getattr(new, name)), name
    assert len(ref.history) == len(new.history) == n  # read lazily, one array a problem
    for h1, h2 in zip(ref.history, new.history):
        assert np.array_equal(h1, h2)


@pytest.mark.parametrize("later, budget", [(1, 0), (4, 0), (4, 2048)])
@pytest.mark.parametrize("max_halvings", [40, 5, 1])
def test_backtrack_ends_once_halvings_ahead_knows_the_rest(later, budget, max_halvings):
    """backtrack with halvings_ahead's ``settled`` ends its loop as soon as every pending
    problem's outcome is known, with the accepted flags, steps and kept values of one
    halving per call; the calls of the test are fewer than the halving rounds."""
    mu0, largest = _problems(2, 300)

    def run(settle):
        kept = np.full(mu0.size, np.nan)
        calls = []

        def evaluate(pi, mu):
            return mu <= largest[pi], (np.cos(pi * mu),)

        def commit(p, values):
            kept[p] = values[0]

        attempt = halvings_ahead(evaluate, commit, mu0.size, 2, later, max_halvings, budget)
        if settle:
            counted = attempt
        else:  # the same attempt without settled: the loop runs every round

            def counted(pi, mu):
                return attempt(pi, mu)

        def with_count(pi, mu):
            calls.append(pi.size)
            return counted(pi, mu)

        if settle:
            with_count.settled = attempt.settled
            with_count.max_halvings = attempt.max_halvings
        accepted, mu = backtrack(mu0, with_count, max_halvings=max_halvings)
        return accepted, mu, kept, len(calls)

    acc1, mu1, kept1, n1 = run(False)
    acc2, mu2, kept2, n2 = run(True)
    assert np.array_equal(acc1, acc2) and np.array_equal(mu1, mu2)
    assert np.array_equal(kept1, kept2, equal_nan=True)
    assert n2 <= n1
    if later > 1 and max_halvings > 2:  # tests ahead of the loop: it ends early
        assert n2 < n1


def test_backtrack_reads_settled_of_its_own_bound_only():
    """An attempt built for another number of halvings than the loop's is run call by
    call (its ``settled`` would answer for its own bound): the result of one halving per
    call with the loop's bound."""
    mu0, largest = _problems(3, 100)

    def evaluate(pi, mu):
        return mu <= largest[pi], (mu,)

    short = halvings_ahead(evaluate, lambda p, v: None, mu0.size, 2, 4, max_halvings=5)
    acc1, mu1 = backtrack(mu0, short, max_halvings=12)
    acc2, mu2 = backtrack(mu0, lambda pi, mu: mu <= largest[pi], max_halvings=12)
    assert np.array_equal(acc1, acc2) and np.array_equal(mu1, mu2)

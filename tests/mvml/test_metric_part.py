"""The Metric part: the one backtracking loop of the A-steps (``mvml._metric.backtrack``)
and the metric kinds (``mvml._metric.METRIC_KINDS``)."""

from __future__ import annotations

import numpy as np
import pytest

from mvkernels.mvml._metric import (
    MAX_BACKTRACK,
    STEP_CAP,
    backtrack,
    dense_step_cap,
    first_step_size,
    metric_step,
    next_step_size,
    sufficient_decrease,
)
from mvkernels.mvml._metric_algebra import PSDFactor


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


def test_step_size_schedule_is_one_rule_for_scalars_and_batches():
    """The first size of an A-step: ||A||_F / ||grad||_F (1 / eta at a zero gradient), then
    twice the accepted step, or half the previous first size after a step given up (none
    yet: the auto rule again); the batch form (the low-rank path's) gives, bit for bit,
    what the scalar form (the dense reference path's) gives on each problem."""
    norm_A, gn = np.array([2.0, 3.0, 1.5]), np.array([4.0, 0.0, 0.3])
    eta = np.array([0.5, 4.0, 1.0])
    batch = first_step_size(norm_A, gn, eta)
    np.testing.assert_array_equal(batch, [0.5, 0.25, 5.0])
    assert list(batch) == [first_step_size(*map(float, t)) for t in zip(norm_A, gn, eta)]
    accepted = np.array([True, False, False])
    mu, prev = np.array([0.3, 0.0, 0.0]), np.array([0.4, 0.8, np.nan])
    batch = next_step_size(accepted, mu, prev)
    np.testing.assert_array_equal(batch, [0.6, 0.4, np.nan])
    scalar = [
        next_step_size(bool(a), float(m), None if np.isnan(p) else float(p))
        for a, m, p in zip(accepted, mu, prev)
    ]
    assert scalar == [0.6, 0.4, None]


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
    from mvkernels.mvml._metric import LEARNED_METRICS, METRIC_KINDS, METRICS, metric_kind
    from mvkernels.mvml._metric_algebra import metric_penalty

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
    from mvkernels.mvml import FullProblem, cov_metric_full
    from mvkernels.mvml._metric import metric_kind

    rng = np.random.default_rng(2)
    Xs = [rng.normal(size=(12, 2)), rng.normal(size=(12, 3))]
    Ks = [X @ X.T for X in Xs]
    problem = FullProblem(12, 2, 12, rng.normal(size=(12, 1)), Ks=Ks)
    np.testing.assert_array_equal(metric_kind("cov").initial(problem), cov_metric_full(Ks))
    np.testing.assert_array_equal(metric_kind("dense").initial(problem), np.eye(24))


def test_initial_metric_is_a_metric_with_its_factor():
    """``MetricKind.initial_metric``: ``A0`` as a Metric whose factor is the one the
    losses computed themselves (``PSDFactor(A0, eig_floor)``, the same numbers), the
    identity's factor ``I`` exactly, and the dense kind tracking ``s I + V V^T``."""
    from mvkernels.mvml import MVMLProblem
    from mvkernels.mvml._metric import MatrixMetric, metric_kind

    rng = np.random.default_rng(2)
    Xs = [rng.normal(size=(12, 2)), rng.normal(size=(12, 3))]
    problem = MVMLProblem.full([X @ X.T for X in Xs], rng.normal(size=(12, 1)))
    cov = metric_kind("cov").initial_metric(problem, eig_floor=1e-8)
    A0 = metric_kind("cov").initial(problem)
    assert isinstance(cov, MatrixMetric) and cov.dim == 24
    np.testing.assert_array_equal(cov.dense(), A0)
    ref = PSDFactor(A0, eig_floor=1e-8)  # singular (centred): the floored eigh factor
    assert cov.factor.kind == ref.kind == "eigh"
    np.testing.assert_array_equal(cov.factor.F, ref.F)
    assert cov.low_rank_form() is None and not cov.is_identity()
    for name in ("dense", "sparse", "identity"):
        m = metric_kind(name).initial_metric(problem)
        np.testing.assert_array_equal(m.dense(), np.eye(24))
        assert m.factor.is_identity and m.is_identity() and m.min_eigenvalue() == 1.0
        assert (m.low_rank_form() is not None) == (name == "dense")
    s, V = metric_kind("dense").initial_metric(problem).low_rank_form()
    assert s == 1.0 and V.shape == (24, 0)


@pytest.mark.parametrize("cls_name", ["MVMLClassifier", "MVMLSVC"])
@pytest.mark.parametrize("n_landmarks", [None, 6])
def test_initial_metric_factored_once_per_fit(cls_name, n_landmarks, monkeypatch):
    """The Cov metric ``A0`` is factored once for a whole regularisation path (every
    ``(alpha, eta)`` of ``_solve_path``, structured or reference path), and the paths
    give what each pair's own fit gives."""
    import mvkernels
    from mvkernels.mvml import _metric_algebra

    rng = np.random.default_rng(4)
    Xs = [rng.normal(size=(30, 3)), rng.normal(size=(30, 2))]
    y = (Xs[0][:, 0] + Xs[1][:, 1] > 0).astype(int)
    est = getattr(mvkernels, cls_name)(metric="cov", n_landmarks=n_landmarks, random_state=0)
    est._check_params()
    problem = est._build_problem(Xs, est._encode_targets(y, 2))
    sizes = []
    init = _metric_algebra.PSDFactor.__init__

    def counted(self, A, *args, **kwargs):
        sizes.append(A.shape[0])
        init(self, A, *args, **kwargs)

    monkeypatch.setattr(_metric_algebra.PSDFactor, "__init__", counted)
    grid = [(0.1, est.eta), (1.0, est.eta), (10.0, est.eta)]
    paths = est._solve_path(problem, grid)
    assert sizes.count(problem.dim) == 1
    monkeypatch.setattr(_metric_algebra.PSDFactor, "__init__", init)
    for (a, _), results in zip(grid, paths):
        alone = est.set_params(alpha=a)._solve(problem)
        for r, q in zip(results, alone):
            np.testing.assert_allclose(r.g, q.g, rtol=0, atol=1e-10 * np.abs(q.g).max())


def _written_out_step(A, g, alpha, eta, kind, n_views, mu0, max_backtrack=MAX_BACKTRACK):
    """The A-step's halving loop written out (``metric_step`` before it ran ``backtrack``),
    with the formulas of eq. 9 / 16 (dense) and eq. 12 / 18 (sparse) inline: the oracle."""
    from mvkernels.mvml._metric_algebra import (
        NotPSDError,
        dense_metric_update,
        sparse_metric_update,
    )

    factor = PSDFactor(A)
    q = factor.solve(g)
    s0 = alpha * float(g @ q)
    if kind == "dense":
        s0 += eta * float(np.sum(A * A))
    mu = min(float(mu0), STEP_CAP / eta) if kind == "dense" else float(mu0)
    for _ in range(max_backtrack):
        if kind == "dense":
            A_new = dense_metric_update(A, q, alpha, eta, mu)
        else:
            A_new = sparse_metric_update(A, q, alpha, eta, mu, n_views)
        try:
            f_new = PSDFactor(A_new, require_pd=kind == "dense")
        except NotPSDError:
            mu *= 0.5
            continue
        if f_new.range_residual(g) > 1e-8:
            mu *= 0.5
            continue
        D = A_new - A
        lin = -alpha * float(q @ D @ q)
        s_new = alpha * f_new.quad(g)
        if kind == "dense":
            lin += 2.0 * eta * float(np.sum(A * D))
            s_new += eta * float(np.sum(A_new * A_new))
        if s_new <= s0 + lin + float(np.sum(D * D)) / (2.0 * mu) + 1e-12 * abs(s0):
            return A_new, mu
        mu *= 0.5
    return A, 0.0


@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("mu0", [1e-3, 0.7, 50.0])
def test_metric_step_is_the_written_out_backtracking_bitwise(kind, mu0):
    # metric_step runs backtrack on a batch of one, the kind's candidate and smooth terms:
    # the same tries, the same accepted step and metric to the last bit (several halvings
    # from mu0 = 50; a give-up with max_backtrack = 2)
    from mvkernels.mvml._metric import metric_kind

    rng = np.random.default_rng(3)
    B = rng.normal(size=(6, 6))
    A = B @ B.T / 6 + 0.1 * np.eye(6)
    g = rng.normal(size=6)
    for limit in (MAX_BACKTRACK, 2):
        A_ref, mu_ref = _written_out_step(A, g, 0.9, 0.4, kind, 3, mu0, limit)
        for k in (kind, metric_kind(kind)):
            A1, f1, mu1 = metric_step(A, PSDFactor(A), g, 0.9, 0.4, k, 3, mu0, max_backtrack=limit)
            assert mu1 == mu_ref
            np.testing.assert_array_equal(A1, A_ref)
            np.testing.assert_array_equal(f1.F @ f1.F.T, PSDFactor(A_ref).F @ PSDFactor(A_ref).F.T)


def test_metric_step_halving_is_backtrack_for_both_storages(monkeypatch):
    # one halving loop: the matrix step and the batched low-rank step both go through
    # mvml._metric.backtrack (no loop of their own)
    from mvkernels.mvml import _lowrank, _metric

    calls = []

    def spy(mu0, attempt, max_halvings=MAX_BACKTRACK):
        calls.append(len(mu0))
        return backtrack(mu0, attempt, max_halvings)

    monkeypatch.setattr(_metric, "backtrack", spy)
    monkeypatch.setattr(_lowrank, "backtrack", spy)
    g = np.array([1.0, -2.0, 0.5, 0.0])
    for kind in ("dense", "sparse"):
        metric_step(np.eye(4), PSDFactor(np.eye(4)), g, 1.0, 0.5, kind, 2, 0.1)
    _lowrank.LowRankMetric.identity(4).a_step(g, 1.0, 0.5, "dense", 2, 0.1)
    assert calls == [1, 1, 1]


def test_metric_step_refuses_a_fixed_or_unknown_kind():
    from mvkernels.mvml._metric import metric_kind

    A = np.eye(4)
    for kind in ("identity", "cov", "diag", metric_kind("cov")):
        with pytest.raises(ValueError, match="kind must be one of dense, sparse"):
            metric_step(A, PSDFactor(A), np.ones(4), 1.0, 1.0, kind, 2, 0.1)
    with pytest.raises(ValueError, match="metric 'cov' is fixed"):
        metric_kind("cov").candidate(A, np.ones(4), 1.0, 1.0, 0.1, 2, "mu_eta")
    assert metric_kind("sparse").capped_step(50.0, 0.4) == 50.0
    assert metric_kind("dense").capped_step(50.0, 0.4) == STEP_CAP / 0.4

"""The loop bodies around the one Algorithm-1 driver (``mvml._driver.run_paths``): the
declared parts of a body run in order, and each loss's batched path (the square loss's
``SquarePaths``, the hinge loss's ``HingePaths``) ends with Algorithm 1's objective of
its returned metric and ``g``, computed here from the formulas."""

from __future__ import annotations

import numpy as np
import pytest

from mvkernels import MVMLSVC
from mvkernels.mvml._base import _BaseMVML
from mvkernels.mvml._driver import PathResult, PathState, run_paths
from mvkernels.mvml._hinge_loss import HingeLoss
from mvkernels.mvml._square_paths import dense_metric_path


class _Toy:
    """A body whose problem 0 has a constant objective (it stops after 2 iterations) and
    problem 1 a halving one (it never stops); it records the calls."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def g_steps(self, it, idx):
        rows = np.arange(2)[idx]
        self.calls.append(("g", it, rows.tolist()))
        self.it = it
        return np.column_stack([rows + 10.0 * it, np.zeros(rows.size)])

    def a_steps(self, idx, G):
        self.calls.append(("a", np.arange(2)[idx].tolist(), G[:, 0].tolist()))

    def objective(self, idx, G):
        rows = np.arange(2)[idx]
        self.calls.append(("obj", rows.tolist()))
        return np.array([[1.0, 0.5**self.it][r] for r in rows])

    def finish(self, run):
        self.calls.append(("finish",))
        run.finish_all(np.zeros(2))
        return run


def test_run_paths_runs_the_declared_parts_in_order_and_stops_each_problem():
    body = _Toy()
    run = run_paths(body, PathState.start(2, 2, 4, record_path=True), 4, 1e-9)
    assert body.calls == [
        ("g", 0, [0, 1]),
        ("a", [0, 1], [0.0, 1.0]),
        ("obj", [0, 1]),
        ("g", 1, [0, 1]),
        ("a", [0, 1], [10.0, 11.0]),
        ("obj", [0, 1]),
        ("g", 2, [1]),
        ("a", [1], [21.0]),
        ("obj", [1]),
        ("g", 3, [1]),
        ("a", [1], [31.0]),
        ("obj", [1]),
        ("finish",),
    ]
    np.testing.assert_array_equal(run.n_iter, [2, 4])
    np.testing.assert_array_equal(run.converged, [True, False])
    assert run.histories[0] == [1.0, 1.0, 0.0]


@pytest.mark.parametrize("shared", [True, False], ids=["one-spectrum", "per-problem"])
def test_square_path_ends_with_the_objective_of_its_metric(rng, shared):
    """``dense_metric_path``'s last objective is ``||y - U D_w g||^2 + alpha <g, A^{-1}
    g> + eta ||A||_F^2`` with ``A = s I + W W^T`` and ``g`` as returned (eigenbasis:
    ``||y - U D_w g||^2 = y^T y - 2 b^T g + sum_k lam_k g_k^2``)."""
    n, d = 3, 5
    lam = rng.uniform(0.1, 3.0, size=d if shared else (n, d))
    Bb = rng.normal(size=(n, d))
    yy = (Bb**2 / np.broadcast_to(lam, (n, d))).sum(axis=1) + rng.uniform(0.5, 1.0, size=n)
    alpha, eta = np.array([0.1, 0.3, 1.0]), np.array([0.5, 0.05, 0.2])
    res = dense_metric_path(lam, Bb, yy, alpha, eta, max_iter=4, n_a_steps=2, record_path=True)
    for i in range(n):
        g = res.G[i]
        A = res.s[i] * np.eye(d) + res.W[i] @ res.W[i].T
        lam_i = np.broadcast_to(lam, (n, d))[i]
        data = max(yy[i] - 2 * Bb[i] @ g + lam_i @ g**2, 0.0)
        obj = data + alpha[i] * g @ np.linalg.solve(A, g) + eta[i] * np.sum(A * A)
        np.testing.assert_allclose(res.history[i][-1], obj, rtol=1e-10)
        # the last recorded g-step is the final one
        np.testing.assert_array_equal(res.path[i, res.n_iter[i] - 1], g)


def _svc_problem(**kw):
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(3), 15)
    Xs = [rng.normal(size=(y.size, 4)), rng.normal(size=(y.size, 3))]
    Xs[0][:, 0] += 1.5 * y
    Xs[1][:, 1] -= 1.5 * (y % 2)
    params = dict(
        alpha=1e-2,
        eta=0.5,
        max_iter=3,
        n_landmarks=12,
        joint_view=False,
        multi_class="ovr",
        random_state=0,
    )
    clf = MVMLSVC(**{**params, **kw})
    clf._check_params()
    Y = np.where(y[:, None] == np.arange(3), 1.0, -1.0)
    return clf, clf._build_problem(Xs, Y)


@pytest.mark.parametrize("tol", [None, 1e-3])
def test_hinge_path_ends_with_the_objective_of_its_metric(tol):
    """The hinge path's results (``HingePaths.finish``): every last objective is ``C sum_i
    max(0, 1 - y_i phi_i^T g) + alpha <g, A^{-1} g> + eta ||A||_F^2`` for the returned
    metric and ``g`` (``C = 1 / n``), each a :class:`PathResult` whose last recorded
    g-step is ``g``."""
    clf, problem = _svc_problem(tol=tol)
    results = _BaseMVML._solve(clf, problem)
    assert clf.solver_ == "structured"
    Phi = HingeLoss(clf).phi(problem, results[0].w)
    for t, r in enumerate(results):
        assert type(r) is PathResult
        A = r.metric.dense()
        m = problem.Y[:, t] * (Phi @ r.g)
        obj = np.maximum(0.0, 1.0 - m).sum() / problem.n_samples
        obj += clf.alpha * r.g @ np.linalg.solve(A, r.g) + clf.eta * np.sum(A * A)
        np.testing.assert_allclose(r.history[-1], obj, rtol=1e-9)
        np.testing.assert_array_equal(r.path[-1], r.g)
        assert len(r.history) == r.n_iter + 1


def test_hinge_paths_of_several_eta_equal_one_eta_at_a_time():
    """``HingeLoss.dense_paths`` runs every ``(eta, target)`` in one batch, sharing the
    first g-step: each path equals the run at its ``eta`` alone (to rounding), with the
    same first g-step."""
    clf, problem = _svc_problem()
    loss = HingeLoss(clf)
    w = np.full(problem.n_views, 1.0 / problem.n_views)
    Phi = loss.phi(problem, w)
    etas = [0.05, 0.5, 5.0]
    both = loss.dense_paths(problem, Phi, w, etas)
    T = problem.n_targets
    assert len(both.results) == len(etas) * T and len(both.first_margins) == T
    for e, eta in enumerate(etas):
        alone = loss.dense_paths(problem, Phi, w, [eta])
        for t in range(T):
            a, b = both.results[e * T + t], alone.results[t]
            scale = np.abs(b.path).max()
            np.testing.assert_allclose(a.path, b.path, rtol=0, atol=1e-10 * scale)
            np.testing.assert_allclose(a.history, b.history, rtol=1e-10)
            # the first g-step (A = I) does not depend on eta: the same margins
            np.testing.assert_array_equal(both.first_margins[t], alone.first_margins[t])

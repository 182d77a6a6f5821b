"""Algorithm 1's one outer loop (``mvml._driver.alternate``), its bookkeeping, and the
dense reference path batched over targets (``reference_paths``)."""

from __future__ import annotations

import numpy as np
import pytest

from mvkernels import MVMLSVC, MVMLClassifier, MVMLRegressor
from mvkernels.mvml._driver import PathState, alternate, reference_path, reference_paths
from mvkernels.mvml._metric import PSDFactor


def test_alternate_stops_each_problem_on_its_own_and_records_the_path():
    run = PathState.start(3, 2, max_iter=5, record_path=True)
    seen = []

    def iteration(it, idx):
        rows = np.arange(3)[idx]
        seen.append(rows.tolist())
        # problem 0: objective constant from the start (stops after 2 iterations),
        # problem 1: halves (never within tol), problem 2: constant from iteration 2 on
        obj = np.array([[1.0, 0.5**it, 1.0 if it >= 1 else 3.0][r] for r in rows])
        g = np.column_stack([rows + 10.0 * it, -rows.astype(float)])
        return g, obj

    alternate(run, 5, 1e-9, iteration)
    assert seen == [[0, 1, 2], [0, 1, 2], [1, 2], [1], [1]]
    np.testing.assert_array_equal(run.n_iter, [2, 5, 3])
    np.testing.assert_array_equal(run.converged, [True, False, True])
    assert run.histories[2] == [3.0, 1.0, 1.0]
    # path[:, k] is iteration k + 1's g-step; the final g-step fills the last slot
    np.testing.assert_array_equal(run.path[1, :4, 0], [11.0, 21.0, 31.0, 41.0])
    run.finish(0, np.array([7.0, 7.0]), 0.25)
    np.testing.assert_array_equal(run.path[0, 1], [7.0, 7.0])
    assert run.histories[0][-1] == 0.25


def test_alternate_without_tol_runs_every_iteration():
    run = PathState.start(2, 1, max_iter=3, record_path=False)
    alternate(run, 3, None, lambda it, idx: (np.zeros((2, 1)), np.ones(2)))
    np.testing.assert_array_equal(run.n_iter, [3, 3])
    assert not run.converged.any() and run.path is None


# ------------------------------------------------------------- the batched reference path
def _data(n=48, seed=0):
    rng = np.random.RandomState(seed)
    Xs = [rng.randn(n, 5), rng.randn(n, 4)]
    Y = np.column_stack(
        [
            np.sin(Xs[0][:, 0]) + Xs[1][:, 1],
            Xs[0][:, 1] * Xs[1][:, 0],
            np.cos(Xs[1][:, 2]) - Xs[0][:, 2],
        ]
    ) + 0.1 * rng.randn(n, 3)
    labels = np.argmax(Y, axis=1)  # three classes
    return Xs, Y, labels


#: the variants that take the dense reference path (estimator, parameters, targets)
_REFERENCE_VARIANTS = {
    "sparse, classes": (MVMLClassifier, dict(metric="sparse", n_landmarks=8), "labels"),
    "sparse with tol, outputs": (
        MVMLRegressor,
        dict(metric="sparse", n_landmarks=8, tol=2e-2, max_iter=12),
        "Y",
    ),
    "weights, classes": (MVMLClassifier, dict(learn_weights=True, n_landmarks=8), "labels"),
    "weights, identity, outputs": (
        MVMLRegressor,
        dict(learn_weights=True, metric="identity", n_landmarks=8),
        "Y",
    ),
    "full, dense, classes": (MVMLClassifier, dict(n_landmarks=None, max_iter=4), "labels"),
    "full, sparse + weights, outputs": (
        MVMLRegressor,
        dict(n_landmarks=None, metric="sparse", learn_weights=True, max_iter=4),
        "Y",
    ),
    "full, cov, outputs": (MVMLRegressor, dict(n_landmarks=None, metric="cov"), "Y"),
    "dense solver, intercept, classes": (
        MVMLClassifier,
        dict(solver="dense", n_landmarks=8, fit_intercept=True, max_iter=4),
        "labels",
    ),
    "hinge, sparse, classes": (MVMLSVC, dict(metric="sparse", n_landmarks=8, max_iter=4), "labels"),
}


def _reference_problem(cls, params, which):
    Xs, Y, labels = _data()
    est = cls(random_state=0, **params)
    est._check_params()
    if which == "labels":
        classes, yi = np.unique(labels, return_inverse=True)
        T = est._encode_targets(yi, classes.size)
    else:
        T = Y
    problem = est._build_problem(Xs, T)
    loss = est._make_loss()
    A0 = est._initial_metric(problem)
    return loss, loss.with_intercept(problem), A0


def _assert_same_result(a, b, rtol=1e-10):
    assert a["n_iter"] == b["n_iter"] and a["converged"] == b["converged"]
    for key in ("g", "w", "A", "history", "path", "path_w"):
        x, y = np.asarray(a[key]), np.asarray(b[key])
        scale = max(np.abs(y).max(), 1e-300)
        np.testing.assert_allclose(x, y, rtol=0, atol=rtol * scale, err_msg=key)
    if "metric_lowrank" in b:
        np.testing.assert_allclose(a["metric_lowrank"][1], b["metric_lowrank"][1], atol=1e-10)


@pytest.mark.parametrize("variant", list(_REFERENCE_VARIANTS))
def test_batched_reference_path_equals_per_target_paths(variant, monkeypatch):
    """Every target of the batch gets the path it gets alone (to 1e-10), and the batch
    shares the first g-step: one ``g_steps`` call for every target."""
    loss, problem, A0 = _reference_problem(*_REFERENCE_VARIANTS[variant])
    assert not loss.structured_applies(problem)
    T = problem.n_targets
    calls = []
    g_steps = type(loss).g_steps

    def counted(self, problem, targets, *args):
        calls.append(len(targets))
        return g_steps(self, problem, targets, *args)

    monkeypatch.setattr(type(loss), "g_steps", counted)
    batch = reference_paths(loss, problem, A0, record_path=True)
    assert calls[0] == T  # A0 and w = 1/v: one g-step for every target
    if not (loss.metric_kind.learned or loss.learn_weights):
        assert calls == [T]  # a fixed metric with fixed weights: one solve in all
    calls.clear()
    for t in range(T):
        alone = reference_path(loss, problem, t, A0, record_path=True)
        assert set(calls) == {1}
        _assert_same_result(batch[t], alone)


def test_batched_reference_path_with_targets_stopping_apart():
    """With ``tol``, targets stop after different numbers of iterations; the running
    ones still batch nothing wrong (the per-target paths, to 1e-10)."""
    loss, problem, A0 = _reference_problem(*_REFERENCE_VARIANTS["sparse with tol, outputs"])
    batch = reference_paths(loss, problem, A0, record_path=True)
    n_iter = [r["n_iter"] for r in batch]
    assert len(set(n_iter)) > 1 and min(n_iter) < loss.max_iter
    for t in (2, 0, 1):  # any order of the targets
        _assert_same_result(reference_paths(loss, problem, A0, [t], record_path=True)[0], batch[t])


@pytest.mark.parametrize(
    "params",
    [
        dict(metric="sparse", n_landmarks=8),
        dict(learn_weights=True, n_landmarks=None, max_iter=4),
        dict(metric="cov", n_landmarks=None),
    ],
)
def test_multi_output_fit_equals_per_output_fits(params):
    """A multi-output regressor on the reference path equals one fit per output."""
    Xs, Y, _ = _data()
    both = MVMLRegressor(random_state=0, **params).fit(Xs, Y)
    assert both.solver_ == "dense"
    for t in range(Y.shape[1]):
        one = MVMLRegressor(random_state=0, **params).fit(Xs, Y[:, t])
        scale = np.abs(one.coef_).max()
        np.testing.assert_allclose(both.coef_[t], one.coef_, rtol=0, atol=1e-10 * scale)
        np.testing.assert_allclose(both.predict(Xs)[:, t], one.predict(Xs), rtol=1e-10)


def test_identity_factor_is_the_factor_of_the_identity():
    f, g = PSDFactor.identity(4), PSDFactor(np.eye(4))
    assert f.is_identity and not g.is_identity and f.kind == g.kind == "cholesky"
    np.testing.assert_array_equal(f.F, g.F)
    b = np.arange(4.0)
    np.testing.assert_array_equal(f.solve(b), g.solve(b))
    assert f.quad(b) == g.quad(b) and f.rank == 4

"""Algorithm 1's one outer loop (``mvml._driver.alternate``), its bookkeeping, and the
dense reference path batched over targets (``reference_paths``)."""

from __future__ import annotations

import numpy as np
import pytest

from mvkernels import MVMLSVC, MVMLClassifier, MVMLRegressor
from mvkernels.mvml import _driver as driver
from mvkernels.mvml import _losses as losses
from mvkernels.mvml._driver import PathState, alternate, reference_paths
from mvkernels.mvml._metric_algebra import PSDFactor


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


def objective_converged(history, tol):
    """The stopping rule on one history, as a plain scalar reference: the last relative
    decrease of the objective, ``|h[-2] - h[-1]| <= tol |h[-2]|``, is at most ``tol``
    (``tol=None``: never)."""
    if tol is None or len(history) < 2:
        return False
    return abs(history[-2] - history[-1]) <= tol * max(abs(history[-2]), np.finfo(float).tiny)


def test_record_stops_as_objective_converged_on_each_history(rng):
    """PathState.record writes the histories a batch at a time and stops a problem exactly
    when objective_converged on its own list says so (ties at the tolerance, equal
    values, NaN and inf objectives included); finish and finish_all append the final
    objective, history(i) returns the values as recorded."""
    n, max_iter, tol = 40, 6, 1e-3
    base = rng.uniform(0.5, 2.0, size=n)
    steps = rng.choice([0.0, 5e-4, 1e-3, 0.02, np.nan, np.inf], size=(max_iter, n))
    table = base * np.cumprod(1.0 - np.nan_to_num(steps, nan=0.0, posinf=0.0), axis=0)
    table[np.isnan(steps)] = np.nan
    table[np.isinf(steps)] = np.inf
    table[3, 0] = table[2, 0] * (1.0 - tol)  # the bound hit exactly (to rounding)
    run = PathState.start(n, 1, max_iter, record_path=False)
    lists = [[] for _ in range(n)]
    alive = np.ones(n, dtype=bool)
    for it in range(max_iter):
        idx = run.idx
        rows = np.arange(n)[idx]
        np.testing.assert_array_equal(rows, np.flatnonzero(alive))
        if rows.size == 0:
            break
        run.record(it, np.zeros((rows.size, 1)), table[it, rows], tol)
        for i in rows:
            lists[i].append(float(table[it, i]))
            alive[i] = not objective_converged(lists[i], tol)
    np.testing.assert_array_equal(run.converged, ~alive)
    for i in range(n):
        np.testing.assert_array_equal(run.history(i), lists[i])
        assert run.histories[i] == lists[i] or np.isnan(lists[i]).any()
    run.finish(1, np.zeros(1), 0.5)
    run.finish_all(np.arange(n, dtype=float))
    assert run.histories[1][-2:] == [0.5, 1.0] and run.history(0)[-1] == 0.0
    assert len(run.histories) == n and len(list(run.histories)) == n


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
    metric0 = est._initial_metric(problem)
    return loss, loss.with_intercept(problem), metric0


def _assert_same_result(a, b, rtol=1e-10):
    assert a.n_iter == b.n_iter and a.converged == b.converged
    ma, mb = a.metric, b.metric
    for key in ("g", "w", "A", "history", "path", "path_w"):
        x, y = (ma.dense(), mb.dense()) if key == "A" else (getattr(a, key), getattr(b, key))
        x, y = np.asarray(x), np.asarray(y)
        scale = max(np.abs(y).max(), 1e-300)
        np.testing.assert_allclose(x, y, rtol=0, atol=rtol * scale, err_msg=key)
    assert (ma.low_rank_form() is None) == (mb.low_rank_form() is None)
    if mb.low_rank_form() is not None:
        np.testing.assert_allclose(ma.low_rank_form()[1], mb.low_rank_form()[1], atol=1e-10)


@pytest.mark.parametrize("variant", list(_REFERENCE_VARIANTS))
def test_batched_reference_path_equals_per_target_paths(variant, monkeypatch):
    """Every target of the batch gets the path it gets alone (to 1e-10), and the batch
    shares the first g-step: one ``g_steps`` call for every target."""
    loss, problem, metric0 = _reference_problem(*_REFERENCE_VARIANTS[variant])
    assert not loss.structured_applies(problem)
    T = problem.n_targets
    calls = []
    g_steps = type(loss).g_steps

    def counted(self, problem, targets, *args):
        calls.append(len(targets))
        return g_steps(self, problem, targets, *args)

    monkeypatch.setattr(type(loss), "g_steps", counted)
    batch = reference_paths(loss, problem, metric0, record_path=True)
    assert calls[0] == T  # A0 and w = 1/v: one g-step for every target
    if not (loss.metric_kind.learned or loss.learn_weights):
        assert calls == [T]  # a fixed metric with fixed weights: one solve in all
    calls.clear()
    for t in range(T):
        alone = reference_paths(loss, problem, metric0, [t], record_path=True)[0]
        assert set(calls) == {1}
        _assert_same_result(batch[t], alone)


def test_batched_reference_path_with_targets_stopping_apart():
    """With ``tol``, targets stop after different numbers of iterations; the running
    ones still batch nothing wrong (the per-target paths, to 1e-10)."""
    loss, problem, metric0 = _reference_problem(*_REFERENCE_VARIANTS["sparse with tol, outputs"])
    batch = reference_paths(loss, problem, metric0, record_path=True)
    n_iter = [r.n_iter for r in batch]
    assert len(set(n_iter)) > 1 and min(n_iter) < loss.max_iter
    for t in (2, 0, 1):  # any order of the targets
        alone = reference_paths(loss, problem, metric0, [t], record_path=True)[0]
        _assert_same_result(alone, batch[t])


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


# ------------------------------------------------------- batched over the regularisation path
_GRID = [(0.3, 0.5), (0.3, 2.0), (2.0, 0.5), (2.0, 2.0)]


def _at(cls, params, alpha, eta):
    """The loss of an estimator built at ``(alpha, eta)`` (not through ``Loss.at``)."""
    est = cls(random_state=0, alpha=alpha, eta=eta, **params)
    est._check_params()
    return est._make_loss()


@pytest.mark.parametrize("variant", list(_REFERENCE_VARIANTS))
def test_regularisation_path_equals_per_pair_runs(variant, monkeypatch):
    """Every ``(alpha, eta)`` of a grid run as one batch gets the results of a run at that
    pair alone (to 1e-10); a loss without solver state computes the first g-steps of every
    ``alpha`` in one ``g_steps_path`` call (the ``eta`` of an ``alpha`` share theirs), the
    hinge loss one ``g_steps`` call per ``alpha`` (its solver state copied to the etas)."""
    cls, params, which = _REFERENCE_VARIANTS[variant]
    loss, problem, metric0 = _reference_problem(cls, params, which)
    T = problem.n_targets
    calls = []
    for name in ("g_steps", "g_steps_path"):
        method = getattr(type(loss), name)

        def counted(self, problem, targets, *args, _name=name, _method=method):
            calls.append((_name, len(targets), float(self.alpha)))
            return _method(self, problem, targets, *args)

        monkeypatch.setattr(type(loss), name, counted)
    batch = reference_paths(loss, problem, metric0, record_path=True, grid=_GRID)
    assert len(batch) == len(_GRID) * T
    if loss.new_state() is None:
        assert calls[0] == ("g_steps_path", T, _GRID[0][0])
    else:  # one call per alpha, its etas' solver states copied
        assert calls[:2] == [("g_steps", T, _GRID[0][0]), ("g_steps", T, _GRID[2][0])]
    for p, (a, e) in enumerate(_GRID):
        alone = reference_paths(_at(cls, params, a, e), problem, metric0, record_path=True)
        for t in range(T):
            _assert_same_result(batch[p * T + t], alone[t])


def test_regularisation_path_in_chunks_equals_one_batch(monkeypatch):
    """A grid over the memory budget runs in chunks of whole alphas: the same results."""
    loss, problem, metric0 = _reference_problem(*_REFERENCE_VARIANTS["weights, classes"])
    whole = reference_paths(loss, problem, metric0, record_path=True, grid=_GRID)
    T, d = problem.n_targets, metric0.dim
    monkeypatch.setattr(driver, "GRID_BYTES", 2 * T * 16 * d * d)  # two pairs a chunk
    assert driver._grid_chunks(_GRID, T * 16 * d * d) == [_GRID[:2], _GRID[2:]]
    assert driver._grid_chunks(_GRID[1:], T * 16 * d * d) == [_GRID[1:2], _GRID[2:]]
    for a, b in zip(reference_paths(loss, problem, metric0, record_path=True, grid=_GRID), whole):
        _assert_same_result(a, b)


@pytest.mark.parametrize("by", ["cholesky", "eigh"])
@pytest.mark.parametrize("mode", ["nystrom", "full"])
@pytest.mark.parametrize("factor_kind", ["identity", "cholesky", "eigh"])
def test_square_loss_g_steps_path_equals_g_steps_at_each_alpha(mode, factor_kind, by, monkeypatch):
    """The square-loss g-steps at several alphas (eq. 8 / 15), by a Cholesky factorisation
    per alpha or, from ``EIGH_PATH_MIN_ALPHAS`` alphas on, one eigendecomposition for all:
    the solves of ``g_steps`` to 1e-10, for the factor of ``I``, of a positive definite
    metric and of a singular one."""
    monkeypatch.setattr(losses, "EIGH_PATH_MIN_ALPHAS", 1 if by == "eigh" else 16)
    cls, params, _ = _REFERENCE_VARIANTS[
        "full, dense, classes" if mode == "full" else "sparse, classes"
    ]
    loss, problem, metric0 = _reference_problem(cls, params, "labels")
    d, v, T = metric0.dim, problem.n_views, problem.n_targets
    rng = np.random.RandomState(1)
    B = rng.randn(d, d - 3 if factor_kind == "eigh" else d)
    factor = {
        "identity": PSDFactor.identity(d),
        "cholesky": PSDFactor(B @ B.T / d + 0.1 * np.eye(d)),
        "eigh": PSDFactor(B @ B.T / d),
    }[factor_kind]
    assert factor.kind == ("eigh" if factor_kind == "eigh" else "cholesky")
    w = rng.dirichlet(np.ones(v))
    alphas = np.array([0.05, 1.0, 20.0])
    got = loss.g_steps_path(problem, [2, 0], factor, w, alphas)
    assert got.shape == (3, 2, d)
    for i, a in enumerate(alphas):
        want = loss.at(a, loss.eta).g_steps(problem, [2, 0], factor, w, [None, None])
        np.testing.assert_allclose(got[i], want, rtol=0, atol=1e-10 * np.abs(want).max())
    assert T == 3


def test_solve_path_of_a_structured_fit_equals_per_pair_fits():
    """``_solve_path`` on a fit the structured solver takes (the hinge loss, identity
    metric) runs each pair as the estimator set to that pair would."""
    Xs, _, labels = _data()
    est = MVMLSVC(metric="identity", n_landmarks=8, random_state=0)
    est._check_params()
    Y = est._encode_targets(labels, 3)
    problem = est._build_problem(Xs, Y)
    grid = [(0.3, 1.0), (2.0, 1.0)]
    per_pair = est._solve_path(problem, grid, record_path=True)
    assert est.solver_ == "structured"
    for (a, _), res in zip(grid, per_pair):
        one = MVMLSVC(metric="identity", n_landmarks=8, random_state=0, alpha=a)
        one._check_params()
        for r, s in zip(res, one._solve(one._build_problem(Xs, Y), record_path=True)):
            np.testing.assert_allclose(r.g, s.g, rtol=0, atol=1e-10 * np.abs(s.g).max())
            assert r.intercept == s.intercept


@pytest.mark.parametrize(
    "params",
    [
        dict(metric="sparse", n_landmarks=10),
        dict(learn_weights=True, n_landmarks=None),
        dict(metric="sparse", learn_weights=True, n_landmarks=None),
    ],
    ids=["sparse", "full, weights", "full, sparse + weights"],
)
def test_cv_over_a_grid_scores_each_pair_as_alone(params):
    """A CV whose folds run the whole (alpha, eta) grid as one batch (the fold paths in
    Nystrom mode, the full-kernel search) scores every candidate as a CV over that pair
    alone (R^2, to 1e-10)."""
    from mvkernels import MVMLRegressorCV

    Xs, Y, _ = _data(n=45)
    common = dict(bandwidth_factors=[2.0], cv=3, max_iter=3, joint_view=False, random_state=0)
    grid = MVMLRegressorCV(alphas=[0.1, 1.0], etas=[0.1, 1.0], **common, **params).fit(Xs, Y[:, :2])
    res = grid.cv_results_
    for a in (0.1, 1.0):
        for e in (0.1, 1.0):
            one = MVMLRegressorCV(alphas=[a], etas=[e], **common, **params).fit(Xs, Y[:, :2])
            for p, score in zip(one.cv_results_["params"], one.cv_results_["mean_test_score"]):
                i = res["params"].index(p)
                np.testing.assert_allclose(res["mean_test_score"][i], score, rtol=0, atol=1e-10)

"""solver="cg": the conjugate-gradient g-step (mvml/_iterative.py) against the direct
structured solver, its matrix-free products, and its errors.

The CG stops at a relative residual of ``CG_TOL = 1e-8``; the fits below then agree with
the direct solver's to 1e-6 relative (coefficients, decision values, objective values).
The preconditioner's subsample is cut to 40 rows (``PRECONDITIONER_MIN_ROWS``) so that
the CG iterates instead of solving with an exact preconditioner."""

import math

import numpy as np
import pytest

from mvkernels import MVMLClassifier, MVMLRegressor, MVMLRegressorCV
from mvkernels.mvml import AUTO_FEATURE_BUDGET, _iterative, auto_n_landmarks, grown_n_landmarks
from mvkernels.mvml._iterative import (
    CGStep,
    DesignOperator,
    batched_pcg,
    preconditioner_rows,
    row_statistics_problem,
)

RTOL = 1e-6


@pytest.fixture
def small_subsample(monkeypatch):
    monkeypatch.setattr(_iterative, "PRECONDITIONER_MIN_ROWS", 40)
    monkeypatch.setattr(_iterative, "PRECONDITIONER_ROWS_PER_FEATURE", 0)


def _data(rng, n=150):
    Xs = [rng.standard_normal((n, 4)), rng.standard_normal((n, 3)), rng.standard_normal((n, 2))]
    y = Xs[0][:, 0] + np.sin(2 * Xs[1][:, 1]) + Xs[2][:, 0] * Xs[0][:, 1]
    return Xs, y + 0.1 * rng.standard_normal(n)


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


def test_batched_pcg_solves_each_system(rng):
    """Each row of the batch is its own SPD system with its own preconditioner."""
    k, nb = 30, 3
    mats = []
    for i in range(nb):
        G = rng.standard_normal((k, k))
        mats.append(G @ G.T + (i + 0.1) * np.eye(k))
    B = rng.standard_normal((nb, k))
    diag = np.stack([np.diag(K) for K in mats])

    X, KX, it, res = batched_pcg(
        lambda X: np.stack([K @ x for K, x in zip(mats, X)]),
        lambda R: R / diag,  # Jacobi
        B,
        np.zeros_like(B),
        tol=1e-12,
        max_iter=500,
    )
    ref = np.stack([np.linalg.solve(K, b) for K, b in zip(mats, B)])
    np.testing.assert_allclose(X, ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(KX, B, atol=1e-9)
    assert res.max() <= 1e-12 and 0 < it < 500


def test_preconditioner_rows_rule():
    assert preconditioner_rows(100, 50) == 100  # all rows when n is small
    assert preconditioner_rows(10**6, 300) == max(_iterative.PRECONDITIONER_MIN_ROWS, 600)
    assert preconditioner_rows(10**6, 3000) == 6000


@pytest.mark.parametrize("centred", [False, True])
@pytest.mark.parametrize("cache", [0, 2**30])
def test_design_operator_streams_the_statistics(rng, centred, cache):
    """The row-streamed product (kernel blocks, normalisers on the vector side, centred
    per chunk) equals the product with the statistics ``D_w C D_w``."""
    Xs, y = _data(rng)
    est = MVMLRegressor(n_landmarks=20, random_state=0, joint_view=False, fit_intercept=False)
    est._check_params()
    problem = est._build_problem(Xs, y[:, None])
    lean = row_statistics_problem(problem.row_data.feature_map, problem.row_data.Xs, y[:, None])
    assert lean.stats.gram is None
    np.testing.assert_allclose(lean.stats.cross, problem.stats.cross, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(lean.stats.feature_sum, problem.stats.feature_sum, rtol=1e-10)
    if centred:
        problem, lean = problem.centred(), lean.centred()
        np.testing.assert_allclose(lean.stats.cross, problem.stats.cross, atol=1e-9)
    w = np.array([0.5, 0.3, 0.2])
    X = rng.standard_normal((problem.dim, 2))
    rows = DesignOperator(lean, w, cache_bytes=cache)
    stats = DesignOperator(problem, w)
    for _ in range(2):  # the second pass reads the kept chunks when they fit
        np.testing.assert_allclose(rows.apply(X), stats.apply(X), rtol=1e-9, atol=1e-9)
    assert rows.n_products == 2 and not rows.from_statistics and stats.from_statistics


TARGETS = {
    "regression": (MVMLRegressor, lambda y: y),
    "multiclass": (MVMLClassifier, lambda y: np.digitize(y, [-1.0, 0.0, 1.0])),
}


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("metric", ["identity", "cov", "dense"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_cg_equals_the_direct_solver(rng, small_subsample, target, metric, fit_intercept):
    cls, make_y = TARGETS[target]
    Xs, y = _data(rng)
    kw = dict(alpha=0.05, eta=0.5, metric=metric, n_landmarks=25, fit_intercept=fit_intercept)
    ref = cls(random_state=0, **kw).fit(Xs, make_y(y))
    got = cls(random_state=0, solver="cg", **kw).fit(Xs, make_y(y))
    assert ref.solver_ == got.solver_ == "structured"
    assert _rel(got.coef_, ref.coef_) < RTOL
    assert _rel(got.intercept_, ref.intercept_) < RTOL or np.allclose(ref.intercept_, 0)
    out = "predict" if target == "regression" else "decision_function"
    assert _rel(getattr(got, out)(Xs), getattr(ref, out)(Xs)) < RTOL
    objs = (ref.objective_,) if target == "regression" else ref.objective_
    gots = (got.objective_,) if target == "regression" else got.objective_
    for a, b in zip(gots, objs):
        assert _rel(a, b) < RTOL
    np.testing.assert_array_equal(got.n_iter_, ref.n_iter_)
    assert _rel(got.metric_, ref.metric_) < RTOL


def test_cg_iterates_and_warm_starts(rng, small_subsample):
    """With a 40-row preconditioner the CG needs several iterations; later outer
    iterations start from the previous g and need fewer."""
    Xs, y = _data(rng)
    est = MVMLRegressor(alpha=0.01, n_landmarks=25, solver="cg", random_state=0)
    est._check_params()
    problem = est._build_problem(Xs, y[:, None])
    loss = est._make_loss()
    res = loss.fit_structured(problem, est._initial_metric(problem))
    assert res[0].cg_iter >= est.max_iter + 3
    assert res[0].cg_products == res[0].cg_iter + est.max_iter + 1  # + first residuals


def test_cg_exact_preconditioner_needs_no_iteration(rng):
    """All rows in the subsample (small n): the preconditioner is the direct solve."""
    Xs, y = _data(rng)
    est = MVMLRegressor(
        alpha=0.1,
        metric="identity",
        n_landmarks=25,
        random_state=0,
        joint_view=False,
        fit_intercept=False,
    )
    est._check_params()
    problem = est._build_problem(Xs, y[:, None])
    step = CGStep.build(problem, np.full(3, 1 / 3))
    X, _, _, _ = step.solve(
        slice(None),
        np.ones(1),
        np.zeros((1, 0, 75)),
        np.zeros((1, 0)),
        np.array([0.1]),
        (problem.stats.cross * (1 / 3)).T @ step.V,
    )
    assert step.n_iter == [0]


def test_cg_without_statistics_and_missing_views(rng, small_subsample):
    """solver="cg" builds no C for the identity and dense metrics; with missing training
    views (completed features in the streamed rows) it equals the direct fit; after a
    complete fit, rows with a missing view are predicted (the subsample's missing-view
    model)."""
    Xs, y = _data(rng)
    est = MVMLRegressor(alpha=0.1, n_landmarks=25, solver="cg", random_state=0)
    est._check_params()
    assert est._build_problem(Xs, y[:, None]).stats.gram is None
    est.fit(Xs, y)
    Xt = [X[:10].copy() for X in Xs]
    Xt[1][:5] = np.nan
    assert np.all(np.isfinite(est.predict(Xt)))
    Xm = [X.copy() for X in Xs]
    Xm[0][:8] = np.nan
    Xm[2][100:104] = np.nan
    kw = dict(alpha=0.1, n_landmarks=25, random_state=0)
    ref = MVMLRegressor(**kw).fit(Xm, y)
    got = MVMLRegressor(solver="cg", **kw).fit(Xm, y)
    assert _rel(got.predict(Xm), ref.predict(Xm)) < RTOL


def test_cg_on_dask_views_uses_the_statistics(rng, small_subsample):
    da = pytest.importorskip("dask.array")
    Xs, y = _data(rng, n=90)
    kw = dict(alpha=0.1, n_landmarks=15, random_state=0, fit_intercept=True)
    ref = MVMLRegressor(**kw).fit(Xs, y)
    dX = [da.from_array(X, chunks=(30, -1)) for X in Xs]
    got = MVMLRegressor(solver="cg", **kw).fit(dX, da.from_array(y, chunks=30))
    assert _rel(np.asarray(got.predict(dX)), ref.predict(Xs)) < RTOL


@pytest.mark.parametrize(
    "kw",
    [dict(metric="sparse"), dict(learn_weights=True), dict(n_landmarks=None)],
    ids=["sparse", "learn_weights", "full"],
)
def test_cg_refuses_what_it_does_not_cover(rng, kw):
    Xs, y = _data(rng, n=40)
    with pytest.raises(ValueError, match="solver='cg' needs"):
        MVMLRegressor(solver="cg", **kw).fit(Xs, y)


# ------------------------------------------------------------------ n_landmarks="grow"
@pytest.mark.parametrize("n", [10, 150, 1000, 40_000, 40_001, 200_000, 10**6])
@pytest.mark.parametrize("v", [1, 3, 4])
def test_grown_landmarks_follow_their_formula(n, v):
    p = grown_n_landmarks(n, v)
    assert p == min(n, max(math.ceil(AUTO_FEATURE_BUDGET / v), math.ceil(math.sqrt(n))))
    assert p >= auto_n_landmarks(n, v)
    if math.sqrt(n) <= AUTO_FEATURE_BUDGET / v:  # "auto" below the crossover
        assert p == auto_n_landmarks(n, v)


def test_grow_sets_the_landmarks(rng):
    Xs, y = _data(rng, n=150)
    est = MVMLRegressor(n_landmarks="grow", random_state=0).fit(Xs, y)
    ref = MVMLRegressor(n_landmarks="auto", random_state=0).fit(Xs, y)
    assert est.n_landmarks_ == ref.n_landmarks_ == grown_n_landmarks(150, 3)
    np.testing.assert_array_equal(est.predict(Xs), ref.predict(Xs))
    # the CV estimators resolve it the same way
    cv = MVMLRegressorCV(n_landmarks="grow", alphas=[0.1], etas=[1.0], max_iter=2, cv=2)
    assert cv.fit(Xs, y).best_estimator_.n_landmarks_ == grown_n_landmarks(150, 3)


@pytest.mark.parametrize("kind", ["precomputed", "sparse"])
def test_cg_on_precomputed_kernels_and_sparse_views(rng, small_subsample, kind):
    """The streamed kernel blocks of precomputed Gram matrices (landmark columns) and of
    sparse views give the direct solver's model."""
    import scipy.sparse as sp

    Xs, y = _data(rng, n=120)
    if kind == "precomputed":
        views = [np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / X.shape[1]) for X in Xs]
        kw = dict(kernel="precomputed")
    else:
        views = [sp.random(120, 15, density=0.3, random_state=i, format="csr") for i in range(2)]
        kw = {}
    ref = MVMLRegressor(n_landmarks=30, alpha=0.1, random_state=0, **kw).fit(views, y)
    got = MVMLRegressor(n_landmarks=30, alpha=0.1, random_state=0, solver="cg", **kw)
    assert _rel(got.fit(views, y).coef_, ref.coef_) < RTOL

"""The structured MVML solver (one eigendecomposition per fit, low-rank metric) against the
dense reference path, the new defaults, and parameter validation."""

import math
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mvkernels import MVMLSVC, MVMLClassifier, MVMLRegressor
from mvkernels.mvml import AUTO_FEATURE_BUDGET, auto_n_landmarks
from mvkernels.mvml._lowrank import SharedSpectrum
from mvkernels.mvml._square_paths import dense_metric_path
from mvkernels.mvml._svm import HINGE_FEATURE_BUDGET


def _data(rng, n=120):
    Xs = [rng.standard_normal((n, 5)), rng.standard_normal((n, 4)), rng.standard_normal((n, 3))]
    y = Xs[0][:, 0] + np.sin(2 * Xs[1][:, 1]) + 0.1 * rng.standard_normal(n)
    return Xs, y


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


TARGETS = {
    "regression": (MVMLRegressor, lambda y: y),
    "binary": (MVMLClassifier, lambda y: (y > 0).astype(int)),
    "multiclass": (MVMLClassifier, lambda y: np.digitize(y, [-1.0, 0.0, 1.0])),
}
SETTINGS = [
    dict(),
    dict(alpha=0.05, eta=0.5, n_a_steps=2),
    dict(alpha=2.0, eta=3.0, step_size=0.3),
    dict(alpha=0.3, eta=0.01, max_iter=25, tol=1e-3),  # stops early (tol reached)
]


@pytest.mark.parametrize("metric", ["dense", "identity", "cov"])
@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("kw", SETTINGS, ids=["default", "two_a_steps", "fixed_step", "tol"])
def test_structured_equals_dense_reference(rng, metric, target, kw):
    """Same iterations, same accept/reject decisions: results agree to 1e-8 relative."""
    Xs, y = _data(rng)
    Est, make = TARGETS[target]
    t = make(y)
    common = dict(metric=metric, n_landmarks=25, random_state=0, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fast = Est(**common).fit(Xs, t)
        ref = Est(solver="dense", **common).fit(Xs, t)
    assert fast.solver_ == "structured" and ref.solver_ == "dense"
    np.testing.assert_array_equal(fast.n_iter_, ref.n_iter_)
    assert _rel(fast.coef_, ref.coef_) < 1e-8
    assert _rel(fast.metric_, ref.metric_) < 1e-8
    obj_f = np.hstack(fast.objective_) if isinstance(fast.objective_, list) else fast.objective_
    obj_r = np.hstack(ref.objective_) if isinstance(ref.objective_, list) else ref.objective_
    assert _rel(obj_f, obj_r) < 1e-8
    np.testing.assert_allclose(
        fast.metric_min_eigenvalue_, ref.metric_min_eigenvalue_, rtol=1e-7, atol=1e-10
    )
    out_f = fast.predict(Xs) if Est is MVMLRegressor else fast.decision_function(Xs)
    out_r = ref.predict(Xs) if Est is MVMLRegressor else ref.decision_function(Xs)
    assert _rel(out_f, out_r) < 1e-8


def test_tol_setting_really_stops_early(rng):
    """The ``tol`` case above must exercise the early stop (else it tests nothing new)."""
    Xs, y = _data(rng)
    est = MVMLRegressor(n_landmarks=25, random_state=0, **SETTINGS[3]).fit(Xs, y)
    assert 1 < est.n_iter_ < 25


def test_structured_metric_is_symmetric_positive_definite(rng):
    Xs, y = _data(rng)
    est = MVMLClassifier(n_landmarks=20, random_state=0, alpha=0.1, eta=0.05).fit(
        Xs, np.digitize(y, [-1.0, 0.0, 1.0])
    )
    for A, m in zip(est.metric_, est.metric_min_eigenvalue_):
        np.testing.assert_allclose(A, A.T, atol=0)
        ev = np.linalg.eigvalsh(A)
        assert ev[0] > 0
        assert abs(ev[0] - m) <= 1e-8 * ev[-1]


def test_path_entries_are_fits_with_fewer_iterations(rng):
    """``record_path``: entry k is the final g of a fit with max_iter = k + 1."""
    Xs, y = _data(rng)
    K = 6
    est = MVMLRegressor(n_landmarks=20, random_state=0, alpha=0.2, eta=0.3, max_iter=K)
    problem = est._build_problem(Xs, y[:, None])
    res = est._solve(problem, record_path=True)[0]
    assert res.path.shape == (K, problem.dim)
    for k in (1, 3, K):
        ref = MVMLRegressor(
            n_landmarks=20, random_state=0, alpha=0.2, eta=0.3, max_iter=k, solver="dense"
        ).fit(Xs, y)
        assert _rel(res.path[k - 1], ref.coef_) < 1e-8


def test_batched_path_equals_separate_problems(rng):
    """A batch of problems with different alpha / eta gives each problem's own path."""
    d = 12
    A = rng.standard_normal((40, d))
    lam, Q = np.linalg.eigh(A.T @ A)
    spec = SharedSpectrum(Q=Q, lam=np.maximum(lam, 0))
    B = rng.standard_normal((3, d))
    alphas, etas = np.array([0.1, 1.0, 10.0]), np.array([2.0, 0.01, 0.5])
    batch = dense_metric_path(
        spec.lam, spec.rotate(B), np.ones(3) * 5, alphas, etas, max_iter=7, record_path=True
    )
    for i in range(3):
        one = dense_metric_path(
            spec.lam,
            spec.rotate(B[i : i + 1]),
            np.array([5.0]),
            alphas[i : i + 1],
            etas[i : i + 1],
            max_iter=7,
            record_path=True,
        )
        assert _rel(batch.path[i], one.path[0]) < 1e-12
        np.testing.assert_allclose(batch.history[i], one.history[0], rtol=1e-12)


def test_path_in_the_row_space_equals_the_full_eigenbasis(rng):
    """Fewer rows than features: the spectrum from the n x n side (nonzero eigenpairs of
    M = R^T R only) and the path run in that basis with dim=d give the same g-step path,
    metric and objectives as the full d x d eigenbasis (the metric is s I on M's null
    space, which counts in ||A||_F^2: without dim=d the objectives differ)."""
    n, d = 15, 40
    R = rng.standard_normal((n, d))
    B = rng.standard_normal((4, n)) @ R  # b = R^T y: in M's range, as c = U^T y is
    alphas, etas = np.array([0.01, 0.1, 1.0, 10.0]), np.array([0.1, 1.0, 0.01, 3.0])
    small = SharedSpectrum.from_rows(R)
    assert small.Q.shape == (d, n)
    np.testing.assert_allclose(small.Q.T @ small.Q, np.eye(n), atol=1e-10)
    np.testing.assert_allclose((small.Q * small.lam) @ small.Q.T, R.T @ R, atol=1e-10)
    full = SharedSpectrum.from_matrix(R.T @ R)
    kw = dict(max_iter=6, record_path=True)
    ref = dense_metric_path(full.lam, full.rotate(B), np.ones(4) * 9, alphas, etas, **kw)
    got = dense_metric_path(small.lam, small.rotate(B), np.ones(4) * 9, alphas, etas, dim=d, **kw)
    for i in range(4):
        assert _rel(small.unrotate(got.path[i]), full.unrotate(ref.path[i])) < 1e-8
        assert _rel(got.metric(small.Q, i), ref.metric(full.Q, i)) < 1e-8
        np.testing.assert_allclose(got.history[i], ref.history[i], rtol=1e-9)
    wrong = dense_metric_path(small.lam, small.rotate(B), np.ones(4) * 9, alphas, etas, **kw)
    assert not np.allclose(wrong.history[0], ref.history[0], rtol=1e-6)


@pytest.mark.parametrize(
    "kw", [dict(metric="sparse"), dict(learn_weights=True), dict(n_landmarks=None)]
)
def test_variants_outside_the_structure_use_the_dense_path(rng, kw):
    Xs, y = _data(rng, n=40)
    est = MVMLRegressor(**{"n_landmarks": 10, "random_state": 0, **kw}).fit(Xs, y)
    assert est.solver_ == "dense"
    # the hinge loss: its low-rank path needs fixed weights and a dense / fixed metric,
    # in either mode (the g-step only needs the features)
    svc = MVMLSVC(**{"n_landmarks": 10, "random_state": 0, **kw}).fit(Xs, y > 0)
    assert svc.solver_ == ("structured" if "n_landmarks" in kw else "dense")
    assert MVMLSVC(n_landmarks=10, random_state=0).fit(Xs, y > 0).solver_ == "structured"


# ------------------------------------------------------------------ defaults
@pytest.mark.parametrize("Est", [MVMLRegressor, MVMLClassifier, MVMLSVC])
def test_default_fit_raises_no_warning(rng, Est):
    Xs, y = _data(rng, n=300)
    t = y if Est is MVMLRegressor else np.digitize(y, [-1.0, 0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = Est().fit(Xs, t)
    budget = HINGE_FEATURE_BUDGET if Est is MVMLSVC else AUTO_FEATURE_BUDGET
    assert est.n_landmarks_ == auto_n_landmarks(300, 3, budget) == math.ceil(budget / 3)
    assert est.mode_ == "nystrom"


def test_convergence_warning_only_when_tol_is_asked(rng):
    Xs, y = _data(rng)
    with pytest.warns(ConvergenceWarning, match="tol=1e-12"):
        MVMLRegressor(n_landmarks=20, tol=1e-12, max_iter=3).fit(Xs, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MVMLRegressor(n_landmarks=20, max_iter=3).fit(Xs, y)


@pytest.mark.parametrize("n, v", [(50, 3), (400, 3), (10_000, 1), (10_000, 7)])
def test_auto_landmark_rule(n, v):
    p = auto_n_landmarks(n, v)
    assert p == min(n, math.ceil(AUTO_FEATURE_BUDGET / v))
    assert v * p <= AUTO_FEATURE_BUDGET + v
    q = auto_n_landmarks(n, v, HINGE_FEATURE_BUDGET)
    assert q == min(n, math.ceil(HINGE_FEATURE_BUDGET / v)) <= p


def test_auto_uses_every_sample_when_small_and_the_map_is_exact(rng):
    Xs, y = _data(rng, n=60)
    est = MVMLRegressor(joint_view=False, fit_intercept=False).fit(Xs, y)
    assert est.n_landmarks_ == 60
    from sklearn.metrics.pairwise import rbf_kernel

    U = est.nystrom_.transform(Xs)
    gamma = est.nystrom_.kernels_[1].params_["gamma"]
    K1 = rbf_kernel(Xs[1], gamma=gamma)
    U1 = U[:, 60:120]
    np.testing.assert_allclose(U1 @ U1.T, K1, atol=1e-6)


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    "kw, name",
    [
        (dict(n_landmarks="foo"), "n_landmarks"),
        (dict(eig_floor=2.0), "eig_floor"),
        (dict(chunk_size=-1), "chunk_size"),
        (dict(chunk_size=2.5), "chunk_size"),
        (dict(tol=-1.0), "tol"),
        (dict(solver="fast"), "solver"),
        (dict(alpha=0.0), "alpha"),
        (dict(max_iter=0), "max_iter"),
        (dict(landmarks="foo"), "landmarks"),
        (dict(alpha=float("inf")), "alpha"),
        (dict(eta=0.0), "eta"),
    ],
)
def test_parameters_are_checked_at_fit(rng, kw, name):
    Xs, y = _data(rng, n=30)
    with pytest.raises(ValueError, match=name):
        MVMLRegressor(**kw).fit(Xs, y)

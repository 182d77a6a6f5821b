"""One metric storage: every metric Algorithm 1's paths hand on is a ``mvml._metric.Metric``
(the dense ``MatrixMetric`` or ``s I + V V^T``, ``mvml._lowrank.LowRankMetric``), read
through one interface; the fitted model's store (``MetricStack.from_metrics``) keeps each
in its compact form."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

from mvkernels import MVMLSVC, MVMLClassifier, MVMLRegressor
from mvkernels.mvml._driver import PathResult
from mvkernels.mvml._lowrank import LowRankMetric, MetricStack
from mvkernels.mvml._metric import MatrixMetric, Metric, metric_kind, metric_step
from mvkernels.mvml._metric_algebra import PSDFactor, metric_penalty


def _pair(d=6, r=3, s=0.7, seed=0):
    V = np.random.default_rng(seed).normal(size=(d, r))
    A = s * np.eye(d) + V @ V.T
    return LowRankMetric(s, V), MatrixMetric(0.5 * (A + A.T))


@pytest.mark.parametrize("r", [0, 2, 6, 8])  # r >= d: V V^T of full rank
def test_both_storages_agree_on_every_accessor(r):
    low, mat = _pair(r=r)
    A = mat.dense()
    np.testing.assert_allclose(low.dense(), A, rtol=0, atol=1e-13)
    x = np.random.default_rng(1).normal(size=(6, 2))
    for m in (low, mat):
        np.testing.assert_allclose(m.matvec(x), A @ x, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(m.factor.solve(x[:, 0]), np.linalg.solve(A, x[:, 0]))
        assert np.isclose(m.factor.quad(x[:, 0]), x[:, 0] @ np.linalg.solve(A, x[:, 0]))
        assert np.isclose(m.min_eigenvalue(), np.linalg.eigvalsh(A)[0], rtol=1e-12)
        assert np.isclose(m.max_abs(), np.abs(A).max(), rtol=1e-13)
        for kind in ("dense", "sparse", "identity"):
            want = metric_kind(kind).penalty(A, 2)
            assert np.isclose(m.penalty(metric_kind(kind), 2), want, rtol=1e-12, atol=0)
        assert not m.is_identity()
    assert low.low_rank_form()[0] == 0.7 and mat.low_rank_form() is None
    assert np.isclose(low.penalty(metric_kind("dense"), 2), metric_penalty(A, "dense", 2))


def test_identity():
    eye = LowRankMetric.identity(5)
    start = MatrixMetric.start(np.eye(5))
    for m in (eye, start):
        assert m.is_identity() and m.factor.is_identity and m.min_eigenvalue() == 1.0
        np.testing.assert_array_equal(m.dense(), np.eye(5))
    # a start elsewhere is factored, and tracks no low-rank form
    A0 = 2.0 * np.eye(5)
    m = MatrixMetric.start(A0, track_low_rank=True)
    assert not m.is_identity() and m.low_rank_form() is None
    np.testing.assert_allclose(m.factor.solve(np.ones(5)), 0.5 * np.ones(5))


def test_matrix_a_step_is_metric_step_and_tracks_its_low_rank_form():
    rng = np.random.default_rng(2)
    m = MatrixMetric.start(np.eye(8), track_low_rank=True)
    A, f = np.eye(8), PSDFactor.identity(8)
    mu0 = 1.0
    for k in range(5):
        g = rng.normal(size=8)
        A, f, mu = metric_step(A, f, g, 0.8, 0.3, "dense", 2, mu0)
        m, mu_m = m.a_step(g, 0.8, 0.3, "dense", 2, mu0)
        assert mu_m == mu > 0
        np.testing.assert_array_equal(m.dense(), A)  # the same step, bit for bit
        s, V = m.low_rank_form()
        assert V.shape == (8, k + 1)  # one column per accepted step
        np.testing.assert_allclose(s * np.eye(8) + V @ V.T, A, rtol=0, atol=1e-12)
        mu0 = 2.0 * mu


def test_a_step_that_is_given_up_keeps_the_metric_object():
    m = MatrixMetric.start(np.eye(4))
    # the proximal step zeroes every block at every size tried: g leaves the range
    kept, mu = m.a_step(np.ones(4), 1.0, 1e15, "sparse", 2, 1.0)
    assert mu == 0.0 and kept is m
    moved, mu = m.a_step(np.ones(4), 1.0, 0.5, "sparse", 2, 1.0)
    assert mu > 0 and moved is not m and moved.low_rank_form() is None


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_low_rank_a_step_equals_the_dense_one(kind):
    """The low-rank storage's step (a batch of one of the structured paths' step) gives
    the dense storage's metrics and step sizes (to rounding); a sparse step runs on the
    dense matrix."""
    rng = np.random.default_rng(3)
    low, mat = LowRankMetric.identity(7), MatrixMetric.start(np.eye(7), track_low_rank=True)
    mu_l = mu_m = 0.5
    for _ in range(4):
        g = rng.normal(size=7)
        low, mu_l = low.a_step(g, 1.0, 0.4, kind, 7, 2 * mu_l or 0.5)
        mat, mu_m = mat.a_step(g, 1.0, 0.4, kind, 7, 2 * mu_m or 0.5)
        assert np.isclose(mu_l, mu_m, rtol=1e-12)
        np.testing.assert_allclose(low.dense(), mat.dense(), rtol=0, atol=1e-10)
        assert np.isclose(low.min_eigenvalue(), mat.min_eigenvalue(), rtol=1e-8)
    assert isinstance(low, LowRankMetric if kind == "dense" else MatrixMetric)


def test_stack_keeps_each_storage_compactly():
    low = [_pair(seed=k)[0] for k in range(3)]
    stack = MetricStack.from_metrics(low, fixed=False)
    assert stack.dense is None and stack.factors.shape == (3, 6, 3)
    np.testing.assert_allclose(stack.toarray(), [m.dense() for m in low], atol=1e-13)
    assert np.isclose(stack.max_abs(), max(m.max_abs() for m in low))
    # a metric without a low-rank form: the dense stack
    mixed = MetricStack.from_metrics([low[0], _pair(seed=4)[1]], fixed=False)
    assert mixed.dense is not None and mixed.factors is None
    # fixed metrics once: the identity as its size only, another metric shared
    eye = MetricStack.from_metrics([LowRankMetric.identity(4)] * 2, fixed=True)
    assert eye.shared is None and eye.dense is None and eye.factors is None
    np.testing.assert_array_equal(eye.toarray(), np.broadcast_to(np.eye(4), (2, 4, 4)))
    cov = _pair()[1]
    shared = MetricStack.from_metrics([cov, cov], fixed=True)
    assert shared.shared is cov.dense()
    # each problem's metric back in its stored form, the same matrix as toarray's
    for st in (stack, mixed, eye, shared):
        for t in range(st.n_problems):
            m = st.take(t)
            assert isinstance(m, Metric)
            np.testing.assert_array_equal(m.dense(), st.toarray()[t])
    assert isinstance(stack.take(1), LowRankMetric) and eye.take(0).is_identity()


def test_one_stack_for_problems_of_their_own_metrics_and_sizes():
    """Problems with metrics of their own (one-vs-one's pairs: fixed metrics that differ)
    and of different sizes (the pairs in full-kernel mode) in one MetricStack: each
    problem's metric back exactly, the identity as sizes only, and a pickle that restores
    every array bit for bit."""
    import pickle

    low = [_pair(d=d, r=2, seed=d)[0] for d in (4, 6, 5)]
    mats = [_pair(d=d, seed=d)[1] for d in (4, 6)]
    eyes = [LowRankMetric.identity(d) for d in (3, 5)]
    cases = {
        "low rank": (MetricStack.from_metrics(low, fixed=False), low),
        "dense": (MetricStack.from_metrics(mats, fixed=False), mats),
        "own fixed": (MetricStack.from_metrics(mats, fixed=True), mats),
        "identities": (MetricStack.from_metrics(eyes, fixed=True), eyes),
    }
    same = [_pair(seed=k)[1] for k in range(3)]  # one size, fixed metrics of their own
    cases["own fixed, one size"] = (MetricStack.from_metrics(same, fixed=True), same)
    for name, (st, metrics) in cases.items():
        assert st.n_problems == len(metrics) and st.shared is None, name
        arrays = st.toarray()
        if name == "own fixed, one size":
            assert st.dims is None and st.dense.shape == (3, 6, 6)
        else:
            np.testing.assert_array_equal(st.dims, [m.dim for m in metrics])
            assert isinstance(arrays, list) and st.dim == max(m.dim for m in metrics)
        for t, m in enumerate(metrics):
            np.testing.assert_allclose(arrays[t], m.dense(), rtol=0, atol=1e-13, err_msg=name)
            np.testing.assert_array_equal(st.take(t).dense(), arrays[t])
            assert st.take(t).dim == m.dim
        assert np.isclose(st.max_abs(), max(np.abs(m.dense()).max() for m in metrics))
        back = pickle.loads(pickle.dumps(st))
        for a, b in zip(back.toarray(), arrays):
            np.testing.assert_array_equal(a, b)
    assert cases["identities"][0].factors is None and cases["identities"][0].dense is None
    assert [V.shape for V in cases["low rank"][0].factors] == [(4, 2), (6, 2), (5, 2)]


@pytest.mark.parametrize("n_landmarks", [None, 8])
@pytest.mark.parametrize("metric", ["dense", "cov", "identity"])
def test_one_vs_one_metrics_in_one_stack(n_landmarks, metric):
    """One-vs-one keeps the pairs' metrics in one MetricStack (no list of stores), each
    pair's metric the one of its own binary fit."""
    from mvkernels.mvml._base import _BaseMVML
    from mvkernels.mvml._multiclass import ovo_pairs, pair_problem

    X, y = make_classification(
        n_samples=45, n_features=6, n_informative=4, n_classes=3, random_state=0
    )
    Xs = [X[:, :3], X[:, 3:]]
    kw = dict(n_landmarks=n_landmarks, metric=metric, max_iter=3, joint_view=False)
    clf = MVMLClassifier(multi_class="ovo", random_state=0, **kw).fit(Xs, y)
    store = clf._metric_store
    assert isinstance(store, MetricStack) and store.n_problems == 3
    assert (store.dims is not None) == (n_landmarks is None)
    est = MVMLClassifier(random_state=0, **kw)
    est._check_params()
    problem = est._build_problem(Xs, est._encode_targets(y, 3))
    A = clf.metric_
    for k, (i, j) in enumerate(ovo_pairs(3)):
        sub, _ = pair_problem(problem, y, i, j)
        (r,) = _BaseMVML._solve(est, sub)
        want = r.metric.dense()
        np.testing.assert_allclose(A[k], want, rtol=0, atol=1e-8 * np.abs(want).max())
        np.testing.assert_allclose(
            clf.metric_min_eigenvalue_[k], r.metric.min_eigenvalue(), atol=1e-8
        )


def _views(n=60, seed=0):
    X, y = make_classification(n_samples=n, n_features=8, n_informative=5, random_state=seed)
    return [X[:, :4], X[:, 4:]], y


@pytest.mark.parametrize(
    "cls, kw",
    [
        (MVMLClassifier, dict(n_landmarks=10)),  # structured, low-rank
        (MVMLClassifier, dict(n_landmarks=10, solver="dense")),  # reference, tracked
        (MVMLClassifier, dict(n_landmarks=10, metric="sparse")),  # reference, dense
        (MVMLClassifier, dict(n_landmarks=10, metric="identity")),
        (MVMLRegressor, dict(n_landmarks=None, metric="cov")),
        (MVMLSVC, dict(n_landmarks=10)),  # the hinge loss's low-rank path
        (MVMLSVC, dict(n_landmarks=10, metric="sparse")),
    ],
)
def test_every_path_hands_on_a_metric(cls, kw):
    """Every path's results hold a Metric, which the estimator's store and
    metric_min_eigenvalue_ read (no other metric entry)."""
    Xs, y = _views()
    est = cls(random_state=0, max_iter=4, joint_view=False, **kw)
    est._check_params()
    if cls is MVMLRegressor:
        target = y[:, None].astype(float)
    else:
        target = est._encode_targets(np.unique(y, return_inverse=True)[1], 2)
    results = est._solve(est._build_problem(Xs, target))
    for r in results:
        assert type(r) is PathResult and isinstance(r.metric, Metric)
        assert not {"A", "min_eig", "metric_lowrank"} & set(PathResult.__dataclass_fields__)
    est.fit(Xs, y)
    A = est.metric_.reshape(-1, *est.metric_.shape[-2:])
    mins = np.atleast_1d(est.metric_min_eigenvalue_)
    np.testing.assert_allclose(mins, [np.linalg.eigvalsh(M)[0] for M in A], atol=1e-8)

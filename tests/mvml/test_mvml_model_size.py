"""Model size: the fitted metrics are stored in structured form, ``metric_`` built on access."""

import pickle

import numpy as np
import pytest
from sklearn.datasets import load_digits

from mvkernels import MVMLSVC, MVMLClassifier, MVMLRegressor


def _data(seed=0, n=80):
    rng = np.random.RandomState(seed)
    Xs = [rng.randn(n, 3), rng.randn(n, 4)]
    y = (Xs[0][:, 0] + Xs[1][:, 1] > 0).astype(int) + (Xs[0][:, 1] > 0)
    return Xs, y


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize(
    "kw",
    [
        dict(solver="dense"),
        dict(solver="dense", learn_weights=True),
        dict(n_landmarks=None),
        dict(n_landmarks=None, n_a_steps=2),
        dict(solver="dense", tol=1e-2),  # classes stop after different numbers of steps
    ],
)
def test_reference_path_metric_is_the_tracked_low_rank_form(kw):
    """The dense reference path's A equals the stored s I + V V^T (to rounding)."""
    Xs, y = _data()
    est = MVMLClassifier(random_state=0, max_iter=4, **kw)
    est._check_params()
    problem = est._build_problem(Xs, est._encode_targets(np.unique(y, return_inverse=True)[1], 3))
    results = est._solve(problem)
    est.fit(Xs, y)
    store = est._metric_store
    assert store.dense is None and store.factors.shape[2] <= 4 * est.n_a_steps
    for t, r in enumerate(results):
        np.testing.assert_allclose(
            est.metric_[t], r["A"], rtol=0, atol=1e-12 * np.abs(r["A"]).max()
        )


def test_structured_and_dense_solver_store_the_same_metric():
    Xs, y = _data()
    a = MVMLClassifier(random_state=0, solver="dense").fit(Xs, y)
    b = MVMLClassifier(random_state=0).fit(Xs, y)
    assert b.solver_ == "structured"
    np.testing.assert_allclose(a.metric_, b.metric_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(
        b.metric_min_eigenvalue_,
        [np.linalg.eigvalsh(A)[0] for A in b.metric_],
        rtol=1e-8,
    )


@pytest.mark.parametrize("metric", ["identity", "cov", "sparse"])
def test_fixed_metrics_are_stored_once_and_sparse_densely(metric):
    Xs, y = _data()
    est = MVMLClassifier(metric=metric, random_state=0, max_iter=3).fit(Xs, y)
    store = est._metric_store
    if metric == "identity":
        assert store.shared is None and store.dense is None and store.factors is None
        np.testing.assert_array_equal(
            est.metric_, np.broadcast_to(np.eye(store.dim), (3, store.dim, store.dim))
        )
    elif metric == "cov":
        assert store.shared is not None and store.dense is None
        np.testing.assert_array_equal(est.metric_[0], est.metric_[2])
    else:  # the proximal step does not keep a low-rank form
        assert store.dense is not None


def test_metric_is_not_pickled_densely_and_round_trips():
    X, y = load_digits(return_X_y=True)
    views = [X[:, :32], X[:, 32:]]
    est = MVMLClassifier(random_state=0).fit(views, y)
    assert "metric_" not in vars(est)
    d = est.metric_.shape[1]
    assert est.metric_.shape == (10, d, d) and d == 600
    blob = pickle.dumps(est)
    # the ten metrics are stored structured: less than one dense 600 x 600 matrix (2.9 MB)
    assert len(pickle.dumps(est._metric_store)) < 1e6
    # the whole model is dominated by the Nystrom map (1.6 MB) and the missing-view
    # completion model (one 600 x 600 feature covariance, 2.9 MB); ten dense 600 x 600
    # metrics alone would be 28.8 MB
    assert len(blob) < 6e6, len(blob)
    back = pickle.loads(blob)
    np.testing.assert_array_equal(back.metric_, est.metric_)
    np.testing.assert_array_equal(back.decision_function(views), est.decision_function(views))


def test_metric_before_fit_and_single_problem_shape():
    assert not hasattr(MVMLRegressor(), "metric_")
    with pytest.raises(AttributeError, match="metric_"):
        MVMLSVC().metric_  # noqa: B018
    Xs, y = _data()
    reg = MVMLRegressor(max_iter=2).fit(Xs, y * 1.0)
    assert reg.metric_.ndim == 2

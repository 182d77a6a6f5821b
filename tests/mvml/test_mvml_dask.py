"""MVML estimators on Dask input (issue 7, phase 2), on a 2-worker LocalCluster (processes).

Real data: uWave (classification, 3 views x 315, 8 classes) and SARCOS-4449 (regression,
3 views x 7, above the 2000-row bandwidth sample) as Dask arrays chunked by rows. The
fitted model (metric_, coef_, weights_) equals the in-memory fit to 1e-10, predictions
match, predict / decision_function are lazy, full-kernel mode on Dask is a clear error.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

da = pytest.importorskip(
    "dask.array", reason="dask is not installed (pip install 'mvkernels[dask]')"
)
distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install 'mvkernels[dask]')"
)

from mvkernels import MVMLSVC, MVMLClassifier, MVMLRegressor  # noqa: E402
from mvkernels.datasets import load_sarcos, load_uwave  # noqa: E402
from mvkernels.mvml import _hinge_fit  # noqa: E402

RTOL = 1e-10

pytestmark = pytest.mark.filterwarnings("ignore:Sending large graph:UserWarning")


@pytest.fixture(scope="module")
def uwave(data_dir):
    return load_uwave(data_dir)


@pytest.fixture(scope="module")
def sarcos(data_dir):
    d = load_sarcos(data_dir)
    mu, sd = [X.mean(0) for X in d["Xs"]], [X.std(0) for X in d["Xs"]]
    d["Xs"] = [(X - m) / s for X, m, s in zip(d["Xs"], mu, sd)]
    return d


def to_dask(Xs, rows=(200, 150, 300)):
    """Views as Dask arrays with different row chunks and column chunking per view."""
    return [
        da.from_array(X, chunks=(r, X.shape[1] if l == 0 else max(1, X.shape[1] // 3)))
        for l, (X, r) in enumerate(zip(Xs, rows))
    ]


def close(a, b, rtol=RTOL):
    a, b = np.asarray(a), np.asarray(b)
    scale = max(np.abs(b).max(), 1e-300)
    np.testing.assert_allclose(a, b, rtol=0, atol=rtol * scale)


def fit_quiet(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


def assert_same_model(a, b, rtol=RTOL, Xs=None):
    """The two fits are the same model.

    With ``Xs`` (training views): ``metric_`` and ``coef_`` are compared *through the
    features* to ``rtol`` (``U g`` and ``U A U^T`` on 300 training rows, each model with its
    own Nystrom map) and element-wise to ``1e-8``. The Nystrom basis is defined by
    ``(W^+)^{1/2}``, whose eigenvalue floor amplifies a last-bit difference in the landmark
    kernel ``W`` (scikit-learn's RBF on equal inputs is not bit-reproducible across
    processes) by up to ~1e12 in near-null directions of ``W`` that the features hardly
    use; element-wise agreement of ``A`` and ``g`` in that basis is then ~1e-10..1e-9 in
    some runs, while the fitted functions agree to ~1e-13.
    """
    if Xs is None:
        for name in ("metric_", "coef_", "weights_"):
            close(getattr(a, name), getattr(b, name), rtol)
    else:
        rows = [X[:300] for X in Xs]
        Ua, Ub = a.nystrom_.transform(rows), b.nystrom_.transform(rows)
        ga, gb = np.atleast_2d(a.coef_), np.atleast_2d(b.coef_)
        close(Ua @ ga.T, Ub @ gb.T, rtol)
        Aa, Ab = (
            a.metric_.reshape(-1, *a.metric_.shape[-2:]),
            b.metric_.reshape(-1, *b.metric_.shape[-2:]),
        )
        close(Ua @ Aa @ Ua.T, Ub @ Ab @ Ub.T, rtol)
        close(a.weights_, b.weights_, rtol)
        for name in ("metric_", "coef_"):
            close(getattr(a, name), getattr(b, name), max(rtol, 1e-8))
    np.testing.assert_array_equal(a.n_iter_, b.n_iter_)
    np.testing.assert_array_equal(a.nystrom_.landmark_indices_, b.nystrom_.landmark_indices_)


# ------------------------------------------------------------------- classification
@pytest.mark.realdata
@pytest.mark.parametrize("metric", ["dense", "sparse"])
def test_uwave_classifier_equals_in_memory_fit(client, uwave, metric):
    Xs, y = uwave["Xs_train"], uwave["y_train"]
    kw = dict(
        n_landmarks=54,  # per view: a 162 x 162 metric per class keeps the test quick
        metric=metric,
        alpha=0.1,
        eta=0.01,
        learn_weights=True,
        max_iter=4,
        joint_view=False,
        random_state=0,
    )
    ref = fit_quiet(MVMLClassifier(**kw), Xs, y)
    yd = da.from_array(y, chunks=100)  # y stays lazy: classes by da.unique, lazy +-1 targets
    est = fit_quiet(MVMLClassifier(**kw), to_dask(Xs), yd)
    np.testing.assert_array_equal(est.classes_, ref.classes_)
    assert est.metric_.shape == (8, 162, 162)
    assert_same_model(est, ref, Xs=Xs)
    # predictions on the test set: lazy Dask arrays with the input's row chunks
    Xt = uwave["Xs_test"]
    D = est.decision_function(to_dask(Xt, rows=(500, 700, 1000)))
    P = est.predict(to_dask(Xt, rows=(500, 700, 1000)))
    assert isinstance(D, da.Array) and isinstance(P, da.Array)
    assert D.shape == (3582, 8) and D.chunks[0][0] == 500 and P.shape == (3582,)
    close(D.compute(), ref.decision_function(Xt))
    pred = P.compute()
    np.testing.assert_array_equal(pred, ref.predict(Xt))
    assert pred.dtype == ref.classes_.dtype
    assert np.mean(pred == uwave["y_test"]) > 0.85


@pytest.mark.realdata
def test_uwave_binary_classifier_and_numpy_views_with_dask_labels(client, uwave):
    Xs = uwave["Xs_train"]
    y = np.where(uwave["y_train"] <= 4, "low", "high")
    kw = dict(n_landmarks=60, metric="identity", alpha=0.1, random_state=1)
    ref = MVMLClassifier(**kw).fit(Xs, y)
    est = MVMLClassifier(**kw).fit(Xs, da.from_array(y, chunks=300))
    np.testing.assert_array_equal(est.classes_, ["high", "low"])
    assert_same_model(est, ref)
    P = est.predict(to_dask(uwave["Xs_test"]))
    assert isinstance(P, da.Array) and P.ndim == 1
    np.testing.assert_array_equal(P.compute(), ref.predict(uwave["Xs_test"]))


# ------------------------------------------------------------------- regression
@pytest.mark.realdata
@pytest.mark.parametrize("metric", ["dense", "cov"])
def test_sarcos_regressor_equals_in_memory_fit(client, sarcos, metric):
    """n = 4449 > 2000: the bandwidths come from the same 2000-row sample on both paths.

    ``eig_floor=1e-6``: with the default floor (1e-10) the landmark kernel of this data set
    has kept eigenvalues near 1e-10 of the largest, where ``(W^+)^{1/2}`` amplifies the
    last-bit differences of scikit-learn's RBF between processes (see
    :func:`assert_same_model`); combined with the g-solve's conditioning (~1e6), two correct
    fits then differ by up to ~1e-8 in some runs (measured over 8 runs: 4e-12 to 1.1e-8).
    With the floor at 1e-6 they agree to <= 1e-11 in every run (8 of 8, both metrics), so
    the comparison is the issue's 1e-10.
    """
    Xs, y = sarcos["Xs"], sarcos["y"]
    kw = dict(
        n_landmarks=100,
        metric=metric,
        bandwidth_factor=1.0,
        alpha=1e-2,
        eta=1e-3,
        learn_weights=True,
        max_iter=4,
        random_state=3,
        eig_floor=1e-6,
    )
    ref = fit_quiet(MVMLRegressor(**kw, joint_view=False, fit_intercept=False), Xs, y)
    est = fit_quiet(
        MVMLRegressor(**kw, joint_view=False, fit_intercept=False),
        to_dask(Xs, rows=(1000, 700, 1500)),
        da.from_array(y, chunks=800),
    )
    for l in range(3):
        assert est.kernels_[l].params_["gamma"] == ref.kernels_[l].params_["gamma"]
    assert_same_model(est, ref, Xs=Xs)
    close(est.objective_, ref.objective_)
    pred = est.predict(to_dask(Xs))
    assert isinstance(pred, da.Array) and pred.shape == (4449,)
    close(pred.compute(), ref.predict(Xs))
    r2 = 1 - np.mean((ref.predict(Xs) - y) ** 2) / np.var(y)
    assert r2 > 0.9  # a real fit, not a trivial one


# ------------------------------------------------------------------- laziness
N_BIG, CHUNK = 200_000, 10_000


def _gen_block(block_id=None, allowed=frozenset()):
    if block_id[0] not in allowed:
        raise RuntimeError(f"block {block_id[0]} was computed")
    return np.zeros((CHUNK, 3))


def test_predict_builds_a_graph_and_computes_nothing(client):
    rng = np.random.default_rng(0)
    Xs = [rng.standard_normal((120, 3)), rng.standard_normal((120, 3))]
    y = Xs[0][:, 0] - Xs[1][:, 1] ** 2
    reg = MVMLRegressor(n_landmarks=10, max_iter=2, random_state=0).fit(Xs, y)
    clf = MVMLClassifier(n_landmarks=10, max_iter=2, random_state=0).fit(Xs, np.arange(120) % 3)
    X = da.map_blocks(
        _gen_block,
        dtype=float,
        chunks=((CHUNK,) * (N_BIG // CHUNK), (3,)),
        allowed=frozenset(),
        meta=np.empty((0, 0)),
    )
    for out in (reg.predict([X, X]), clf.decision_function([X, X]), clf.predict([X, X])):
        assert isinstance(out, da.Array) and out.shape[0] == N_BIG
        with pytest.raises(RuntimeError, match="was computed"):
            out[:5].compute()


# ------------------------------------------------------------------- MVMLSVC
def test_svc_on_dask_gathers_features_and_equals_in_memory(client, monkeypatch):
    rng = np.random.default_rng(2)
    n = 300
    Xs = [rng.standard_normal((n, 4)), rng.standard_normal((n, 3))]
    y = np.where(Xs[0][:, 0] + Xs[1][:, 1] ** 2 > 1.0, 1, 0)
    kw = dict(n_landmarks=20, metric="dense", alpha=1e-2, max_iter=3, random_state=0)
    ref = fit_quiet(MVMLSVC(**kw), Xs, y)
    est = fit_quiet(MVMLSVC(**kw), to_dask(Xs, rows=(70, 100)), da.from_array(y, chunks=90))
    assert_same_model(est, ref, rtol=1e-8)
    close(est.dual_coef_, ref.dual_coef_, 1e-8)
    P = est.predict(to_dask(Xs))
    assert isinstance(P, da.Array)
    np.testing.assert_array_equal(P.compute(), ref.predict(Xs))
    # above the gather budget: a clear error pointing to the square-loss classifier
    monkeypatch.setattr(_hinge_fit, "DASK_GATHER_MAX_BYTES", 1000)
    with pytest.raises(ValueError, match="gathers the training features.*MVMLClassifier"):
        MVMLSVC(**kw).fit(to_dask(Xs), y)


def test_svc_auto_decomposition_is_one_vs_rest_on_dask(client):
    """MVMLSVC's default ``multi_class="auto"`` is one-vs-rest on Dask input (one-vs-one
    needs the pairs' row subsets): the model of ``multi_class="ovr"`` in memory."""
    rng = np.random.default_rng(3)
    n = 150
    Xs = [rng.standard_normal((n, 3)), rng.standard_normal((n, 2))]
    y = np.digitize(Xs[0][:, 0] + Xs[1][:, 1], [-0.6, 0.6])  # 3 classes
    kw = dict(n_landmarks=15, alpha=1e-2, max_iter=2, random_state=0)
    ref = fit_quiet(MVMLSVC(multi_class="ovr", **kw), Xs, y)
    est = fit_quiet(MVMLSVC(**kw), to_dask(Xs, rows=(50, 100)), da.from_array(y, chunks=60))
    assert not est._ovo_active() and len(est.classes_) == 3
    assert_same_model(est, ref, rtol=1e-8)


# ------------------------------------------------------------------- errors
def test_dask_errors(client):
    rng = np.random.default_rng(0)
    Xs = [rng.standard_normal((100, 3)), rng.standard_normal((100, 2))]
    Xd = [da.from_array(X, chunks=40) for X in Xs]
    y = rng.standard_normal(100)
    for Est in (MVMLRegressor, MVMLClassifier, MVMLSVC):
        target = y if Est is MVMLRegressor else (y > 0).astype(int)
        with pytest.raises(ValueError, match="Dask input needs the Nystrom mode.*n_landmarks"):
            Est(n_landmarks=None).fit(Xd, target)
        with pytest.raises(ValueError, match="Dask input needs the Nystrom mode"):
            Est(n_landmarks=None).fit(Xs, da.from_array(target, chunks=50))
    ybad = y.copy()
    ybad[70] = np.nan
    with pytest.raises(ValueError, match=r"Y contains NaN \(in rows 40\.\.79\)"):
        MVMLRegressor(n_landmarks=5).fit(Xd, da.from_array(ybad, chunks=40))
    with pytest.raises(ValueError, match="y has 90 samples but the views have 100"):
        MVMLRegressor(n_landmarks=5).fit(Xd, da.from_array(y[:90], chunks=40))
    yd = da.from_array(y, chunks=40)
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        MVMLRegressor(n_landmarks=5).fit(Xd, yd[yd > -100])
    with pytest.raises(ValueError, match="Unknown label type"):
        MVMLClassifier(n_landmarks=5).fit(Xd, yd)
    with pytest.raises(ValueError, match="at least 2 classes"):
        MVMLClassifier(n_landmarks=5).fit(Xd, da.zeros(100, chunks=40))
    # an (n, 1) Dask target is a one-output multi-output problem: (n, 1) predictions
    col = MVMLRegressor(n_landmarks=5, max_iter=1).fit(Xd, yd[:, None])
    assert col.predict(Xd).shape == (100, 1)
    est = MVMLRegressor(n_landmarks=5, max_iter=1).fit(Xs, y)
    with pytest.raises(ValueError, match="view 1 has 3 features, but 2 were seen"):
        est.predict([Xd[0], Xd[0]])


# ------------------------------------------------------------------- model selection
def test_cv_on_dask_views_equals_in_memory(client):
    """MVMLClassifierCV on Dask views: per-fold statistics by Dask reductions, held-out
    scores computed block by block on the workers; the same cv_results_ as in memory."""
    from mvkernels import MVMLClassifierCV

    rng = np.random.default_rng(3)
    n = 150
    Xs = [rng.standard_normal((n, 4)), rng.standard_normal((n, 3))]
    y = np.digitize(Xs[0][:, 0] + Xs[1][:, 1] ** 2, [0.0, 1.5])
    kw = dict(
        alphas=[0.05, 1.0],
        etas=[0.5],
        bandwidth_factors=[1.0, 4.0],
        max_iter=3,
        cv=3,
        n_landmarks=15,
        random_state=0,
        search="exhaustive",
    )
    ref = MVMLClassifierCV(**kw).fit(Xs, y)
    est = MVMLClassifierCV(**kw).fit(to_dask(Xs, rows=(40, 60)), da.from_array(y, chunks=50))
    # the joint-only candidate is searched on in-memory views only: the other rows agree
    keep = np.array([p["joint_view"] != "only" for p in ref.cv_results_["params"]])
    assert not keep.all()
    assert est.cv_results_["params"] == [p for p, k in zip(ref.cv_results_["params"], keep) if k]
    np.testing.assert_allclose(
        est.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"][keep], atol=1e-12
    )
    assert ref.best_params_["joint_view"] != "only"
    assert est.best_params_ == ref.best_params_
    np.testing.assert_array_equal(est.predict(to_dask(Xs)).compute(), ref.predict(Xs))

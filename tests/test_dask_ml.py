"""dask-ml's meta-estimators around the estimators: ``ParallelPostFit`` predicts Dask
arrays with an MVML estimator, ``Incremental`` streams Dask row blocks into
``OLOKRegressor.partial_fit``."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="needs dask[array] (pip install 'mvkernels[dask]')")
wrappers = pytest.importorskip(
    "dask_ml.wrappers", reason="needs dask-ml (pip install 'mvkernels[dask-ml]')"
)

from mvkernels import MVMLClassifier, MVMLRegressor, OLOKRegressor  # noqa: E402


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 300
    X = rng.standard_normal((n, 5))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 3] + 0.05 * rng.standard_normal(n)
    return X, y, da.from_array(X, chunks=(70, -1)), da.from_array(y, chunks=70)


@pytest.mark.parametrize("n_landmarks", [None, 40])
def test_parallel_post_fit_predicts_dask_arrays(data, n_landmarks):
    X, y, Xd, _ = data
    kw = dict(n_landmarks=n_landmarks, views=[3, 2], random_state=0)
    reg = wrappers.ParallelPostFit(MVMLRegressor(**kw)).fit(X, y)
    pred = reg.predict(Xd)
    assert isinstance(pred, da.Array) and pred.chunks[0] == Xd.chunks[0]
    np.testing.assert_allclose(pred.compute(), MVMLRegressor(**kw).fit(X, y).predict(X), atol=1e-10)
    labels = np.where(y > 0, "pos", "neg")
    clf = wrappers.ParallelPostFit(MVMLClassifier(**kw)).fit(X, labels)
    got = clf.predict(Xd)
    assert isinstance(got, da.Array)
    np.testing.assert_array_equal(got.compute(), MVMLClassifier(**kw).fit(X, labels).predict(X))


@pytest.mark.parametrize(
    "params",
    [dict(), dict(features="rff", n_features=100, random_state=0)],
    ids=["exact", "rff"],
)
def test_incremental_streams_blocks_into_olok(data, params):
    """Blocks in order (shuffle_blocks=False) give the model of one fit on all rows."""
    X, y, Xd, yd = data
    kw = dict(kernel_params={"gamma": 0.3}, eta0=0.5, **params)
    inc = wrappers.Incremental(OLOKRegressor(**kw), shuffle_blocks=False).fit(Xd, yd)
    ref = OLOKRegressor(**kw).fit(X, y)
    assert inc.estimator_.t_ == len(X)
    pred = inc.predict(Xd)
    assert isinstance(pred, da.Array)
    np.testing.assert_allclose(pred.compute(), ref.predict(X), rtol=1e-12, atol=1e-12)
    # shuffled blocks: another stream (the order matters for an online learner)
    shuffled = wrappers.Incremental(OLOKRegressor(**kw), random_state=0).fit(Xd, yd)
    assert not np.allclose(shuffled.predict(Xd).compute(), ref.predict(X), atol=1e-6)

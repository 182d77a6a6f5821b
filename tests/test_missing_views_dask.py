"""Missing views (NaN rows) in Dask training views: the fit equals the NumPy fit on the
same data (landmarks, bandwidths, pairwise statistics, features, moments, decision values
to 1e-10), and partly missing rows / all-missing samples are refused naming the view and
the rows. Run on the synchronous scheduler (the distributed case: tests/nystrom)."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip(
    "dask.array", reason="dask is not installed (pip install 'mvkernels[dask]')"
)
dask = pytest.importorskip("dask")

from mvkernels import (  # noqa: E402
    MVMLSVC,
    BlockNystrom,
    MVMLClassifier,
    MVMLClassifierCV,
    MVMLRegressor,
    MVMLRegressorCV,
)
from mvkernels._arrays import dask_observed_mask  # noqa: E402
from mvkernels._validation import observed_mask  # noqa: E402

RTOL = 1e-10


@pytest.fixture(autouse=True, scope="module")
def synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


def close(a, b, rtol=RTOL):
    a, b = np.asarray(a), np.asarray(b)
    scale = max(np.abs(b).max(), 1e-300)
    np.testing.assert_allclose(a, b, rtol=0, atol=rtol * scale)


def _data(n=240, frac=0.3, seed=0):
    """Three views with NaN rows completely at random (every sample keeps a view)."""
    rng = np.random.RandomState(seed)
    Xs = [rng.randn(n, 3), rng.randn(n, 4), rng.randn(n, 2)]
    y = Xs[0][:, 0] + Xs[1][:, 1] ** 2 - Xs[2][:, 0] + 0.1 * rng.randn(n)
    mask = rng.rand(n, 3) >= frac
    mask[np.arange(n), rng.randint(3, size=n)] = True
    for l in range(3):
        Xs[l][~mask[:, l]] = np.nan
    return Xs, y, mask


def to_dask(Xs, rows=(70, 55, 90)):
    """Different row chunks and column chunking per view."""
    return [da.from_array(X, chunks=(r, 2)) for X, r in zip(Xs, rows)]


def test_observed_mask_one_pass_equals_numpy():
    Xs, _, mask = _data()
    got = dask_observed_mask(to_dask(Xs))
    np.testing.assert_array_equal(got, mask)
    np.testing.assert_array_equal(observed_mask(to_dask(Xs)), observed_mask(Xs))


@pytest.mark.parametrize("strategy", ["uniform", "kmeans++"])
def test_block_nystrom_fit_with_nan_rows_equals_numpy(strategy):
    Xs, _, _ = _data()
    Xt, _, _ = _data(n=90, frac=0.4, seed=1)
    ref = BlockNystrom(n_landmarks=20, landmarks=strategy, random_state=0).fit(Xs)
    dk = BlockNystrom(n_landmarks=20, landmarks=strategy, random_state=0).fit(to_dask(Xs))
    np.testing.assert_array_equal(dk.landmark_indices_, ref.landmark_indices_)
    assert dk.landmark_indices_.shape == (3, 20)  # per-view landmarks from observed rows
    for l in range(3):
        assert dk.kernels_[l].params_["gamma"] == pytest.approx(
            ref.kernels_[l].params_["gamma"], rel=1e-12
        )
        close(dk.landmarks_[l], ref.landmarks_[l])
        close(dk.normalizers_[l], ref.normalizers_[l])
    # per-pair statistics from the rows where both views are observed
    np.testing.assert_array_equal(dk.missing_model_.counts, ref.missing_model_.counts)
    close(dk.missing_model_.mean, ref.missing_model_.mean)
    close(dk.missing_model_.cov, ref.missing_model_.cov)
    # features (missing blocks completed) and moments
    lazy = dk.transform(to_dask(Xt))
    assert isinstance(lazy, da.Array)
    close(lazy.compute(), ref.transform(Xt))
    m_dk, m_ref = dk.moments(to_dask(Xs)), ref.moments(Xs)
    close(m_dk.gram, m_ref.gram)
    close(m_dk.sum, m_ref.sum)


@pytest.mark.parametrize(
    "Est, kw",
    [
        (MVMLRegressor, {}),
        (MVMLRegressor, {"joint_view": True}),
        (MVMLClassifier, {}),
        (MVMLClassifier, {"metric": "identity", "landmarks": "kmeans++"}),
        (MVMLSVC, {}),
    ],
)
def test_mvml_fit_on_dask_with_nan_rows_equals_numpy(Est, kw):
    Xs, y, _ = _data()
    Xt, _, _ = _data(n=90, frac=0.4, seed=1)
    t = y if Est is MVMLRegressor else (y > np.median(y)).astype(int)
    ref = Est(n_landmarks=15, random_state=0, **kw).fit(Xs, t)
    dk = Est(n_landmarks=15, random_state=0, **kw).fit(to_dask(Xs), t)
    out = "predict" if Est is MVMLRegressor else "decision_function"
    close(getattr(dk, out)(to_dask(Xt)).compute(), getattr(ref, out)(Xt))
    close(getattr(dk, out)(Xt), getattr(ref, out)(Xt))
    if "metric" not in kw:
        close(dk.metric_, ref.metric_)


def test_dask_targets_and_single_array_with_views():
    Xs, y, _ = _data()
    X = np.hstack(Xs)
    ref = MVMLRegressor(views=[3, 4, 2], n_landmarks=15, random_state=0).fit(X, y)
    dk = MVMLRegressor(views=[3, 4, 2], n_landmarks=15, random_state=0).fit(
        da.from_array(X, chunks=(60, 9)), da.from_array(y, chunks=60)
    )
    close(dk.predict(X), ref.predict(X))


@pytest.mark.parametrize("Est", [MVMLRegressorCV, MVMLClassifierCV])
def test_cv_estimators_on_dask_with_nan_rows_equal_numpy(Est):
    Xs, y, _ = _data(n=150)
    t = y if Est is MVMLRegressorCV else (y > np.median(y)).astype(int)
    # the model of all the views (Dask fits no reduced models, missing_views="reduced")
    kw = dict(n_landmarks=12, cv=3, random_state=0, search="exhaustive")
    ref = Est(missing_views="complete", **kw).fit(Xs, t)
    dk = Est(**kw).fit(to_dask(Xs), t)
    assert not hasattr(dk.best_estimator_, "reduced_models_")
    assert dk.best_params_ == ref.best_params_
    close(dk.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"])
    out = "predict" if Est is MVMLRegressorCV else "decision_function"
    close(getattr(dk, out)(to_dask(Xs)).compute(), getattr(ref, out)(Xs))


# --------------------------------------------------------------------------- errors
def test_partly_missing_and_all_missing_rows_refused_on_dask():
    Xs, y, _ = _data()
    part = [X.copy() for X in Xs]
    part[1][100] = 0.0
    part[1][100, 2] = np.nan  # view 1: one column of row 100 only
    msg = r"view 1 contains NaN \(in rows 70\.\.139\) in only some of its columns \(rows 100\)"
    for est in (BlockNystrom(n_landmarks=10), MVMLRegressor(n_landmarks=10)):
        with pytest.raises(ValueError, match=msg):
            est.fit(to_dask(part), y)
    empty = [X.copy() for X in Xs]
    for X in empty:
        X[[5, 150]] = np.nan
    for est in (BlockNystrom(n_landmarks=10), MVMLClassifier(n_landmarks=10)):
        with pytest.raises(ValueError, match=r"every view is missing \(all NaN\) in rows 5, 150"):
            est.fit(to_dask(empty), (y > 0).astype(int))
    rare = [X.copy() for X in Xs]
    rare[2][1:] = np.nan
    rare[0][1:] = 1.0
    with pytest.raises(ValueError, match="view 2 is observed on 1 training row"):
        BlockNystrom(n_landmarks=10).fit(to_dask(rare))
    inf = [X.copy() for X in Xs]
    inf[0][3] = np.inf
    with pytest.raises(ValueError, match=r"view 0 contains infinity \(in rows 0\.\.69\)"):
        BlockNystrom(n_landmarks=10).fit(to_dask(inf))
    # at transform: an all-missing sample is refused with its global row number
    ny = BlockNystrom(n_landmarks=10, random_state=0).fit(to_dask(Xs))
    one = [X.copy() for X in Xs]
    for X in one:
        X[150] = np.nan
    with pytest.raises(ValueError, match=r"every view is missing \(all NaN\) in rows 150;"):
        ny.transform(to_dask(one)).compute()


def test_full_kernel_mode_on_dask_is_refused():
    Xs, y, _ = _data()
    with pytest.raises(ValueError, match="Dask input needs the Nystrom mode"):
        MVMLRegressor(n_landmarks=None).fit(to_dask(Xs), y)


def test_complete_dask_fit_cannot_complete_in_blocknystrom():
    Xs, _, mask = _data()
    full = [np.where(np.isnan(X), 0.5, X) for X in Xs]
    ny = BlockNystrom(n_landmarks=10, random_state=0).fit(to_dask(full))
    assert not hasattr(ny, "missing_model_")
    with pytest.raises(ValueError, match="complete Dask views does not compute them"):
        ny.transform(to_dask(Xs)).compute()


def test_kpca_on_dask_refuses_missing_views_saying_what_is_supported():
    from mvkernels import MultiViewKPCA

    Xs, _, _ = _data()
    with pytest.raises(
        ValueError,
        match=r"view \d contains NaN \(in rows \d+\.\.\d+\) in whole rows \(missing views\): "
        "on Dask input they are supported by BlockNystrom and the MVML estimators",
    ):
        MultiViewKPCA(n_components=2).fit(to_dask(Xs))

"""Multi-output regression: ``MVMLRegressor`` / ``MVMLRegressorCV`` on ``y`` of shape (n, k)."""

import numpy as np
import pytest
from sklearn.metrics import r2_score

from mvkernels import MVMLRegressor, MVMLRegressorCV


def _data(n=60, seed=0):
    rng = np.random.RandomState(seed)
    Xs = [rng.randn(n, 3), rng.randn(n, 4)]
    Y = np.column_stack(
        [
            np.sin(Xs[0][:, 0]) + Xs[1][:, 1],
            Xs[0][:, 1] * Xs[1][:, 0],
            0.1 * rng.randn(n) + Xs[1][:, 2],
        ]
    )
    return Xs, Y


@pytest.mark.parametrize("metric", ["dense", "identity", "cov", "sparse"])
@pytest.mark.parametrize("n_landmarks", ["auto", 12, None])
def test_multi_output_equals_separate_fits(metric, n_landmarks):
    """One fit on (n, k) targets = k fits on the columns (shared factorisation only)."""
    Xs, Y = _data()
    kw = dict(n_landmarks=n_landmarks, metric=metric, max_iter=3, random_state=0)
    multi = MVMLRegressor(**kw).fit(Xs, Y)
    P = multi.predict(Xs)
    assert P.shape == Y.shape and multi.n_outputs_ == 3
    assert multi.coef_.shape[0] == 3 and len(multi.objective_) == 3
    for j in range(Y.shape[1]):
        single = MVMLRegressor(**kw).fit(Xs, Y[:, j])
        assert single.predict(Xs).shape == (Y.shape[0],)
        np.testing.assert_allclose(P[:, j], single.predict(Xs), rtol=0, atol=1e-10)
        np.testing.assert_allclose(multi.coef_[j], single.coef_, rtol=0, atol=1e-10)
        np.testing.assert_allclose(multi.metric_[j], single.metric_, rtol=0, atol=1e-10)
    # scoring as scikit-learn's: uniform average of the per-output R^2
    assert multi.score(Xs, Y) == pytest.approx(r2_score(Y, P), abs=1e-12)
    assert multi.score(Xs, Y) == pytest.approx(np.mean(r2_score(Y, P, multioutput="raw_values")))


def test_column_target_keeps_its_shape():
    """y of shape (n, 1) is a one-output multi-output problem (as Ridge): (n, 1) out."""
    Xs, Y = _data()
    est = MVMLRegressor(max_iter=2).fit(Xs, Y[:, :1])
    one = MVMLRegressor(max_iter=2).fit(Xs, Y[:, 0])
    assert est.predict(Xs).shape == (Y.shape[0], 1)
    np.testing.assert_allclose(est.predict(Xs)[:, 0], one.predict(Xs), atol=1e-12)


def test_bad_multi_output_targets():
    Xs, Y = _data()
    with pytest.raises(ValueError, match="1d or 2d"):
        MVMLRegressor().fit(Xs, Y[:, :, None])
    with pytest.raises(ValueError, match="0 outputs"):
        MVMLRegressor().fit(Xs, Y[:, :0])
    Ybad = Y.copy()
    Ybad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        MVMLRegressor().fit(Xs, Ybad)
    with pytest.raises(ValueError, match="NaN"):
        MVMLRegressorCV().fit(Xs, Ybad)


@pytest.mark.parametrize("n_landmarks", [12, None])
@pytest.mark.parametrize("metric", ["dense", "identity"])
def test_cv_multi_output_selects_on_the_mean_score(metric, n_landmarks):
    """Shared selection: every candidate's score is the mean over outputs of the per-output
    R^2, i.e. the mean of k single-output searches' scores; the refitted model equals k
    separate fits with the chosen hyperparameters."""
    Xs, Y = _data(n=45)
    kw = dict(
        alphas=[0.01, 1.0],
        etas=[0.1, 1.0],
        bandwidth_factors=[1.0, 4.0],
        max_iter=3,
        cv=3,
        metric=metric,
        n_landmarks=n_landmarks,
        random_state=0,
        search="exhaustive",
    )
    multi = MVMLRegressorCV(**kw).fit(Xs, Y)
    singles = [MVMLRegressorCV(**kw).fit(Xs, Y[:, j]) for j in range(Y.shape[1])]
    expected = np.mean([s.cv_results_["mean_test_score"] for s in singles], axis=0)
    np.testing.assert_allclose(multi.cv_results_["mean_test_score"], expected, atol=1e-10)
    assert multi.best_index_ == int(np.nanargmax(expected))  # NaN: candidates not scored
    P = multi.predict(Xs)
    assert P.shape == Y.shape
    best = dict(multi.best_params_)
    f = best.pop("bandwidth_factor")
    for j in range(Y.shape[1]):
        ref = MVMLRegressor(
            metric=metric,
            n_landmarks=n_landmarks,
            random_state=0,
            bandwidth_factor=f,
            fit_intercept=True,  # the CV's default, as MVMLRegressor's
            **{"joint_view": False, **best},
        )
        if "max_iter" not in best:
            ref.set_params(max_iter=3)
        ref.fit(Xs, Y[:, j])
        np.testing.assert_allclose(P[:, j], ref.predict(Xs), rtol=0, atol=1e-10)
    # a scikit-learn scorer gives the same selection scores as the built-in R^2
    scored = MVMLRegressorCV(scoring="r2", **kw).fit(Xs, Y)
    np.testing.assert_allclose(
        scored.cv_results_["mean_test_score"], multi.cv_results_["mean_test_score"], atol=1e-10
    )


def test_dask_multi_output_equals_numpy():
    """Dask views and an (n, k) Dask target: one Dask reduction, the same model."""
    da = pytest.importorskip("dask.array")
    Xs, Y = _data(n=100)
    ref = MVMLRegressor(n_landmarks=10, random_state=0).fit(Xs, Y)
    Xd = [da.from_array(X, chunks=40) for X in Xs]
    est = MVMLRegressor(n_landmarks=10, random_state=0).fit(Xd, da.from_array(Y, chunks=(40, 3)))
    P = est.predict(Xd)
    assert isinstance(P, da.Array) and P.shape == Y.shape
    np.testing.assert_allclose(P.compute(), ref.predict(Xs), rtol=0, atol=1e-10)

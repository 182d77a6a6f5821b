"""Feature-space OLOK (``OLOKRegressor(features=...)``) and the click-shaped stream."""

import numpy as np
import pytest
from sklearn.base import clone

from mvkernels.datasets import make_click_stream
from mvkernels.kernels import ViewKernel
from mvkernels.olok import OLOKRegressor
from mvkernels.olok._features import FeatureMap
from mvkernels.operator_kernels import CallableOperatorKernel

TOL = 1e-10


def _stream(n=600, p=4, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    Y = np.c_[np.sin(X[:, 0]), X[:, 1] * X[:, 2], np.cos(X[:, 3])][:, :d]
    return X, Y + 0.1 * rng.standard_normal(Y.shape)


def _chunks(est, X, Y, bounds):
    P = [est.progressive_predict(X[a:b], Y[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    return np.vstack(P)


RBF = dict(kernel_params={"gamma": 0.3}, output_kernel=0.1, eta0=0.5, alpha=0.01)


@pytest.mark.parametrize(
    "extra",
    [
        dict(),
        dict(learning_rate="constant", eta0=0.02),
        dict(loss="epsilon_insensitive", epsilon=0.2),  # the row recursion
        dict(output_kernel=None),
    ],
)
def test_identity_features_equal_exact_olok_on_linear_kernel(extra):
    X, Y = _stream()
    params = {**dict(kernel="linear", output_kernel=0.1, eta0=0.05, alpha=0.01), **extra}
    exact = OLOKRegressor(**params)
    feat = OLOKRegressor(**params, features="identity")
    bounds = [0, 1, 7, 300, 301, 600]
    P_exact = _chunks(exact, X, Y, bounds)
    P_feat = _chunks(feat, X, Y, bounds)
    np.testing.assert_allclose(P_feat, P_exact, rtol=0, atol=TOL)
    Xt = X[:50] + 0.3
    np.testing.assert_allclose(feat.predict(Xt), exact.predict(Xt), rtol=0, atol=TOL)
    # the model is the D x d matrix W = sum_i x_i alpha_i^T B, f(x) = x^T W
    assert feat.coef_.shape == (4, 3)
    W = exact.support_vectors_.T @ exact.dual_coef_ @ exact.kernel_.B
    np.testing.assert_allclose(feat.coef_, W, rtol=0, atol=TOL)


@pytest.mark.parametrize("features", ["rff", "nystrom"])
def test_partial_fit_over_chunks_equals_one_fit(features):
    X, Y = _stream(n=900)
    est = OLOKRegressor(**RBF, features=features, n_features=150, random_state=3)
    one = clone(est).fit(X, Y)
    P_one = clone(est).progressive_predict(X, Y)
    chunked = clone(est)
    # chunk edges on both sides of the Nystrom switch (after row 150) and within blocks
    P = _chunks(chunked, X, Y, [0, 1, 2, 149, 151, 300, 777, 900])
    Xt = X[:40] + 0.1
    np.testing.assert_allclose(chunked.predict(Xt), one.predict(Xt), rtol=0, atol=TOL)
    np.testing.assert_allclose(P, P_one, rtol=0, atol=TOL)
    np.testing.assert_allclose(chunked.coef_, one.coef_, rtol=0, atol=TOL)


def test_nystrom_learns_the_basis_rows_exactly_then_keeps_the_function():
    X, Y = _stream(n=500)
    D = 120
    exact = OLOKRegressor(**RBF)
    nys = OLOKRegressor(**RBF, features="nystrom", n_features=D)
    P_exact = exact.progressive_predict(X[:D], Y[:D])
    P_nys = nys.progressive_predict(X[:D], Y[:D])
    np.testing.assert_allclose(P_nys, P_exact, rtol=0, atol=TOL)  # exact OLOK up to t = D
    # switch to features on the D rows: same function (k(L, L) is well conditioned here)
    assert nys.feature_map_.n_features == D and nys.coef_.shape == (D, 3)
    Xt = X[D:] + 0.05
    np.testing.assert_allclose(nys.predict(Xt), exact.predict(Xt), rtol=0, atol=1e-7)
    with pytest.raises(AttributeError, match="feature-space"):
        nys.support_vectors_  # noqa: B018
    # afterwards it is OLOK with the Nystrom kernel k(x, L) k(L, L)^-1 k(L, x')
    nys.partial_fit(X[D:], Y[D:])
    exact.partial_fit(X[D:], Y[D:])
    gap = np.abs(nys.predict(Xt) - exact.predict(Xt)).max()
    assert 0 < gap < 0.2


def _state_bytes(obj, seen=None):
    """Bytes of every NumPy array reachable from ``obj``'s attributes."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, dict):
        return sum(_state_bytes(v, seen) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(_state_bytes(v, seen) for v in obj)
    if hasattr(obj, "__dict__") and type(obj).__module__.startswith("mvkernels"):
        return _state_bytes(vars(obj), seen)
    return 0


@pytest.mark.parametrize("features", ["rff", "nystrom", None])
def test_memory_does_not_grow_with_the_number_of_chunks(features):
    X, Y = _stream(n=6000, seed=4)
    est = OLOKRegressor(**RBF, features=features, n_features=200, random_state=0)
    sizes = []
    for a in range(0, 6000, 500):
        est.partial_fit(X[a : a + 500], Y[a : a + 500])
        sizes.append(_state_bytes(est))
    if features is None:  # the exact model stores every sample: this test can fail
        assert sizes[-1] > 4 * sizes[1]
    else:
        assert len(set(sizes)) == 1, sizes
        assert sizes[-1] < 200 * (4 + 3 + 200 + 2) * 8 + 10_000


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
def test_random_features_converge_to_the_kernel(kernel):
    X, Y = _stream(n=300, seed=5)
    k = ViewKernel(kernel, {"gamma": 0.3}).fit(X)
    K = k(X, X)
    errors = []
    for D in (100, 1000, 10_000):
        fmap = FeatureMap("rff", k, 4, D, np.random.RandomState(0))
        F = fmap.transform(X)
        errors.append(np.abs(F @ F.T - K).max())
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.07 and errors[0] / errors[2] > 5  # ~ 1/sqrt(D): 10x from 100x
    # and the learnt OLOK approaches exact OLOK
    params = dict(RBF, kernel=kernel)
    exact = OLOKRegressor(**params).fit(X, Y)
    gaps = [
        np.abs(
            OLOKRegressor(**params, features="rff", n_features=D, random_state=0)
            .fit(X, Y)
            .predict(X)
            - exact.predict(X)
        ).max()
        for D in (100, 1000, 10_000)
    ]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 0.1


def test_feature_space_learns_like_exact_olok_on_a_stream():
    X, Y = next(make_click_stream(6000, chunk_size=6000, random_state=1))
    Xt, Yt = next(make_click_stream(2000, chunk_size=2000, start=10**6, random_state=1))
    g = ViewKernel("rbf").fit(X, random_state=0).params_["gamma"]
    p = dict(kernel_params={"gamma": g}, output_kernel=0.1, eta0=1.0, alpha=1e-4)
    e_exact = np.mean((OLOKRegressor(**p).fit(X, Y).predict(Xt) - Yt) ** 2)
    e_mean = np.mean((Y.mean(0) - Yt) ** 2)
    for f in ("rff", "nystrom"):
        est = OLOKRegressor(**p, features=f, n_features=500, random_state=0).fit(X, Y)
        e = np.mean((est.predict(Xt) - Yt) ** 2)
        assert e < 1.05 * e_exact < 0.8 * e_mean, (f, e, e_exact, e_mean)


def test_feature_space_stream_api_and_errors():
    X, Y = _stream(n=60)
    batch = OLOKRegressor(**RBF, features="rff", n_features=64, random_state=0).fit(X, Y)
    one = OLOKRegressor(**RBF, features="rff", n_features=64, random_state=0)
    for x, y in zip(X, Y):
        one.learn_one({"a": x[0], "b": x[1], "c": x[2], "d": x[3]}, y)
    np.testing.assert_allclose(
        one.predict_one({"a": X[0, 0], "b": X[0, 1], "c": X[0, 2], "d": X[0, 3]}),
        batch.predict(X[:1])[0],
        atol=1e-12,
    )
    with pytest.raises(AttributeError, match="feature-space"):
        batch.dual_coef_  # noqa: B018
    with pytest.raises(AttributeError, match="coef_"):
        OLOKRegressor(**RBF).fit(X, Y).coef_  # noqa: B018
    for bad, match in [
        (dict(features="rff", truncation=10), "truncation=10 cannot be combined"),
        (dict(features="identity"), "linear kernel, not of kernel 'rbf'"),
        (dict(features="rff", kernel="poly"), "rbf and laplacian kernels, not of kernel 'poly'"),
        (dict(features="fourier"), "'features' parameter"),
        (dict(features="rff", n_features=0), "'n_features' parameter"),
    ]:
        with pytest.raises(ValueError, match=match):
            OLOKRegressor(**{**RBF, **bad}).fit(X, Y)
    op = CallableOperatorKernel(lambda A, B: np.ones((len(A), len(B), 3, 3)))
    with pytest.raises(ValueError, match="decomposable"):
        OLOKRegressor(kernel=op, features="rff").fit(X, Y)
    # the divergence guard: constant step 3 with k(x, x) = 1, B = I blows up
    with pytest.raises(ValueError, match="diverged at t="):
        OLOKRegressor(
            kernel_params={"gamma": 1e-3},
            eta0=3.0,
            alpha=0.0,
            learning_rate="constant",
            features="rff",
            n_features=300,
            random_state=0,
        ).fit(*_stream(n=3000, seed=8))


def test_click_stream_is_seeded_and_chunking_free():
    a = list(make_click_stream(25_000, chunk_size=7_000, random_state=2))
    X = np.vstack([c[0] for c in a])
    Y = np.vstack([c[1] for c in a])
    assert [c[0].shape[0] for c in a] == [7000, 7000, 7000, 4000]
    assert X.shape == (25_000, 120) and Y.shape == (25_000, 16)
    Xs, Ys = next(make_click_stream(3_000, chunk_size=3_000, start=9_500, random_state=2))
    np.testing.assert_array_equal(Xs, X[9_500:12_500])
    np.testing.assert_array_equal(Ys, Y[9_500:12_500])
    other = next(make_click_stream(1000, chunk_size=1000, random_state=3))
    assert not np.array_equal(other[1], Y[:1000])
    assert 0 <= Y.min() and Y.max() <= 1 and np.allclose(Y * 200, np.round(Y * 200))
    # 20 continuous columns, then one-hot groups: every row has one level per group
    assert np.allclose(X[:, 20:].sum(1), 10)
    C = np.corrcoef(Y.T)
    assert np.abs(C[np.triu_indices(16, 1)]).mean() > 0.1  # correlated outputs
    with pytest.raises(ValueError, match="n_features"):
        next(make_click_stream(10, n_features=5))


def test_click_substitute_experiment_quick():
    """The click column of `mvkernels reproduce olok` on the substitute stream (quick)."""
    from mvkernels.reproduce.olok import click_experiment, make_claims

    r = click_experiment(quick=True)
    m = r["methods"]
    assert m["OLOK"]["rows"] == m["T-OLOK"]["rows"] == 5_000 and m["OLOK-rff"]["rows"] == 50_000
    assert r["params"]["OLOK"]["learning_rate"] == "invscaling"  # the paper's eta / sqrt(t)
    for name in m:  # every method learns (targets standardised: the mean predictor is ~1)
        assert m[name]["mse"] < 0.97 * r["baseline"], name
    # the feature-space learner, given 10x the rows, beats exact OLOK on its prefix
    assert m["OLOK-rff"]["mse"] < m["OLOK"]["mse"]
    claims = {c.claim.split(" (")[0]: c for c in make_claims({}, {}, r)}
    assert claims["click-rate column of Table 1"].verdict == "not comparable"
    assert claims["OLOK learns from the whole click stream"].verdict == "shown"

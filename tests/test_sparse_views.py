"""Sparse views (scipy.sparse CSR / CSC): same results as dense input, never densified."""

import numpy as np
import pytest
import scipy.sparse as sp

from mvkernels import BlockNystrom, MultiViewKPCA, MVMLClassifier, MVMLRegressor
from mvkernels.baselines import EarlyFusionRegressor, LateFusionClassifier, MLKRRegressor
from mvkernels.kernels import ViewKernel, mean_pairwise_distance


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 150
    S = sp.random(n, 400, density=0.03, format="csr", random_state=1)
    D = rng.standard_normal((n, 3))
    r = np.asarray(S @ rng.standard_normal(400)).ravel() + D[:, 0]
    return S, D, r, (r > np.median(r)).astype(int)


FORMATS = [sp.csr_matrix, sp.csc_matrix]


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
@pytest.mark.parametrize("n_landmarks", [40, None])
@pytest.mark.parametrize("fmt", FORMATS)
def test_mvml_sparse_equals_dense(data, kernel, n_landmarks, fmt):
    S, D, r, y = data
    tr, te = slice(0, 100), slice(100, None)
    dense = MVMLClassifier(kernel=kernel, n_landmarks=n_landmarks, random_state=0)
    dense.fit([S[tr].toarray(), D[tr]], y[tr])
    sparse = MVMLClassifier(kernel=kernel, n_landmarks=n_landmarks, random_state=0)
    sparse.fit([fmt(S[tr]), D[tr]], y[tr])
    np.testing.assert_allclose(
        sparse.decision_function([fmt(S[te]), D[te]]),
        dense.decision_function([S[te].toarray(), D[te]]),
        rtol=0,
        atol=1e-8,
    )
    reg = MVMLRegressor(kernel=kernel, n_landmarks=n_landmarks, random_state=0)
    ref = reg.fit([S[tr].toarray(), D[tr]], r[tr]).predict([S[te].toarray(), D[te]])
    got = reg.fit([fmt(S[tr]), D[tr]], r[tr]).predict([fmt(S[te]), D[te]])
    # the regressor's default bandwidth factor (1.5; the classifier's is 6) gives a worse
    # conditioned solve: the sparse distances' rounding reaches 1.1e-8 (values near 2)
    # under the minimum versions (numpy 1.25, scipy 1.10)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-7)


def test_single_sparse_array_with_views_and_block_nystrom(data):
    S, D, r, y = data
    X = sp.hstack([S, sp.csr_matrix(D)], format="csr")
    nys = BlockNystrom(n_landmarks=30, views=[400, 3], random_state=0).fit(X)
    ref = BlockNystrom(n_landmarks=30, random_state=0).fit([S.toarray(), D])
    # the dense copy's default bandwidth is computed in single precision (about 1e-9
    # relative from the sparse view's): the features agree to 1e-8, not to rounding
    np.testing.assert_allclose(nys.transform(X), ref.transform([S.toarray(), D]), atol=1e-8)
    assert sp.issparse(nys.landmarks_[0]) and nys.landmarks_[0].shape == (30, 400)
    a = MVMLRegressor(n_landmarks=30, views=[400, 3], random_state=0).fit(X, r).predict(X)
    b = MVMLRegressor(n_landmarks=30, random_state=0).fit([S.toarray(), D], r)
    np.testing.assert_allclose(a, b.predict([S.toarray(), D]), atol=1e-8)


def test_kernels_and_bandwidth_on_sparse_rows(data):
    S, _, _, _ = data
    for name in ["rbf", "linear", "poly", "laplacian"]:
        k_sp = ViewKernel(name).fit(S, random_state=0)
        k_de = ViewKernel(name).fit(S.toarray(), random_state=0)
        # the dense rbf bandwidth is computed in single precision by default
        assert k_sp.params_ == pytest.approx(k_de.params_, rel=1e-6 if name == "rbf" else 1e-12)
        np.testing.assert_allclose(k_sp.diag(S), k_de.diag(S.toarray()), rtol=1e-12)
        np.testing.assert_allclose(k_sp(S[:7], S), k_de(S[:7].toarray(), S.toarray()), atol=1e-12)
    # subsampled bandwidth: the same rows, the same mean distance
    for metric in ["euclidean", "cityblock"]:
        a = mean_pairwise_distance(S, metric, max_samples=40, random_state=3)
        b = mean_pairwise_distance(
            S.toarray(), metric, max_samples=40, random_state=3, precision="double"
        )
        assert a == pytest.approx(b, rel=1e-12)


def test_large_sparse_view_is_never_densified(monkeypatch):
    """Fit, bandwidth and predict on a 3000 x 20000 CSR view: no dense block larger than
    the n x p kernel blocks is ever made from it."""
    n, d = 3000, 20_000
    S = sp.random(n, d, density=0.001, format="csr", random_state=0)
    D = np.random.default_rng(0).standard_normal((n, 2))
    y = (D[:, 0] > 0).astype(int)
    largest = [0]
    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        orig = cls.toarray

        def spy(self, *a, _orig=orig, **k):
            largest[0] = max(largest[0], self.shape[0] * self.shape[1])
            return _orig(self, *a, **k)

        monkeypatch.setattr(cls, "toarray", spy)
    est = MVMLClassifier(n_landmarks=50, random_state=0).fit([S, D], y)
    est.predict([S, D])
    # kernel blocks only (n x p, and the bandwidth heuristic's distances between at most
    # 2000 sampled rows, which some scipy versions form through toarray), never n x d (6e7)
    assert largest[0] <= max(n * 50 * 2, 2000 * 2000)


def test_estimators_on_sparse_views(data):
    S, D, r, y = data
    dense = [S.toarray(), D]
    ef = EarlyFusionRegressor(kernel="rbf").fit([S, D], r)
    ref = EarlyFusionRegressor(kernel="rbf").fit(dense, r).predict(dense)
    np.testing.assert_allclose(ef.predict([S, D]), ref, atol=1e-8)
    lf = LateFusionClassifier().fit([S.tocsc(), D], y)
    np.testing.assert_allclose(  # the baselines' bandwidths: double precision on dense rows
        lf.decision_function([S, D]),
        LateFusionClassifier().fit(dense, y).decision_function(dense),
        atol=1e-9,
    )
    kp = MultiViewKPCA(n_components=3, kernel="rbf").fit([S, D])
    ref = MultiViewKPCA(n_components=3, kernel="rbf").fit(dense)
    np.testing.assert_allclose(kp.transform([S, D]), ref.transform(dense), atol=1e-8)


def test_sparse_refusals_name_the_view(data):
    import dask.array as da

    S, D, r, _ = data
    with pytest.raises(TypeError, match="view 0 is a sparse matrix.*callable"):
        MVMLRegressor(kernel=lambda A, B: A @ B.T, n_landmarks=10).fit([S, D], r)
    with pytest.raises(TypeError, match="view 1 is a sparse matrix.*identity"):
        MultiViewKPCA().fit([D, S])
    with pytest.raises(TypeError, match="view 0 is a sparse matrix.*MLKR"):
        MLKRRegressor().fit([S, D], r)
    with pytest.raises(TypeError, match="view 0 is a sparse matrix.*Dask"):
        MVMLRegressor(n_landmarks=10).fit([S, da.from_array(D)], r)
    bad = S.copy()
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match=r"view 0 \(sparse\) contains NaN"):
        MVMLRegressor(n_landmarks=10).fit([bad, D], r)


@pytest.mark.parametrize("features", [["nystrom", "identity"], None])
def test_kpca_inference_with_a_sparse_view(data, features):
    S, D, _, _ = data
    kw = dict(n_components=3, kernel=["rbf", "linear"], features=features, random_state=0)
    if features is not None:
        kw["n_features"] = [40, None]
    a = MultiViewKPCA(**kw).fit([S, D])
    b = MultiViewKPCA(**kw).fit([S.toarray(), D])
    np.testing.assert_allclose(
        a.infer_views([S[:10], None], [1])[0],
        b.infer_views([S[:10].toarray(), None], [1])[0],
        atol=1e-9,
    )
    np.testing.assert_allclose(
        a.infer_views([None, D[:10]], [0])[0], b.infer_views([None, D[:10]], [0])[0], atol=1e-9
    )


@pytest.mark.parametrize("solver", ["primal-eig", "dual-eig"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_kpca_fitted_dense_takes_sparse_new_rows(data, solver, fmt):
    """A view fitted dense with identity features (the linear kernel's map) takes sparse
    rows at transform and inference time: the same hidden units and inferred views as
    the dense rows (it raised NumPy's 'setting an array element with a sequence')."""
    S, D, _, _ = data
    kp = MultiViewKPCA(n_components=3, solver=solver, random_state=0).fit([S.toarray(), D])
    assert kp.solver_ == solver
    new, dense = fmt(S[100:]), S[100:].toarray()
    np.testing.assert_allclose(kp.transform([new, D[100:]]), kp.transform([dense, D[100:]]))
    got = kp.infer_views([new, None], [1], return_hidden=True)
    ref = kp.infer_views([dense, None], [1], return_hidden=True)
    np.testing.assert_allclose(got[0][0], ref[0][0])
    np.testing.assert_allclose(got[1], ref[1])
    assert np.ptp(got[1], axis=0).min() > 0  # the sparse rows were read, not zeros


def test_kpca_precomputed_sparse_test_kernel(data):
    S, D, _, _ = data
    Ks = [(S @ S.T).toarray(), D @ D.T]
    kp = MultiViewKPCA(n_components=3, kernel="precomputed").fit([K[:100, :100] for K in Ks])
    test = [K[100:, :100] for K in Ks]
    np.testing.assert_allclose(
        kp.transform([sp.csr_matrix(test[0]), test[1]]), kp.transform(test), atol=1e-12
    )


def test_forecaster_takes_sparse_windows():
    from mvkernels.datasets import make_sum_of_sines
    from mvkernels.rkm import RKMForecaster

    z = make_sum_of_sines(200)
    f = RKMForecaster(lag=10).fit(z)
    W, _ = f.windows(z, 10)
    np.testing.assert_allclose(f.predict(sp.csr_matrix(W)), f.predict(W))

"""Multi-view input validation, per-view kernels and the block Nystrom map."""

import numpy as np
import pytest
from scipy.spatial.distance import pdist
from sklearn.metrics.pairwise import rbf_kernel
from threadpoolctl import threadpool_info, threadpool_limits

from mvkernels import BlockNystrom, IndexedKernel, check_views
from mvkernels.kernels import ViewKernel, make_view_kernels, mean_pairwise_distance
from mvkernels.nystrom import (
    FeatureMoments,
    resolve_n_landmarks,
    select_landmarks,
    sqrt_pinv_psd,
)


def two_views(rng, n=60):
    return [rng.standard_normal((n, 3)), rng.standard_normal((n, 5))]


# ----------------------------------------------------------------- validation
def test_list_and_single_array_forms_agree(rng):
    Xs = two_views(rng)
    X = np.hstack(Xs)
    for spec in ([3, 5], [slice(0, 3), slice(3, 8)], [np.arange(3), np.arange(3, 8)]):
        got = check_views(X, views=spec)
        assert [g.shape for g in got] == [(60, 3), (60, 5)]
        np.testing.assert_array_equal(got[1], Xs[1])
    assert len(check_views(X)) == 1  # no spec: one view with every column


@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda Xs: [Xs[0], Xs[1][:50]], "view 1 has 50 samples, view 0 has 60"),
        (lambda Xs: [Xs[0], np.where(np.arange(5) == 2, np.nan, Xs[1])], "view 1 contains NaN"),
        (
            lambda Xs: [np.where(np.arange(3) == 0, np.inf, Xs[0]), Xs[1]],
            "view 0 contains infinity",
        ),
        (lambda Xs: [Xs[0], np.empty((60, 0))], "view 1 has 0 features"),
        (lambda Xs: [Xs[0][:0], Xs[1][:0]], "view 0 has 0 sample"),
        (lambda Xs: [Xs[0], Xs[1][:, 0]], "view 1 is 1-D"),
        (lambda Xs: [], "empty list"),
    ],
)
def test_bad_input_names_the_view(rng, bad, match):
    with pytest.raises(ValueError, match=match):
        check_views(bad(two_views(rng)))


def test_predict_time_checks(rng):
    Xs = two_views(rng)
    with pytest.raises(ValueError, match="expected 3 view"):
        check_views(Xs, n_views=3)
    with pytest.raises(ValueError, match="view 1 has 5 features, but 4 were seen"):
        check_views(Xs, n_features=[3, 4])
    with pytest.raises(ValueError, match="add up to 7 columns"):
        check_views(np.hstack(Xs), views=[3, 4])
    with pytest.raises(TypeError):
        check_views(None)


# --------------------------------------------------------------------- kernels
def test_default_gaussian_bandwidth_is_mean_distance(rng):
    X = rng.standard_normal((80, 4))
    sigma = pdist(X).mean()
    k = ViewKernel("rbf").fit(X)
    assert k.params_["gamma"] == pytest.approx(1 / (2 * sigma**2))
    np.testing.assert_allclose(
        k(X, X), np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / (2 * sigma**2))
    )


def test_gaussian_gram_equals_scikit_learn_and_is_used_for_dense_views(rng, monkeypatch):
    """The library's Gaussian Gram matrix (no per-call input checks) is scikit-learn's
    rbf_kernel to rounding, exactly 1 on the diagonal of K(X, X), in [0, 1]; dense NumPy
    views take it, sparse ones scikit-learn's."""
    import scipy.sparse as sp
    from sklearn.metrics.pairwise import rbf_kernel

    import mvkernels._kernel_families as kmod

    X = 30.0 + rng.standard_normal((70, 9)) * np.linspace(0.1, 5.0, 9)
    Z = X[::7] + 1e-9  # near-duplicates of rows of X
    for A, B in ((X, Z), (X, X), (Z, X)):
        K = kmod.gaussian_gram(A, B, 0.05)
        np.testing.assert_allclose(K, rbf_kernel(A, B, gamma=0.05), rtol=0, atol=1e-12)
        assert K.min() >= 0.0 and K.max() <= 1.0
    assert np.all(np.diag(kmod.gaussian_gram(X, X, 0.05)) == 1.0)
    k = ViewKernel("rbf", {"gamma": 0.05}).fit(X)
    calls = []
    real = kmod.gaussian_gram
    monkeypatch.setattr(kmod, "gaussian_gram", lambda *a: calls.append(1) or real(*a))
    k(X, Z)
    assert calls == [1]
    np.testing.assert_allclose(k(sp.csr_matrix(X), Z), rbf_kernel(X, Z, gamma=0.05), atol=1e-12)
    assert calls == [1]


def test_bandwidth_subsample_is_close_and_seeded(rng):
    X = rng.standard_normal((5000, 3))
    a = mean_pairwise_distance(X, max_samples=1000, random_state=1)
    b = mean_pairwise_distance(X, max_samples=1000, random_state=1)
    exact = pdist(X[:3000]).mean()
    assert a == b
    assert abs(a - exact) / exact < 0.03


def test_mean_euclidean_distance_equals_pdist_across_blocks():
    """The BLAS form of the Gaussian bandwidth heuristic is pdist's mean: several row
    blocks, an offset far from the origin, duplicated rows, one column, many columns; to
    rounding in double precision, within 1e-6 in the default single precision."""
    rng = np.random.RandomState(5)
    X = 50.0 + rng.standard_normal((1100, 6))
    X[700:720] = X[0]  # exact duplicates: zero distances
    wide = rng.standard_normal((300, 257)) * np.linspace(0.1, 10.0, 257)
    for V in (X, X[:, :1], X[:2], wide):
        exact = pdist(V).mean()
        assert mean_pairwise_distance(V, precision="double") == pytest.approx(exact, rel=1e-12)
        assert mean_pairwise_distance(V) == pytest.approx(exact, rel=1e-6)
        assert mean_pairwise_distance(V) != mean_pairwise_distance(V, precision="double")
    for precision in ("single", "double"):
        assert mean_pairwise_distance(np.ones((4, 3)), precision=precision) == 0.0
    with pytest.raises(ValueError, match="precision"):
        mean_pairwise_distance(X, precision="half")


def test_mean_euclidean_distance_at_any_scale_and_on_tight_clusters():
    """Rows are scaled by a power of two before the products: data near 1e200 or 1e-200
    (whose squared norms overflow or underflow, in float32 and float64) give the scaled
    mean exactly as at scale 1, and the scaling changes no digit of the double result.
    The adversarial case of single precision (tight clusters far apart: the small
    distances lose their digits) stays within the documented 1e-4 (here 1.4e-5)."""
    rng = np.random.RandomState(2)
    V = rng.standard_normal((200, 7))
    for precision in ("single", "double"):
        base = mean_pairwise_distance(V, precision=precision)
        for k in (-660, -3, 5, 660):
            scaled = mean_pairwise_distance(V * 2.0**k, precision=precision)
            assert scaled == 2.0**k * base
    assert mean_pairwise_distance(V, precision="double") == pytest.approx(
        pdist(V).mean(), rel=1e-13
    )
    centres = rng.standard_normal((10, 100)) * 100
    tight = np.repeat(centres, 100, axis=0) + 1e-3 * rng.standard_normal((1000, 100))
    exact = pdist(tight).mean()
    assert mean_pairwise_distance(tight) == pytest.approx(exact, rel=1e-4)


def test_subsample_indices_distinct_seeded_uniform_and_small_memory():
    import tracemalloc

    from mvkernels.kernels import subsample_indices

    for n, m in [(10, 10), (10, 20), (7000, 2000), (10**6, 2000)]:
        idx = subsample_indices(n, m, random_state=3)
        assert idx.size == min(n, m) and np.all(np.diff(idx) > 0)
        assert idx.min() >= 0 and idx.max() < n
        np.testing.assert_array_equal(idx, subsample_indices(n, m, random_state=3))
    # uniform: every row equally likely (chi-square style check on 20 bins)
    counts = np.zeros(20)
    for s in range(200):
        counts += np.bincount(subsample_indices(100_000, 50, random_state=s) // 5000, minlength=20)
    assert np.abs(counts - counts.mean()).max() < 5 * np.sqrt(counts.mean())
    # O(sample) memory: 2000 rows out of 10^8 without an O(n) permutation
    tracemalloc.start()
    subsample_indices(10**8, 2000, random_state=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2_000_000


@pytest.mark.parametrize("name", ["rbf", "gaussian", "laplacian", "linear", "poly"])
def test_kernels_symmetric_psd_and_diag(rng, name):
    X = rng.standard_normal((30, 4))
    k = ViewKernel(name).fit(X)
    K = k(X, X)
    np.testing.assert_allclose(K, K.T, atol=1e-12)
    assert np.linalg.eigvalsh(K).min() > -1e-8 * np.abs(K).max()
    np.testing.assert_allclose(k.diag(X), np.diag(K), rtol=1e-10)


def test_kernel_parameter_errors(rng):
    with pytest.raises(ValueError, match="unknown kernel"):
        ViewKernel("cosine")
    with pytest.raises(ValueError, match="does not take"):
        ViewKernel("linear", {"gamma": 1})
    with pytest.raises(ValueError, match="view 1: kernel parameter gamma must be > 0"):
        ViewKernel("rbf", {"gamma": -1}, view=1).fit(rng.standard_normal((5, 2)))
    with pytest.raises(ValueError, match="kernel lists 3 kernels"):
        make_view_kernels(["rbf"] * 3, None, 2)
    with pytest.raises(ValueError, match="all training points are identical"):
        ViewKernel("rbf").fit(np.ones((5, 2)))


def test_callable_and_indexed_kernels(rng):
    X = rng.standard_normal((20, 3))
    k = ViewKernel(lambda A, B, c=0.0: A @ B.T + c, {"c": 1.0}).fit(X)
    np.testing.assert_allclose(k(X, X), X @ X.T + 1.0)
    K = rbf_kernel(X, gamma=0.3)
    ik = IndexedKernel(K)
    idx = np.array([[3.0], [5.0], [7.0]])
    np.testing.assert_allclose(ik(idx, idx), K[np.ix_([3, 5, 7], [3, 5, 7])])
    with pytest.raises(ValueError, match="indices must be integers"):
        ik(np.array([[0.5]]), idx)


# --------------------------------------------------------------------- Nystrom
def test_resolve_n_landmarks():
    assert resolve_n_landmarks(0.12, 896) == 108
    assert resolve_n_landmarks(1.0, 50) == 50
    assert resolve_n_landmarks(7, 50) == 7
    for bad in (0, 51, 0.0, 1.5, -0.1):
        with pytest.raises(ValueError):
            resolve_n_landmarks(bad, 50)
    with pytest.raises(TypeError):
        resolve_n_landmarks(True, 50)


def test_sqrt_pinv_floor():
    rng = np.random.default_rng(0)
    B = rng.standard_normal((6, 3))
    W = B @ B.T  # rank 3
    S, r = sqrt_pinv_psd(W)
    assert r == 3
    np.testing.assert_allclose(S, S.T)
    P = S @ W @ S  # projector onto the range of W
    np.testing.assert_allclose(P @ P, P, atol=1e-8)
    np.testing.assert_allclose(S @ S, np.linalg.pinv(W), atol=1e-8)


@pytest.mark.parametrize("strategy", ["uniform", "kmeans++"])
def test_all_landmarks_reproduce_the_kernels(rng, strategy):
    Xs = two_views(rng, n=40)
    ny = BlockNystrom(n_landmarks=1.0, landmarks=strategy, random_state=0).fit(Xs)
    U = ny.transform(Xs)
    assert U.shape == (40, 80)
    for l, Xv in enumerate(Xs):
        Ul = U[:, 40 * l : 40 * (l + 1)]
        np.testing.assert_allclose(Ul @ Ul.T, ny.kernels_[l](Xv, Xv), atol=1e-7)


def test_landmarks_shared_and_seeded(rng):
    Xs = two_views(rng, n=200)
    a = BlockNystrom(n_landmarks=20, random_state=3).fit(Xs)
    b = BlockNystrom(n_landmarks=20, random_state=3).fit(Xs)
    np.testing.assert_array_equal(a.landmark_indices_, b.landmark_indices_)
    for l in range(2):
        np.testing.assert_array_equal(a.landmarks_[l], Xs[l][a.landmark_indices_])


def test_kmeanspp_approximates_better_than_uniform():
    rng = np.random.default_rng(0)
    # clustered data: uniform sampling wastes landmarks on dense clusters
    centres = rng.standard_normal((8, 2)) * 5
    sizes = [400, 200, 100, 50, 20, 10, 10, 10]
    X = np.vstack([c + 0.3 * rng.standard_normal((m, 2)) for c, m in zip(centres, sizes)])
    Xs = [X, X[:, ::-1].copy()]
    errs = {}
    for strategy in ("uniform", "kmeans++"):
        e = []
        for seed in range(5):
            ny = BlockNystrom(
                n_landmarks=12, landmarks=strategy, kernel_params={"gamma": 0.5}, random_state=seed
            ).fit(Xs)
            U = ny.transform(Xs)[:, :12]
            K = ny.kernels_[0](X, X)
            e.append(np.linalg.norm(K - U @ U.T))
        errs[strategy] = np.mean(e)
    assert errs["kmeans++"] < 0.7 * errs["uniform"]


def test_chunked_moments_equal_dense(rng):
    Xs = two_views(rng, n=101)
    Y = rng.standard_normal((101, 2))
    ny = BlockNystrom(n_landmarks=10, chunk_size=17, random_state=0).fit(Xs)
    m = ny.moments(Xs, Y)
    U = ny.transform(Xs)
    np.testing.assert_allclose(m.gram, U.T @ U, atol=1e-10)
    np.testing.assert_allclose(m.cross, U.T @ Y, atol=1e-10)
    np.testing.assert_allclose(m.sum, U.sum(0), atol=1e-10)
    assert m.n_samples == 101
    half = FeatureMoments.from_features(U[:50], Y[:50]).merge(
        FeatureMoments.from_features(U[50:], Y[50:])
    )
    np.testing.assert_allclose(half.gram, m.gram, atol=1e-10)


def test_moments_scatter_is_stable_under_a_large_common_mean(rng):
    """Chan's pairwise update keeps the centred scatter accurate where gram - n m m^T is not."""
    U = 1e4 + rng.standard_normal((3000, 4)) * 1e-3  # spread 1e-3 around a mean of 1e4
    exact = (U - U.mean(0)).T @ (U - U.mean(0))
    parts = [FeatureMoments.from_features(U[i : i + 250]) for i in range(0, 3000, 250)]
    left = parts[0]
    for p in parts[1:]:
        left = left.merge(p)
    right = parts[-1]
    for p in parts[-2::-1]:
        right = p.merge(right)
    scale = np.abs(exact).max()
    for m in (left, right):
        assert m.n_samples == 3000
        np.testing.assert_allclose(m.centered_gram(), exact, rtol=0, atol=1e-9 * scale)
        np.testing.assert_allclose(m.covariance(), exact / 3000, rtol=0, atol=1e-9 * scale / 3000)
        np.testing.assert_allclose(m.gram, U.T @ U, rtol=1e-12)
    naive = FeatureMoments(left.n_samples, left.sum, left.gram)  # no scatter: raw formula
    assert np.abs(naive.centered_gram() - exact).max() > 1e-3 * scale  # what it protects against


def test_precomputed_nystrom_matches_raw(rng):
    Xs = two_views(rng, n=50)
    raw = BlockNystrom(n_landmarks=10, kernel_params={"gamma": 0.2}, random_state=0).fit(Xs)
    Ks = [rbf_kernel(X, gamma=0.2) for X in Xs]
    pre = BlockNystrom(kernel="precomputed", n_landmarks=10, random_state=0).fit(Ks)
    np.testing.assert_allclose(pre.transform(Ks), raw.transform(Xs), atol=1e-10)
    Xt = [rng.standard_normal((7, 3)), rng.standard_normal((7, 5))]
    Kt = [rbf_kernel(a, b, gamma=0.2) for a, b in zip(Xt, Xs)]
    np.testing.assert_allclose(pre.transform(Kt), raw.transform(Xt), atol=1e-10)


def test_precomputed_kernel_errors(rng):
    Xs = two_views(rng, n=20)
    K = rbf_kernel(Xs[0])
    ny = BlockNystrom(kernel="precomputed", n_landmarks=5)
    with pytest.raises(ValueError, match="view 1: precomputed kernel is not symmetric"):
        ny.fit([K, K + np.triu(np.ones_like(K), 1)])
    with pytest.raises(
        ValueError, match="view 0: precomputed kernel is not positive semi-definite"
    ):
        ny.fit([K - 2 * np.eye(20), K])
    with pytest.raises(ValueError, match="must be square"):
        ny.fit([K[:, :10], K[:, :10]])
    ny.fit([K, K])
    with pytest.raises(ValueError, match="one column per training sample"):
        ny.transform([K[:3, :10], K[:3, :10]])


def test_transform_checks_views(rng):
    Xs = two_views(rng)
    ny = BlockNystrom(n_landmarks=5).fit(Xs)
    with pytest.raises(ValueError, match="expected 2 view"):
        ny.transform(Xs[:1])
    with pytest.raises(ValueError, match="view 1 has 3 features, but 5"):
        ny.transform([Xs[0], Xs[0]])


def test_select_landmarks_unknown_strategy(rng):
    Xs = two_views(rng)
    ks = [ViewKernel("rbf").fit(X) for X in Xs]
    with pytest.raises(ValueError, match="unknown landmark strategy"):
        select_landmarks(Xs, ks, 5, "farthest")


def test_bandwidth_heuristic_is_thread_independent():
    """The single-precision products of the default bandwidth run on one BLAS thread
    whatever the caller's setting (at 9946e0c, 600 columns moved it by 2e-10 between 1 and
    2 threads); the fits' side of the rule: ``tests/test_common.py``."""
    if not any(i.get("user_api") == "blas" for i in threadpool_info()):
        pytest.skip("no BLAS library found by threadpoolctl")
    X = np.random.default_rng(1).normal(size=(300, 600)) * 5.0 + 2.0
    vals = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads, user_api="blas"):
            vals.append(mean_pairwise_distance(X))
    assert vals[0] == vals[1]

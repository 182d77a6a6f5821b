"""Per-view kernels: the registry's kernels, their default bandwidth and its thread rule."""

import numpy as np
import pytest
from scipy.spatial.distance import pdist
from sklearn.metrics.pairwise import rbf_kernel
from threadpoolctl import threadpool_info, threadpool_limits

from mvkernels import IndexedKernel
from mvkernels.kernels import ViewKernel, make_view_kernels, mean_pairwise_distance


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

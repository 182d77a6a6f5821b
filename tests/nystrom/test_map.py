"""The block Nystrom map: landmarks, moments, the precomputed mode and the transform's checks."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from _views import two_views
from mvkernels import BlockNystrom
from mvkernels.kernels import ViewKernel
from mvkernels.nystrom import (
    FeatureMoments,
    resolve_n_landmarks,
    select_landmarks,
    sqrt_pinv_psd,
)


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

"""Dask input for the shared feature layer, on a 2-worker LocalCluster (processes).

BlockNystrom fit / moments / transform and ``feature_moments`` on Dask views chunked by
rows give the in-memory results to 1e-10 (real data: uWave); transform is lazy; landmark
selection and bandwidth heuristics bring only sampled rows to the client.
"""

import numpy as np
import pytest

da = pytest.importorskip(
    "dask.array", reason="dask is not installed (pip install 'mvkernels[dask]')"
)
distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install 'mvkernels[dask]')"
)

from mvkernels import BlockNystrom  # noqa: E402
from mvkernels.datasets import load_uwave  # noqa: E402
from mvkernels.kernels import make_view_kernels  # noqa: E402
from mvkernels.nystrom import feature_moments, map_views, uniform_indices  # noqa: E402
from mvkernels.nystrom._dask import fit_kernels_and_landmarks  # noqa: E402

RTOL = 1e-10

# the tests wrap small in-memory arrays with da.from_array, which embeds them in the graph
pytestmark = pytest.mark.filterwarnings("ignore:Sending large graph:UserWarning")


@pytest.fixture(scope="module")
def uwave(data_dir):
    return load_uwave(data_dir)


def to_dask(Xs, rows=(200, 150, 300)):
    """Views as Dask arrays with different row chunks and column chunking per view."""
    return [
        da.from_array(X, chunks=(r, X.shape[1] if l == 0 else 100))
        for l, (X, r) in enumerate(zip(Xs, rows))
    ]


def close(a, b, rtol=RTOL):
    a, b = np.asarray(a), np.asarray(b)
    scale = max(np.abs(b).max(), 1e-300)
    np.testing.assert_allclose(a, b, rtol=0, atol=rtol * scale)


def one_hot(y):
    return (y[:, None] == np.unique(y)[None]).astype(float)


# ------------------------------------------------------------------- real data
@pytest.mark.parametrize("strategy", ["uniform", "kmeans++"])
def test_uwave_fit_and_moments_equal_in_memory(client, uwave, strategy):
    Xs, Y = uwave["Xs_train"], one_hot(uwave["y_train"])
    ref = BlockNystrom(n_landmarks=0.12, landmarks=strategy, random_state=0).fit(Xs)
    ny = BlockNystrom(n_landmarks=0.12, landmarks=strategy, random_state=0).fit(to_dask(Xs))
    np.testing.assert_array_equal(ny.landmark_indices_, ref.landmark_indices_)
    for l in range(3):
        assert ny.kernels_[l].params_["gamma"] == pytest.approx(
            ref.kernels_[l].params_["gamma"], rel=1e-12
        )
        close(ny.landmarks_[l], ref.landmarks_[l])
        close(ny.normalizers_[l], ref.normalizers_[l])
    m_ref = ref.moments(Xs, Y)
    m = ny.moments(to_dask(Xs), da.from_array(Y, chunks=(100, 8)))
    assert m.n_samples == m_ref.n_samples == 896
    close(m.gram, m_ref.gram)
    close(m.sum, m_ref.sum)
    close(m.cross, m_ref.cross)
    close(m.target_sum, Y.sum(0))
    close(m.target_gram, Y.T @ Y)
    np.testing.assert_array_equal(m.gram, m.gram.T)
    # the reduction really ran as several blocks, and only the small result came back
    assert isinstance(m.gram, np.ndarray) and m.gram.shape == (3 * 108, 3 * 108)


def test_uwave_transform_is_lazy_and_equal(client, uwave):
    ref = BlockNystrom(n_landmarks=0.12, random_state=0).fit(uwave["Xs_train"])
    Xt = uwave["Xs_test"]
    U = ref.transform(to_dask(Xt, rows=(500, 700, 1000)))
    assert isinstance(U, da.Array)
    assert U.shape == (3582, 3 * 108) and U.chunks[0][0] == 500
    close(U.compute(), ref.transform(Xt))
    # test moments with NumPy targets and Dask views
    y = uwave["y_test"].astype(float)
    m = ref.moments(to_dask(Xt), y)
    m_ref = ref.moments(Xt, y)
    close(m.gram, m_ref.gram)
    close(m.cross, m_ref.cross)


def _raising_array(n, d, chunk, allowed, seed=0):
    """Dask array generated per block; computing a block outside ``allowed`` raises."""
    return da.map_blocks(
        _gen_block,
        dtype=float,
        chunks=((chunk,) * (n // chunk), (d,)),
        allowed=frozenset(int(b) for b in allowed),
        seed=seed,
        meta=np.empty((0, 0)),
    )


def _gen_block(block_id=None, allowed=frozenset(), seed=0):
    b = block_id[0]
    if b not in allowed:
        raise RuntimeError(f"block {b} was computed")
    return np.random.default_rng([seed, b]).standard_normal((CHUNK, 4))


N_BIG, CHUNK = 400_000, 10_000


def test_transform_does_not_compute(client):
    ny = BlockNystrom(n_landmarks=5, kernel_params={"gamma": 0.3}, random_state=0)
    ny.fit([np.random.default_rng(0).standard_normal((50, 4))] * 2)
    X = _raising_array(N_BIG, 4, CHUNK, allowed=[])
    U = ny.transform([X, X])  # lazy: building the graph computes nothing
    assert isinstance(U, da.Array) and U.shape == (N_BIG, 10)
    with pytest.raises(RuntimeError, match="was computed"):
        U[:10].compute()


def test_uniform_landmarks_gather_only_their_rows(client):
    p = 12
    # gamma given: no bandwidth sample, so the rng goes straight to the landmarks
    idx = uniform_indices(N_BIG, p, np.random.RandomState(0))
    X = _raising_array(N_BIG, 4, CHUNK, allowed=np.unique(idx // CHUNK))
    assert np.unique(idx // CHUNK).size < N_BIG // CHUNK  # some blocks must stay untouched
    with pytest.raises(RuntimeError, match="was computed"):  # the guard works
        X.sum().compute()
    # the landmark step of BlockNystrom.fit (the fit itself first reads every block once,
    # for the observed rows of each view: dask_observed_mask, booleans to the client)
    kernels = make_view_kernels("rbf", {"gamma": 0.3}, 2)
    got, rows = fit_kernels_and_landmarks(
        [X, X[:, ::-1]], kernels, p, "uniform", np.random.RandomState(0)
    )
    np.testing.assert_array_equal(got, idx)
    full_blocks = {b: _gen_block((b, 0), allowed={b}) for b in np.unique(idx // CHUNK)}
    expect = np.array([full_blocks[i // CHUNK][i % CHUNK] for i in idx])
    np.testing.assert_array_equal(rows[0], expect)
    np.testing.assert_array_equal(rows[1], expect[:, ::-1])
    with pytest.raises(RuntimeError, match="was computed"):  # the fit's observed-rows pass
        BlockNystrom(n_landmarks=p, kernel_params={"gamma": 0.3}).fit([X, X[:, ::-1]])


def test_bandwidth_and_kmeanspp_bring_only_samples_to_client(client, monkeypatch):
    """Every result that reaches the client is small; fit equals the NumPy fit."""
    import dask.base

    rng = np.random.default_rng(1)
    n, p = 60_000, 10
    Xs = [rng.standard_normal((n, 4)), rng.standard_normal((n, 6))]
    received = []
    original = dask.base.compute

    def recording_compute(*args, **kwargs):
        out = original(*args, **kwargs)
        received.append(sum(np.asarray(o).nbytes for o in out if hasattr(o, "shape")))
        return out

    monkeypatch.setattr(dask.base, "compute", recording_compute)
    monkeypatch.setattr(dask, "compute", recording_compute)
    for strategy in ("uniform", "kmeans++"):
        received.clear()
        ny = BlockNystrom(n_landmarks=p, landmarks=strategy, random_state=0)
        ny.fit([da.from_array(X, chunks=(5000, -1)) for X in Xs])
        assert received, "no Dask compute was recorded"
        data_bytes = sum(X.nbytes for X in Xs)
        # bandwidths: 2000 rows per view; kmeans++: a 20000-row subsample; landmarks: p rows
        assert sum(received) <= (2 * 2000 + 20_000 + p) * 10 * 8 < data_bytes
        if strategy == "uniform":  # same rng stream as in memory: the same model
            ref = BlockNystrom(n_landmarks=p, random_state=0).fit(Xs)
            np.testing.assert_array_equal(ny.landmark_indices_, ref.landmark_indices_)
            close(ny.normalizers_[1], ref.normalizers_[1])
        else:
            assert len(set(ny.landmark_indices_)) == p


# ------------------------------------------------------------- generic feature maps
class RandomFourier:
    """A row-wise explicit feature map (what the KPCA primal solvers use)."""

    def __init__(self, dims, n_features=30, seed=0):
        r = np.random.default_rng(seed)
        self.W = [r.standard_normal((d, n_features)) for d in dims]
        self.b = [r.uniform(0, 2 * np.pi, n_features) for _ in dims]

    def __call__(self, blocks):
        return np.hstack([np.cos(B @ W + b) for B, W, b in zip(blocks, self.W, self.b)])


def test_feature_moments_numpy_and_dask_agree(client, uwave):
    Xs = uwave["Xs_test"]
    fmap = RandomFourier([X.shape[1] for X in Xs])
    Phi = fmap(Xs)
    m_np = feature_moments(fmap, Xs, chunk_size=1000)
    # misaligned row chunks across views and a chunk size that matches none of them
    m_da = feature_moments(fmap, to_dask(Xs, rows=(700, 500, 900)), chunk_size=600)
    for m in (m_np, m_da):
        assert m.n_samples == 3582 and m.cross is None
        close(m.gram, Phi.T @ Phi)
        close(m.mean, Phi.mean(0))
        Pc = Phi - Phi.mean(0)
        close(m.centered_gram(), Pc.T @ Pc, rtol=1e-9)
    # a single Dask array is one view
    m1 = feature_moments(lambda b: b[0] ** 2, da.from_array(Xs[0], chunks=(1000, -1)))
    close(m1.gram, (Xs[0] ** 2).T @ (Xs[0] ** 2))


def test_map_views_one_column_output(client, uwave):
    Xs = uwave["Xs_test"]

    def norms(blocks):
        return np.sqrt(sum((B**2).sum(1) for B in blocks))

    lazy = map_views(norms, to_dask(Xs))
    assert isinstance(lazy, da.Array) and lazy.shape == (3582,)
    close(lazy.compute(), norms(Xs))
    np.testing.assert_array_equal(map_views(norms, Xs), norms(Xs))


# ----------------------------------------------------------------- missing views
def test_uwave_nan_rows_fit_equals_in_memory(client, uwave):
    """Dask training views with NaN rows (missing views) on the distributed scheduler:
    the same map, pairwise statistics and completed features as the NumPy fit."""
    rng = np.random.RandomState(0)
    Xs = [X.copy() for X in uwave["Xs_train"]]
    n = Xs[0].shape[0]
    mask = rng.rand(n, 3) >= 0.3
    mask[np.arange(n), rng.randint(3, size=n)] = True
    for l in range(3):
        Xs[l][~mask[:, l]] = np.nan
    ref = BlockNystrom(n_landmarks=40, random_state=0).fit(Xs)
    ny = BlockNystrom(n_landmarks=40, random_state=0).fit(to_dask(Xs))
    np.testing.assert_array_equal(ny.landmark_indices_, ref.landmark_indices_)
    close(ny.missing_model_.cov, ref.missing_model_.cov)
    close(ny.transform(to_dask(Xs)).compute(), ref.transform(Xs))


# --------------------------------------------------------------------- errors
def test_dask_errors_name_the_view(client):
    rng = np.random.default_rng(0)
    Xs = [rng.standard_normal((300, 3)), rng.standard_normal((300, 2))]
    ny = BlockNystrom(n_landmarks=10, random_state=0).fit(Xs)
    bad = Xs[1].copy()
    bad[250, 1] = np.nan
    with pytest.raises(ValueError, match=r"view 1 contains NaN \(in rows 200\.\.299\)"):
        ny.moments([da.from_array(Xs[0], chunks=100), da.from_array(bad, chunks=100)])
    with pytest.raises(ValueError, match="view 1 contains NaN"):
        ny.transform([da.from_array(Xs[0], chunks=100), da.from_array(bad, chunks=100)]).compute()
    with pytest.raises(ValueError, match="view 1 has 200 samples, view 0 has 300"):
        ny.moments([da.from_array(Xs[0], chunks=100), da.from_array(Xs[1][:200], chunks=100)])
    unknown = da.from_array(Xs[0], chunks=100)
    unknown = unknown[unknown[:, 0] > -10]
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        ny.moments([unknown, da.from_array(Xs[1], chunks=100)])
    with pytest.raises(ValueError, match="view 1 has 3 features, but 2 were seen"):
        ny.transform([da.from_array(Xs[0], chunks=100)] * 2)
    with pytest.raises(TypeError, match="precomputed"):
        K = da.from_array(Xs[0] @ Xs[0].T, chunks=100)
        BlockNystrom(kernel="precomputed", n_landmarks=5).fit([K, K])


def test_uniform_indices_large_n_is_seeded_distinct_and_light():
    n = 50_000_000  # above PERMUTATION_MAX: no O(n) permutation on the client
    a = uniform_indices(n, 2000, np.random.RandomState(3))
    b = uniform_indices(n, 2000, np.random.RandomState(3))
    np.testing.assert_array_equal(a, b)
    assert a.size == np.unique(a).size == 2000 and a.min() >= 0 and a.max() < n
    assert np.all(np.diff(a) > 0)
    # roughly uniform: each tenth of the range holds about 200 of them
    counts = np.bincount(a * 10 // n, minlength=10)
    assert counts.min() > 140 and counts.max() < 260
    # small n: the paper's rule (first p of one permutation), unchanged
    np.testing.assert_array_equal(
        uniform_indices(100, 7, np.random.RandomState(0)),
        np.sort(np.random.RandomState(0).permutation(100)[:7]),
    )

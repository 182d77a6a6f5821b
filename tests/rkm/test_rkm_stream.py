"""Mini-batch primal Stiefel training (Alg. 3) on a stream of row chunks.

``MultiViewKPCA.fit_stream`` never holds the data at once: the chunks below are generated
on the fly from a per-chunk seed, and every pass regenerates them. The streamed fit
converges to the same subspace as the in-memory primal eig / Stiefel fits.
"""

import numpy as np
import pytest

from mvkernels import MultiViewKPCA

N_CHUNKS, ROWS = 12, 50
KW = dict(
    n_components=6,
    kernel=["rbf", "linear"],
    kernel_params=[{"sigma": 1.5}, None],
    features=["rff", "identity"],
    n_features=[80, None],
    random_state=0,
)


def make_chunk(i):
    rng = np.random.default_rng(1000 + i)
    X = rng.standard_normal((ROWS, 3))
    y = np.sin(X[:, :1]) + 0.5 * X[:, 1:2] * X[:, 2:3] + 0.05 * rng.standard_normal((ROWS, 1))
    return [X, y]


class ChunkSource:
    """A generator function over the chunks that counts passes and the largest chunk."""

    def __init__(self):
        self.passes = 0
        self.max_rows = 0

    def __call__(self):
        self.passes += 1
        for i in range(N_CHUNKS):
            chunk = make_chunk(i)
            self.max_rows = max(self.max_rows, chunk[0].shape[0])
            yield chunk


def all_data():
    chunks = [make_chunk(i) for i in range(N_CHUNKS)]
    return [np.vstack([c[v] for c in chunks]) for v in range(2)]


def test_stream_equals_in_memory_fit():
    src = ChunkSource()
    m = MultiViewKPCA(solver="primal-stiefel", **KW).fit_stream(src)
    assert m.solver_ == "primal-stiefel" and m.stiefel_result_.converged
    # one pass for the mean, one per Stiefel product, one for Phi U; never all rows at once
    assert src.passes >= 3 and src.max_rows == ROWS
    Xs = all_data()
    for solver in ["primal-eig", "primal-stiefel"]:
        ref = MultiViewKPCA(solver=solver, **KW).fit(Xs)
        np.testing.assert_allclose(m.eigenvalues_, ref.eigenvalues_, rtol=1e-9)
        # same subspace: equal projectors U U^T, and equal components (signs fixed alike)
        np.testing.assert_allclose(m.U_ @ m.U_.T, ref.U_ @ ref.U_.T, atol=1e-8)
        np.testing.assert_allclose(m.hidden_, ref.hidden_, atol=1e-7)
        for a, b in zip(m.W_, ref.W_):
            np.testing.assert_allclose(a, b, atol=1e-7 * np.abs(b).max())
    rng = np.random.default_rng(5)
    Xt = [rng.standard_normal((10, 3)), None]
    # a streamed fit gathers the same sampled training rows: the same inference ridge
    for a, b in zip(m._ridge_rows, Xs):
        np.testing.assert_array_equal(a, b)  # n <= 2000: every row, in order
    np.testing.assert_allclose(m.infer_views(Xt, [1])[0], ref.infer_views(Xt, [1])[0], atol=1e-8)
    assert m.n_samples_ == N_CHUNKS * ROWS and m.n_features_view_ == [3, 1]


def test_stream_errors():
    with pytest.raises(TypeError, match="callable"):
        MultiViewKPCA().fit_stream([make_chunk(0)])
    with pytest.raises(ValueError, match="primal-stiefel"):
        MultiViewKPCA(solver="dual-eig").fit_stream(ChunkSource())
    with pytest.raises(ValueError, match="empty"):
        MultiViewKPCA(solver="primal-stiefel").fit_stream(lambda: iter([]))

    def bad():
        yield make_chunk(0)
        X, y = make_chunk(1)
        yield [X[:, :2], y]

    with pytest.raises(ValueError, match="chunk 1: view 0 has 2 features, but 3"):
        MultiViewKPCA(solver="primal-stiefel").fit_stream(bad)
    with pytest.raises(ValueError, match=r"view\(s\) \[0\] use an implicit kernel"):
        MultiViewKPCA(solver="primal-stiefel", kernel=["rbf", "linear"]).fit_stream(ChunkSource())

"""MultiViewKPCA primal solvers on Dask views (issue 7), on a 2-worker LocalCluster.

C = Phi^T Phi and the feature means come from one Dask reduction; only the d x d problem is
solved on the client. The Dask fit equals the NumPy fit to 1e-10, transform is lazy and
matches, dual solvers refuse Dask input with a clear error.
"""

import numpy as np
import pytest

da = pytest.importorskip(
    "dask.array", reason="dask is not installed (pip install 'mvkernels[dask]')"
)
distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install 'mvkernels[dask]')"
)

from mvkernels import MultiViewKPCA  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Sending large graph:UserWarning")
TOL = 1e-10


@pytest.fixture(scope="module")
def views():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((600, 4))
    y = np.sin(X[:, :1]) + X[:, 1:2] * X[:, 2:3]
    Z = rng.standard_normal((600, 3)) + 1.0
    return [X, y, Z]


KW = dict(
    n_components=5,
    kernel=["rbf", "linear", "rbf"],
    kernel_params=[{"sigma": 2.0}, None, None],
    features=["rff", "identity", "nystrom"],
    n_features=[80, None, 40],
    random_state=0,
)


def to_dask(Xs, rows=(150, 200, 100)):
    return [da.from_array(X, chunks=(r, X.shape[1])) for X, r in zip(Xs, rows)]


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=0, atol=TOL * max(np.abs(b).max(), 1e-300))


@pytest.mark.parametrize("solver", ["primal-eig", "primal-stiefel"])
def test_dask_fit_equals_numpy(client, views, solver):
    ref = MultiViewKPCA(solver=solver, **KW).fit(views)
    got = MultiViewKPCA(solver=solver, **KW).fit(to_dask(views))
    assert got.solver_ == solver
    tol = TOL if solver == "primal-eig" else 1e-7  # Stiefel: converged to tol=1e-12
    np.testing.assert_allclose(got.eigenvalues_, ref.eigenvalues_, rtol=tol)
    np.testing.assert_allclose(got.sigma_, ref.sigma_, rtol=0, atol=tol * ref.sigma_.max())
    for a, b in zip(got.W_, ref.W_):
        np.testing.assert_allclose(a, b, rtol=0, atol=tol * np.abs(b).max())
    for a, b in zip(got.feature_means_, ref.feature_means_):
        close(a, b)
    # hidden units: lazy, same row chunks, equal after compute
    assert isinstance(got.hidden_, da.Array)
    np.testing.assert_allclose(
        got.hidden_.compute(), ref.hidden_, rtol=0, atol=tol * np.abs(ref.hidden_).max()
    )


def test_dask_transform_lazy_and_matches(client, views):
    ref = MultiViewKPCA(solver="primal-eig", **KW).fit(views)
    got = MultiViewKPCA(solver="auto", **KW).fit(to_dask(views))
    assert got.solver_ == "primal-eig"  # auto on Dask input: primal
    rng = np.random.default_rng(1)
    Xt = [rng.standard_normal((90, 4)), rng.standard_normal((90, 1)), rng.standard_normal((90, 3))]
    H = got.transform(to_dask(Xt, rows=(30, 45, 90)))
    assert isinstance(H, da.Array) and H.chunks[0] == (30, 30, 30)
    close(H.compute(), ref.transform(Xt))
    # NumPy transform of the Dask-fitted model, and inference of the linear view
    close(got.transform(Xt), ref.transform(Xt))
    # a Dask fit gathers the same sampled training rows: the same inference ridge
    close(got.infer_views(Xt, missing=[1])[0], ref.infer_views(Xt, missing=[1])[0])
    for a, b in zip(got._ridge_rows, ref._X_fit):
        np.testing.assert_array_equal(a, b)  # n <= 2000: every row, in order


def test_dask_dual_refused(client, views):
    with pytest.raises(ValueError, match="does not take Dask input"):
        MultiViewKPCA(solver="dual-eig", **KW).fit(to_dask(views))
    kw = dict(KW, features=["kernel", "identity", "nystrom"])
    with pytest.raises(ValueError, match="does not take Dask input"):
        MultiViewKPCA(**kw).fit(to_dask(views))

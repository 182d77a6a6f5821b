"""Multi-view RKM / kernel PCA (Achten et al. 2023).

Equivalences the paper proves: primal eig == dual eig (hidden units up to sign, eigenvalues,
forecasts) thanks to the rescaling W = U Lambda^{1/2}; Stiefel + rotation == eig; Stiefel
without rotation gives the same predictions; missing-view inference of a linear view is the
closed-form least-squares answer (eq. 15 with eq. 7).
"""

import warnings

import numpy as np
import pytest

from mvkernels import MultiViewKPCA, RKMForecaster
from mvkernels.datasets import make_sum_of_sines
from mvkernels.rkm import _kpca as R

SOLVERS = ["primal-eig", "dual-eig", "primal-stiefel", "dual-stiefel"]


def same_up_to_sign(A, B, atol):
    A, B = np.asarray(A), np.asarray(B)
    signs = np.sign(np.sum(A * B, axis=0))
    np.testing.assert_allclose(A * signs, B, rtol=0, atol=atol * np.abs(B).max())


@pytest.fixture(scope="module")
def sines():
    y = make_sum_of_sines()
    return y[:400], y[400:]


@pytest.fixture(scope="module")
def sine_models(sines):
    tr, _ = sines
    return {
        s: RKMForecaster(lag=41, n_components=4, solver=s, random_state=0).fit(tr) for s in SOLVERS
    }


def nonlinear_views(rng, n=120):
    """Two views: x in R^3 and y = smooth function of x (1-D), plus noise."""
    X = rng.standard_normal((n, 3))
    y = np.sin(X[:, :1]) + 0.5 * X[:, 1:2] * X[:, 2:3] + 0.05 * rng.standard_normal((n, 1))
    return [X, y]


# ------------------------------------------------------------------ sum of sines (paper Sec. 5)
@pytest.mark.parametrize("solver", SOLVERS)
def test_sines_forecast_exact(sines, sine_models, solver):
    _, te = sines
    fc = sine_models[solver].forecast(100)
    assert np.mean((fc - te) ** 2) < 1e-20


def test_sines_primal_dual_eig_equal(sine_models):
    p, d = sine_models["primal-eig"].model_, sine_models["dual-eig"].model_
    assert p.solver_ == "primal-eig" and d.solver_ == "dual-eig"
    np.testing.assert_allclose(p.eigenvalues_, d.eigenvalues_, rtol=1e-10)
    same_up_to_sign(p.hidden_, d.hidden_, 1e-8)
    # H^T H = I in both settings (eq. 12 constraint; primal through the rescaling)
    np.testing.assert_allclose(p.hidden_.T @ p.hidden_, np.eye(4), atol=1e-9)
    np.testing.assert_allclose(
        sine_models["primal-eig"].forecast(100), sine_models["dual-eig"].forecast(100), atol=1e-10
    )
    # dual W (eq. 5) equals primal W = U Lambda^{1/2} (up to sign)
    for Wp, Wd in zip(p.W_, d.W_):
        same_up_to_sign(Wp, Wd, 1e-8)


def _forecast_without_rescaling(train, lag, s, h):
    """Independent reference for Alg. 1 without step 6 (W = U), written from the formulas:
    standardise, windows, C = Phi^T Phi of the centred [window, next] features, top-s
    eigenpairs (U, Lambda), Sigma = Lambda, inference eq. (15)
    h* = (Lambda - W_y^T W_y)^{-1} W_x^T (x - mean_x), y = W_y h* + mean_y (eq. 7)."""
    mu, sd = train.mean(), train.std(ddof=1)
    z = (train - mu) / sd
    Phi = np.array([z[i : i + lag + 1] for i in range(len(z) - lag)])
    mean = Phi.mean(axis=0)
    lam, U = np.linalg.eigh((Phi - mean).T @ (Phi - mean))
    lam, U = lam[::-1][:s], U[:, ::-1][:, :s]
    Wx, Wy = U[:lag], U[lag:]
    A = np.diag(lam) - Wy.T @ Wy
    window, out = list(z[-lag:]), []
    for _ in range(h):
        hstar = np.linalg.solve(A, Wx.T @ (np.asarray(window) - mean[:lag]))
        out.append((Wy @ hstar).item() + mean[lag])
        window = window[1:] + [out[-1]]
    return np.asarray(out) * sd + mu


def test_without_rescaling_primal_dual_differ(sines, sine_models):
    tr, te = sines
    f = RKMForecaster(lag=41, n_components=4, solver="primal-eig", rescale=False).fit(tr)
    d = sine_models["dual-eig"].model_
    lam = d.eigenvalues_
    # H = Phi U Lambda^{-1}: the dual components scaled by Lambda^{-1/2} (paper Fig. 7)
    same_up_to_sign(f.model_.hidden_, d.hidden_ / np.sqrt(lam), 1e-8)
    assert not np.allclose(np.abs(f.model_.hidden_), np.abs(d.hidden_), atol=1e-3)
    fc = f.forecast(100)
    ref = _forecast_without_rescaling(tr, 41, 4, 100)
    np.testing.assert_allclose(fc, ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    # the ablation's error (paper Fig. 7): 0.527, against ~1e-28 with the rescaling
    assert np.mean((fc - te) ** 2) == pytest.approx(0.5265, abs=5e-4)


@pytest.fixture(scope="module")
def adam_models(sines):
    tr, _ = sines
    return {
        s: RKMForecaster(
            lag=41, n_components=4, solver=s, optimizer="cayley-adam", random_state=0
        ).fit(tr)
        for s in ["primal-stiefel", "dual-stiefel"]
    }


@pytest.mark.parametrize("optimizer", ["lobpcg", "cayley-adam"])
@pytest.mark.parametrize("setting", ["primal", "dual"])
def test_stiefel_rotation_reproduces_eig(sines, sine_models, adam_models, setting, optimizer):
    eig = sine_models[f"{setting}-eig"].model_
    f = (sine_models if optimizer == "lobpcg" else adam_models)[f"{setting}-stiefel"]
    st = f.model_
    assert st.optimizer == optimizer
    assert st.stiefel_result_.converged and st.stiefel_result_.grad_norm <= 1e-12
    assert np.mean((f.forecast(100) - sines[1]) ** 2) < 1e-20
    np.testing.assert_allclose(st.sigma_, np.diag(np.diag(st.sigma_)), atol=0)
    np.testing.assert_allclose(st.eigenvalues_, eig.eigenvalues_, rtol=1e-9)
    same_up_to_sign(st.hidden_, eig.hidden_, 1e-6)


@pytest.mark.parametrize("setting", ["primal", "dual"])
def test_stiefel_without_rotation_same_forecasts(sines, sine_models, setting):
    tr, _ = sines
    # Cayley Adam: its end point is any orthonormal basis of the top subspace
    f = RKMForecaster(
        lag=41,
        n_components=4,
        solver=f"{setting}-stiefel",
        rotate=False,
        optimizer="cayley-adam",
        random_state=1,
    ).fit(tr)
    m, eig = f.model_, sine_models[f"{setting}-eig"].model_
    # Sigma is a non-diagonal rotation of Lambda (Corollary 3.4) ...
    off = m.sigma_ - np.diag(np.diag(m.sigma_))
    assert np.abs(off).max() > 1e-3 * np.abs(m.sigma_).max()
    np.testing.assert_allclose(np.linalg.eigvalsh(m.sigma_)[::-1], eig.eigenvalues_, rtol=1e-9)
    # ... H = H_eig O with O orthogonal ...
    O = eig.hidden_.T @ m.hidden_
    np.testing.assert_allclose(O.T @ O, np.eye(4), atol=1e-7)
    np.testing.assert_allclose(eig.hidden_ @ O, m.hidden_, atol=1e-7)
    # ... and the forecasts do not change
    np.testing.assert_allclose(
        f.forecast(100), sine_models[f"{setting}-eig"].forecast(100), atol=1e-8
    )


# ------------------------------------------------------------------ inference (eq. 15/16)
def test_linear_view_inference_is_least_squares(rng):
    Xs = nonlinear_views(rng)
    Xt = [rng.standard_normal((15, 3)), None]
    s = 3
    for solver in ["primal-eig", "dual-eig"]:
        m = MultiViewKPCA(n_components=s, solver=solver, inference_ridge=0).fit(Xs)
        (y,) = m.infer_views(Xt, missing=[1])
        # closed form, built here from scratch: W = U Lambda^{1/2} of C = Z^T Z, then
        # h* = argmin ||W_x h - (x - mean_x)|| (reconstruction eq. 7), y = W_y h + mean_y
        Z = np.hstack(Xs)
        mu = Z.mean(axis=0)
        lam, U = np.linalg.eigh((Z - mu).T @ (Z - mu))
        W = U[:, ::-1][:, :s] * np.sqrt(lam[::-1][:s])
        h = np.linalg.lstsq(W[:3], (Xt[0] - mu[:3]).T, rcond=None)[0]
        np.testing.assert_allclose(y, (W[3:] @ h).T + mu[3], atol=1e-9)


def test_exact_linear_relation_recovered(rng):
    X = rng.standard_normal((50, 4))
    b = rng.standard_normal((4, 2))
    Xs = [X, X @ b + 3.0]
    Xt = rng.standard_normal((7, 4))
    for solver in ["primal-eig", "dual-eig"]:
        m = MultiViewKPCA(n_components=4, solver=solver).fit(Xs)
        (y,), h = m.infer_views([Xt], missing=[1], return_hidden=True)
        np.testing.assert_allclose(y, Xt @ b + 3.0, atol=1e-9)
        assert h.shape == (7, 4)


@pytest.mark.parametrize("features", ["rff", "nystrom"])
def test_primal_dual_equal_with_explicit_maps(rng, features):
    Xs = nonlinear_views(rng)
    Xt = [rng.standard_normal((20, 3)), None]
    kw = dict(
        n_components=8,
        kernel=["rbf", "linear"],
        kernel_params=[{"sigma": 1.5}, None],
        features=[features, "identity"],
        n_features=[60, None],
        random_state=3,
    )
    p = MultiViewKPCA(solver="primal-eig", **kw).fit(Xs)
    d = MultiViewKPCA(solver="dual-eig", **kw).fit(Xs)
    np.testing.assert_allclose(p.eigenvalues_, d.eigenvalues_, rtol=1e-9)
    same_up_to_sign(p.hidden_, d.hidden_, 1e-7)
    # test points: correct test-kernel centring makes dual inference equal primal (eq. 15/16)
    np.testing.assert_allclose(p.infer_views(Xt, [1])[0], d.infer_views(Xt, [1])[0], atol=1e-8)
    np.testing.assert_allclose(p.transform([Xt[0], rng.standard_normal((20, 1))]).shape, (20, 8))


def test_dual_test_kernel_centring_uses_uncentred_gram(rng):
    Xs = nonlinear_views(rng)
    m = MultiViewKPCA(n_components=5, kernel="rbf", kernel_params={"sigma": 1.0}).fit(Xs)
    assert m.solver_ == "dual-eig"
    # direct formula: k^c = M (k - K_unc 1/n), eq. (16) with no missing view = eq. (6)
    n = len(Xs[0])
    Xt = [rng.standard_normal((6, 3)), rng.standard_normal((6, 1))]
    M = np.eye(n) - 1.0 / n
    kc = 0
    for v in range(2):
        Ktr = m._maps[v].kernel(Xs[v], Xs[v])
        k = m._maps[v].kernel(Xs[v], Xt[v])
        kc = kc + M @ (k - Ktr @ np.ones((n, 1)) / n)
    h = np.linalg.solve(m.sigma_, m.hidden_.T @ kc).T
    np.testing.assert_allclose(m.transform(Xt), h, atol=1e-10)


@pytest.mark.parametrize("solver", ["primal-eig", "dual-eig"])
def test_transform_of_training_points_is_hidden(rng, solver):
    Xs = nonlinear_views(rng)
    m = MultiViewKPCA(n_components=3, solver=solver).fit(Xs)
    np.testing.assert_allclose(m.transform(Xs), m.hidden_, atol=1e-10)
    np.testing.assert_allclose(m.hidden_.T @ m.hidden_, np.eye(3), atol=1e-10)


def test_implicit_kernel_preimage_smoother(rng):
    Xs = nonlinear_views(rng, n=200)
    Y, X = Xs[1], Xs[0]
    s, k, sigma = 8, 5, 1.0
    m = MultiViewKPCA(
        n_components=s,
        kernel="rbf",
        kernel_params={"sigma": sigma},
        n_neighbors=k,
        inference_ridge=0,
    ).fit([Y, X])
    Yt = Y[:30] + 0.01
    (x,) = m.infer_views([Yt, None], missing=[1])

    # independent reference from the formulas: rbf Gram matrices, centred; top-s
    # eigenpairs of K = K_y + K_x (eq. 14); eq. (16) with the test kernel vector centred by
    # the uncentred Gram matrix; similarity s = K_x H h*; weighted mean of the k most
    # similar training points with weights max(s, 0)
    def rbf(A, B):
        d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
        return np.exp(-d2 / (2 * sigma**2))

    n = len(Y)
    M = np.eye(n) - 1.0 / n
    Ky, Kx = rbf(Y, Y), rbf(X, X)
    Kyc, Kxc = M @ Ky @ M, M @ Kx @ M
    lam, V = np.linalg.eigh(Kyc + Kxc)
    lam, H = lam[::-1][:s], V[:, ::-1][:, :s]
    kt = rbf(Y, Yt)
    ktc = kt - kt.mean(axis=0) - Ky.mean(axis=1)[:, None] + Ky.mean()
    h = np.linalg.solve(np.diag(lam) - H.T @ Kxc @ H, H.T @ ktc)
    S = Kxc @ H @ h
    ref = np.empty((30, 3))
    for j in range(30):
        top = np.argsort(-S[:, j])[:k]
        w = np.maximum(S[top, j], 0.0)
        ref[j] = w @ X[top] / w.sum()
    np.testing.assert_allclose(x, ref, rtol=0, atol=1e-8)


def test_precomputed_kernels_equal_implicit(rng):
    Xs = nonlinear_views(rng, n=60)
    Xt = [rng.standard_normal((9, 3)), rng.standard_normal((9, 1))]
    kp = {"sigma": 1.3}
    ref = MultiViewKPCA(n_components=4, kernel="rbf", kernel_params=kp).fit(Xs)
    Ks = [ref._maps[v].kernel(Xs[v], Xs[v]) for v in range(2)]
    Kt = [ref._maps[v].kernel(Xt[v], Xs[v]) for v in range(2)]
    m = MultiViewKPCA(n_components=4, kernel="precomputed").fit(Ks)
    assert m.solver_ == "dual-eig"
    np.testing.assert_allclose(m.hidden_, ref.hidden_, atol=1e-10)
    np.testing.assert_allclose(m.transform(Kt), ref.transform(Xt), atol=1e-10)


def test_range_restricted_primal_eigh_equals_direct(rng):
    Phi = rng.standard_normal((15, 40))
    Phi -= Phi.mean(axis=0)
    lam, U = R._top_eigh_range(Phi, 5)
    lam0, U0 = R._top_eigh(Phi.T @ Phi, 5, "C")
    np.testing.assert_allclose(lam, lam0, rtol=1e-12)
    same_up_to_sign(U, U0, 1e-10)


# ------------------------------------------------------------------ solver choice and errors
def test_auto_solver_follows_flowchart(rng):
    Xs = nonlinear_views(rng, n=60)
    assert MultiViewKPCA().fit(Xs).solver_ == "primal-eig"  # d = 4 < n
    assert MultiViewKPCA(kernel=["rbf", "linear"]).fit(Xs).solver_ == "dual-eig"  # implicit
    wide = [rng.standard_normal((30, 50)), rng.standard_normal((30, 1))]
    assert MultiViewKPCA().fit(wide).solver_ == "dual-eig"  # d > n


def test_errors_name_the_problem(rng):
    Xs = nonlinear_views(rng, n=40)
    with pytest.raises(ValueError, match="'solver' parameter"):
        MultiViewKPCA(solver="svd").fit(Xs)
    with pytest.raises(ValueError, match=r"view\(s\) \[0\] use an implicit kernel"):
        MultiViewKPCA(kernel=["rbf", "linear"], solver="primal-eig").fit(Xs)
    with pytest.raises(ValueError, match="exceeds the numerical rank"):
        MultiViewKPCA(n_components=5, solver="dual-eig").fit(Xs)  # d = 4: rank 4
    with pytest.raises(ValueError, match="view 1: unknown features"):
        MultiViewKPCA(features=["identity", "fourier"]).fit(Xs)
    with pytest.raises(ValueError, match="view 0: features='identity'"):
        MultiViewKPCA(kernel="rbf", features="identity").fit(Xs)
    with pytest.raises(ValueError, match="view 0: random Fourier features"):
        MultiViewKPCA(features=["rff", "identity"]).fit(Xs)
    with pytest.raises(ValueError, match="'n_features' parameter"):
        MultiViewKPCA(kernel=["rbf", "linear"], features=["rff", None], n_features=0).fit(Xs)
    with pytest.raises(ValueError, match="view 0: n_features"):
        MultiViewKPCA(kernel=["rbf", "linear"], features=["rff", None], n_features=[0, None]).fit(
            Xs
        )
    with pytest.raises(ValueError, match="n_components"):
        MultiViewKPCA(n_components=0).fit(Xs)
    with pytest.raises(ValueError, match="view 1 has 30 samples"):
        MultiViewKPCA().fit([Xs[0], Xs[1][:30]])
    m = MultiViewKPCA(n_components=2).fit(Xs)
    with pytest.raises(ValueError, match="at least one view must be observed"):
        m.infer_views([None, None], missing=[0, 1])
    with pytest.raises(ValueError, match="missing must list"):
        m.infer_views([Xs[0]], missing=[2])
    with pytest.raises(ValueError, match="view 0 has 2 features, but 3 were seen"):
        m.infer_views([Xs[0][:, :2], None], missing=[1])
    with pytest.raises(ValueError, match="expected 2 view"):
        m.transform([Xs[0]])
    with pytest.raises(ValueError, match="series must be 1-D"):
        RKMForecaster(lag=3).fit(np.ones((10, 2)))
    with pytest.raises(ValueError, match="constant"):
        RKMForecaster(lag=3).fit(np.ones(20))
    with pytest.raises(ValueError, match="lag=30 needs"):
        RKMForecaster(lag=30).fit(np.arange(20.0))


def test_forecaster_predict_matches_first_forecast_step(sines, sine_models):
    tr, _ = sines
    f = sine_models["dual-eig"]
    first = f.forecast(1)
    np.testing.assert_allclose(f.predict(tr[-41:][None, :]), first, atol=1e-12)
    with pytest.raises(ValueError, match="lag=41"):
        f.predict(tr[None, -40:])


@pytest.mark.parametrize("optimizer, cap", [("cayley-adam", 5), ("lobpcg", 1)])
def test_stiefel_not_converged_warns(rng, optimizer, cap):
    from sklearn.exceptions import ConvergenceWarning

    Xs = nonlinear_views(rng)
    with pytest.warns(ConvergenceWarning, match=f"{optimizer}.*max_iter={cap}"):
        m = MultiViewKPCA(
            n_components=10,
            kernel="rbf",
            solver="dual-stiefel",
            max_iter=cap,
            optimizer=optimizer,
            random_state=0,
        ).fit(Xs)
    assert m.stiefel_result_.n_iter == cap and not m.stiefel_result_.converged


def test_stiefel_verbose_prints_progress(sines, capsys):
    RKMForecaster(lag=41, n_components=4, solver="dual-stiefel", verbose=1, random_state=0).fit(
        sines[0]
    )
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "[stiefel lobpcg]" in ln]
    assert len(lines) >= 3 and "(converged)" in lines[-1]
    assert "objective" in lines[0] and "rel. Riemannian gradient" in lines[0]


# ------------------------------------------------------------------ reproduction module
def test_reproduce_rkm_sines(tmp_path):
    pytest.importorskip("matplotlib")
    from mvkernels.reproduce import run_experiment

    out = run_experiment("rkm-sines", quick=True, output=tmp_path / "rkm-sines")
    rows = {r["solver"]: r for r in out["rows"]}
    for solver in SOLVERS:
        assert rows[solver]["mse"] < 1e-20
    assert rows["primal-eig, no rescaling"]["mse"] == pytest.approx(0.5265, abs=5e-4)
    for label in ("primal-stiefel, Cayley Adam", "dual-stiefel, Cayley Adam"):
        assert rows[label]["mse"] < 1e-20 and rows[label]["component_err"] < 1e-9
    for name in ("results.md", "run.json", "forecasts.png", "components.png", "n_components.png"):
        assert (tmp_path / "rkm-sines" / name).is_file()
    assert "| primal-eig |" in (tmp_path / "rkm-sines" / "results.md").read_text()


def test_forecaster_params_clone(sines):
    from sklearn.base import clone

    f = RKMForecaster(lag=41, n_components=4, solver="dual-eig", rescale=True)
    g = clone(f).set_params(n_components=3)
    assert g.get_params()["n_components"] == 3 and f.get_params()["lag"] == 41
    assert not hasattr(g, "model_")
    assert g.fit(sines[0]).model_.n_components == 3


# ------------------------------------------------------------------ robustness (bad input)
def test_infer_views_pseudo_inverse_on_digits():
    """Digits, top half -> bottom half with linear views. The top half has constant pixels,
    so for s = 40 the inference matrix W_top^T W_top (eq. 15) is singular: the answer is
    the minimum-norm least-squares solution on its well-conditioned part, with a warning,
    and the error does not blow up with the number of components."""
    from sklearn.datasets import load_digits

    X = load_digits().data
    top, bot = X[:, :32], X[:, 32:]
    tr, te = slice(0, 1500), slice(1500, None)
    mae = {}
    for s in (1, 10, 40):
        m = MultiViewKPCA(n_components=s, solver="primal-eig", inference_ridge=0)
        m.fit([top[tr], bot[tr]])
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            (pred,) = m.infer_views([top[te], None], missing=[1])
        ill = [w for w in rec if "ill-conditioned" in str(w.message)]
        assert bool(ill) == (s == 40)
        mae[s] = np.abs(pred - bot[te]).mean()
        # independent reference: min-norm least squares min ||W_top h - (x - mean)||
        # (the eq. 15 normal matrix is W_top^T W_top), then y = W_bot h + mean (eq. 7)
        Wt, Wb = m.W_
        h = np.linalg.lstsq(Wt, (top[te] - m.feature_means_[0]).T, rcond=1e-5)[0]
        ref = (Wb @ h).T + m.feature_means_[1]
        np.testing.assert_allclose(pred, ref, rtol=0, atol=1e-6 * np.abs(ref).max())
    assert mae[40] < 2.5 * mae[1]
    assert mae[1] == pytest.approx(3.08, abs=0.05)


def test_degenerate_centred_kernel_large_gamma(rng):
    # rbf with gamma = 1e6 on distinct points: K = I, centred M, eigenvalue 1 (n - 1 times)
    X = rng.standard_normal((40, 3))
    m = MultiViewKPCA(kernel="rbf", kernel_params={"gamma": 1e6}, n_components=5).fit([X])
    np.testing.assert_allclose(m.eigenvalues_, np.ones(5), atol=1e-12)
    np.testing.assert_allclose(m.hidden_.T @ m.hidden_, np.eye(5), atol=1e-10)
    np.testing.assert_allclose(m.hidden_.sum(axis=0), 0.0, atol=1e-10)  # centred
    # the full rank n - 1 of the centred kernel: 39 eigenpairs, all equal to 1
    m = MultiViewKPCA(kernel="rbf", kernel_params={"gamma": 1e6}, n_components=39).fit([X])
    np.testing.assert_allclose(m.eigenvalues_, np.ones(39), atol=1e-12)


def test_complex_input_refused(rng):
    X = rng.standard_normal((30, 3))
    Z = X + 1j
    with pytest.raises(ValueError, match="view 1 is complex"):
        MultiViewKPCA().fit([X, Z])
    m = MultiViewKPCA().fit([X, X])
    with pytest.raises(ValueError, match="view 1 is complex"):
        m.transform([X, Z])
    with pytest.raises(ValueError, match="view 1 is complex"):
        m.infer_views([None, Z], missing=[0])
    with pytest.raises(ValueError, match="series is complex"):
        RKMForecaster(lag=3).fit(np.arange(20.0) + 1j)
    f = RKMForecaster(lag=3).fit(np.sin(np.arange(40.0)))
    with pytest.raises(ValueError, match="X is complex"):
        f.predict(np.ones((2, 3)) + 1j)


def test_errors_name_the_right_view(rng):
    X = rng.standard_normal((50, 3))
    with pytest.raises(ValueError, match="view 1: all training points are identical"):
        MultiViewKPCA(kernel="rbf", features="nystrom", n_features=10).fit([X, np.ones((50, 2))])
    m = MultiViewKPCA(n_components=2).fit([X, X, X])
    with pytest.raises(ValueError, match="view 2 has 2 features, but 3"):
        m.infer_views([None, X, X[:, :2]], missing=[0])
    with pytest.raises(ValueError, match="view 2 contains NaN"):
        m.infer_views([None, X, np.full((50, 3), np.nan)], missing=[0])
    with pytest.raises(ValueError, match="view 2 has 7 samples, view 1 has 50"):
        m.infer_views([None, X, X[:7]], missing=[0])


def test_overflowing_series_standardised_without_overflow(rng):
    z = np.tanh(rng.standard_normal(80)) * 1.5e308  # finite, but sum(z^2) overflows
    f = RKMForecaster(lag=3, n_components=2).fit(z)
    u = z / 1.5e308
    assert f.mean_ == pytest.approx(u.mean() * 1.5e308, rel=1e-12)
    assert f.scale_ == pytest.approx(u.std(ddof=1) * 1.5e308, rel=1e-12)
    ref = RKMForecaster(lag=3, n_components=2).fit(u)
    np.testing.assert_allclose(f.forecast(5) / 1.5e308, ref.forecast(5), rtol=1e-10)


@pytest.mark.parametrize(
    "est, msg",
    [
        (MultiViewKPCA(n_components=2.5), "'n_components' parameter"),
        (MultiViewKPCA(chunk_size=-1), "'chunk_size' parameter"),
        (MultiViewKPCA(learning_rate=0.0), "'learning_rate' parameter"),
        (MultiViewKPCA(optimizer="sgd"), "'optimizer' parameter"),
        (MultiViewKPCA(tol=-1.0), "'tol' parameter"),
        (MultiViewKPCA(max_iter=0), "'max_iter' parameter"),
        (MultiViewKPCA(n_neighbors=0), "'n_neighbors' parameter"),
        (RKMForecaster(lag=0), "'lag' parameter"),
        (RKMForecaster(features="fourier"), "'features' parameter"),
        (RKMForecaster(max_iter=2.5), "'max_iter' parameter"),
    ],
)
def test_parameters_validated_at_fit(est, msg):
    data = np.sin(np.arange(60.0)) if isinstance(est, RKMForecaster) else np.ones((5, 2))
    with pytest.raises(ValueError, match=msg):
        est.fit(data)


def test_feature_names_and_set_output(rng):
    pd = pytest.importorskip("pandas")
    X = rng.standard_normal((30, 4))
    m = MultiViewKPCA(n_components=3, views=[[0, 1], [2, 3]]).fit(X)
    names = m.get_feature_names_out()
    assert list(names) == ["multiviewkpca0", "multiviewkpca1", "multiviewkpca2"]
    out = m.set_output(transform="pandas").transform(pd.DataFrame(X, index=np.arange(30) + 7))
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(names)
    assert list(out.index) == list(range(7, 37))
    np.testing.assert_allclose(out.to_numpy(), m.hidden_, atol=1e-10)

"""Tests for OLOK, vv-RLS and operator-valued kernels (Audiffren & Kadri 2015)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import mvkernels
from _reference_olok import olok_reference
from mvkernels.olok import OLOKRegressor, VVRLSRegressor, theorem_t0
from mvkernels.olok._support import SupportBuffer
from mvkernels.operator_kernels import (
    CallableOperatorKernel,
    DecomposableKernel,
    check_output_kernel,
    interaction_matrix,
)

TOL = 1e-10


def _stream(n=300, p=4, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    W = rng.standard_normal((p, d))
    Y = np.tanh(X @ W) + 0.1 * rng.standard_normal((n, d))
    return X, Y


def _coupled_kernel(X, Z):
    """A non-decomposable PD matrix-valued kernel: k1(x,z) A1 + k2(x,z) A2."""
    D = ((X[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    A1 = np.array([[1.0, 0.3], [0.3, 0.5]])
    A2 = np.array([[0.2, -0.1], [-0.1, 1.0]])
    return np.exp(-0.3 * D)[:, :, None, None] * A1 + np.exp(-0.05 * D)[:, :, None, None] * A2


# ----------------------------------------------------------------------------- kernels
def test_interaction_matrix_and_validation():
    J = interaction_matrix(3)
    assert np.allclose(np.diag(J), 1) and np.allclose(J[0, 1:], 0.1)
    with pytest.raises(ValueError, match="positive semi-definite"):
        interaction_matrix(3, -0.9)
    with pytest.raises(ValueError, match="not symmetric"):
        check_output_kernel([[1, 0.5], [0.2, 1]])
    with pytest.raises(ValueError, match="positive semi-definite"):
        check_output_kernel([[1, 2], [2, 1]])
    with pytest.raises(ValueError, match="square"):
        check_output_kernel(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        check_output_kernel([[1, np.nan], [np.nan, 1]])
    with pytest.raises(ValueError, match="2 output"):
        check_output_kernel(np.eye(3), d=2)


def test_decomposable_kernel_block_matrix():
    X, _ = _stream(n=7)
    Z = X[:3] + 0.1
    B = interaction_matrix(2)
    K = DecomposableKernel("rbf", {"gamma": 0.5}, B).fit(X, n_outputs=2)
    k = K.scalar(X, Z)
    assert np.allclose(K.matrix(X, Z), np.kron(k, B))
    C = np.random.default_rng(1).standard_normal((3, 2))
    assert np.allclose(K.apply(X, Z, C), (K.matrix(X, Z) @ C.ravel()).reshape(7, 2))
    G = CallableOperatorKernel(_coupled_kernel).fit(X)
    assert G.n_outputs == 2
    M = G.matrix(X)
    assert np.allclose(M, M.T) and np.linalg.eigvalsh(M)[0] > -1e-10
    assert np.allclose(G.apply(X, Z, C), (G.matrix(X, Z) @ C.ravel()).reshape(7, 2))
    bad = CallableOperatorKernel(lambda X, Z: np.ones((len(X), len(Z), 2)))
    with pytest.raises(ValueError, match="expected"):
        bad.fit(X)


def test_diag_op_norm_is_the_operator_norm_of_each_diagonal_block():
    """``||K(x_i, x_i)||_op`` (kappa^2 of Assumption 1, the stability bound of the
    squared-loss step) equals the largest singular value of the ``d x d`` block."""
    X, _ = _stream(n=6)
    B = interaction_matrix(2) + np.diag([0.5, 0.0])
    for K in (
        DecomposableKernel("rbf", {"gamma": 0.5}, B).fit(X, n_outputs=2),
        DecomposableKernel("linear", None, B).fit(X, n_outputs=2),
        CallableOperatorKernel(_coupled_kernel).fit(X),
    ):
        blocks = K.blocks(X, X)
        direct = [np.linalg.norm(blocks[i, i], 2) for i in range(len(X))]
        np.testing.assert_allclose(K.diag_op_norm(X), direct, rtol=1e-12)


# ----------------------------------------------------------------------------- exactness
CASES = [
    dict(truncation=None, loss="squared"),
    dict(truncation=None, loss="epsilon_insensitive", epsilon=0.2),
    dict(truncation=25, loss="squared"),
    dict(truncation=3, loss="epsilon_insensitive", epsilon=0.05),
    dict(truncation="theorem", truncation_t0=30, truncation_eps=0.25, loss="squared"),
    dict(truncation="theorem", truncation_t0=10, truncation_eps=0.25, truncation_scale=0.5),
    dict(truncation=None, loss="squared", learning_rate="constant", eta0=0.3),
    dict(truncation=40, loss="squared", learning_rate=lambda t: 0.5 / (1.0 + 0.01 * t)),
]


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
@pytest.mark.parametrize("block", [1, 7, 256])
def test_fast_path_equals_per_sample_algorithm(case, block):
    X, Y = _stream(n=300, p=4, d=3)
    params = dict(
        kernel_params={"gamma": 0.3}, output_kernel=0.1, alpha=0.4, eta0=0.8, random_state=0
    )
    params.update(case)
    est = OLOKRegressor(**params)
    snaps = (1, 2, 50, 123, 211, 300)
    ref = olok_reference(est, X, Y, snapshots=snaps)
    fast = clone(est)
    fast._block_size = block
    # uneven chunks so block boundaries, chunk boundaries and truncation interleave
    bounds = [0, 1, 2, 50, 123, 211, 300]
    P = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        P.append(fast.progressive_predict(X[a:b], Y[a:b]))
        alpha = np.zeros((b, 3))
        alpha[b - fast.dual_coef_.shape[0] :] = fast.dual_coef_  # live window = the last s_t
        np.testing.assert_allclose(alpha, ref["snapshots"][b], rtol=0, atol=TOL)
    np.testing.assert_allclose(np.vstack(P), ref["predictions"], rtol=0, atol=TOL)
    Xt = X[:40] + 0.05
    np.testing.assert_allclose(
        fast.predict(Xt), ref["kernel"].apply(Xt, X, ref["alpha"]), rtol=0, atol=TOL
    )
    # fit (one pass) = the same
    one = clone(est).fit(X, Y)
    np.testing.assert_allclose(one.predict(Xt), fast.predict(Xt), rtol=0, atol=TOL)
    if case["truncation"] == 25:
        assert fast.dual_coef_.shape[0] == 25


def test_general_operator_kernel_equals_reference():
    X, Y = _stream(n=120, p=3, d=2, seed=3)
    for tr in (None, 10):
        est = OLOKRegressor(
            kernel=CallableOperatorKernel(_coupled_kernel), eta0=0.5, alpha=0.2, truncation=tr
        )
        est._block_size = 16
        ref = olok_reference(est, X, Y)
        P = est.progressive_predict(X, Y)
        np.testing.assert_allclose(P, ref["predictions"], rtol=0, atol=TOL)
        np.testing.assert_allclose(
            est.dual_coef_, ref["alpha"][-est.dual_coef_.shape[0] :], rtol=0, atol=TOL
        )


def test_scale_renormalisation_no_underflow():
    # factor 1 - eta alpha = 0.1 per step: c_t would underflow after ~300 steps
    X, Y = _stream(n=900, p=3, d=2, seed=5)
    est = OLOKRegressor(kernel_params={"gamma": 0.5}, eta0=0.9, alpha=1.0, learning_rate="constant")
    ref = olok_reference(est, X, Y)
    P = est.progressive_predict(X, Y)
    assert est._scale > 1e-201
    np.testing.assert_allclose(P, ref["predictions"], rtol=0, atol=TOL)
    np.testing.assert_allclose(est.dual_coef_, ref["alpha"], rtol=0, atol=TOL)
    assert np.isfinite(est.predict(X[:5])).all()


def test_storage_grows_geometrically_and_compacts():
    X, Y = _stream(n=6000, p=2, d=1, seed=2)
    est = OLOKRegressor(kernel_params={"gamma": 1.0}, truncation=100)
    for a in range(0, 6000, 500):
        est.partial_fit(X[a : a + 500], Y[a : a + 500, 0])
    assert est.t_ == 6000 and est.dual_coef_.shape == (100, 1)
    assert est._model.support.capacity <= 2048  # compacted, not grown
    full = OLOKRegressor(kernel_params={"gamma": 1.0})
    for a in range(0, 3000, 1000):
        full.partial_fit(X[a : a + 1000], Y[a : a + 1000])
    assert full._model.support.capacity in (2048, 4096)
    assert full.support_vectors_.shape == (3000, 2)


def test_support_buffer_window_by_time():
    buf = SupportBuffer(n_inputs=2, n_outputs=1, capacity=8)
    X = np.arange(40.0).reshape(20, 2)
    beta = np.arange(20.0)[:, None]
    buf.append(X[:6], beta[:6])
    buf.truncate(2)  # drop times 1, 2
    np.testing.assert_array_equal(buf.times(), [3, 4, 5, 6])
    buf.append(X[6:9], beta[6:9])  # 9 rows > 8: grows (live 4 + 3 > 8 // 2)
    assert buf.capacity == 16 and len(buf) == 7
    buf.append(X[9:15], beta[9:15])
    buf.truncate(12)  # 3 live rows (times 13-15), 10 dead ones
    buf.append(X[15:19], beta[15:19])  # compacts to the front instead of growing
    assert buf.capacity == 16 and buf.lo == 0 and buf.hi == 7
    Xl, bl = buf.live()
    np.testing.assert_array_equal(buf.times(), np.arange(13, 20))
    np.testing.assert_array_equal(Xl, X[12:19])
    buf.rescale(2.0)
    np.testing.assert_array_equal(buf.live()[1][:, 0], 2 * np.arange(12.0, 19.0))
    buf.truncate(100)
    assert len(buf) == 0 and buf.times().size == 0


def test_theorem_t0():
    t0 = theorem_t0(0.1, 3.0, 0.25)
    el = 0.3

    def ok(t):
        return el < np.sqrt(t) and np.exp(-el * t**0.25) <= el / np.sqrt(t) and t**0.75 <= 0.75 * t

    assert ok(t0) and not ok(t0 - 1)
    with pytest.raises(ValueError, match="alpha > 0"):
        theorem_t0(0.1, 0.0, 0.25)
    est = OLOKRegressor(eta0=0.1, alpha=3.0, truncation="theorem", kernel_params={"gamma": 1})
    est._check_params()
    s = est._schedule.windows(np.array([1, 10**8]))
    assert s[0] == t0 and s[1] == max(int(np.ceil(1e8**0.75)), t0)
    est.set_params(truncation_scale=2.0, truncation_t0=100)
    est._check_params()
    np.testing.assert_array_equal(est._schedule.windows(np.array([1, 10_000])), [100, 2000])
    for bad in (0.0, -1.0, np.inf, "2"):
        with pytest.raises(ValueError, match="truncation_scale"):
            est.set_params(truncation_scale=bad)._check_params()


# ----------------------------------------------------------------------------- vv-RLS
def _direct_vvrls(Kblk, Y, lam):
    n, d = Y.shape
    return np.linalg.solve(Kblk + lam * np.eye(n * d), Y.ravel()).reshape(n, d)


@pytest.mark.parametrize("B", ["J", "singular", "identity"])
def test_vvrls_equals_direct_solve(B):
    X, Y = _stream(n=60, p=3, d=3, seed=1)
    rng = np.random.default_rng(0)
    if B == "J":
        Bm = interaction_matrix(3)
    elif B == "singular":
        A = rng.standard_normal((3, 2))
        Bm = A @ A.T  # rank 2, one zero eigenvalue
    else:
        Bm = np.eye(3)
    est = VVRLSRegressor(kernel_params={"gamma": 0.4}, output_kernel=Bm, alpha=0.3).fit(X, Y)
    Kblk = np.kron(est.kernel_.scalar(X, X), est.kernel_.B)
    C = _direct_vvrls(Kblk, Y, 0.3)
    Xt = X[:10] + 0.2
    F_direct = (np.kron(est.kernel_.scalar(Xt, X), est.kernel_.B) @ C.ravel()).reshape(10, 3)
    np.testing.assert_allclose(est.predict(Xt), F_direct, rtol=0, atol=1e-10)
    if B != "singular":
        np.testing.assert_allclose(est.dual_coef_, C, rtol=0, atol=1e-9)


def test_vvrls_general_kernel_and_errors():
    X, Y = _stream(n=40, p=3, d=2, seed=4)
    est = VVRLSRegressor(kernel=CallableOperatorKernel(_coupled_kernel), alpha=0.1).fit(X, Y)
    C = _direct_vvrls(CallableOperatorKernel(_coupled_kernel).fit(X).matrix(X), Y, 0.1)
    np.testing.assert_allclose(est.dual_coef_, C, rtol=0, atol=1e-9)
    asym = CallableOperatorKernel(lambda X, Z: _coupled_kernel(X, Z) + np.array([[0, 1.0], [0, 0]]))
    with pytest.raises(ValueError, match="not symmetric"):
        VVRLSRegressor(kernel=asym).fit(X, Y)
    with pytest.raises(
        ValueError,
        match="'alpha' parameter of VVRLSRegressor must be a float in the range \\(0.0, inf\\)",
    ):
        VVRLSRegressor(alpha=0).fit(X, Y)
    with pytest.raises(ValueError, match="output_kernel cannot"):
        VVRLSRegressor(kernel=CallableOperatorKernel(_coupled_kernel), output_kernel=0.1).fit(X, Y)


# ----------------------------------------------------------------------------- Theorem 1
def test_theorem1_average_risk_approaches_batch_optimum():
    """Theorem 1 / Prop. 2.2 setting: squared loss, bounded outputs, lambda > 2 kappa^2
    (kappa^2 = ||J||_op = 1.1, lambda = 3), eta_t = 0.1 / sqrt(t). The average instantaneous
    risk of the online iterates minus the batch optimum inf_g R_reg(g, t) must shrink like
    1/sqrt(t), while a non-learning predictor (f = 0) stays a fixed distance away."""
    rng = np.random.default_rng(0)
    T, lam, eta = 3000, 3.0, 0.1
    X = rng.uniform(-1, 1, (T, 3))
    Y = np.c_[np.sin(2 * X[:, 0]) + 0.5 * X[:, 1], np.cos(2 * X[:, 2]) * X[:, 0]]
    Y += rng.uniform(-0.1, 0.1, Y.shape)
    est = OLOKRegressor(kernel_params={"gamma": 1.0}, output_kernel=0.1, eta0=eta, alpha=lam)
    P = est.progressive_predict(X, Y)  # f_{t-1}(x_t)
    B = est.kernel_.B
    etas = eta / np.sqrt(np.arange(1, T + 1))
    A = -etas[:, None] * (P - Y)  # alpha_{t,t}
    # ||f_t||^2 = (1-eta_t lam)^2 ||f_{t-1}||^2 + 2 (1-eta_t lam) <f_{t-1}(x_t), a_t> + a_t'B a_t
    nrm2 = np.zeros(T + 1)
    for t in range(T):
        f = 1 - etas[t] * lam
        nrm2[t + 1] = f * f * nrm2[t] + 2 * f * P[t] @ A[t] + A[t] @ B @ A[t]
    r_inst = 0.5 * ((P - Y) ** 2).sum(1) + 0.5 * lam * nrm2[:-1]
    gaps, zero_gaps = {}, {}
    for t in (100, 3000):
        # inf_g (1/t) sum 1/2||g(x_i)-y_i||^2 + lam/2 ||g||^2  ==  vv-RLS with alpha = lam t
        v = VVRLSRegressor(kernel_params={"gamma": 1.0}, output_kernel=0.1, alpha=lam * t)
        v.fit(X[:t], Y[:t])
        C, K = v.dual_coef_, v.kernel_.scalar(X[:t], X[:t])
        r_opt = 0.5 * ((v.predict(X[:t]) - Y[:t]) ** 2).sum(1).mean() + 0.5 * lam * np.sum(
            C * (K @ C @ B)
        )
        gaps[t] = r_inst[:t].mean() - r_opt
        zero_gaps[t] = 0.5 * (Y[:t] ** 2).sum(1).mean() - r_opt
    # Theorem 1's bound alpha/sqrt(t) + beta/t with U = max(C_y/kappa, 2 C_y/lam)
    Cy, kappa = np.linalg.norm(Y, axis=1).max(), np.sqrt(1.1)
    U = max(Cy / kappa, 2 * Cy / lam)
    a_, b_ = 2 * lam * U**2 * (2 * eta * lam + 1 / (eta * lam)), U**2 / (2 * eta)
    for t, g in gaps.items():
        assert -1e-3 < g <= a_ / np.sqrt(t) + b_ / t
    assert gaps[3000] < gaps[100] / 3  # ~ 1/sqrt(30) decay
    assert gaps[3000] * np.sqrt(3000) < 1.5 * gaps[100] * np.sqrt(100)
    assert gaps[3000] < zero_gaps[3000] / 5  # far closer than not learning


# ----------------------------------------------------------------------------- API
def test_learn_one_dicts_equal_batch():
    X, Y = _stream(n=30, p=3, d=2)
    batch = OLOKRegressor(kernel_params={"gamma": 0.5}, output_kernel=0.1).fit(X, Y)
    stream = OLOKRegressor(kernel_params={"gamma": 0.5}, output_kernel=0.1)
    assert stream.predict_one({"a": 0.0, "b": 1.0, "c": 2.0}) == 0.0
    for x, y in zip(X, Y):
        stream.learn_one({"a": x[0], "b": x[1], "c": x[2]}, {"u": y[0], "v": y[1]})
    out = stream.predict_one({"c": X[0, 2], "b": X[0, 1], "a": X[0, 0]})
    assert set(out) == {"u", "v"}
    np.testing.assert_allclose([out["u"], out["v"]], batch.predict(X[:1])[0], atol=1e-12)
    arr = OLOKRegressor(kernel_params={"gamma": 0.5})
    for x, y in zip(X, Y[:, 0]):
        arr.learn_one(x, float(y))
    assert isinstance(arr.predict_one(X[0]), float)
    with pytest.raises(ValueError, match="keys"):
        stream.learn_one({"a": 1.0, "b": 2.0}, {"u": 0.0, "v": 0.0})


def test_input_errors():
    X, Y = _stream(n=20, p=3, d=2)
    with pytest.raises(NotFittedError):
        OLOKRegressor().predict(X)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        OLOKRegressor().fit(Xn, Y)
    Yn = Y.copy()
    Yn[0, 0] = np.inf
    with pytest.raises(ValueError, match="(?i)inf"):
        OLOKRegressor().fit(X, Yn)
    with pytest.raises(ValueError, match="inconsistent"):
        OLOKRegressor().fit(X, Y[:10])
    est = OLOKRegressor().partial_fit(X, Y)
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(X[:, :2], Y)
    with pytest.raises(ValueError, match="output"):
        est.partial_fit(X, Y[:, :1])
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2])
    with pytest.raises(ValueError, match="1 sample"):
        OLOKRegressor().partial_fit(X[:1], Y[:1])
    OLOKRegressor(kernel_params={"gamma": 1.0}).partial_fit(X[:1], Y[:1])  # fine with gamma
    with pytest.raises(ValueError, match="eta_t \\* alpha must be < 1"):
        OLOKRegressor(eta0=1.0, alpha=1.0).fit(X, Y)
    with pytest.raises(ValueError, match="at t=5"):
        OLOKRegressor(learning_rate=lambda t: np.where(t == 5, 3.0, 0.1), alpha=0.5).fit(X, Y)
    for bad, match in [
        (dict(truncation=0), "range \\[1, inf\\)"),
        (dict(truncation="x"), "truncation"),
        (dict(loss="hinge"), "loss"),
        (dict(learning_rate="optimal"), "learning_rate"),
        (dict(eta0=-1), "eta0"),
        (dict(output_kernel=[[1, 2], [2, 1]]), "semi-definite"),
        (dict(output_kernel=np.eye(3)), "output"),
    ]:
        with pytest.raises((ValueError, TypeError), match=match):
            OLOKRegressor(**bad).fit(X, Y)


def test_one_dimensional_target_and_score():
    X, Y = _stream(n=400, p=3, d=1, seed=7)
    est = OLOKRegressor(kernel_params={"gamma": 0.3}).fit(X, Y[:, 0])
    assert est.predict(X).shape == (400,)
    assert est.score(X, Y[:, 0]) > 0.5
    v = VVRLSRegressor(kernel_params={"gamma": 0.3}, alpha=1.0).fit(X, Y[:, 0])
    assert v.predict(X).shape == (400,) and v.score(X, Y[:, 0]) > est.score(X, Y[:, 0]) - 0.1
    assert mvkernels.OLOKRegressor is OLOKRegressor


def test_divergence_is_a_clear_error_not_silent_nan():
    # constant step 3 with k(x, x) = 1, B = I: |1 - eta| > 1, the squared-loss iterates blow up
    X, Y = _stream(n=3000, p=3, d=2, seed=8)
    est = OLOKRegressor(
        kernel_params={"gamma": 1e-3}, eta0=3.0, alpha=0.0, learning_rate="constant"
    )
    with pytest.raises(ValueError, match="diverged at t="):
        est.fit(X, Y)
    ok = OLOKRegressor(
        kernel_params={"gamma": 1e-3}, eta0=0.5, alpha=0.0, learning_rate="constant"
    ).fit(X, Y)
    assert np.isfinite(ok.predict(X)).all()

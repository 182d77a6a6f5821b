"""The two problem types (issue 33 item 1): full kernels and Nystrom features as parts.

Each mode's methods are checked against the direct formula, and the two modes against
each other on a kernel both represent exactly: the full kernels ``K_l = U_l U_l^T`` of
Nystrom features ``U`` (a full problem's ``g_l`` is the Nystrom problem's
``g~_l = U_l^T g_l``)."""

from dataclasses import FrozenInstanceError, fields

import numpy as np
import pytest
from scipy.linalg import block_diag

from mvkernels.mvml import FullProblem, MVMLProblem, NystromProblem
from mvkernels.mvml._metric_algebra import PSDFactor, cov_metric_full
from mvkernels.nystrom import BlockNystrom, FeatureMoments

N, P = 30, 5  # rows, landmarks per view
SHARED = {"n_samples", "n_views", "block_size", "Y", "sample_weight"} | {
    "feature_mean",
    "target_mean",
    "uncentred",
}


def _pair(rng, weighted=False, T=2):
    """The same data as a full and a Nystrom problem: ``(full, nystrom, U)``."""
    Xs = [rng.standard_normal((N, 3)) + 1.0, rng.standard_normal((N, 2)) - 0.5]
    Y = rng.standard_normal((N, T)) + 2.0
    nys = BlockNystrom(n_landmarks=P, random_state=0).fit(Xs)
    U = nys.transform(Xs)
    sw = rng.uniform(0.5, 2.0, N) if weighted else None
    Ks = [U[:, l * P : (l + 1) * P] @ U[:, l * P : (l + 1) * P].T for l in range(2)]
    full = MVMLProblem.full(Ks, Y, sw)
    mom = FeatureMoments.from_features(U, Y, sw).symmetrize()
    nystrom = MVMLProblem.from_moments(mom, nys, Y, Xs=Xs, sample_weight=sw)
    return full, nystrom, U


def _to_features(g, U, v=2):
    """A full problem's coefficients ``g`` (v n,) as the Nystrom ``g~ = U_l^T g_l``."""
    n = U.shape[0]
    return np.concatenate([U[:, l * P : (l + 1) * P].T @ g[l * n : (l + 1) * n] for l in range(v)])


def test_types_hold_their_own_fields_and_name_their_mode(rng):
    full, nystrom, _ = _pair(rng)
    assert isinstance(full, FullProblem) and isinstance(nystrom, NystromProblem)
    assert (full.mode, nystrom.mode) == ("full", "nystrom")
    assert not full.feature_space and nystrom.feature_space
    full_own = {f.name for f in fields(FullProblem)} - SHARED
    nys_own = {f.name for f in fields(NystromProblem)} - SHARED
    assert "Ks" in full_own and not full_own & {"statistics", "feature_rows", "data"}
    assert nys_own == {"statistics", "feature_rows", "data"}  # two typed parts, the data
    with pytest.raises((FrozenInstanceError, AttributeError)):
        full.mode = "nystrom"
    with pytest.raises(TypeError, match="interface of the modes"):
        MVMLProblem(N, 2, P, nystrom.Y)
    with pytest.raises(RuntimeError, match="full-kernel"):
        nystrom.design(np.ones(2))
    with pytest.raises(RuntimeError, match="Nystrom mode"):
        full.features()


@pytest.mark.parametrize("weighted", [False, True])
def test_full_design_and_centring_equal_the_direct_formula(rng, weighted):
    full, _, _ = _pair(rng, weighted)
    w = np.array([0.3, 0.7])
    s = np.ones(N) if full.sample_weight is None else full.sample_weight
    Y = full.Y / np.sqrt(s)[:, None]  # the targets as given (Y holds sqrt(s) y)
    P_direct = np.sqrt(s)[:, None] * np.hstack([wl * K for wl, K in zip(w, full.Ks)])
    np.testing.assert_allclose(full.design(w), P_direct, atol=1e-12)
    c = full.centred()
    ybar = s @ Y / s.sum()
    np.testing.assert_allclose(c.target_mean, ybar, atol=1e-12)
    for K, Kc in zip(full.Ks, c.Ks):
        np.testing.assert_allclose(Kc, K - (s @ K / s.sum())[None, :], atol=1e-12)
    np.testing.assert_allclose(c.Y, np.sqrt(s)[:, None] * (Y - ybar), atol=1e-12)
    assert c.centred() is c and c.uncentred is full


@pytest.mark.parametrize("weighted", [False, True])
def test_nystrom_centring_equals_centred_features(rng, weighted):
    _, nystrom, U = _pair(rng, weighted)
    s = np.ones(N) if nystrom.sample_weight is None else nystrom.sample_weight
    c = nystrom.centred()
    m = s @ U / s.sum()
    ybar = s @ nystrom.Y / s.sum()
    Uc, Yc = U - m, nystrom.Y - ybar
    np.testing.assert_allclose(c.stats.gram, Uc.T @ (s[:, None] * Uc), atol=1e-10)
    np.testing.assert_allclose(c.stats.cross, Uc.T @ (s[:, None] * Yc), atol=1e-10)
    np.testing.assert_allclose(c.stats.target_sq, s @ Yc**2, atol=1e-10)
    np.testing.assert_allclose(c.features(), Uc, atol=1e-12)


@pytest.mark.parametrize("centred", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_full_and_nystrom_agree_on_the_same_kernel(rng, weighted, centred):
    """view_moments (eq. 10 / 17), squared_residual (eq. 7 / 14) and the intercepts of
    the same model in the two modes; view_outputs equal ``K_l g_l`` directly."""
    full, nystrom, U = _pair(rng, weighted)
    if centred:
        full, nystrom = full.centred(), nystrom.centred()
    g = rng.standard_normal(2 * N)
    gt = _to_features(g, U)
    w = np.array([0.4, 0.6])
    for t in range(2):
        for a, b in zip(full.view_moments(g, t), nystrom.view_moments(gt, t)):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(
            full.squared_residual(t, g, w), nystrom.squared_residual(t, gt, w), rtol=1e-9
        )
    GW = np.stack([g * full.weight_vector(w), g])[:, None]  # (2, 1, v n): two models
    GWt = np.stack([gt * nystrom.weight_vector(w), gt])[:, None]
    np.testing.assert_allclose(full.intercepts(GW), nystrom.intercepts(GWt), atol=1e-9)
    Kg = np.column_stack([K @ g[l * N : (l + 1) * N] for l, K in enumerate(full.Ks)])
    s = np.ones(N) if full.sample_weight is None else np.sqrt(full.sample_weight)
    np.testing.assert_allclose(full.view_outputs(g), s[:, None] * Kg, atol=1e-10)
    if not weighted:  # Nystrom's view outputs are the rows as given
        np.testing.assert_allclose(nystrom.view_outputs(gt), Kg, atol=1e-10)


def test_ridge_systems_give_the_same_fit_in_both_modes(rng):
    """The square loss's g-step system, kernel form (eq. 8) and feature form (eq. 15):
    the full problem with ``A = I`` and the Nystrom problem with ``A~ = U^T U`` (the same
    metric, ``A~ = U^T A U``) fit the same training outputs; with ``A~ = I`` the feature
    form is ridge regression on the weighted features ``Z = U D_w``."""
    full, nystrom, U = _pair(rng, T=1)
    w, alpha = np.array([0.3, 0.7]), 0.3
    d = nystrom.dim
    P_ = full.design(w)
    PF, S, rhs = full.ridge_system([0], PSDFactor(np.eye(full.dim)), w)
    np.testing.assert_array_equal(PF, P_)
    beta = np.linalg.solve(S + alpha * np.eye(N), rhs)
    out_full = P_ @ (PF.T @ beta)
    direct = P_ @ P_.T @ np.linalg.solve(P_ @ P_.T + alpha * np.eye(N), full.Y)
    np.testing.assert_allclose(out_full, direct, rtol=1e-9, atol=1e-9)
    Z = U * nystrom.weight_vector(w)
    Ub = block_diag(U[:, :P], U[:, P:])
    factor = PSDFactor(Ub.T @ Ub)
    PF2, S2, rhs2 = nystrom.ridge_system([0], factor, w)
    assert PF2 is None
    x = np.linalg.solve(S2 + alpha * np.eye(d), rhs2)
    np.testing.assert_allclose(Z @ (factor.F @ x), out_full, rtol=1e-7, atol=1e-8)
    _, S3, rhs3 = nystrom.ridge_system([0], PSDFactor(np.eye(d)), w)
    ridge = np.linalg.solve(Z.T @ Z + alpha * np.eye(d), Z.T @ nystrom.Y)
    np.testing.assert_allclose(np.linalg.solve(S3 + alpha * np.eye(d), rhs3), ridge, atol=1e-9)


def test_subsets_and_their_coefficients(rng):
    """A subset's problem (one-vs-one's pairs) in both modes, and its coefficients as
    the whole problem's: the same outputs on the subset's rows."""
    full, nystrom, U = _pair(rng, weighted=True, T=1)
    rows = np.flatnonzero(rng.uniform(size=N) < 0.5)
    y = rng.choice([-1.0, 1.0], (rows.size, 1))
    fs, ns = full.subset(rows, y), nystrom.subset(rows, y)
    assert isinstance(fs, FullProblem) and isinstance(ns, NystromProblem)
    for K, Ks in zip(full.Ks, fs.Ks):
        np.testing.assert_array_equal(Ks, K[np.ix_(rows, rows)])
    direct = FeatureMoments.from_features(U[rows], y, nystrom.sample_weight[rows])
    np.testing.assert_allclose(ns.stats.gram, direct.gram, atol=1e-10)
    np.testing.assert_allclose(ns.stats.cross.ravel(), np.ravel(direct.cross), atol=1e-10)
    g = rng.standard_normal(2 * rows.size)
    lifted = full.subset_coefficients(g, rows)
    assert lifted.shape == (full.dim,)
    np.testing.assert_allclose(
        full.view_outputs(lifted)[rows], fs.view_outputs(g), rtol=1e-10, atol=1e-12
    )
    gt = rng.standard_normal(nystrom.dim)
    assert nystrom.subset_coefficients(gt, rows) is gt


def test_training_outputs_and_cov_metric(rng):
    full, nystrom, U = _pair(rng, T=1)
    G = rng.standard_normal((3, full.dim))
    Gt = np.stack([_to_features(g, U) for g in G])
    np.testing.assert_allclose(
        full.training_outputs(G), nystrom.training_outputs(Gt), rtol=1e-9, atol=1e-9
    )
    np.testing.assert_array_equal(full.cov_metric(), cov_metric_full(full.Ks))
    Ub = block_diag(U[:, :P], U[:, P:])  # A~ = U^T A U (cov_metric_nystrom)
    np.testing.assert_allclose(
        nystrom.cov_metric(), Ub.T @ full.cov_metric() @ Ub, rtol=1e-8, atol=1e-10
    )
    assert full.with_views(None) is full
    assert nystrom.with_views(None).row_data.Xs is None and nystrom.row_data.Xs is not None

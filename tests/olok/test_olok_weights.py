"""Sample weights of OLOK and vv-RLS.

vv-RLS (batch): integer weights are repeated rows and zero weights removed rows, exactly.
OLOK (stochastic): a weight scales its row's step, ``w_t eta_t`` (gradient and decay), so
the weighted stream is the unweighted one with the step schedule ``w_t eta_t``; a zero
weight is a removed row (not counted in ``t``). An integer weight ``k`` is one step of
size ``k eta_t``, not ``k`` steps, so it is *not* ``k`` repeated rows.
"""

import numpy as np
import pytest

from mvkernels import OLOKRegressor, VVRLSRegressor

FEATURES = [
    dict(),
    dict(truncation=50),
    dict(features="rff", n_features=100, random_state=0),
    dict(features="nystrom", n_features=40),
]


@pytest.fixture(scope="module")
def stream():
    rng = np.random.default_rng(0)
    n = 300
    X = rng.standard_normal((n, 4))
    Y = np.c_[np.sin(X[:, 0]), np.cos(X[:, 1])] + 0.05 * rng.standard_normal((n, 2))
    w = rng.integers(0, 4, size=n).astype(float)
    w[:3] = [0.0, 3.0, 0.5]
    return X, Y, w, rng.standard_normal((20, 4))


# ------------------------------------------------------------------ vv-RLS
@pytest.mark.parametrize(
    "params",
    [dict(), dict(output_kernel=0.1), dict(kernel_params={"gamma": 0.3}, output_kernel=0.5)],
)
def test_vvrls_integer_weights_equal_repeated_rows(stream, params):
    """The default bandwidth is weighted too (frequency weights, double precision)."""
    X, Y, w, T = stream
    wi = np.floor(w)
    rep = np.repeat(np.arange(len(w)), wi.astype(int))
    a = VVRLSRegressor(alpha=0.1, **params).fit(X, Y, sample_weight=wi).predict(T)
    b = VVRLSRegressor(alpha=0.1, **params).fit(X[rep], Y[rep]).predict(T)
    np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-9)


def test_vvrls_general_operator_kernel_weights(stream):
    """The nd x nd block system takes the weights as the decomposable one does."""
    from mvkernels.operator_kernels import CallableOperatorKernel

    def kern(A, Z):
        D = ((A[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
        B1 = np.array([[1.0, 0.3], [0.3, 0.5]])
        return np.exp(-0.3 * D)[:, :, None, None] * B1

    X, Y, w, T = stream
    X, Y, wi, T = X[:60], Y[:60], np.floor(w[:60]), T
    rep = np.repeat(np.arange(60), wi.astype(int))
    a = VVRLSRegressor(CallableOperatorKernel(kern), alpha=0.1).fit(X, Y, sample_weight=wi)
    b = VVRLSRegressor(CallableOperatorKernel(kern), alpha=0.1).fit(X[rep], Y[rep])
    np.testing.assert_allclose(a.predict(T), b.predict(T), rtol=1e-9, atol=1e-10)


def test_vvrls_zero_weights_equal_removed_rows(stream):
    X, Y, w, T = stream
    keep = w > 0
    a = VVRLSRegressor(alpha=0.1).fit(X, Y, sample_weight=w)
    b = VVRLSRegressor(alpha=0.1).fit(X[keep], Y[keep], sample_weight=w[keep])
    np.testing.assert_array_equal(a.predict(T), b.predict(T))
    assert a.X_fit_.shape[0] == keep.sum()


# ------------------------------------------------------------------ OLOK
@pytest.mark.parametrize("params", FEATURES, ids=lambda p: p.get("features", "exact"))
@pytest.mark.parametrize("schedule", ["constant", "invscaling"])
def test_olok_weight_scales_the_step(stream, params, schedule):
    """Weighted OLOK == unweighted OLOK with the step schedule ``w_t eta_t`` (exactly:
    the same arithmetic), for both schedules; a zero weight == a removed row."""
    X, Y, w, T = stream
    keep = w > 0
    wk = w[keep]
    eta0 = 0.3

    def base(t):
        return eta0 / np.asarray(t, dtype=float) ** 0.5 if schedule == "invscaling" else eta0

    weighted = OLOKRegressor(eta0=eta0, learning_rate=schedule, **params)
    weighted.fit(X, Y, sample_weight=w)
    removed = OLOKRegressor(eta0=eta0, learning_rate=schedule, **params)
    removed.fit(X[keep], Y[keep], sample_weight=wk)
    stepped = OLOKRegressor(eta0=eta0, learning_rate=lambda t: base(t) * wk[t - 1], **params)
    stepped.fit(X[keep], Y[keep])
    np.testing.assert_array_equal(weighted.predict(T), removed.predict(T))
    np.testing.assert_allclose(weighted.predict(T), stepped.predict(T), rtol=1e-12, atol=1e-13)
    assert weighted.t_ == keep.sum()


def test_olok_integer_weight_is_not_repeated_rows(stream):
    """The stated limit: weight 2 is one double step, two repeated rows are two steps."""
    X, Y, _, T = stream
    w = np.full(len(X), 2.0)
    a = OLOKRegressor(eta0=0.3).fit(X, Y, sample_weight=w).predict(T)
    b = OLOKRegressor(eta0=0.3).fit(np.repeat(X, 2, axis=0), np.repeat(Y, 2, axis=0))
    assert not np.allclose(a, b.predict(T), atol=1e-3)


def test_olok_weighted_partial_fit_equals_fit(stream):
    """(With a fixed bandwidth: the default one comes from the first batch.)"""
    X, Y, w, T = stream
    ref = OLOKRegressor(eta0=0.3, kernel_params={"gamma": 0.3}).fit(X, Y, sample_weight=w)
    est = OLOKRegressor(eta0=0.3, kernel_params={"gamma": 0.3})
    for a in range(0, len(X), 70):
        est.partial_fit(X[a : a + 70], Y[a : a + 70], sample_weight=w[a : a + 70])
    est.partial_fit(X[:5], Y[:5], sample_weight=np.zeros(5))  # a batch of zero weights: no-op
    np.testing.assert_allclose(est.predict(T), ref.predict(T), rtol=1e-12, atol=1e-13)
    assert est.t_ == ref.t_


def test_olok_weights_errors(stream):
    X, Y, w, _ = stream
    with pytest.raises(ValueError, match=r"sample_weight \* eta_t \* alpha must be < 1"):
        OLOKRegressor(eta0=1.0, alpha=0.4).fit(X, Y, sample_weight=np.full(len(X), 3.0))
    for bad, match in [
        (-w, "must be >= 0"),
        (np.r_[np.nan, w[1:]], "contains NaN"),
        (w[:-1], "entries but there are"),
        (np.zeros(len(X)), "every sample weight is zero"),
    ]:
        with pytest.raises(ValueError, match=match):
            OLOKRegressor().fit(X, Y, sample_weight=bad)
        with pytest.raises(ValueError, match=match):
            VVRLSRegressor().fit(X, Y, sample_weight=bad)

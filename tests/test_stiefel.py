"""Cayley-Adam on the Stiefel manifold (Li et al. 2019) as used by the multi-view RKM."""

import numpy as np
import pytest

from mvkernels.stiefel import (
    cayley_adam,
    orthonormalize,
    riemannian_gradient,
    stiefel_trace_max,
)


def psd_with_gap(rng, n=30, top=(10.0, 7.0, 5.0), rest=1.0):
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    lam = np.concatenate([top, rest * rng.uniform(0.1, 1.0, n - len(top))])
    return (Q * lam) @ Q.T, Q[:, : len(top)]


@pytest.mark.parametrize("optimizer", ["lobpcg", "cayley-adam"])
def test_trace_max_finds_top_eigenspace(rng, optimizer):
    A, Qtop = psd_with_gap(rng)
    res = stiefel_trace_max(A, 3, random_state=0, tol=1e-12, optimizer=optimizer)
    X = res.X
    assert res.converged and res.grad_norm <= 1e-12
    np.testing.assert_allclose(X.T @ X, np.eye(3), atol=1e-13)
    # the projectors onto the found subspace and the top eigenspace coincide
    np.testing.assert_allclose(X @ X.T, Qtop @ Qtop.T, atol=1e-10)
    # objective = -1/2 sum of the top eigenvalues
    assert res.fun == pytest.approx(-0.5 * 22.0, rel=1e-12)
    # history records a decreasing objective overall
    assert res.history[-1][1] < res.history[0][1]


def test_generic_objective_procrustes(rng):
    # min ||X - B||_F^2 on the Stiefel manifold: the polar factor of B
    B = rng.standard_normal((12, 4))

    def fg(X):
        D = X - B
        return float(np.sum(D * D)), 2.0 * D

    res = cayley_adam(fg, rng.standard_normal((12, 4)), lr=0.2, tol=1e-11)
    assert res.converged
    np.testing.assert_allclose(res.X, orthonormalize(B), atol=1e-9)


def test_riemannian_gradient_is_tangent(rng):
    X = orthonormalize(rng.standard_normal((10, 3)))
    R = riemannian_gradient(X, rng.standard_normal((10, 3)))
    S = X.T @ R
    np.testing.assert_allclose(S + S.T, 0.0, atol=1e-13)


def test_max_iter_reports_not_converged(rng):
    A, _ = psd_with_gap(rng)
    res = stiefel_trace_max(A, 3, random_state=0, max_iter=5, tol=1e-14, optimizer="cayley-adam")
    assert not res.converged and res.n_iter == 5
    np.testing.assert_allclose(res.X.T @ res.X, np.eye(3), atol=1e-13)


def test_objective_change_criterion(rng):
    A, _ = psd_with_gap(rng)
    res = stiefel_trace_max(
        A, 3, random_state=0, tol=0.0, ftol=1e-14, patience=5, optimizer="cayley-adam"
    )
    assert res.converged and res.n_iter < 100_000
    assert res.grad_norm < 1e-5


@pytest.mark.parametrize(
    "kw, msg",
    [
        ({"lr": 0.0}, "lr"),
        ({"beta1": 1.0}, "beta1"),
        ({"max_iter": 0}, "max_iter"),
        ({"tol": -1.0}, "tol"),
    ],
)
def test_bad_parameters(rng, kw, msg):
    A, _ = psd_with_gap(rng)
    with pytest.raises(ValueError, match=msg):
        stiefel_trace_max(A, 2, random_state=0, optimizer="cayley-adam", **kw)


def test_bad_shapes(rng):
    with pytest.raises(ValueError, match="p <= n"):
        cayley_adam(lambda X: (0.0, X), rng.standard_normal((2, 3)))
    with pytest.raises(ValueError, match="n_components"):
        stiefel_trace_max(np.eye(3), 4)


def small_gap_matrix(rng, n=300, s=40):
    """PSD matrix whose eigenvalues s and s + 1 differ by 0.1 % (like SantaFe's 144/145)."""
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    lam = np.sort(
        np.concatenate([np.geomspace(100.0, 1.2, s - 1), [1.0], np.geomspace(0.999, 1e-3, n - s)])
    )[::-1]
    return (Q * lam) @ Q.T, Q[:, :s], lam


def test_lobpcg_small_eigengap(rng):
    A, Qtop, lam = small_gap_matrix(rng)
    calls = []

    def apply_A(Z):
        calls.append(Z.shape[1])
        return A @ Z

    res = stiefel_trace_max(apply_A, 40, random_state=0, n=300, tol=1e-12)
    assert res.converged and res.grad_norm <= 1e-12 and res.n_iter < 200
    X = res.X
    np.testing.assert_allclose(X.T @ X, np.eye(40), atol=1e-12)
    # subspace angle <= residual / gap: the projectors agree far below the 1e-3 gap
    np.testing.assert_allclose(X @ X.T, Qtop @ Qtop.T, atol=1e-8)
    # Ritz vectors: X^T A X is diagonal, holding the top eigenvalues in descending order
    S = X.T @ A @ X
    np.testing.assert_allclose(S, np.diag(lam[:40]), atol=1e-9 * lam[0])
    assert res.fun == pytest.approx(-0.5 * lam[:40].sum(), rel=1e-13)
    # the objective never increases (exact Rayleigh-Ritz line search)
    f = [h[1] for h in res.history]
    assert all(b <= a + 1e-12 * abs(a) for a, b in zip(f, f[1:]))


def test_lobpcg_equals_cayley_adam_fixed_point(rng):
    A, _ = psd_with_gap(rng, n=40)
    a = stiefel_trace_max(A, 3, random_state=1, optimizer="lobpcg", tol=1e-12)
    b = stiefel_trace_max(A, 3, random_state=1, optimizer="cayley-adam", tol=1e-12)
    np.testing.assert_allclose(a.X @ a.X.T, b.X @ b.X.T, atol=1e-10)
    assert a.n_iter < b.n_iter


def test_lobpcg_callable_needs_n_and_checks(rng):
    A, _ = psd_with_gap(rng)
    with pytest.raises(ValueError, match="n .the size of A"):
        stiefel_trace_max(lambda Z: A @ Z, 2)
    with pytest.raises(ValueError, match="unknown optimizer"):
        stiefel_trace_max(A, 2, optimizer="sgd")
    with pytest.raises(ValueError, match="n_guard"):
        stiefel_trace_max(A, 2, n_guard=29)
    with pytest.raises(ValueError, match="NaN or inf"):
        stiefel_trace_max(np.full((5, 5), np.nan), 2)

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


def test_trace_max_finds_top_eigenspace(rng):
    A, Qtop = psd_with_gap(rng)
    res = stiefel_trace_max(A, 3, random_state=0, tol=1e-12)
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
    res = stiefel_trace_max(A, 3, random_state=0, max_iter=5, tol=1e-14)
    assert not res.converged and res.n_iter == 5
    np.testing.assert_allclose(res.X.T @ res.X, np.eye(3), atol=1e-13)


def test_objective_change_criterion(rng):
    A, _ = psd_with_gap(rng)
    res = stiefel_trace_max(A, 3, random_state=0, tol=0.0, ftol=1e-14, patience=5)
    assert res.converged and res.n_iter < 100_000
    assert res.grad_norm < 1e-5


@pytest.mark.parametrize("kw, msg", [({"lr": 0.0}, "lr"), ({"beta1": 1.0}, "beta1"),
                                     ({"max_iter": 0}, "max_iter"), ({"tol": -1.0}, "tol")])
def test_bad_parameters(rng, kw, msg):
    A, _ = psd_with_gap(rng)
    with pytest.raises(ValueError, match=msg):
        stiefel_trace_max(A, 2, random_state=0, **kw)


def test_bad_shapes(rng):
    with pytest.raises(ValueError, match="p <= n"):
        cayley_adam(lambda X: (0.0, X), rng.standard_normal((2, 3)))
    with pytest.raises(ValueError, match="n_components"):
        stiefel_trace_max(np.eye(3), 4)

"""The dual active-set solves of several problems at once (:func:`_dual_solves`) against
the same solves one problem at a time, with the extra features as a list or stacked."""

from __future__ import annotations

import numpy as np
import pytest

from mvkernels.mvml._hinge_active import _dual_solves, _primal_solves


def _round(seed: int, n: int = 40, d: int = 60, K: int = 5, r: int = 2):
    """One correction's inputs: features, labels, boxes, sets, extra features."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    YT = np.where(rng.randn(K, n) > 0, 1.0, -1.0)
    extras = [rng.randn(n, r) for _ in range(K)]
    weight = rng.rand(K, n) + 0.5
    Cs = rng.rand(K) * 4 + 0.5
    CY = Cs[:, None] * YT * weight
    at_c = rng.rand(K, n) < 0.3
    free = ~at_c & (rng.rand(K, n) < 0.5)
    free[K - 1] = False  # no free row: v is the bound rows' part
    return X, YT, Cs, CY, at_c, free, extras, weight


@pytest.mark.parametrize("with_extras", [False, True])
@pytest.mark.parametrize("stack", [False, True])
def test_dual_solves_equal_one_problem_at_a_time(with_extras, stack):
    """Every live problem's coefficients, free rows, multipliers and margins are those of
    the call with that problem alone (its free rows exactly, the numbers to rounding:
    the shared products are matrix products there), with the extras as a list or
    stacked."""
    X, YT, Cs, CY, at_c, free, extras, _ = _round(3)
    gram = X @ X.T
    E = extras if with_extras else None
    S = np.stack(extras) if (with_extras and stack) else None
    live = [4, 0, 2, 3, 1]
    coefs, sol, M = _dual_solves(gram, YT, CY, at_c, free, live, E, S)
    assert list(sol) == live
    for j, k in enumerate(live):
        c1, s1, M1 = _dual_solves(gram, YT, CY, at_c, free, [k], E)
        np.testing.assert_allclose(coefs[j], c1[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(M[j], M1[0], rtol=1e-12, atol=1e-10)
        np.testing.assert_array_equal(sol[k][1], s1[k][1])
        np.testing.assert_array_equal(sol[k][1], np.flatnonzero(free[k]))
        np.testing.assert_allclose(sol[k][2], s1[k][2], rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(sol[k][0], coefs[j])


def test_dual_solves_equal_the_primal_with_stacked_extras():
    """The stacked extras against the solves on the features ``[X, E_k]`` (1e-10)."""
    X, YT, Cs, CY, at_c, free, extras, weight = _round(8)
    live = [0, 1, 2, 3, 4]
    coefs, dual, M = _dual_solves(X @ X.T, YT, CY, at_c, free, live, extras, np.stack(extras))
    _, primal, Mp = _primal_solves(X, YT, Cs, CY, at_c, free, live, extras, weight, [None] * 5)
    assert list(dual) == list(primal) == live
    np.testing.assert_allclose(M, Mp, rtol=1e-10, atol=1e-10)
    for j, k in enumerate(live):
        c, idx, a = dual[k]
        np.testing.assert_array_equal(c, coefs[j])
        v, idx_p, a_p = primal[k]
        np.testing.assert_array_equal(idx, idx_p)
        np.testing.assert_allclose(a, a_p, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(np.concatenate([c @ X, c @ extras[k]]), v, atol=1e-10)


def test_dual_solves_drop_singular_and_non_finite_problems():
    """A problem whose free rows repeat (singular ``G``) or whose solve is not finite
    gives up (absent from the result); the others are those of their calls alone."""
    X, YT, Cs, CY, at_c, free, extras, _ = _round(5)
    X[7] = X[6]  # rows 6 and 7 identical (with their extras): free together, G is singular
    extras[0][7] = extras[0][6]
    at_c[0, 6:8], free[0, 6:8] = False, True
    free[2, :] = False
    free[2, 9] = True
    at_c[2, 9] = False
    YT = YT.copy()
    YT[2, 9] = np.nan  # a NaN label on problem 2's only free row: b is NaN
    gram = X @ X.T
    S = np.stack(extras)
    coefs, sol, M = _dual_solves(gram, YT, CY, at_c, free, [0, 1, 2, 3], extras, S)
    assert list(sol) == [1, 3]
    for j, k in enumerate([1, 3]):
        c1, _, M1 = _dual_solves(gram, YT, CY, at_c, free, [k], extras, S)
        np.testing.assert_allclose(coefs[j], c1[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(M[j], M1[0], rtol=1e-12, atol=1e-10)

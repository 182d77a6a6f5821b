"""The first g-steps of the CV's next ``alpha`` from the previous one's exact solutions
(``rebox_solutions``), and the free sets' Gram matrices read from ``X X^T`` when the rows
are fewer than the features: the same exact solutions as the active set from scratch."""

import numpy as np
import pytest

from _svm_checks import assert_kkt as _kkt
from _svm_checks import one_vs_rest_problems as _problems
from mvkernels.mvml import MVMLSVC
from mvkernels.mvml._hinge_active import (
    FirstSolutions,
    _free_rows_gram,
    active_set_svm,
    rebox_solutions,
)
from mvkernels.mvml._hinge_loss import HingeLoss
from mvkernels.mvml._problem import MVMLProblem


@pytest.mark.parametrize("C_small, C_large", [(50.0, 500.0), (0.02, 0.2)])
def test_rebox_equals_the_active_set_from_scratch(C_small, C_large):
    """Hard margin (every solution stays exact, taken as it is) and soft margin (rows at
    the bound: polished from the margins): the solutions at the larger box equal those
    grown from scratch there (1e-10), and meet the KKT conditions."""
    X, Y = _problems(60, 90, 4, 0)
    seeds = FirstSolutions(C_small, active_set_svm(X, Y, C_small))
    assert all(s is not None for s in seeds.solutions)
    moved = rebox_solutions(X, Y, seeds, C_large)
    direct = active_set_svm(X, Y, C_large)
    for k, (m, s) in enumerate(zip(moved, direct)):
        assert m is not None and s is not None
        np.testing.assert_allclose(m[0], s[0], rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(m[2], s[2], rtol=1e-10, atol=1e-10)
        _kkt(X, Y[:, k], C_large, m[0], m[1])
    bound = [int(np.sum(s[1] >= C_small * (1 - 1e-12))) for s in seeds.solutions]
    kept = [m is s for m, s in zip(moved, seeds.solutions)]
    # rows at the bound: the seed is not exact at the larger box (polished); none: kept
    assert kept == [b == 0 for b in bound]
    if C_small < 1:
        assert not any(kept)
    else:
        assert all(kept)


def test_rebox_with_row_weights():
    """Weighted rows (boxes C s_i, rows of weight 0 ignored) as the active set at the
    larger box."""
    X, Y = _problems(50, 80, 3, 1)
    w = np.random.RandomState(2).uniform(0.5, 2.0, 50)
    w[:4] = 0.0
    for C_small, C_large in [(30.0, 300.0), (0.05, 0.5)]:
        seeds = FirstSolutions(C_small, active_set_svm(X, Y, C_small, weight=w))
        moved = rebox_solutions(X, Y, seeds, C_large, weight=w)
        direct = active_set_svm(X, Y, C_large, weight=w)
        for k, (m, s) in enumerate(zip(moved, direct)):
            assert m is not None and s is not None
            np.testing.assert_allclose(m[0], s[0], rtol=1e-10, atol=1e-10)
            assert np.all(m[1][:4] == 0.0)
            _kkt(X, Y[:, k], C_large, m[0], m[1], w)


def test_rebox_gives_nothing_it_cannot_vouch_for():
    """A smaller box, a seed of None or of another width: None (the caller grows the
    sets from scratch)."""
    X, Y = _problems(40, 60, 2, 3)
    sol = active_set_svm(X, Y, 10.0)
    assert rebox_solutions(X, Y, FirstSolutions(10.0, sol), 1.0) == [None, None]
    assert rebox_solutions(X, Y, FirstSolutions(10.0, [None, sol[1]]), 20.0)[0] is None
    wide = np.hstack([X, np.zeros((40, 1))])
    assert rebox_solutions(wide, Y, FirstSolutions(10.0, sol), 20.0) == [None, None]


def test_free_gram_read_from_the_row_gram():
    """With ``X X^T`` given, the free rows' Gram matrix (extra columns too) is its block:
    the product of the free rows (1e-12), rows in increasing order."""
    rng = np.random.RandomState(4)
    X, E = rng.randn(30, 50), rng.randn(30, 2)
    free = rng.rand(30) < 0.4
    idx, XF, EF, G = _free_rows_gram(X, E, free, None, X @ X.T)
    np.testing.assert_array_equal(idx, np.flatnonzero(free))
    np.testing.assert_allclose(G, XF @ XF.T + EF @ EF.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(XF, X[free])


def test_active_set_with_fewer_rows_than_features_is_exact(monkeypatch):
    """Fewer rows than features (the corrections in the dual, every product from the row
    Gram matrix): the same solutions as the corrections on the features (1e-10),
    KKT-checked."""
    from mvkernels.mvml import _hinge_active

    X, Y = _problems(70, 120, 4, 5)
    read = active_set_svm(X, Y, 5.0)
    seen = []

    def on_features(gram, YT, CY, at_c, free, live, extras, stacked=None):
        seen.append(True)
        K = YT.shape[0]
        Cs = np.full(K, 5.0)
        return _hinge_active._primal_solves(
            X, YT, Cs, CY, at_c, free, live, extras, None, [None] * K
        )

    monkeypatch.setattr(_hinge_active, "_dual_solves", on_features)
    fresh = active_set_svm(X, Y, 5.0)
    assert seen
    for k, (r, f) in enumerate(zip(read, fresh)):
        assert r is not None and f is not None
        np.testing.assert_allclose(r[0], f[0], rtol=1e-10, atol=1e-10)
        _kkt(X, Y[:, k], 5.0, r[0], r[1])


def test_dual_solves_equal_the_solves_on_the_features():
    """One round of :func:`_dual_solves` (from ``X X^T``) against
    :func:`_primal_solves` (on the features) on random sets, with extra features and
    per-problem weights: the same ``v`` (``c [X, E]``), free multipliers and margins
    (1e-10)."""
    from mvkernels.mvml._hinge_active import _dual_solves, _primal_solves

    rng = np.random.RandomState(8)
    n, d, K = 40, 60, 4
    X = rng.randn(n, d)
    Y = np.where(rng.randn(n, K) > 0, 1.0, -1.0)
    extras = [rng.randn(n, 2) for _ in range(K)]
    weight = rng.rand(K, n) + 0.5
    Cs = np.array([0.5, 1.0, 2.0, 4.0])
    YT = np.ascontiguousarray(Y.T)
    CY = Cs[:, None] * YT * weight
    at_c = rng.rand(K, n) < 0.3
    free = ~at_c & (rng.rand(K, n) < 0.5)
    free[3] = False  # no free row: v is the bound rows' part
    live = [0, 1, 2, 3]
    coefs, dual, M = _dual_solves(X @ X.T, YT, CY, at_c, free, live, extras)
    _, primal, Mp = _primal_solves(X, YT, Cs, CY, at_c, free, live, extras, weight, [None] * K)
    assert list(dual) == list(primal) == [0, 1, 2, 3]
    np.testing.assert_allclose(M, Mp, rtol=1e-10, atol=1e-10)
    for j, k in enumerate(dual):
        c, idx, a = dual[k]
        v, idx_p, a_p = primal[k]
        np.testing.assert_array_equal(c, coefs[j])
        np.testing.assert_array_equal(idx, idx_p)
        np.testing.assert_allclose(a, a_p, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(np.concatenate([c @ X, c @ extras[k]]), v, atol=1e-10)


def test_fold_paths_from_the_previous_alpha_equal_paths_from_scratch(monkeypatch):
    """The CV's hinge fold paths with each ``alpha``'s first g-steps started from the
    previous (larger) ``alpha``'s equal the paths whose first g-steps grow from scratch
    (1e-8), and the start is used."""
    rng = np.random.RandomState(6)
    n = 60
    Xs = [rng.randn(n, 5), rng.randn(n, 4)]
    labels = np.argmax(np.hstack(Xs)[:, :3] + 0.3 * rng.randn(n, 3), axis=1)
    Y = np.where(labels[:, None] == np.arange(3), 1.0, -1.0)
    est = MVMLSVC(n_landmarks=40, max_iter=2, tol=None, random_state=0)  # 2 views
    est._check_params()
    problem = est._build_problem(Xs, Y)
    assert problem.mode == "nystrom" and problem.n_samples < problem.dim
    alphas, etas = np.array([1e-5, 1e-4, 1e-3]), np.array([1e-2, 1.0])
    loss = est._make_loss()
    reused = []
    first = HingeLoss.first_g_steps

    def counted(self, problem, X, states, targets=None, Cp0=None, seeds=None, **kw):
        reused.append(seeds is not None)
        return first(self, problem, X, states, targets, Cp0, seeds, **kw)

    monkeypatch.setattr(HingeLoss, "first_g_steps", counted)
    out, _ = loss.fold_paths(est._fit_context(), problem, Xs, alphas, etas, 2)
    assert reused == [False, True, True]

    def scratch(self, problem, X, states, targets=None, Cp0=None, seeds=None, **kw):
        return first(self, problem, X, states, targets, Cp0, None, **kw)

    monkeypatch.setattr(HingeLoss, "first_g_steps", scratch)
    ref, _ = loss.fold_paths(est._fit_context(), problem, Xs, alphas, etas, 2)
    np.testing.assert_allclose(out, ref, rtol=1e-8, atol=1e-10)
    assert isinstance(problem, MVMLProblem)

"""The first g-steps of the CV's next fold from the previous fold's exact solutions
(``reseed_solutions``: the folds share each row's Nystrom features): the same exact
solutions as the active set from scratch, and the same CV results."""

import numpy as np
import pytest

from _svm_checks import assert_kkt as _kkt
from _svm_checks import one_vs_rest_problems as _problems
from mvkernels.mvml import MVMLSVCCV, _hinge_loss
from mvkernels.mvml._hinge_active import active_set_svm, reseed_solutions


@pytest.mark.parametrize("C", [0.05, 1.0, 100.0])
def test_reseed_from_other_rows_equals_the_active_set_from_scratch(C):
    """Seeds solved on other rows with the same features (two folds of one set): the
    solutions on these rows equal those grown from scratch (1e-10) and meet the KKT
    conditions, at soft and hard margins."""
    X, Y = _problems(80, 120, 4, 0)
    fold_a, fold_b = np.arange(0, 64), np.arange(16, 80)
    other = active_set_svm(X[fold_a], Y[fold_a], C)
    assert all(s is not None for s in other)
    Xb, Yb = X[fold_b], Y[fold_b]
    moved = reseed_solutions(Xb, Yb, [s[0] for s in other], C)
    direct = active_set_svm(Xb, Yb, C)
    for k, (m, s) in enumerate(zip(moved, direct)):
        assert m is not None and s is not None
        np.testing.assert_allclose(m[0], s[0], rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(m[2], s[2], rtol=1e-10, atol=1e-10)
        _kkt(Xb, Yb[:, k], C, m[0], m[1])


def test_reseed_with_row_weights():
    """Weighted rows (boxes ``C s_i``, rows of weight 0 at ``a = 0``) as the active set."""
    X, Y = _problems(60, 90, 3, 1)
    w = np.random.RandomState(2).uniform(0.5, 2.0, 50)
    w[:4] = 0.0
    other = active_set_svm(X[10:], Y[10:], 0.5)
    moved = reseed_solutions(X[:50], Y[:50], [s[0] for s in other], 0.5, weight=w)
    direct = active_set_svm(X[:50], Y[:50], 0.5, weight=w)
    for k, (m, s) in enumerate(zip(moved, direct)):
        assert m is not None and s is not None
        np.testing.assert_allclose(m[0], s[0], rtol=1e-10, atol=1e-10)
        assert np.all(m[1][:4] == 0.0)
        _kkt(X[:50], Y[:50, k], 0.5, m[0], m[1], w)


def test_reseed_gives_nothing_it_cannot_vouch_for():
    """A seed of None or of another width, or another number of seeds than problems:
    None (the caller grows the sets from scratch)."""
    X, Y = _problems(40, 60, 2, 3)
    sol = active_set_svm(X, Y, 1.0)
    vs = [s[0] for s in sol]
    assert reseed_solutions(X, Y, [None, vs[1]], 1.0)[0] is None
    assert reseed_solutions(X, Y, [vs[0][:-1], vs[1]], 1.0)[0] is None
    assert reseed_solutions(X, Y, vs[:1], 1.0) == [None, None]
    assert reseed_solutions(X, Y, [None, None], 1.0) == [None, None]


def test_cv_folds_started_from_the_previous_fold_equal_folds_from_scratch(monkeypatch):
    """MVMLSVCCV with each fold's first g-steps started from the previous fold's (the
    engine's store) against every fold's grown from scratch: the same CV scores (1e-10),
    choice and decision values (1e-10), and the seeds are used."""
    rng = np.random.RandomState(4)
    n = 90
    Xs = [rng.randn(n, 6), rng.randn(n, 5)]
    y = np.argmax(np.hstack(Xs)[:, :3] + 0.4 * rng.randn(n, 3), axis=1)
    calls = []
    reseed = _hinge_loss.reseed_solutions

    def counted(X, Y, V, C, **kw):
        out = reseed(X, Y, V, C, **kw)
        calls.append(sum(r is not None for r in out))
        return out

    monkeypatch.setattr(_hinge_loss, "reseed_solutions", counted)
    seeded = MVMLSVCCV(cv=3, random_state=0).fit(Xs, y)
    assert calls and sum(calls) > 0

    def nothing(X, Y, V, C, **kw):
        return [None] * Y.shape[1]

    monkeypatch.setattr(_hinge_loss, "reseed_solutions", nothing)
    scratch = MVMLSVCCV(cv=3, random_state=0).fit(Xs, y)
    a = np.asarray(seeded.cv_results_["mean_test_score"], dtype=float)
    b = np.asarray(scratch.cv_results_["mean_test_score"], dtype=float)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)
    assert seeded.best_params_ == scratch.best_params_
    np.testing.assert_allclose(
        seeded.decision_function(Xs), scratch.decision_function(Xs), rtol=0, atol=1e-10
    )

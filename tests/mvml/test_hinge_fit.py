"""The hinge loss plugged into the estimator base (issue 33, item 1).

``MVMLSVC`` is ``MVMLClassifier`` with its parameters and the hinge loss: the loss builds
the problem (``Loss.build_problem`` / ``nystrom_problem``) and sets its fitted attributes
(``Loss.fitted_attributes``), the base packs ``_packed_attributes`` in a pickle, and the
final multipliers of a g-step are read from a typed record (``ExactDual`` /
``PrimalSolution``).
"""

from __future__ import annotations

import inspect
import pickle

import numpy as np
import pytest

from mvkernels import MVMLSVC, MVMLClassifier
from mvkernels._packing import PackedArray
from mvkernels.mvml._hinge import dual_from_primal, linear_svm
from mvkernels.mvml._hinge_active import active_set_svm
from mvkernels.mvml._hinge_state import ExactDual, PrimalSolution
from mvkernels.mvml._problem import MissingPartError


def _views(n=80, seed=0):
    rng = np.random.RandomState(seed)
    Xs = [rng.randn(n, 3), rng.randn(n, 2)]
    y = np.digitize(Xs[0][:, 0] + Xs[1][:, 0], [-0.5, 0.5])  # 3 classes
    return Xs, y


def test_svc_overrides_only_the_loss():
    """No method of the base is redefined by ``MVMLSVC`` but ``_make_loss`` (7 before)."""
    own = {
        name
        for name, val in vars(MVMLSVC).items()
        if inspect.isfunction(val) and name != "__init__"
    }
    assert own == {"_make_loss"}


def test_the_loss_builds_the_problem():
    """Nystrom mode: the square loss's problem holds the sufficient statistics and no
    features; the hinge loss's the features and no statistics (the same map)."""
    Xs, y = _views()
    Y = np.where(y[:, None] == np.arange(3), 1.0, -1.0)
    kw = dict(n_landmarks=10, random_state=0, joint_view=False)
    square = MVMLClassifier(**kw)._build_problem(Xs, Y)
    hinge = MVMLSVC(**kw)._build_problem(Xs, Y)
    assert square.row_data.U is None and square.stats.gram is not None
    assert hinge.statistics is None and hinge.row_data.U.shape == (80, 20)
    with pytest.raises(MissingPartError, match="no sufficient statistics.*hinge loss"):
        hinge.stats  # noqa: B018  (a missing part: a clear error, not a None)
    U = hinge.row_data.feature_map.transform(Xs)
    np.testing.assert_allclose(hinge.row_data.U, U, rtol=1e-12, atol=1e-12)
    Us = square.row_data.feature_map.transform(Xs)  # (its own bandwidths: MVMLClassifier's)
    np.testing.assert_allclose(square.stats.gram, Us.T @ Us, rtol=1e-10, atol=1e-10)


def test_fitted_attributes_are_the_losss():
    Xs, y = _views()
    svc = MVMLSVC(n_landmarks=10, random_state=0).fit(Xs, y)
    clf = MVMLClassifier(n_landmarks=10, random_state=0).fit(Xs, y)
    for name in ("C_", "dual_coef_", "svm_epochs_", "objective_increase_"):
        assert hasattr(svc, name) and not hasattr(clf, name)
    # one-vs-one: C = 1 / n_ij per pair, multipliers in their boxes, zero off the pairs
    assert svc.dual_coef_.shape == (80, 3)
    for k, rows in enumerate(svc._ovo_rows):
        assert svc.C_[k] == pytest.approx(1.0 / rows.size)
        off = np.setdiff1d(np.arange(80), rows)
        assert np.all(svc.dual_coef_[off, k] == 0.0)
        assert np.all(svc.dual_coef_[rows, k] >= 0.0)
        assert np.all(svc.dual_coef_[rows, k] <= svc.C_[k] * (1 + 1e-12))
    # the solver states are released after the fit
    assert all(s.last is None and s.margins is None for s in svc._fit_states)


def test_dual_coef_is_packed_in_a_pickle_and_restored_bit_for_bit():
    Xs, y = _views()
    svc = MVMLSVC(n_landmarks=10, random_state=0).fit(Xs, y)
    assert isinstance(svc.__getstate__()["dual_coef_"], PackedArray)
    back = pickle.loads(pickle.dumps(svc))
    assert back.dual_coef_.dtype == svc.dual_coef_.dtype
    assert back.dual_coef_.tobytes() == svc.dual_coef_.tobytes()
    np.testing.assert_array_equal(back.decision_function(Xs), svc.decision_function(Xs))
    clf = MVMLClassifier(n_landmarks=10, random_state=0).fit(Xs, y)
    assert not any(isinstance(v, PackedArray) for v in clf.__getstate__().values())


@pytest.mark.parametrize("weighted", [False, True])
def test_typed_final_multipliers(weighted):
    """``PrimalSolution`` (liblinear's ``v``; the rows near or below the margin kept)
    recovers the multipliers that the KKT conditions give on all rows, and they rebuild
    ``v``; ``ExactDual`` returns the active set's multipliers."""
    rng = np.random.RandomState(3)
    X = rng.randn(150, 60)
    y = np.where(X[:, 0] + 0.3 * rng.randn(150) > 0, 1.0, -1.0)
    sw = rng.uniform(0.5, 2.0, 150) if weighted else None
    C = 0.05  # about 40 rows at the bound, 40 on the margin
    # an exact solution (the active set's) as the solver's v: margins of its free rows
    # are 1 to rounding, so the band finds them
    [(v, dual, _)] = active_set_svm(X, y[:, None], C, weight=sw)
    m = y * (X @ v)
    band = 1e-6
    rows = np.flatnonzero(m <= 1.0 + band)
    assert rows.size < 150
    rec = PrimalSolution(
        features=lambda r: X[r],
        rows=rows,
        labels=y[rows],
        margins=m[rows],
        weight=None if sw is None else sw[rows],
        coef=v,
        box=C,
        band=band,
    )
    a = rec.multipliers(150)
    full = dual_from_primal(X, y, v, C, band=band, margins=m, weight=sw)
    np.testing.assert_allclose(a, full, rtol=0, atol=1e-12)
    np.testing.assert_allclose((a * y) @ X, v, rtol=1e-8, atol=1e-8)
    box = C if sw is None else C * sw
    assert np.all(a >= 0) and np.all(a <= box * (1 + 1e-12))
    # liblinear's own v: the multipliers rebuild it to the solver's tolerance
    res = linear_svm(X, y, C, tol=1e-8, max_iter=100000, random_state=0, weight=sw)
    np.testing.assert_allclose(res.coef, v, rtol=1e-3, atol=1e-3)
    np.testing.assert_array_equal(ExactDual(dual, 1.0).multipliers(150), dual)
    np.testing.assert_allclose((dual * y) @ X, v, rtol=1e-10, atol=1e-10)

"""OLOK and vv-RLS on the real data of the OLOK paper (Wine Quality, Parkinson telemonitoring).

Two outputs each, kernel exp(-gamma ||x - x'||^2) J (J_ii = 1, J_ij = 0.1), inputs and
targets standardised on the training rows, MSE over outputs on that scale. The
hyperparameters are the ones `mvkernels reproduce olok` selects on its first split (fixed
here so that the test does not repeat the search):

- vv-RLS: wine gamma = 0.01, lambda = 0.01; Parkinson gamma = 0.158, lambda = 0.1 (5-fold CV);
- OLOK: one pass, constant step eta0 = 0.3 / ||J||_op = 0.3 / 1.1, lambda = 1e-5, and its own
  bandwidth (progressive validation): wine gamma = 0.1, Parkinson gamma = 0.474.

Data:

- Wine (white, 4898 rows): outputs **quality and alcohol** from the 10 other measurements;
  80/20 random split (seed 0).
- Parkinson (5875 rows, 42 subjects): outputs motor and total UPDRS from age, sex, test_time
  and the 16 voice measures; the last 20 % of every subject's recordings are the test set.

What is checked, with references independent of the code under test:

- vv-RLS against the direct solve of its normal equations ``(K (x) J + lambda I) c = y``
  (Kronecker form, numpy) on a subsample, and, with ``J = I``, against scikit-learn's
  ``KernelRidge`` on the full training set (vv-RLS with identity output kernel is kernel
  ridge per output);
- one-pass OLOK against the plain per-sample Algorithm 1 (``olok_reference``) on the real
  stream;
- the paper's claim "OLOK is close to vv-RLS" as a ratio of test MSEs: within 1.25x on both
  data sets (the paper's largest ratio is 1.15, wine), and never better than the exact
  batch solution. On Parkinson the ratio is about 1.17, above the paper's 1.04: the claim is
  reported as not reproduced on the results page.
"""

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge

from _reference_olok import olok_reference
from mvkernels.olok import OLOKRegressor, VVRLSRegressor
from mvkernels.reproduce.olok import mse, parkinson_task, standardise, wine_task

pytestmark = pytest.mark.realdata

J_OFF = 0.1
ETA0 = 0.3 / (1 + J_OFF)
#: OLOK / vv-RLS test-MSE ratio allowed (the paper's largest is 1.15)
RATIO = 1.25


def _rbf(A, B, gamma):
    d2 = (A**2).sum(1)[:, None] + (B**2).sum(1)[None, :] - 2 * A @ B.T
    return np.exp(-gamma * np.maximum(d2, 0.0))


def _vvrls_direct(Xtr, Ytr, Xte, gamma, lam):
    """Predictions of vv-RLS from its Kronecker-form normal equations (column-major vec)."""
    n, d = Ytr.shape
    J = np.full((d, d), J_OFF) + (1 - J_OFF) * np.eye(d)
    K = _rbf(Xtr, Xtr, gamma)
    A = np.kron(J, K) + lam * np.eye(n * d)  # vec(K C J) = (J (x) K) vec(C)
    C = np.linalg.solve(A, Ytr.T.ravel()).reshape(d, n).T
    return _rbf(Xte, Xtr, gamma) @ C @ J


def _olok(gamma):
    return OLOKRegressor(
        kernel_params={"gamma": gamma},
        output_kernel=J_OFF,
        eta0=ETA0,
        learning_rate="constant",
        alpha=1e-5,
    )


def _wine(data_dir):
    task = wine_task(data_dir)
    assert task["X"].shape == (4898, 10) and task["targets"] == ["quality", "alcohol"]
    perm = np.random.default_rng(0).permutation(4898)
    return standardise(task["X"], task["Y"], perm[:3918], perm[3918:])


def test_wine_vvrls_equals_direct_solve_and_kernel_ridge(data_dir):
    Xtr, Ytr, Xte, _ = _wine(data_dir)
    sub = slice(0, 400)
    vv = VVRLSRegressor(kernel_params={"gamma": 0.01}, output_kernel=J_OFF, alpha=0.01)
    P = vv.fit(Xtr[sub], Ytr[sub]).predict(Xte)
    ref = _vvrls_direct(Xtr[sub], Ytr[sub], Xte, 0.01, 0.01)
    np.testing.assert_allclose(P, ref, rtol=1e-8, atol=1e-10)
    # identity output kernel: kernel ridge on each output, full training set
    vi = VVRLSRegressor(kernel_params={"gamma": 0.01}, output_kernel=0.0, alpha=0.01)
    kr = KernelRidge(alpha=0.01, kernel="rbf", gamma=0.01)
    np.testing.assert_allclose(
        vi.fit(Xtr, Ytr).predict(Xte), kr.fit(Xtr, Ytr).predict(Xte), rtol=1e-8, atol=1e-9
    )


def test_wine_olok_one_pass_matches_algorithm_1_and_is_close_to_vvrls(data_dir):
    Xtr, Ytr, Xte, Yte = _wine(data_dir)
    ol = _olok(0.1)
    P_online = ol.progressive_predict(Xtr[:600], Ytr[:600])
    ref = olok_reference(ol, Xtr[:600], Ytr[:600])
    np.testing.assert_allclose(P_online, ref["predictions"], rtol=0, atol=1e-10)
    vv = VVRLSRegressor(kernel_params={"gamma": 0.01}, output_kernel=J_OFF, alpha=0.01)
    e_vv = mse(vv.fit(Xtr, Ytr).predict(Xte), Yte)
    e_ol = mse(_olok(0.1).fit(Xtr, Ytr).predict(Xte), Yte)
    assert e_vv <= e_ol <= RATIO * e_vv, (e_vv, e_ol)  # measured ratio 1.16


def test_parkinson_updrs_later_visits(data_dir):
    task = parkinson_task(data_dir)
    assert task["X"].shape == (5875, 19) and task["targets"] == ["motor_UPDRS", "total_UPDRS"]
    test = task["test"]
    # every subject contributes training and test rows, test rows are the later visits
    tt = task["X"][:, task["columns"].index("test_time")]
    for s in np.unique(task["subject"]):
        m = task["subject"] == s
        assert test[m].any() and (~test[m]).any()
        assert tt[m & test].min() > tt[m & ~test].max()
    tr = np.random.default_rng(0).permutation(np.flatnonzero(~test))  # i.i.d. stream order
    Xtr, Ytr, Xte, Yte = standardise(task["X"], task["Y"], tr, np.flatnonzero(test))
    vv = VVRLSRegressor(kernel_params={"gamma": 0.158}, output_kernel=J_OFF, alpha=0.1)
    e_vv = mse(vv.fit(Xtr, Ytr).predict(Xte), Yte)
    e_ol = mse(_olok(0.474).fit(Xtr, Ytr).predict(Xte), Yte)
    # "OLOK close to vv-RLS": measured ratio 1.17 (the paper's 0.095 / 0.091 = 1.04)
    assert e_vv <= e_ol <= RATIO * e_vv, (e_vv, e_ol)

"""The robust LAPACK wrappers of ``mvkernels._linalg``: results and fallbacks."""

import numpy as np
import pytest
from scipy import linalg

import mvkernels._linalg as L


@pytest.fixture
def spd():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(40, 30))
    return Z.T @ Z


def test_robust_eigh_reconstructs_the_symmetric_part(spd):
    rng = np.random.default_rng(1)
    skew = rng.normal(size=spd.shape)
    A = spd + (skew - skew.T)  # symmetric part: spd
    w, V = L.robust_eigh(A)
    assert np.all(np.diff(w) >= 0)
    np.testing.assert_allclose((V * w) @ V.T, spd, atol=1e-10 * np.abs(spd).max())
    np.testing.assert_allclose(V.T @ V, np.eye(30), atol=1e-12)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(spd), rtol=1e-12, atol=1e-10)


def test_robust_eigh_subset_and_values_only(spd):
    w_all = np.linalg.eigvalsh(spd)
    w, V = L.robust_eigh(spd, subset_by_index=(25, 29))
    np.testing.assert_allclose(w, w_all[25:], rtol=1e-12)
    np.testing.assert_allclose(spd @ V, V * w, atol=1e-9 * w_all[-1])
    np.testing.assert_allclose(L.robust_eigvalsh(spd), w_all, rtol=1e-12, atol=1e-10)


def _failing(bad_drivers, calls):
    real = linalg.eigh

    def eigh(a, *args, **kw):
        calls.append((kw.get("driver"), kw.get("subset_by_index")))
        if kw.get("driver") in bad_drivers:
            raise np.linalg.LinAlgError("Internal Error")
        return real(a, *args, **kw)

    return eigh


def test_full_spectrum_tries_evd_first_then_evr(spd, monkeypatch):
    calls: list = []
    monkeypatch.setattr(L.linalg, "eigh", _failing({"evd"}, calls))
    w, V = L.robust_eigh(spd)
    assert [c[0] for c in calls] == ["evd", "evr"]
    np.testing.assert_allclose((V * w) @ V.T, spd, atol=1e-10 * np.abs(spd).max())


def test_a_wrapper_error_of_another_type_falls_back_too(spd, monkeypatch):
    """SciPy 1.10's f2py wrapper of dsyevd fails on a 1 x 1 matrix with its own error type
    (not a LinAlgError): the next driver runs."""

    class WrapperError(Exception):
        pass

    real = linalg.eigh
    calls: list = []

    def eigh(a, *args, **kw):
        calls.append(kw.get("driver"))
        if kw.get("driver") == "evd":
            raise WrapperError("lwork>=... failed for 3rd keyword lwork: dsyevd:lwork=1")
        return real(a, *args, **kw)

    monkeypatch.setattr(L.linalg, "eigh", eigh)
    w, V = L.robust_eigh(np.array([[4.0]]))
    assert calls == ["evd", "evr"] and w.tolist() == [4.0] and abs(V[0, 0]) == 1.0
    w, V = L.robust_eigh(spd)
    np.testing.assert_allclose((V * w) @ V.T, spd, atol=1e-10 * np.abs(spd).max())


def test_subset_falls_back_to_the_full_spectrum_sliced(spd, monkeypatch):
    calls: list = []
    monkeypatch.setattr(L.linalg, "eigh", _failing({"evr"}, calls))
    w, V = L.robust_eigh(spd, subset_by_index=(28, 29))
    assert calls[0] == ("evr", (28, 29)) and calls[1] == ("evd", None)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(spd)[28:], rtol=1e-12)
    assert V.shape == (30, 2)


def test_every_driver_failing_raises_a_named_error(spd, monkeypatch):
    calls: list = []
    monkeypatch.setattr(L.linalg, "eigh", _failing({"evd", "evr", "ev"}, calls))
    with pytest.raises(L.EighError, match=r"the test matrix \(30 x 30"):
        L.robust_eigh(spd, what="the test matrix")
    assert len(calls) == 6  # three drivers, without and with the diagonal shift


def test_robust_eigh_rejects_non_finite_and_non_square():
    with pytest.raises(ValueError, match="NaN or inf"):
        L.robust_eigh(np.array([[1.0, np.nan], [np.nan, 1.0]]))
    with pytest.raises(ValueError, match="square"):
        L.robust_eigh(np.ones((2, 3)))


def test_robust_cholesky(spd):
    C = L.robust_cholesky(spd)
    np.testing.assert_allclose(C @ C.T, spd, atol=1e-10 * np.abs(spd).max())
    assert L.robust_cholesky(-spd) is None

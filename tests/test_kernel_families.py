"""The named kernels' registry (``mvkernels._kernel_families``): one class per kernel."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from mvkernels._kernel_families import (
    BANDWIDTH_KERNELS,
    KERNEL_FAMILIES,
    KERNEL_NAMES,
    SPARSE_KERNELS,
    KernelFamily,
    gaussian_gram,
    kernel_family,
    kernel_takes_sparse,
    positive_real_or_none,
)
from mvkernels.kernels import ViewKernel


def test_derived_names_follow_the_registry():
    assert KERNEL_NAMES == (
        "rbf",
        "gaussian",
        "laplacian",
        "linear",
        "poly",
        "polynomial",
        "precomputed",
    )
    assert set(SPARSE_KERNELS) == {"rbf", "laplacian", "linear", "poly", "precomputed"}
    assert BANDWIDTH_KERNELS == ("rbf", "laplacian")
    assert kernel_family("Gaussian") is KERNEL_FAMILIES["rbf"]
    assert kernel_family("POLYNOMIAL") is KERNEL_FAMILIES["poly"]
    assert kernel_family("cosine") is None and kernel_family(len) is None
    assert kernel_takes_sparse(["rbf", "linear"]) and not kernel_takes_sparse(["rbf", len])


@pytest.mark.parametrize("name", ["rbf", "laplacian", "linear", "poly"])
def test_each_family_diag_is_the_gram_diagonal_dense_and_sparse(name):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(15, 4))
    k = ViewKernel(name).fit(X, random_state=0)
    assert k.family is KERNEL_FAMILIES[name]
    K = k(X, X)
    np.testing.assert_allclose(k.diag(X), np.diag(K), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(k(sp.csr_matrix(X), X), K, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(K, K.T, rtol=1e-12, atol=1e-12)
    assert np.linalg.eigvalsh(K).min() > -1e-8 * abs(K).max()


def test_bandwidth_open_only_without_given_values():
    g, lap = KERNEL_FAMILIES["rbf"], KERNEL_FAMILIES["laplacian"]
    assert g.open_bandwidth({}) and not g.open_bandwidth({"sigma": 1.0})
    assert not g.open_bandwidth({"gamma": 1.0}) and lap.open_bandwidth({})
    assert not KERNEL_FAMILIES["poly"].open_bandwidth({})
    X = np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])
    assert g.resolve({"sigma": 2.0}, X, 0, lambda m: 1 / 0) == {"gamma": 0.125}
    assert g.resolve({}, X, 0, lambda m: {"euclidean": 5.0}[m]) == {"gamma": 0.02}
    with pytest.raises(ValueError, match="view 3: all training points are identical"):
        lap.resolve({}, X, 3, lambda m: 0.0)
    with pytest.raises(ValueError, match="view 1: kernel 'linear' does not take"):
        ViewKernel("linear", {"gamma": 1.0}, view=1)


@pytest.mark.parametrize("name", sorted(KERNEL_FAMILIES))
def test_view_kernel_open_bandwidth_reads_the_family(name):
    """``ViewKernel.open_bandwidth`` (read by the Dask back end and by OLOK's first-batch
    check) is the family's: open for a data-driven bandwidth not given, closed otherwise."""
    family = KERNEL_FAMILIES[name]
    assert ViewKernel(name).open_bandwidth is (family.bandwidth_distance is not None)
    if "gamma" in family.params:
        assert not ViewKernel(name, {"gamma": 0.5}).open_bandwidth
    assert not ViewKernel(len).open_bandwidth  # a callable: no family


@pytest.mark.parametrize(
    "kernel, params, refused",
    [
        ("rbf", None, True),
        ("laplacian", None, True),
        ("rbf", {"sigma": 1.0}, False),
        ("laplacian", {"gamma": 0.5}, False),
        ("poly", None, False),
    ],
)
def test_olok_refuses_a_one_row_first_batch_only_for_an_open_bandwidth(kernel, params, refused):
    from mvkernels import OLOKRegressor

    X, y = np.ones((1, 3)), np.ones(1)
    est = OLOKRegressor(kernel=kernel, kernel_params=params, random_state=0)
    if refused:
        with pytest.raises(ValueError, match="got 1 sample in the first batch"):
            est.partial_fit(X, y)
    else:
        est.partial_fit(X, y)


# ------------------------------------------------------------------ a registered toy family
class _LengthScaleRBF(KernelFamily):
    """Test-only: ``amp * exp(-||x - z||^2 / (2 ell^2))`` with its own parameters: a length
    scale ``ell`` (default: the mean pairwise Euclidean distance, the rbf kernel's
    ``sigma``) that a bandwidth factor ``f`` scales as ``ell / sqrt(f)`` (so the kernel is
    the rbf kernel with ``gamma * f``), and an amplitude ``amp`` in ``(0, 10]``."""

    name, aliases = "lsrbf", ("length-scale-rbf",)
    takes_sparse = False
    bandwidth_distance, bandwidth_param = "euclidean", "ell"

    @staticmethod
    def _check_amp(name, v, view):
        if not (isinstance(v, float) and 0 < v <= 10):
            raise ValueError(f"view {view}: kernel parameter {name} must be in (0, 10]")

    params = {"ell": positive_real_or_none, "amp": _check_amp}

    def resolve(self, params, X, view, mean_distance):
        ell = params.get("ell")
        return {**params, "ell": mean_distance("euclidean") if ell is None else ell}

    def scale_bandwidth(self, value, factor):
        return float(value) / np.sqrt(float(factor))

    def gram(self, X, Z, p):
        gamma = 1.0 / (2.0 * p["ell"] ** 2)
        return p.get("amp", 1.0) * gaussian_gram(X, Z, gamma)

    def diag(self, X, p):
        return np.full(X.shape[0], p.get("amp", 1.0))


@pytest.fixture
def toy_family(monkeypatch):
    family = _LengthScaleRBF()
    monkeypatch.setitem(KERNEL_FAMILIES, family.name, family)
    return family


def test_a_registered_family_is_validated_everywhere(toy_family):
    from mvkernels import MVMLRegressor

    assert "lsrbf" in KERNEL_NAMES and "length-scale-rbf" in KERNEL_NAMES
    assert "lsrbf" in BANDWIDTH_KERNELS and "lsrbf" not in SPARSE_KERNELS
    assert kernel_family("Length-Scale-RBF") is toy_family
    with pytest.raises(ValueError, match="view 1: kernel parameter ell must be > 0"):
        ViewKernel("lsrbf", {"ell": -1.0}, view=1)
    with pytest.raises(TypeError, match="view 0: kernel parameter ell must be a real"):
        ViewKernel("lsrbf", {"ell": "wide"})
    with pytest.raises(ValueError, match=r"view 0: kernel parameter amp must be in \(0, 10\]"):
        ViewKernel("lsrbf", {"amp": 11.0})
    with pytest.raises(ValueError, match="kernel 'lsrbf' does not take parameter"):
        ViewKernel("lsrbf", {"gamma": 1.0})
    X = np.ones((6, 2)) + np.arange(6)[:, None]
    with pytest.raises(ValueError, match="amp must be in"):  # through the estimator
        MVMLRegressor(kernel="lsrbf", kernel_params={"amp": 0.0}).fit([X, X], X[:, 0])
    with pytest.raises(TypeError, match="view 0 is a sparse matrix"):
        ViewKernel("lsrbf").fit(sp.csr_matrix(X))
    assert ViewKernel("lsrbf").open_bandwidth
    assert not ViewKernel("lsrbf", {"ell": 2.0, "amp": 1.0}).open_bandwidth


def test_a_registered_family_gets_its_default_bandwidth_and_factor(toy_family):
    """The toy length scale ``ell`` is the rbf ``sigma``: with the same bandwidth factor
    (``ell / sqrt(f)`` against ``gamma * f``) the fitted models agree."""
    from mvkernels import MVMLRegressor
    from mvkernels.kernels import mean_pairwise_distance

    rng = np.random.default_rng(1)
    Xs = [rng.normal(size=(40, 3)), rng.normal(size=(40, 2))]
    y = np.sin(Xs[0][:, 0]) + Xs[1][:, 1]
    k = ViewKernel("lsrbf").fit(Xs[0], random_state=0)
    assert k.params_["ell"] == pytest.approx(mean_pairwise_distance(Xs[0], "euclidean"))
    f = 2.5
    toy = MVMLRegressor(kernel="lsrbf", bandwidth_factor=f, random_state=0).fit(Xs, y)
    rbf = MVMLRegressor(kernel="rbf", bandwidth_factor=f, random_state=0).fit(Xs, y)
    np.testing.assert_allclose(toy.predict(Xs), rbf.predict(Xs), rtol=1e-7, atol=1e-9)


def test_a_registered_family_is_searched_by_bandwidth_factors(toy_family):
    from mvkernels import MVMLRegressorCV

    rng = np.random.default_rng(2)
    Xs = [rng.normal(size=(60, 3)), rng.normal(size=(60, 2))]
    y = np.sin(2 * Xs[0][:, 0]) + Xs[1][:, 1] + 0.1 * rng.normal(size=60)
    kw = dict(cv=3, alphas=[0.01, 0.1], bandwidth_factors=[0.5, 8.0], random_state=0)
    toy = MVMLRegressorCV(kernel="lsrbf", **kw).fit(Xs, y)
    rbf = MVMLRegressorCV(kernel="rbf", **kw).fit(Xs, y)
    assert sorted(set(toy.cv_results_["param_bandwidth_factor"])) == [0.5, 8.0]
    np.testing.assert_allclose(
        toy.cv_results_["mean_test_score"], rbf.cv_results_["mean_test_score"], rtol=1e-6
    )
    f = toy.best_params_["bandwidth_factor"]
    assert f == rbf.best_params_["bandwidth_factor"]
    for kp_toy, kp_rbf in zip(toy.best_kernel_params_, rbf.best_kernel_params_):
        assert set(kp_toy) == {"ell"}  # the bandwidth parameter, scaled by the factor
        assert 1.0 / (2.0 * kp_toy["ell"] ** 2) == pytest.approx(kp_rbf["gamma"], rel=1e-12)

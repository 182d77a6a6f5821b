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
    kernel_family,
    kernel_takes_sparse,
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

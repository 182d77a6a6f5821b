"""Precomputed Gram matrices named once (``kernel="precomputed"``) or per view
(``kernel=["precomputed", "precomputed"]``) are the same model, with the same rules."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from mvkernels import (
    MVMLSVC,
    MVMLSVCCV,
    MVMLClassifier,
    MVMLClassifierCV,
    MVMLRegressor,
    MVMLRegressorCV,
)

PER_VIEW = ["precomputed", "precomputed"]


def _grams(seed=0, n=40):
    rng = np.random.default_rng(seed)
    X1, X2 = rng.normal(size=(n, 3)), rng.normal(size=(n, 4))
    y = (X1[:, 0] + X2[:, 1] > 0).astype(int)
    return [rbf_kernel(X1), rbf_kernel(X2, gamma=0.2)], y


@pytest.mark.parametrize("cls", [MVMLClassifier, MVMLRegressor, MVMLSVC])
def test_per_view_list_is_the_same_model(cls):
    Ks, y = _grams()
    one = cls(kernel="precomputed", max_iter=3, random_state=0).fit(Ks, y)
    per_view = cls(kernel=PER_VIEW, max_iter=3, random_state=0).fit(Ks, y)
    f = "decision_function" if hasattr(one, "decision_function") else "predict"
    np.testing.assert_array_equal(getattr(one, f)(Ks), getattr(per_view, f)(Ks))
    assert one.__sklearn_tags__().input_tags.pairwise
    assert per_view.__sklearn_tags__().input_tags.pairwise


@pytest.mark.parametrize("kernel", ["precomputed", PER_VIEW])
def test_zero_weights_are_refused_with_the_reason(kernel):
    """A row of weight 0 is dropped before a fit; a Gram matrix's column of it cannot be
    (the per-view list used to fail later, on a non-square training kernel)."""
    Ks, y = _grams()
    w = np.ones(len(y))
    w[:3] = 0.0
    with pytest.raises(ValueError, match="zero weights is not supported with kernel='precomputed'"):
        MVMLClassifier(kernel=kernel, max_iter=3).fit(Ks, y, sample_weight=w)


@pytest.mark.parametrize("cls", [MVMLClassifierCV, MVMLRegressorCV, MVMLSVCCV])
def test_cv_estimators_tag_a_per_view_list_as_pairwise(cls):
    """The CV estimators read the same rule: a per-view list of precomputed kernels is
    pairwise (scikit-learn's splitters then cut its rows and columns), a list of names
    is not."""
    assert cls(kernel=PER_VIEW).__sklearn_tags__().input_tags.pairwise
    assert cls(kernel="precomputed").__sklearn_tags__().input_tags.pairwise
    assert not cls(kernel=["rbf", "rbf"]).__sklearn_tags__().input_tags.pairwise


@pytest.mark.parametrize("cls", [MVMLClassifier, MVMLSVC])
def test_joint_view_of_a_per_view_list_is_the_product_of_the_grams(cls):
    """``joint_view=True`` with every view precomputed joins them as with one name: the
    joint view's Gram matrix is the elementwise product (same decision values)."""
    Ks, y = _grams(seed=1)
    one = cls(kernel="precomputed", joint_view=True, max_iter=3, random_state=0).fit(Ks, y)
    per_view = cls(kernel=PER_VIEW, joint_view=True, max_iter=3, random_state=0).fit(Ks, y)
    assert one.n_views_ == per_view.n_views_ == 3
    np.testing.assert_array_equal(one.decision_function(Ks), per_view.decision_function(Ks))


def test_joint_view_with_some_views_precomputed_names_them():
    Ks, y = _grams(seed=2)
    X2 = np.random.default_rng(2).normal(size=(Ks[0].shape[0], 4))
    est = MVMLClassifier(kernel=["precomputed", "rbf"], joint_view=True)
    with pytest.raises(ValueError, match=r"precomputed kernel on views \[0\] only"):
        est.fit([Ks[0], X2], y)

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
@pytest.mark.parametrize("joint_view", [True, "only"])
def test_per_view_list_with_the_joint_view_is_the_same_model(cls, joint_view):
    """The joint view of precomputed Gram matrices is their elementwise product, named
    once or per view (the per-view list failed with ``joint_view=True`` and fitted a
    Gaussian kernel on the Gram matrices' rows with ``"only"``)."""
    Ks, y = _grams()
    kw = dict(joint_view=joint_view, max_iter=3, random_state=0)
    one = cls(kernel="precomputed", **kw).fit(Ks, y)
    per_view = cls(kernel=PER_VIEW, **kw).fit(Ks, y)
    np.testing.assert_array_equal(one.decision_function(Ks), per_view.decision_function(Ks))


@pytest.mark.parametrize("n_landmarks", ["auto", None])
@pytest.mark.parametrize("cls", [MVMLClassifierCV, MVMLRegressorCV])
def test_cv_of_a_per_view_list_is_the_same_search(cls, n_landmarks):
    """The CV estimators search a per-view list of precomputed kernels as
    ``kernel="precomputed"``: the joint view (``joint_view="auto"``, the product of the
    Gram matrices) and, in full-kernel mode, the folds' training columns."""
    Ks, y = _grams()
    kw = dict(cv=3, n_landmarks=n_landmarks, max_iter=2, alphas=[0.01, 1.0], random_state=0)
    one = cls(kernel="precomputed", **kw).fit(Ks, y)
    per_view = cls(kernel=PER_VIEW, **kw).fit(Ks, y)
    np.testing.assert_array_equal(
        one.cv_results_["mean_test_score"], per_view.cv_results_["mean_test_score"]
    )
    assert one.best_params_ == per_view.best_params_
    np.testing.assert_array_equal(one.predict(Ks), per_view.predict(Ks))


def test_joint_view_with_some_views_precomputed_names_them():
    Ks, y = _grams(seed=2)
    X2 = np.random.default_rng(2).normal(size=(Ks[0].shape[0], 4))
    est = MVMLClassifier(kernel=["precomputed", "rbf"], joint_view=True)
    with pytest.raises(ValueError, match=r"precomputed kernel on views \[0\] only"):
        est.fit([Ks[0], X2], y)

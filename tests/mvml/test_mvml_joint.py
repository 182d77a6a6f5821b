"""The joint view of the MVML estimators (``joint_view``): a kernel on all views together."""

import warnings

import numpy as np
import pytest

from mvkernels import MVMLClassifier, MVMLClassifierCV, MVMLRegressor, MVMLRegressorCV


def _xor_views(n, seed):
    """Label = XOR of the signs of one feature of view 0 and one of view 1 (with a margin):
    no additive function of the two views beats chance."""
    rng = np.random.RandomState(seed)
    X1, X2 = rng.randn(n, 2), rng.randn(n, 2)
    X1[:, 0] += 0.5 * np.sign(X1[:, 0])
    X2[:, 0] += 0.5 * np.sign(X2[:, 0])
    y = (np.sign(X1[:, 0]) * np.sign(X2[:, 0]) > 0).astype(int)
    return [X1, X2], y


def _regression_views(n=60, seed=0):
    rng = np.random.RandomState(seed)
    Xs = [rng.randn(n, 3), rng.randn(n, 2)]
    y = Xs[0][:, 0] * Xs[1][:, 1] + 0.1 * rng.randn(n)
    return Xs, y


def test_xor_across_views_needs_the_joint_view():
    Xs, y = _xor_views(200, 0)
    Xt, yt = _xor_views(500, 1)
    additive = MVMLClassifier(joint_view=False, random_state=0).fit(Xs, y).score(Xt, yt)
    joint = MVMLClassifier(joint_view=True, random_state=0).fit(Xs, y).score(Xt, yt)
    assert additive < 0.6, additive
    assert joint > 0.9, joint
    # the classifier's default "auto" is the joint view on two views of one kernel
    assert MVMLClassifier(random_state=0).fit(Xs, y).score(Xt, yt) == joint
    cv = MVMLClassifierCV(
        random_state=0, cv=3, bandwidth_factors=[2.0, 4.0], alphas=[0.01, 0.1, 1.0]
    ).fit(Xs, y)
    # a model with the joint view: beside the views (True) or alone ("only")
    assert cv.best_params_["joint_view"] in (True, "only")
    assert cv.best_estimator_.joint_view == cv.best_params_["joint_view"]
    assert cv.score(Xt, yt) > 0.9


@pytest.mark.parametrize("n_landmarks", ["auto", None, 20])
def test_joint_view_is_the_concatenation_as_an_extra_view(n_landmarks):
    """joint_view=True equals fitting the views plus their concatenation as a last view
    with the joint view's resolved bandwidth."""
    Xs, y = _regression_views()
    kw = dict(n_landmarks=n_landmarks, random_state=0, alpha=0.1, max_iter=3)
    joint = MVMLRegressor(joint_view=True, **kw, fit_intercept=False).fit(Xs, y)
    assert joint.n_views_ == 3 and len(joint.kernel_params_) == 3
    assert joint.n_features_view_ == [3, 2, 5]
    ref = MVMLRegressor(
        kernel_params=joint.kernel_params_, **kw, joint_view=False, fit_intercept=False
    ).fit([*Xs, np.hstack(Xs)], y)
    np.testing.assert_allclose(joint.coef_, ref.coef_, rtol=1e-10, atol=1e-12)
    Xt, _ = _regression_views(seed=1)
    np.testing.assert_allclose(
        joint.predict(Xt), ref.predict([*Xt, np.hstack(Xt)]), rtol=1e-10, atol=1e-12
    )
    # the joint bandwidth comes from the same heuristic on the concatenation
    with pytest.raises(ValueError, match="view 0 has 2 features"):
        joint.predict([Xt[1], Xt[0]])


@pytest.mark.parametrize("n_landmarks", [None, 1.0])
def test_joint_view_with_precomputed_kernels_is_the_product_kernel(n_landmarks):
    """Precomputed kernels: the joint kernel is the elementwise product of the view
    kernels; for RBF views with one gamma this is the RBF of the concatenation."""
    from sklearn.metrics.pairwise import rbf_kernel

    Xs, y = _regression_views()
    Xt, _ = _regression_views(seed=1)
    g = 0.3
    kw = dict(n_landmarks=n_landmarks, random_state=0, alpha=0.1, metric="identity")
    raw = MVMLRegressor(joint_view=True, kernel_params={"gamma": g}, **kw).fit(Xs, y)
    pre = MVMLRegressor(joint_view=True, kernel="precomputed", **kw).fit(
        [rbf_kernel(X, X, gamma=g) for X in Xs], y
    )
    P = pre.predict([rbf_kernel(A, B, gamma=g) for A, B in zip(Xt, Xs)])
    np.testing.assert_allclose(P, raw.predict(Xt), rtol=1e-7, atol=1e-8)
    with pytest.raises(ValueError, match="view 1 has shape"):
        MVMLRegressor(joint_view=True, kernel="precomputed", n_landmarks=None).fit(
            [np.eye(60), np.eye(60)[:, :59]], y
        )


def test_joint_view_needs_two_views():
    rng = np.random.RandomState(0)
    X, y = rng.randn(30, 3), rng.randn(30)
    with pytest.raises(ValueError, match="at least 2 views"):
        MVMLRegressor(joint_view=True).fit([X], y)
    # "auto" in the CV estimators searches only the additive model then
    cv = MVMLRegressorCV(alphas=[1.0], bandwidth_factors=[1.0], max_iter=1, cv=3).fit([X], y)
    assert "joint_view" not in cv.best_params_ and cv.best_joint_view_ is False


@pytest.mark.parametrize("n_landmarks", [20, None])
def test_auto_joint_view_is_true_or_false_by_the_views_and_kernel(n_landmarks):
    """``joint_view="auto"`` (MVMLClassifier's default) fits exactly the model of
    ``joint_view=True`` on two views of one kernel, and of ``False`` on one view, with a
    per-view kernel list or precomputed kernels; the fitted model predicts as it."""
    from sklearn.metrics.pairwise import rbf_kernel

    Xs, y = _xor_views(80, 0)
    Xt, _ = _xor_views(30, 1)
    cases = [
        ([Xs, Xt], {}, True),
        ([[np.hstack(Xs)], [np.hstack(Xt)]], {}, False),
        ([Xs, Xt], {"kernel": ["rbf", "rbf"]}, False),
    ]
    if n_landmarks is None:  # precomputed kernels: full-kernel mode only
        train = [rbf_kernel(X, X, gamma=0.5) for X in Xs]
        test = [rbf_kernel(T, X, gamma=0.5) for T, X in zip(Xt, Xs)]
        cases.append(([train, test], {"kernel": "precomputed"}, False))
    for (fit_views, test_views), kw, joint in cases:
        kw = dict(kw, n_landmarks=n_landmarks, random_state=0)
        auto = MVMLClassifier(**kw).fit(fit_views, y)
        fixed = MVMLClassifier(joint_view=joint, **kw).fit(fit_views, y)
        assert auto.joint_view == "auto" and auto.n_views_ == fixed.n_views_
        np.testing.assert_array_equal(
            auto.decision_function(test_views), fixed.decision_function(test_views)
        )


@pytest.mark.parametrize("n_landmarks", [20, None])
def test_cv_auto_scores_equal_the_two_separate_searches(n_landmarks):
    """joint_view="auto" shares the features: its candidates score exactly as the searches
    with joint_view=False and joint_view=True."""
    Xs, y = _regression_views()
    kw = dict(
        alphas=[0.1, 1.0],
        etas=[0.5],
        bandwidth_factors=[1.0, 4.0],
        max_iter=2,
        cv=3,
        n_landmarks=n_landmarks,
        random_state=0,
        search="exhaustive",
    )
    auto = MVMLRegressorCV(**kw).fit(Xs, y)
    res = auto.cv_results_
    flags = [p["joint_view"] for p in res["params"]]
    for j in (False, True):
        one = MVMLRegressorCV(joint_view=j, **kw).fit(Xs, y)
        np.testing.assert_allclose(
            res["mean_test_score"][np.array([f is j for f in flags])],
            one.cv_results_["mean_test_score"],
            atol=1e-10,
        )
    best = auto.best_estimator_
    assert best.joint_view == auto.best_params_["joint_view"]
    expected = {False: 2, True: 3, "only": 1}[best.joint_view]
    assert len(best.kernel_params_) == expected


def test_joint_view_on_dask_equals_numpy():
    da = pytest.importorskip("dask.array")
    Xs, y = _regression_views(n=90)
    kw = dict(joint_view=True, n_landmarks=15, random_state=0, alpha=0.1, max_iter=2)
    ref = MVMLRegressor(**kw).fit(Xs, y)
    dX = [da.from_array(Xs[0], chunks=(40, 3)), da.from_array(Xs[1], chunks=(30, 2))]
    est = MVMLRegressor(**kw, kernel_params=ref.kernel_params_).fit(dX, y)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(est.predict(dX).compute(), ref.predict(Xs), rtol=1e-8, atol=1e-10)


def test_defaults_with_the_joint_view_search_do_not_warn():
    Xs, y = _xor_views(80, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cv = MVMLClassifierCV(random_state=0).fit(Xs, y)
        cv.predict(Xs)
        MVMLClassifier(joint_view=True, random_state=0).fit(Xs, y).predict(Xs)
    assert "param_joint_view" in cv.cv_results_


def test_small_data_defaults_match_svc():
    """40 rows, 4 classes, two views of 300 features (10 informative each): the CV defaults
    are not worse than SVC() on the concatenation (observed on 4 seeds: 0.826 vs 0.806)."""
    from sklearn.svm import SVC

    rng = np.random.RandomState(3)
    means = [rng.randn(4, 10) for _ in range(2)]

    def make(n):
        y = np.repeat(np.arange(4), n // 4)
        Xs = [rng.randn(n, 300) for _ in range(2)]
        for X, m in zip(Xs, means):
            X[:, :10] += m[y]
        return Xs, y

    Xs, y = make(40)
    Xt, yt = make(400)
    svc = SVC().fit(np.hstack(Xs), y).score(np.hstack(Xt), yt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cv = MVMLClassifierCV(random_state=0).fit(Xs, y)
    assert cv.score(Xt, yt) >= svc - 0.02, (cv.score(Xt, yt), svc, cv.best_params_)


def test_joint_view_with_a_missing_view():
    """A sample with a missing view (a NaN row) misses the joint view too: the joint view
    is a whole NaN row there (never a partly missing row), and fit / predict work."""
    from mvkernels.mvml._joint import joint_views

    rng = np.random.RandomState(0)
    X1, X2 = rng.randn(120, 3), rng.randn(120, 2)
    y = (np.sign(X1[:, 0]) * np.sign(X2[:, 0]) > 0).astype(int)
    X1m = X1.copy()
    X1m[:15] = np.nan
    J = joint_views([X1m, X2], "rbf")[-1]
    assert np.isnan(J[:15]).all() and np.isfinite(J[15:]).all()
    clf = MVMLClassifier(joint_view=True, n_landmarks=30, random_state=0).fit([X1m, X2], y)
    D = clf.decision_function([X1m, X2])
    assert np.isfinite(D).all()
    # the interaction across views is still learned from the complete rows
    plain = MVMLClassifier(joint_view=False, n_landmarks=30, random_state=0).fit([X1m, X2], y)
    assert clf.score([X1, X2], y) > plain.score([X1, X2], y) + 0.05


def test_joint_view_bandwidth_under_given_kernel_params():
    """One ``kernel_params`` dict applies to the joint view too; a list of ``v`` dicts sets
    the views' bandwidths and leaves the joint view's to the heuristic (the value it gets
    with no ``kernel_params``); a list of ``v + 1`` dicts sets it."""
    Xs, y = _xor_views(60, 0)
    kw = dict(joint_view=True, n_landmarks=20, random_state=0)
    heuristic = MVMLClassifier(**kw).fit(Xs, y).kernel_params_[-1]["gamma"]
    one = MVMLClassifier(kernel_params={"gamma": 0.4}, **kw).fit(Xs, y)
    assert [p["gamma"] for p in one.kernel_params_] == [0.4, 0.4, 0.4]
    per_view = [{"gamma": 0.5}, {"gamma": 0.2}]
    listed = MVMLClassifier(kernel_params=per_view, **kw).fit(Xs, y)
    assert [p["gamma"] for p in listed.kernel_params_[:2]] == [0.5, 0.2]
    assert listed.kernel_params_[2]["gamma"] == pytest.approx(heuristic, rel=1e-12)
    full = MVMLClassifier(kernel_params=per_view + [{"gamma": 0.1}], **kw).fit(Xs, y)
    assert full.kernel_params_[2]["gamma"] == 0.1

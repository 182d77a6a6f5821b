"""fit_intercept: an unpenalised offset per output / one-vs-all problem (issue 32, item 1)."""

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, r2_score
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import KFold, StratifiedKFold

from mvkernels import (
    MVMLSVCCV,
    BlockNystrom,
    MVMLClassifier,
    MVMLClassifierCV,
    MVMLRegressor,
    MVMLRegressorCV,
)
from mvkernels.mvml import MVMLProblem
from mvkernels.mvml._screen import (
    kernel_ridge_fold_outputs,
    ridge_fold_outputs,
    ridge_loo_outputs,
)

GAMMA = 0.2


def _data(rng, n=40, shift=5.0):
    Xs = [rng.standard_normal((n, 3)), rng.standard_normal((n, 2))]
    y = Xs[0][:, 0] + np.sin(2 * Xs[1][:, 1]) + shift + 0.1 * rng.standard_normal(n)
    return Xs, y


def _ridge_with_offset(Phi, y, alpha):
    """``min ||y - Phi g - b||^2 + alpha ||g||^2`` by the (d + 1) normal equations."""
    A = np.hstack([Phi, np.ones((Phi.shape[0], 1))])
    R = np.diag(np.r_[np.full(Phi.shape[1], alpha), 0.0])
    sol = np.linalg.solve(A.T @ A + R, A.T @ y)
    return sol[:-1], sol[-1]


# ------------------------------------------------------------------ the direct formula
def test_joint_only_identity_full_kernels_equal_ridge_with_offset(rng):
    """Full kernels, A = I, the joint view alone: ridge on the design K with an
    unpenalised offset, solved as the (n + 1) system."""
    Xs, y = _data(rng)
    Xt = [rng.standard_normal((7, 3)), rng.standard_normal((7, 2))]
    est = MVMLRegressor(
        alpha=0.1,
        metric="identity",
        joint_view="only",
        n_landmarks=None,
        kernel_params={"gamma": GAMMA},
        fit_intercept=True,
    ).fit(Xs, y)
    K = rbf_kernel(np.hstack(Xs), gamma=GAMMA)
    g, b = _ridge_with_offset(K, y, 0.1)
    assert abs(est.intercept_ - b) < 1e-8
    np.testing.assert_allclose(est.coef_, g, atol=1e-8)
    Kt = rbf_kernel(np.hstack(Xt), np.hstack(Xs), gamma=GAMMA)
    np.testing.assert_allclose(est.predict(Xt), Kt @ g + b, atol=1e-8)


def test_joint_only_identity_every_row_a_landmark_is_kernel_ridge_with_offset(rng):
    """Nystrom mode, every row a landmark: kernel ridge with an unpenalised offset,
    ``b = ybar - mean(K) beta`` from the centred formula."""
    Xs, y = _data(rng)
    Xt = [rng.standard_normal((7, 3)), rng.standard_normal((7, 2))]
    est = MVMLRegressor(
        alpha=0.1,
        metric="identity",
        joint_view="only",
        kernel_params={"gamma": GAMMA},
        fit_intercept=True,
    ).fit(Xs, y)
    n = y.size
    K = rbf_kernel(np.hstack(Xs), gamma=GAMMA)
    J = np.eye(n) - 1.0 / n
    beta = J @ np.linalg.solve(J @ K @ J + 0.1 * np.eye(n), y - y.mean())
    Kt = rbf_kernel(np.hstack(Xt), np.hstack(Xs), gamma=GAMMA)
    np.testing.assert_allclose(est.predict(Xt), Kt @ beta + y.mean() - K.mean(0) @ beta, atol=1e-8)


@pytest.mark.parametrize("n_views_only", [False, True])
def test_nystrom_identity_equals_ridge_on_the_features_with_offset(rng, n_views_only):
    """Nystrom mode (fewer landmarks than rows), A = I, uniform weights: ridge on the
    weighted features ``U / v`` with an unpenalised offset."""
    Xs, y = _data(rng, n=60)
    joint = "only" if n_views_only else False
    est = MVMLRegressor(
        alpha=0.3,
        metric="identity",
        n_landmarks=12,
        joint_view=joint,
        kernel_params={"gamma": GAMMA} if n_views_only else [{"gamma": GAMMA}] * 2,
        random_state=0,
        fit_intercept=True,
    ).fit(Xs, y)
    v = est.n_views_
    Xin = [np.hstack(Xs)] if n_views_only else Xs
    U = est.nystrom_.transform(Xin)
    g, b = _ridge_with_offset(U / v, y, 0.3)
    np.testing.assert_allclose(est.coef_, g, atol=1e-8)
    assert abs(est.intercept_ - b) < 1e-8
    np.testing.assert_allclose(est.predict(Xs), U @ g / v + b, atol=1e-8)


def test_multi_output_and_one_vs_all_offsets_are_per_problem(rng):
    Xs, y = _data(rng)
    Y = np.column_stack([y, -2.0 * y + 7.0])
    est = MVMLRegressor(alpha=0.2, max_iter=3, fit_intercept=True).fit(Xs, Y)
    assert est.intercept_.shape == (2,)
    for t in range(2):
        one = MVMLRegressor(alpha=0.2, max_iter=3, fit_intercept=True).fit(Xs, Y[:, t])
        assert abs(one.intercept_ - est.intercept_[t]) < 1e-8
        np.testing.assert_allclose(one.predict(Xs), est.predict(Xs)[:, t], atol=1e-8)
    labels = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    clf = MVMLClassifier(alpha=0.2, max_iter=2, fit_intercept=True).fit(Xs, labels)
    assert clf.intercept_.shape == (3,)
    assert MVMLClassifier(alpha=0.2, max_iter=2).fit(Xs, labels).intercept_ == pytest.approx(
        np.zeros(3)
    )


def test_intercept_by_default_for_the_regressor_only(rng):
    """The regressor fits an offset by default (chosen in benchmarks/bench_defaults.py); the
    classifier keeps the bias-free model, and ``fit_intercept=False`` is the papers'."""
    Xs, y = _data(rng)
    a = MVMLRegressor(alpha=0.2, max_iter=3).fit(Xs, y)
    b = MVMLRegressor(alpha=0.2, max_iter=3, fit_intercept=True).fit(Xs, y)
    c = MVMLRegressor(alpha=0.2, max_iter=3, fit_intercept=False).fit(Xs, y)
    np.testing.assert_array_equal(a.predict(Xs), b.predict(Xs))
    assert a.intercept_ != 0.0
    assert c.intercept_ == 0.0
    assert MVMLClassifier().fit_intercept is False


def test_intercept_by_default_for_the_regressor_cv_only(rng):
    """MVMLRegressorCV fits an offset by default as MVMLRegressor does (chosen in
    bench_defaults.py --part cv): the same search as ``fit_intercept=True``, whose refit
    has the offset; the classifiers' CV estimators keep the bias-free model."""
    Xs, y = _data(rng, n=30, shift=20.0)
    kw = dict(alphas=[0.1], etas=[0.5], bandwidth_factors=[2.0], max_iter=2, cv=3)
    a = MVMLRegressorCV(**kw).fit(Xs, y)
    b = MVMLRegressorCV(fit_intercept=True, **kw).fit(Xs, y)
    c = MVMLRegressorCV(fit_intercept=False, **kw).fit(Xs, y)
    scores = [e.cv_results_["mean_test_score"] for e in (a, b)]
    np.testing.assert_array_equal(*scores)
    np.testing.assert_array_equal(a.predict(Xs), b.predict(Xs))
    assert a.best_estimator_.fit_intercept and a.best_estimator_.intercept_ != 0.0
    assert c.best_estimator_.intercept_ == 0.0
    # targets far from 0: the offset is what the bias-free RBF model lacks
    assert a.best_score_ > c.best_score_
    assert MVMLClassifierCV().fit_intercept is False and MVMLSVCCV().fit_intercept is False


# ------------------------------------------------------------------ shift invariance
@pytest.mark.parametrize(
    "kw",
    [
        dict(metric="dense"),  # structured solver
        dict(metric="dense", solver="dense"),
        dict(metric="sparse"),
        dict(metric="dense", learn_weights=True),
        dict(metric="cov"),
        dict(metric="dense", n_landmarks=None),
        dict(metric="identity", n_landmarks=None, learn_weights=True),
    ],
    ids=["structured", "dense", "sparse", "weights", "cov", "full", "full-weights"],
)
def test_constant_shift_of_y_shifts_predictions_only(rng, kw):
    Xs, y = _data(rng, n=30)
    params = dict(alpha=0.1, eta=0.5, max_iter=4, random_state=0, fit_intercept=True, **kw)
    a = MVMLRegressor(**params).fit(Xs, y)
    b = MVMLRegressor(**params).fit(Xs, y + 3.5)
    np.testing.assert_allclose(b.coef_, a.coef_, atol=1e-9)
    np.testing.assert_allclose(b.weights_, a.weights_, atol=1e-9)
    np.testing.assert_allclose(b.metric_, a.metric_, atol=1e-9)
    assert b.intercept_ - a.intercept_ == pytest.approx(3.5, abs=1e-9)
    np.testing.assert_allclose(b.predict(Xs), a.predict(Xs) + 3.5, atol=1e-9)


def test_structured_and_dense_solvers_agree_with_intercept(rng):
    Xs, y = _data(rng, n=30)
    kw = dict(alpha=0.1, eta=0.5, max_iter=4, fit_intercept=True)
    a = MVMLRegressor(**kw).fit(Xs, y)
    b = MVMLRegressor(solver="dense", **kw).fit(Xs, y)
    assert a.solver_ == "structured" and b.solver_ == "dense"
    np.testing.assert_allclose(a.predict(Xs), b.predict(Xs), atol=1e-8)
    assert a.intercept_ == pytest.approx(b.intercept_, abs=1e-8)


def test_centred_problem_statistics_equal_centred_features(rng):
    U = rng.standard_normal((25, 6)) + 3.0
    Y = rng.standard_normal((25, 2)) + 1.0
    nys = BlockNystrom(n_landmarks=3, random_state=0).fit([U[:, :3], U[:, 3:]])
    Xs = [U[:, :3], U[:, 3:]]
    mom = nys.moments(Xs, Y).symmetrize()
    P = MVMLProblem.from_moments(mom, nys, Y, Xs=Xs).centred()
    F = nys.transform(Xs)
    Fc, Yc = F - F.mean(0), Y - Y.mean(0)
    np.testing.assert_allclose(P.stats.gram, Fc.T @ Fc, atol=1e-10)
    np.testing.assert_allclose(P.stats.cross, Fc.T @ Yc, atol=1e-10)
    np.testing.assert_allclose(P.stats.target_sq, (Yc**2).sum(0), atol=1e-10)
    np.testing.assert_allclose(P.features(), Fc, atol=1e-12)
    assert P.centred() is P


# ------------------------------------------------------------------ the screen
def test_screen_helpers_with_intercept_equal_direct_refits(rng):
    U = rng.standard_normal((12, 4)) + 2.0
    Y = rng.standard_normal((12, 2)) + 3.0
    alphas = np.array([0.1, 2.0])
    loo = ridge_loo_outputs(U, Y, alphas, n_blocks=2, fit_intercept=True)
    for j, a in enumerate(alphas):
        for i in (0, 5, 11):
            keep = np.arange(12) != i
            g, b = _ridge_with_offset(U[keep] / 2, Y[keep], a)
            np.testing.assert_allclose(loo[j, i], U[i] @ g / 2 + b, atol=1e-10)
    splits = list(KFold(3).split(U))
    folds = ridge_fold_outputs(U, Y, splits, alphas, fit_intercept=True)
    wide = rng.standard_normal((12, 20))  # more features than rows: kernel form
    kfolds = kernel_ridge_fold_outputs(wide @ wide.T, Y, splits, alphas, fit_intercept=True)
    for (tr, te), D, KD in zip(splits, folds, kfolds):
        for j, a in enumerate(alphas):
            g, b = _ridge_with_offset(U[tr], Y[tr], a)
            np.testing.assert_allclose(D[j], U[te] @ g + b, atol=1e-10)
            g, b = _ridge_with_offset(wide[tr], Y[tr], a)
            np.testing.assert_allclose(KD[j], wide[te] @ g + b, atol=1e-10)


# ------------------------------------------------------------------ cross-validation
def _fold_reference(est_cls, Xs, Y, splits, kp, p, score, **params):
    """Each fold refitted directly: map on all rows, the fold's training moments, the
    dense reference solver with fit_intercept, held-out outputs plus the offsets."""
    nys = BlockNystrom(kernel_params=kp, n_landmarks=p, random_state=0).fit(Xs)
    out = []
    for tr, te in splits:
        mom = nys.moments([X[tr] for X in Xs], Y[tr]).symmetrize()
        problem = MVMLProblem.from_moments(mom, nys, Y[tr])
        est = est_cls(n_landmarks=p, solver="dense", tol=None, fit_intercept=True, **params)
        res = est._solve(problem)
        Ute = nys.transform([X[te] for X in Xs])
        D = np.column_stack(
            [Ute @ (r.g * np.repeat(r.w, problem.block_size)) + r.intercept for r in res]
        )
        out.append(score(D, te))
    return np.array(out)


@pytest.mark.parametrize("metric", ["dense", "cov"])
def test_classifier_cv_fold_scores_equal_direct_refits(rng, metric):
    Xs, y = _data(rng, n=60, shift=0.0)
    yc = np.digitize(y, [-0.5, 0.5])
    cv = MVMLClassifierCV(
        joint_view=False,
        alphas=[0.05, 1.0],
        etas=[0.5],
        bandwidth_factors=[2.0],
        max_iter=3,
        cv=3,
        n_landmarks=15,
        metric=metric,
        random_state=0,
        fit_intercept=True,
    ).fit(Xs, yc)
    splits = list(StratifiedKFold(3).split(Xs[0], yc))
    classes = np.unique(yc)
    Y = MVMLClassifier._encode_targets(np.searchsorted(classes, yc), 3)
    res = cv.cv_results_
    for i, params in enumerate(res["params"]):
        extra = {"eta": params["eta"], "max_iter": params["max_iter"]} if "eta" in params else {}
        ref = _fold_reference(
            MVMLClassifier,
            Xs,
            Y,
            splits,
            cv.best_kernel_params_,
            15,
            lambda D, te: accuracy_score(yc[te], classes[np.argmax(D, axis=1)]),
            alpha=params["alpha"],
            metric=metric,
            **extra,
        )
        got = np.array([res[f"split{k}_test_score"][i] for k in range(3)])
        np.testing.assert_allclose(got, ref, atol=1e-12)
    assert cv.best_estimator_.fit_intercept and cv.best_estimator_.intercept_.shape == (3,)


def test_regressor_cv_fold_scores_equal_direct_refits_rows_fewer_than_features(rng):
    """Folds with fewer training rows than features take the span-of-rows basis."""
    Xs, y = _data(rng, n=24)
    cv = MVMLRegressorCV(
        joint_view=False,
        alphas=[0.01, 0.5],
        etas=[0.2],
        bandwidth_factors=[2.0],
        max_iter=2,
        cv=KFold(3),
        n_landmarks=12,
        random_state=0,
        fit_intercept=True,
    ).fit(Xs, y)
    splits = list(KFold(3).split(Xs[0]))
    for i, params in enumerate(cv.cv_results_["params"]):
        ref = _fold_reference(
            MVMLRegressor,
            Xs,
            y[:, None],
            splits,
            cv.best_kernel_params_,
            12,
            lambda D, te: r2_score(y[te], D[:, 0]),
            alpha=params["alpha"],
            eta=params["eta"],
            max_iter=params["max_iter"],
        )
        got = [cv.cv_results_[f"split{k}_test_score"][i] for k in range(3)]
        np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-10)


def test_full_kernel_cv_fold_scores_equal_direct_refits(rng):
    Xs, y = _data(rng, n=30)
    kw = dict(alpha=0.1, eta=0.5, max_iter=2, fit_intercept=True, joint_view=False)
    cv = MVMLRegressorCV(
        joint_view=False,
        alphas=[0.1],
        etas=[0.5],
        bandwidth_factors=[2.0],
        max_iter=2,
        cv=KFold(3),
        n_landmarks=None,
        fit_intercept=True,
    ).fit(Xs, y)
    for k, (tr, te) in enumerate(KFold(3).split(Xs[0])):
        est = MVMLRegressor(n_landmarks=None, kernel_params=cv.best_kernel_params_, **kw)
        est.fit([X[tr] for X in Xs], y[tr])
        ref = r2_score(y[te], est.predict([X[te] for X in Xs]))
        i = [p["max_iter"] for p in cv.cv_results_["params"]].index(2)
        assert cv.cv_results_[f"split{k}_test_score"][i] == pytest.approx(ref, abs=1e-10)


def test_cv_joint_only_candidate_with_intercept_equals_direct_refit(rng):
    Xs, y = _data(rng, n=45)
    cv = MVMLRegressorCV(
        joint_view="auto",
        alphas=[0.05, 0.5],
        etas=[0.5],
        bandwidth_factors=[2.0],
        max_iter=1,
        cv=KFold(3),
        search="exhaustive",
        fit_intercept=True,
        random_state=0,
    ).fit(Xs, y)
    res = cv.cv_results_
    only = [i for i, p in enumerate(res["params"]) if p["joint_view"] == "only"]
    assert len(only) == 2
    gamma = (
        MVMLRegressor(joint_view="only", bandwidth_factor=2.0, random_state=0)
        .fit(Xs, y)
        .kernel_params_[0]["gamma"]
    )
    for i in only:
        for k, (tr, te) in enumerate(KFold(3).split(Xs[0])):
            est = MVMLRegressor(
                alpha=res["params"][i]["alpha"],
                metric="identity",
                joint_view="only",
                kernel_params={"gamma": gamma},
                fit_intercept=True,
            ).fit([X[tr] for X in Xs], y[tr])
            ref = r2_score(y[te], est.predict([X[te] for X in Xs]))
            assert res[f"split{k}_test_score"][i] == pytest.approx(ref, abs=1e-8)


def test_intercept_fixes_a_shifted_problem(rng):
    """Far from the training rows a bias-free RBF model predicts 0; with the offset it
    predicts near the targets' level."""
    Xs, y = _data(rng, n=40, shift=20.0)
    far = [X + 50.0 for X in Xs]
    a = MVMLRegressor(alpha=0.1, max_iter=2, fit_intercept=False).fit(Xs, y)
    b = MVMLRegressor(alpha=0.1, max_iter=2, fit_intercept=True).fit(Xs, y)
    assert np.abs(a.predict(far)).max() < 1e-6
    np.testing.assert_allclose(b.predict(far), b.intercept_, atol=1e-6)
    assert abs(b.intercept_ - y.mean()) < 2.0
    assert b.score(Xs, y) > a.score(Xs, y)


# ------------------------------------------------------------------ other inputs
def test_dask_views_give_the_in_memory_fit_with_intercept(rng):
    """Dask views and targets (no client: the default scheduler): the centred statistics
    come from the moments' sums, the same model as on NumPy views."""
    da = pytest.importorskip("dask.array")
    Xs, y = _data(rng, n=60)
    kw = dict(alpha=0.1, max_iter=3, n_landmarks=15, random_state=0, fit_intercept=True)
    ref = MVMLRegressor(**kw).fit(Xs, y)
    dX = [da.from_array(X, chunks=(20, -1)) for X in Xs]
    got = MVMLRegressor(**kw).fit(dX, da.from_array(y, chunks=20))
    assert got.intercept_ == pytest.approx(ref.intercept_, abs=1e-9)
    np.testing.assert_allclose(np.asarray(got.predict(dX)), ref.predict(Xs), atol=1e-9)


@pytest.mark.parametrize("n_landmarks", ["auto", None])
def test_missing_views_with_intercept_shift_predictions_only(rng, n_landmarks):
    Xs, y = _data(rng, n=50)
    Xs[0][:6] = np.nan  # six rows miss the first view
    Xs[1][40:44] = np.nan
    kw = dict(alpha=0.1, max_iter=2, n_landmarks=n_landmarks, random_state=0, fit_intercept=True)
    a = MVMLRegressor(**kw).fit(Xs, y)
    b = MVMLRegressor(**kw).fit(Xs, y - 4.0)
    np.testing.assert_allclose(b.predict(Xs), a.predict(Xs) - 4.0, atol=1e-9)
    assert np.all(np.isfinite(a.predict(Xs)))

"""Missing views (a view's row of NaN): validation, pairwise statistics, conditional
completion, estimators in every container, and complete inputs unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits

from mvkernels import MVMLClassifier, MVMLClassifierCV, MVMLRegressor, check_views
from mvkernels._validation import observed_mask
from mvkernels.baselines import EarlyFusionClassifier, LateFusionClassifier
from mvkernels.nystrom import BlockNystrom
from mvkernels.nystrom._missing import ConditionalViews

# Outputs of the code before missing views were supported (computed once with that code on
# the data of ``_small``); complete inputs must give them unchanged.
REFERENCE = {
    "reg_nys": [
        -0.22463700068594672,
        0.9203723762176481,
        0.04957625652794112,
        1.1156456170707774,
        1.3560570283072209,
    ],
    "reg_full": [
        -0.2756835268042211,
        1.0919812523300128,
        0.06364923672421963,
        1.296810641817029,
        1.6136984812704012,
    ],
    "clf_cv": [
        -0.18796901791986312,
        0.5238316210588709,
        0.13810758986041635,
        0.9173244807894243,
        0.8419871886944026,
    ],
    "nys": [
        0.4594590020404824,
        0.4150100985062626,
        0.518302374421939,
        0.014852916357125028,
        0.5590536452713781,
        0.31838094855997146,
        0.4588498616963446,
        0.42125857805977773,
        0.39608768976684094,
        0.3260355135370068,
    ],
    "late": [
        0.29664452721417434,
        0.9804121458790449,
        0.5639398189150792,
        1.3270416847172708,
        1.1593981815636691,
    ],
}


def _small():
    rng = np.random.RandomState(0)
    n = 40
    X = rng.randn(n + 5, 7)
    y = X[:, 0] - X[:, 4] + 0.1 * rng.randn(n + 5)
    return X[:n], X[n:], y[:n], y[n:], [4, 3]


def _missing(X, sizes, frac, seed):
    """NaN rows in views, completely at random, every sample keeping one view."""
    rng = np.random.RandomState(seed)
    n, v = X.shape[0], len(sizes)
    mask = rng.rand(n, v) >= frac
    mask[np.arange(n), rng.randint(v, size=n)] = True
    bounds = np.cumsum([0] + list(sizes))
    X = X.copy()
    for l in range(v):
        X[~mask[:, l], bounds[l] : bounds[l + 1]] = np.nan
    return X, mask


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    img = X.reshape(-1, 8, 8)
    X = np.hstack([img[:, r : r + 4, c : c + 4].reshape(-1, 16) for r in (0, 4) for c in (0, 4)])
    perm = np.random.RandomState(0).permutation(len(y))
    return X[perm[:500]], y[perm[:500]], X[perm[500:900]], y[perm[500:900]], [16] * 4


# ----------------------------------------------------------------------------- complete inputs
#: MVMLRegressor's defaults when the reference was recorded (issue 32 changed them)
REG_BEFORE = dict(alpha=1.0, bandwidth_factor=4.0, joint_view=False, fit_intercept=False)


def test_complete_inputs_unchanged():
    Xtr, Xte, ytr, _, v = _small()
    c = (ytr > 0).astype(int)
    got = {
        "reg_nys": MVMLRegressor(views=v, n_landmarks=10, random_state=0, **REG_BEFORE)
        .fit(Xtr, ytr)
        .predict(Xte),
        "reg_full": MVMLRegressor(
            views=v,
            n_landmarks=None,
            metric="identity",
            random_state=0,
            **REG_BEFORE,
        )
        .fit(Xtr, ytr)
        .predict(Xte),
        "clf_cv": MVMLClassifierCV(
            views=v,
            n_landmarks=10,
            random_state=0,
            alphas=[0.1, 1.0],
            etas=[1.0],
            bandwidth_factors=[1.0],
            max_iter=2,
            joint_view=False,  # the reference predates the joint-view candidate
        )
        .fit(Xtr, c)
        .decision_function(Xte),
        "nys": BlockNystrom(views=v, n_landmarks=6, random_state=0)
        .fit(Xtr)
        .transform(Xte)[:, [0, 7]]
        .ravel(),
        "late": LateFusionClassifier(views=v, random_state=0).fit(Xtr, c).decision_function(Xte),
    }
    # recorded with the default Gaussian bandwidth computed in double precision; it is
    # computed in single precision since (about 1e-9 relative apart): the outputs agree to
    # about 1e-8, where handling missing views differently would move them by far more.
    # Late fusion's SVCs stop at libsvm's tol=1e-3, so the small change of the kernel moves
    # their decision values by up to about 1e-3.
    for key, ref in REFERENCE.items():
        rtol = 5e-3 if key == "late" else 1e-7
        np.testing.assert_allclose(got[key], ref, rtol=rtol, atol=1e-9, err_msg=key)


def test_complete_rows_untouched_by_completion():
    """Rows with every view observed get the usual features, whatever else is missing."""
    Xtr, Xte, _, _, v = _small()
    Xm, mask = _missing(Xtr, v, 0.3, 1)
    nys = BlockNystrom(views=v, n_landmarks=8, random_state=0).fit(Xm)
    full = mask.all(axis=1)
    U = nys.transform(Xm)
    # equal to rounding: BLAS may block a product of other shape differently (seen at 2e-15)
    np.testing.assert_allclose(U[full], nys.transform(Xm[full]), rtol=1e-12, atol=1e-14)
    assert np.isfinite(U).all()


# ----------------------------------------------------------------------------- validation
def test_check_views_missing_flag_and_mask():
    X = np.arange(24, dtype=float).reshape(6, 4)
    X[1, :2] = np.nan
    X[4, 2:] = np.nan
    with pytest.raises(ValueError, match="view 0 contains NaN; remove or impute"):
        check_views(X, views=[2, 2])
    Xs = check_views(X, views=[2, 2], allow_missing=True)
    mask = observed_mask(Xs)
    expected = np.ones((6, 2), dtype=bool)
    expected[1, 0] = expected[4, 1] = False
    np.testing.assert_array_equal(mask, expected)
    assert observed_mask(check_views(np.ones((3, 4)), views=[2, 2])) is None


def test_partly_missing_view_is_refused():
    X = np.ones((6, 4))
    X[3, 1] = np.nan  # one of the two columns of view 0
    X[5, 0] = np.nan
    with pytest.raises(
        ValueError, match=r"view 0 contains NaN in only some of its columns \(rows 3, 5\)"
    ):
        MVMLClassifier(views=[2, 2]).fit(X, np.arange(6) % 2)
    with pytest.raises(ValueError, match="whole row of NaN"):
        BlockNystrom(views=[2, 2], n_landmarks=2).fit(X)


def test_all_missing_sample_and_rare_view_are_refused():
    rng = np.random.RandomState(0)
    X = rng.randn(8, 4)
    X[2] = np.nan
    with pytest.raises(ValueError, match="every view is missing .* rows 2"):
        MVMLRegressor(views=[2, 2]).fit(X, rng.randn(8))
    X = rng.randn(8, 4)
    X[1:, 2:] = np.nan  # view 1 observed on row 0 only
    with pytest.raises(ValueError, match="view 1 is observed on 1 training row"):
        MVMLRegressor(views=[2, 2]).fit(X, rng.randn(8))
    est = MVMLRegressor(views=[2, 2], n_landmarks=4, random_state=0).fit(
        rng.randn(8, 4), rng.randn(8)
    )
    Xt = rng.randn(3, 4)
    Xt[1] = np.nan
    with pytest.raises(ValueError, match="every view is missing"):
        est.predict(Xt)


def test_methods_without_missing_views_refuse_nan():
    X, _, y, _, v = _small()
    Xm, _ = _missing(X, v, 0.3, 0)
    with pytest.raises(ValueError, match="contains NaN"):
        EarlyFusionClassifier(views=v).fit(Xm, (y > 0).astype(int))


# ----------------------------------------------------------------------------- statistics
def test_pairwise_statistics_equal_brute_force():
    X, _, _, _, v = _small()
    Xm, mask = _missing(X, v, 0.4, 3)
    nys = BlockNystrom(views=v, n_landmarks=6, random_state=0).fit(Xm)
    Xs = check_views(Xm, views=v, allow_missing=True)
    p = nys.n_landmarks_
    Z = [np.full((X.shape[0], p), np.nan) for _ in v]
    for l in range(len(v)):
        Z[l][mask[:, l]] = nys.view_features(Xs[l][mask[:, l]], l)
    model = nys.missing_model_
    for a in range(len(v)):
        np.testing.assert_allclose(
            model.mean[a * p : (a + 1) * p], Z[a][mask[:, a]].mean(axis=0), atol=1e-12
        )
        for b in range(len(v)):
            both = mask[:, a] & mask[:, b]
            np.testing.assert_array_equal(model.counts[a, b], both.sum())
            za, zb = Z[a][both], Z[b][both]
            C = (za - za.mean(0)).T @ (zb - zb.mean(0)) / both.sum()
            np.testing.assert_allclose(
                model.cov[a * p : (a + 1) * p, b * p : (b + 1) * p], C, atol=1e-12
            )


def test_rarely_observed_view_repeats_its_landmarks():
    """A view observed on fewer rows than n_landmarks takes them all (repeated): the other
    views keep n_landmarks, and its block is the Nystrom map of its distinct landmarks."""
    X, _, _, _, v = _small()
    Xm, mask = _missing(X, v, 0.0, 0)
    rare = np.zeros(X.shape[0], dtype=bool)
    rare[[1, 5, 8, 13, 21]] = True
    Xm[~rare, 4:] = np.nan
    nys = BlockNystrom(views=v, n_landmarks=12, random_state=0).fit(Xm)
    assert nys.n_landmarks_ == 12
    assert set(nys.landmark_indices_[1]) == set(np.flatnonzero(rare))
    assert len(set(nys.landmark_indices_[0])) == 12
    assert nys.ranks_[1] <= 5
    Z = Xm[rare, 4:]
    U = nys.view_features(Z, 1)
    kern = nys.kernels_[1]
    np.testing.assert_allclose(U @ U.T, kern(Z, Z), atol=1e-8)  # exact on its landmarks
    T = np.random.RandomState(1).randn(6, 3)
    Ut = nys.view_features(T, 1)
    K_tz = kern(T, Z)
    ref = K_tz @ np.linalg.solve(kern(Z, Z), K_tz.T)  # Nystrom with the 5 distinct rows
    np.testing.assert_allclose(Ut @ Ut.T, ref, atol=1e-8)


def test_conditional_expectation_formula():
    rng = np.random.RandomState(0)
    L = rng.randn(6, 6)
    cov = L @ L.T
    model = ConditionalViews(mean=rng.randn(6), cov=cov, n_views=3, block=2, ridge=0.1)
    U = rng.randn(4, 6)
    mask = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 1], [1, 0, 0]], dtype=bool)
    got = model.complete(U.copy(), mask)
    for i, pat in enumerate(mask):
        o = np.concatenate([[2 * l, 2 * l + 1] for l in np.flatnonzero(pat)])
        m = np.concatenate([[2 * l, 2 * l + 1] for l in np.flatnonzero(~pat)] or [[]]).astype(int)
        np.testing.assert_array_equal(got[i, o], U[i, o])
        if m.size:
            S = cov[np.ix_(o, o)]
            eps = 0.1 * np.trace(S) / o.size
            x = np.linalg.solve(S + eps * np.eye(o.size), U[i, o] - model.mean[o])
            np.testing.assert_allclose(
                got[i, m], model.mean[m] + cov[np.ix_(m, o)] @ x, rtol=1e-10, atol=1e-12
            )


# ----------------------------------------------------------------------------- containers
def test_nan_rows_in_every_container():
    pd = pytest.importorskip("pandas")
    da = pytest.importorskip("dask.array")
    X, Xt, y, _, v = _small()
    Xm, _ = _missing(X, v, 0.3, 5)
    Xtm, _ = _missing(Xt, v, 0.4, 6)
    c = (y > 0).astype(int)
    est = MVMLClassifier(views=v, n_landmarks=10, random_state=0)
    ref = est.fit(Xm, c).decision_function(Xtm)
    assert np.isfinite(ref).all()
    lists = MVMLClassifier(n_landmarks=10, random_state=0).fit([Xm[:, :4], Xm[:, 4:]], c)
    np.testing.assert_allclose(
        lists.decision_function([Xtm[:, :4], Xtm[:, 4:]]), ref, rtol=1e-12, atol=1e-12
    )
    frame = MVMLClassifier(views=v, n_landmarks=10, random_state=0).fit(pd.DataFrame(Xm), c)
    np.testing.assert_allclose(
        frame.decision_function(pd.DataFrame(Xtm)), ref, rtol=1e-12, atol=1e-12
    )
    dask_views = [da.from_array(Xtm[:, :4], chunks=2), da.from_array(Xtm[:, 4:], chunks=2)]
    np.testing.assert_allclose(
        lists.decision_function(dask_views).compute(), ref, rtol=1e-10, atol=1e-12
    )
    # a model fitted on complete Dask views completes missing views at predict
    Xc = [da.from_array(X[:, :4], chunks=10), da.from_array(X[:, 4:], chunks=10)]
    dfit = MVMLClassifier(n_landmarks=10, random_state=0).fit(Xc, c)
    D = dfit.decision_function(dask_views).compute()
    assert np.isfinite(D).all()
    # Dask training views with NaN rows: the same model as the NumPy fit
    dask_fit = MVMLClassifier(n_landmarks=10, random_state=0).fit(
        [da.from_array(Xm[:, :4], chunks=10), da.from_array(Xm[:, 4:], chunks=10)], c
    )
    np.testing.assert_allclose(
        dask_fit.decision_function(dask_views).compute(), ref, rtol=1e-10, atol=1e-12
    )


# ----------------------------------------------------------------------------- estimators
def test_late_fusion_averages_observed_views():
    X, Xt, y, _, v = _small()
    Xm, mask = _missing(X, v, 0.3, 7)
    c = (y > 0).astype(int)
    est = LateFusionClassifier(views=v, random_state=0).fit(Xm, c)
    single = [
        LateFusionClassifier(random_state=0).fit([Xm[mask[:, l]][:, s]], c[mask[:, l]])
        for l, s in enumerate([slice(0, 4), slice(4, 7)])
    ]
    Xtm = Xt.copy()
    Xtm[0, 4:] = np.nan  # only view 0
    Xtm[1, :4] = np.nan  # only view 1
    D = est.decision_function(Xtm)
    np.testing.assert_allclose(D[0], single[0].decision_function([Xt[:1, :4]])[0], atol=1e-10)
    np.testing.assert_allclose(D[1], single[1].decision_function([Xt[1:2, 4:]])[0], atol=1e-10)
    both = 0.5 * (
        single[0].decision_function([Xt[2:, :4]]) + single[1].decision_function([Xt[2:, 4:]])
    )
    np.testing.assert_allclose(D[2:], both, atol=1e-10)


@pytest.mark.parametrize("n_landmarks", ["auto", None])
def test_mvml_with_missing_views_learns(digits, n_landmarks):
    Xtr, ytr, Xte, yte, v = digits
    Atr, _ = _missing(Xtr, v, 0.3, 0)
    Ate, _ = _missing(Xte, v, 0.3, 1)
    est = MVMLClassifier(views=v, n_landmarks=n_landmarks, alpha=1e-3, metric="identity")
    est.set_params(random_state=0).fit(Atr, ytr)
    assert est.score(Ate, yte) > 0.85
    assert est.score(Xte, yte) > 0.9


def test_cv_with_missing_views_beats_mean_imputation(digits):
    from sklearn.impute import SimpleImputer

    Xtr, ytr, Xte, yte, v = digits
    Atr, _ = _missing(Xtr, v, 0.5, 2)
    Ate, _ = _missing(Xte, v, 0.5, 3)
    native = MVMLClassifierCV(views=v, random_state=0).fit(Atr, ytr).score(Ate, yte)
    imp = SimpleImputer().fit(Atr)
    mean = (
        MVMLClassifierCV(views=v, random_state=0)
        .fit(imp.transform(Atr), ytr)
        .score(imp.transform(Ate), yte)
    )
    assert native > 0.8
    assert native >= mean - 0.01


# ----------------------------------------------------------------------------- MultiViewKPCA
def test_kpca_fit_on_incomplete_rows_and_infer_at_transform():
    from mvkernels import MultiViewKPCA

    rng = np.random.RandomState(0)
    n = 300
    Z = rng.randn(n, 2)
    X1 = Z @ rng.randn(2, 4) + 0.05 * rng.randn(n, 4)
    X2 = Z @ rng.randn(2, 3) + 0.05 * rng.randn(n, 3)
    X1m, X2m = X1.copy(), X2.copy()
    X1m[:60] = np.nan
    X2m[100:150] = np.nan
    complete = MultiViewKPCA(n_components=2).fit([X1, X2])
    kpca = MultiViewKPCA(n_components=2).fit([X1m, X2m])
    assert kpca.solver_.startswith("primal") and np.isfinite(kpca.hidden_).all()
    # the same subspace as on complete data (up to rotation within it)
    H, Hm = complete.transform([X1, X2]), kpca.transform([X1, X2])
    coef, *_ = np.linalg.lstsq(Hm, H, rcond=None)
    assert np.linalg.norm(Hm @ coef - H) < 0.05 * np.linalg.norm(H)
    # a row with view 0 missing: eq. (15), as infer_views computes it
    Hmiss = kpca.transform([X1m[:5], X2[:5]])
    _, h = kpca.infer_views([None, X2[:5]], missing=[0], return_hidden=True)
    np.testing.assert_allclose(Hmiss, h, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(kpca.hidden_[:5], h, rtol=1e-10, atol=1e-12)


def test_kpca_missing_views_need_a_primal_solver():
    from mvkernels import MultiViewKPCA

    rng = np.random.RandomState(0)
    X = rng.randn(30, 4)
    X[:5, 2:] = np.nan
    with pytest.raises(ValueError, match="missing views .* primal solver"):
        MultiViewKPCA(n_components=2, kernel="rbf", views=[2, 2]).fit(X)


@pytest.mark.parametrize("metric", ["dense", "cov"])
def test_complete_fit_statistics_are_the_features_moments(metric):
    """A fit on complete rows completes missing views from the training features' own
    moments (MVMLSVC from its kept features, MVMLClassifier from its pass); it keeps
    them in the compact form of its outputs, which equals that form built from the
    mean and covariance of the features."""
    from mvkernels import MVMLSVC
    from mvkernels.nystrom._missing import ConditionalViews

    X, y = load_digits(return_X_y=True)
    Xs = [X[:600, :32], X[:600, 32:]]
    kw = dict(n_landmarks=40, metric=metric, max_iter=2, random_state=0, joint_view=False)
    kw_svc = dict(kw, multi_class="ovr")
    models = [MVMLClassifier(**kw).fit(Xs, y[:600]), MVMLSVC(**kw_svc).fit(Xs, y[:600])]
    for m in models:
        # each model's own features: the single-precision bandwidth heuristic depends on
        # the BLAS threads (MVMLSVC runs it on one, MVMLClassifier on all) by about 1e-9
        # relative, which moves the features by as much
        U = m.nystrom_.transform(Xs)
        assert not hasattr(m.nystrom_, "missing_model_")  # the compact form instead
        own = ConditionalViews(U.mean(axis=0), np.cov(U.T, bias=True), n_views=2, block=40)
        want = own.completed_outputs(m._decision_block().Gw)
        got = m._completed_outputs
        np.testing.assert_array_equal(got.patterns, want.patterns)
        for a, b in zip(got.coefs + [got.offsets], want.coefs + [want.offsets]):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-8 * np.abs(b).max())
    Xt = [X[600:900, :32].copy(), X[600:900, 32:].copy()]
    Xt[0][:100] = np.nan  # view 0 missing for a third of the test rows
    for m in models:
        assert m.score(Xt, y[600:900]) > 0.7  # chance is 0.1


# ----------------------------------------------------------------------------- reduced models
def test_reduced_searches_start_from_the_search_of_all_the_views(digits):
    """Each reduced model keeps the chosen bandwidth factor (its views' kernels are those
    of the model of all the views) and eta, and no joint view for a single view; its
    alpha is the chosen one or a grid neighbour; it equals the restricted search on
    REDUCED_CV_FOLDS folds (cv=5 given); patterns searched in parallel threads (n_jobs=2)
    give the same outputs."""
    from mvkernels.mvml._reduced import REDUCED_CV_FOLDS, reduced_search_params

    Xtr, ytr, Xte, yte, v = digits
    Xtr, ytr = Xtr[:240], ytr[:240]
    Atr, mask = _missing(Xtr, v, 0.3, 4)
    Ate, mte = _missing(Xte, v, 0.3, 5)
    kw = dict(views=v, random_state=0, alphas=[1e-3, 1e-2, 1e-1, 1.0], etas=[1e-2, 1.0], max_iter=2)
    cv = MVMLClassifierCV(cv=5, n_jobs=2, **kw).fit(Atr, ytr)
    best, models = cv.best_params_, cv.best_estimator_.reduced_models_
    assert len(models) > 4
    full_gammas = [p["gamma"] for p in cv.best_estimator_.kernel_params_]
    for pat, model in models.items():
        views = np.flatnonzero(pat)
        assert model.eta == best["eta"]
        assert abs(np.log10(model.alpha / best["alpha"])) <= 1 + 1e-12  # a grid neighbour
        assert views.size > 1 or model.joint_view is False
        gammas = [p["gamma"] for p in model.kernel_params_[: views.size]]
        np.testing.assert_allclose(gammas, [full_gammas[l] for l in views], rtol=1e-12)
    pat = max(models, key=lambda p: (mask == np.asarray(p)).all(axis=1).sum())
    views = np.flatnonzero(pat)
    rows = mask[:, views].any(axis=1)
    bounds = np.cumsum([0] + v)
    Xv = [Atr[:, bounds[l] : bounds[l + 1]] for l in range(len(v))]
    params = {**kw, "views": None, "cv": REDUCED_CV_FOLDS, "missing_views": "complete"}
    params.update(reduced_search_params(cv, views.size, np.array(kw["alphas"])))
    ref = MVMLClassifierCV(**params).fit([Xv[l][rows] for l in views], ytr[rows])
    sel = np.flatnonzero((mte == np.asarray(pat)).all(axis=1))
    assert sel.size > 0
    Tv = [Ate[sel][:, bounds[l] : bounds[l + 1]] for l in views]
    np.testing.assert_allclose(
        cv.decision_function(Ate[sel]), ref.decision_function(Tv), rtol=0, atol=1e-10
    )
    serial = MVMLClassifierCV(cv=5, **kw).fit(Atr, ytr)
    np.testing.assert_allclose(
        serial.decision_function(Ate), cv.decision_function(Ate), rtol=0, atol=1e-10
    )

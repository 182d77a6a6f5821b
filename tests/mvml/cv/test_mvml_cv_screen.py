"""The CV estimators' screening step (search="screen"): leave-one-out MVML_I scores of the
(joint view, bandwidth factor) pairs, then the full grid for the best pairs only."""

import numpy as np
import pytest

from mvkernels import BlockNystrom, MVMLClassifierCV, MVMLRegressorCV
from mvkernels.mvml._screen import (
    MISSING_FINALISTS_FACTOR,
    N_FINALISTS,
    ScreenGrams,
    _nothing_floored,
    alpha_window,
    best_index,
    finalists,
    ridge_loo_outputs,
    ridge_solve,
    ridge_solves,
)


def _views(rng, n=90):
    Xs = [rng.standard_normal((n, 4)), rng.standard_normal((n, 3))]
    y = Xs[0][:, 0] * Xs[1][:, 1] + np.sin(2 * Xs[1][:, 0]) + 0.2 * rng.standard_normal(n)
    return Xs, y


@pytest.mark.parametrize("n, d", [(25, 8), (12, 30), (15, 15)])
def test_ridge_loo_outputs_equal_refits_without_each_row(rng, n, d):
    """The leave-one-out identity: every row's output equals a refit without that row of
    MVML_I's g-step, g = (M + alpha I)^{-1} b with M = C / v^2, b = c / v, output u g / v
    (more rows than features, fewer and as many: the n x n factorisation)."""
    v = 2
    U, Y = rng.standard_normal((n, d)), rng.standard_normal((n, 3))
    alphas = np.array([1e-3, 0.3, 5.0])
    loo = ridge_loo_outputs(U, Y, alphas, n_blocks=v)
    assert loo.shape == (3, n, 3)
    for j, a in enumerate(alphas):
        for i in (0, 7, n - 1):
            keep = np.arange(n) != i
            M = U[keep].T @ U[keep] / v**2
            g = np.linalg.solve(M + a * np.eye(d), U[keep].T @ Y[keep] / v)
            np.testing.assert_allclose(loo[j, i], U[i] @ g / v, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n", [5, 9, 12, 20])
def test_screen_grams_equal_the_direct_products(rng, n):
    """ScreenGrams gives each column set's Gram matrix on the side ridge_loo_outputs
    factors (rows when n <= d, else features), whether computed directly, as a block of
    the feature-side Gram matrix or as a sum over the views' and the joint view's blocks,
    and ridge_loo_outputs gives the same outputs with it as without (every n between the
    joint block's 4, the views' 8 and all 12 columns)."""
    U, Y = rng.standard_normal((n, 12)), rng.standard_normal((n, 2))
    grams = ScreenGrams(U, 8)
    alphas = np.array([1e-3, 0.5])
    for cols in (slice(0, 8), slice(None), slice(8, None)):  # the search's order
        B = U[:, cols]
        want = B @ B.T if n <= B.shape[1] else B.T @ B
        np.testing.assert_allclose(grams.of(cols), want, rtol=1e-13, atol=1e-13)
        assert grams.of(cols) is grams.of(cols)  # computed once
        np.testing.assert_allclose(
            ridge_loo_outputs(B, Y, alphas, 2, gram=grams.of(cols)),
            ridge_loo_outputs(B, Y, alphas, 2),
            rtol=1e-10,
            atol=1e-12,
        )


def _deferred_map(Xs, n_landmarks, **kw):
    nys = BlockNystrom(n_landmarks=n_landmarks, random_state=0, **kw)
    return nys._fit_views(Xs, view_statistics=False, defer_normalizers=True)


@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_screen_grams_of_a_map_equal_the_features_products(rng, factor):
    """With every row a landmark and no eigenvalue floored, ScreenGrams.of_map reads each
    column set's Gram matrix off the landmark Gram matrices (U_l U_l^T = W_l) without the
    normalisers; the Gram matrices, the leave-one-out outputs and the features it computes
    on demand equal those of the eagerly fitted map (features bit for bit)."""
    Xs = [rng.standard_normal((14, 3)), rng.standard_normal((14, 2))]
    Xs.append(np.hstack(Xs))  # a joint view last, as the CV estimators'
    params = [{"gamma": factor / X.shape[1]} for X in Xs]
    nys = _deferred_map(Xs, 14, kernel_params=params)
    assert "normalizers_" not in nys.__dict__
    grams = ScreenGrams.of_map(nys, Xs, 28)
    assert grams._direct is not None and grams._U is None  # nothing factored yet
    eager = BlockNystrom(n_landmarks=14, random_state=0, kernel_params=params)
    U = eager._fit_views(Xs, view_statistics=False).transform(Xs)
    Y = np.where(rng.standard_normal((14, 3)) > 0, 1.0, -1.0)
    alphas = np.array([1e-3, 0.1, 2.0])
    for cols, v in ((slice(0, 28), 2), (slice(None), 3), (slice(28, None), 1)):
        B = U[:, cols]
        np.testing.assert_allclose(grams.of(cols), B @ B.T, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(
            grams.loo_outputs(cols, Y, alphas, v),
            ridge_loo_outputs(B, Y, alphas, v),
            rtol=1e-7,
            atol=1e-9,
        )
    fitted_map, U_late = grams.fitted()
    assert fitted_map is nys and np.array_equal(U_late, U)
    for S_late, S in zip(nys.normalizers_, eager.normalizers_):
        assert np.array_equal(S_late, S)


def test_screen_grams_of_a_map_fall_back_to_the_features(rng):
    """Fewer landmarks than rows, or a floored eigenvalue (duplicated rows make W
    singular): ScreenGrams.of_map fits the normalisers and computes the features at once,
    the same as the eager map's bit for bit, and loo_outputs is ridge_loo_outputs on them."""
    X = rng.standard_normal((10, 3))
    for Xs, p in (([X, X[:, :2]], 6), ([np.vstack([X, X[:2]]), np.vstack([X, X[:2]])], 12)):
        nys = _deferred_map(Xs, p)
        grams = ScreenGrams.of_map(nys, Xs, 2 * p)
        assert grams._direct is None and grams._U is not None
        U = BlockNystrom(n_landmarks=p, random_state=0)._fit_views(Xs).transform(Xs)
        assert np.array_equal(grams.U, U)
        Y = rng.standard_normal((Xs[0].shape[0], 2))
        np.testing.assert_array_equal(
            grams.loo_outputs(slice(None), Y, np.array([0.1]), 2),
            ridge_loo_outputs(U, Y, np.array([0.1]), 2, gram=grams.of(slice(None))),
        )


def test_nothing_floored_is_a_sufficient_test(rng):
    """_nothing_floored is True only when every eigenvalue is above the floor times the
    largest (its bound, the trace, is at most the rank times the largest)."""
    Q = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    for low, floor, want in ((1e-3, 1e-10, True), (1e-12, 1e-10, False), (0.0, 0.0, False)):
        W = (Q * np.array([1.0, 0.5, 0.2, 0.1, 0.05, low])) @ Q.T
        assert _nothing_floored(W, floor) is want
    assert not _nothing_floored(np.zeros((3, 3)), 1e-10)


def test_ridge_solves_equal_ridge_solve_per_alpha(rng):
    """ridge_solves (the symmetric part formed once, one Cholesky factorisation per
    alpha) gives ridge_solve's values bit for bit, its eigendecomposition fallback
    included (an indefinite matrix whose shift by a small alpha is not positive
    definite)."""
    U = rng.standard_normal((9, 6))
    M = U.T @ U + 1e-3 * rng.standard_normal((6, 6))  # slightly asymmetric
    B = rng.standard_normal((3, 6))
    alphas = np.array([1e-4, 0.3, 5.0])
    G = ridge_solves(M, B, alphas)
    assert G.shape == (3, 3, 6)
    for j, a in enumerate(alphas):
        assert np.array_equal(G[j], ridge_solve(M, B, float(a)))
    Mi = np.diag([2.0, 1.0, -0.5])  # M + 0.1 I is indefinite: the eigh fallback
    Bi = rng.standard_normal((2, 3))
    Gi = ridge_solves(Mi, Bi, np.array([0.1, 1.0]))
    assert np.array_equal(Gi[0], ridge_solve(Mi, Bi, 0.1))
    assert np.array_equal(Gi[1], ridge_solve(Mi, Bi, 1.0))


def test_finalists_and_alpha_window():
    screen = np.array([[0.5, 0.9, 0.9, 0.2], [0.95, 0.1, np.nan, 0.9]])
    # the best, then every pair tied with the last kept one: the screen cannot tell
    # (0, 1), (0, 2) and (1, 3) apart, so all three go on to the cross-validation
    tied = [[False, True, True, False], [True, False, False, True]]
    assert finalists(screen, 3).tolist() == tied
    assert finalists(screen, 2).tolist() == tied
    assert finalists(screen, 1).tolist() == [[False] * 4, [True, False, False, False]]
    assert finalists(screen, 100).sum() == screen.size
    # with a tie-break (higher is better) only pairs equal on both scores stay together
    second = np.array([[0.0, -0.3, -0.1, 0.0], [-1.0, 0.0, 0.0, -0.2]])
    assert finalists(screen, 2, second).tolist() == [
        [False, False, True, False],
        [True, False, False, False],
    ]
    assert finalists(screen, 3, second).tolist() == [
        [False, False, True, False],
        [True, False, False, True],
    ]
    second[1, 3] = -0.1  # (0, 2) and (1, 3) equal on both: kept together
    assert finalists(screen, 2, second).tolist() == [
        [False, False, True, False],
        [True, False, False, True],
    ]
    assert best_index(np.array([0.8, 0.9, 0.9]), np.array([0.0, -2.0, -1.0])) == 2
    assert best_index(np.array([0.9, 0.9]), np.array([-1.0, -1.0])) == 0
    a = np.array([1e-4, 1e-3, 1e-2, 0.1, 1.0])
    assert alpha_window(a, np.array([0])).tolist() == [True, True, False, False, False]
    assert alpha_window(a, np.array([2, 4])).tolist() == [False, True, True, True, True]
    assert alpha_window(a[::-1], np.array([0])).tolist() == [True, True, False, False, False]


@pytest.mark.parametrize("estimator", ["regressor", "classifier"])
def test_screened_search_scores_its_finalists_exactly(rng, estimator):
    """The screened search: the scored candidates have exactly the exhaustive search's
    scores; they belong to the N_FINALISTS pairs of highest screen_score, within one grid
    step of each pair's best leave-one-out alpha; every other candidate has NaN scores and
    ranks below every scored one; the best candidate is the best scored one."""
    Xs, y = _views(rng)
    if estimator == "classifier":
        y = np.digitize(y, [-0.5, 0.5])
    cls = MVMLRegressorCV if estimator == "regressor" else MVMLClassifierCV
    kw = dict(
        alphas=[1e-3, 1e-2, 0.1, 1.0],
        etas=[0.1, 1.0],
        bandwidth_factors=[0.5, 1.0, 4.0],
        max_iter=2,
        cv=3,
        n_landmarks=15,
        random_state=0,
    )
    full = cls(search="exhaustive", **kw).fit(Xs, y)
    scr = cls(**kw).fit(Xs, y)
    res, ref = scr.cv_results_, full.cv_results_
    assert "screen_score" not in ref
    assert [p for p in res["params"]] == [p for p in ref["params"]]
    mean = res["mean_test_score"]
    scored = np.isfinite(mean)
    np.testing.assert_allclose(mean[scored], ref["mean_test_score"][scored], atol=1e-12)
    for k in range(3):
        assert np.all(np.isnan(res[f"split{k}_test_score"][~scored]))
    # scored candidates: the N_FINALISTS (joint, factor) pairs of highest screen_score,
    # ties broken by the smaller screen_squared_error; the joint-only candidate apart, at
    # the factor of its highest screen_score (same tie-break)
    pair = [(p["joint_view"], p["bandwidth_factor"]) for p in res["params"]]
    only = {
        pr: (s, -e)
        for pr, s, e in zip(pair, res["screen_score"], res["screen_squared_error"])
        if pr[0] == "only"
    }
    kept_only = {pr for pr, s in zip(pair, scored) if s and pr[0] == "only"}
    assert kept_only == {max(only, key=lambda pr: (only[pr], -pr[1]))}
    kept_pairs = {pr for pr, s in zip(pair, scored) if s and pr[0] != "only"}
    # ranked by screen_score, ties by the smaller leave-one-out squared error
    by_pair = {
        pr: (s, -e)
        for pr, s, e in zip(pair, res["screen_score"], res["screen_squared_error"])
        if pr[0] != "only"
    }
    threshold = sorted(by_pair.values(), reverse=True)[N_FINALISTS - 1]
    assert kept_pairs == {p for p, s in by_pair.items() if s >= threshold}
    assert len(kept_pairs) == N_FINALISTS
    assert 1 < scored.sum() < len(mean)
    assert res["rank_test_score"][scored].max() < res["rank_test_score"][~scored].min()
    assert scr.best_score_ == pytest.approx(np.max(mean[scored]))
    assert res["rank_test_score"][scr.best_index_] == 1


@pytest.mark.parametrize("missing", [False, True])
def test_missing_views_keep_more_finalists(rng, missing):
    """With missing views in the training rows the screen cross-validates the
    MISSING_FINALISTS_FACTOR * N_FINALISTS pairs of highest screen_score (ties by the
    smaller screen_squared_error), with complete rows the N_FINALISTS best; the scored
    candidates have the exhaustive search's scores in both cases."""
    Xs, y = _views(rng)
    y = np.digitize(y, [-0.5, 0.5])
    if missing:
        Xs[0][::6] = np.nan  # disjoint rows: every sample keeps a view
        Xs[1][3::6] = np.nan
    kw = dict(
        alphas=[1e-2, 1.0],
        etas=[1.0],
        bandwidth_factors=[0.25, 0.5, 1.0, 4.0, 16.0],
        max_iter=1,
        cv=3,
        n_landmarks=15,
        random_state=0,
    )
    scr = MVMLClassifierCV(**kw).fit(Xs, y)
    full = MVMLClassifierCV(search="exhaustive", **kw).fit(Xs, y)
    res = scr.cv_results_
    scored = np.isfinite(res["mean_test_score"])
    np.testing.assert_allclose(
        res["mean_test_score"][scored], full.cv_results_["mean_test_score"][scored], atol=1e-12
    )
    # the multi-view pairs (a joint-only candidate is cross-validated apart)
    multi = np.array([p["joint_view"] != "only" for p in res["params"]])
    pair = [(p["joint_view"], p["bandwidth_factor"]) for p in res["params"]]
    by_pair = {
        pr: (s, -e)
        for pr, s, e, m in zip(pair, res["screen_score"], res["screen_squared_error"], multi)
        if m
    }
    assert len(by_pair) == 10
    k = N_FINALISTS * (MISSING_FINALISTS_FACTOR if missing else 1)
    threshold = sorted(by_pair.values(), reverse=True)[k - 1]
    kept = {pr for pr, s, m in zip(pair, scored, multi) if s and m}
    assert kept == {p for p, s in by_pair.items() if s >= threshold}
    assert len(kept) == k


@pytest.mark.parametrize("estimator", ["regressor", "classifier"])
def test_screen_score_is_the_best_leave_one_out_score(rng, estimator):
    """screen_score of the selected pair: MVML_I's best leave-one-out score over alpha on
    that bandwidth's Nystrom features (accuracy or R^2)."""
    Xs, y = _views(rng)
    if estimator == "classifier":
        y = np.digitize(y, [-0.5, 0.5])
    cls = MVMLRegressorCV if estimator == "regressor" else MVMLClassifierCV
    alphas = np.array([1e-3, 0.1, 1.0])
    # the expected scores are the bias-free ridge's
    kw = dict(joint_view=False, etas=[1.0], bandwidth_factors=[0.5, 1.0, 4.0], max_iter=1)
    kw["fit_intercept"] = False
    scr = cls(alphas=alphas, cv=3, n_landmarks=15, random_state=0, **kw).fit(Xs, y)
    # each finalist factor: its best alpha and the grid neighbours (2 or 3 of 3)
    n_scored = np.isfinite(scr.cv_results_["mean_test_score"]).sum()
    assert 2 * N_FINALISTS <= n_scored <= 3 * N_FINALISTS
    nys = BlockNystrom(kernel_params=scr.best_kernel_params_, n_landmarks=15, random_state=0)
    U = nys.fit(Xs).transform(Xs)
    if estimator == "regressor":
        loo = ridge_loo_outputs(U, y[:, None], alphas, 2)
        expected = max(1 - ((y - D[:, 0]) ** 2).sum() / ((y - y.mean()) ** 2).sum() for D in loo)
    else:
        classes = np.unique(y)
        Y = np.where(y[:, None] == classes[None, :], 1.0, -1.0)
        loo = ridge_loo_outputs(U, Y, alphas, 2)
        expected = max(np.mean(classes[D.argmax(axis=1)] == y) for D in loo)
    assert scr.cv_results_["screen_score"][scr.best_index_] == pytest.approx(expected, abs=1e-12)


def test_no_screening_when_the_pairs_fit_in_the_finalists(rng):
    """With at most n_finalists (joint, factor) pairs the screened search is exhaustive;
    with more it screens and cross-validates n_finalists of them."""
    Xs, y = _views(rng, n=60)
    kw = dict(alphas=[0.01, 1.0], etas=[0.5], bandwidth_factors=[1.0], max_iter=2, cv=3)
    a = MVMLRegressorCV(n_finalists=2, **kw).fit(Xs, y)  # 2 pairs: with, without joint view
    b = MVMLRegressorCV(search="exhaustive", **kw).fit(Xs, y)
    assert "screen_score" not in a.cv_results_
    np.testing.assert_array_equal(
        a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"]
    )
    c = MVMLRegressorCV(**kw).fit(Xs, y)  # the default: one finalist of the 2 pairs
    assert "screen_score" in c.cv_results_
    scored = ~np.isnan(c.cv_results_["mean_test_score"])
    pairs = {str(p["joint_view"]) for p, ok in zip(c.cv_results_["params"], scored) if ok}
    assert len(pairs - {"only"}) == N_FINALISTS == 1


@pytest.mark.slow
def test_screening_keeps_the_exhaustive_quality_on_digits():
    """On digits cut into 2 views (400 rows), the screened search's best candidate scores
    within half a point of the exhaustive search's best with 2 finalist pairs, within one
    point with the default single pair (measured: 0.9600 exhaustive, 0.9600 with 2 pairs,
    0.9526 with 1; test accuracy on the other 1397 rows 0.9406, 0.9406, 0.9384), with far
    fewer candidates cross-validated."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X, y = X[:400], y[:400]
    kw = dict(views=[32, 32], cv=3, max_iter=3, etas=[0.1, 10.0], random_state=0)
    full = MVMLClassifierCV(search="exhaustive", **kw).fit(X, y)
    two = MVMLClassifierCV(n_finalists=2, **kw).fit(X, y)
    assert two.best_score_ >= full.best_score_ - 0.005
    scr = MVMLClassifierCV(**kw).fit(X, y)
    assert scr.best_score_ >= full.best_score_ - 0.01
    n_scored = np.isfinite(scr.cv_results_["mean_test_score"]).sum()
    assert n_scored < np.isfinite(two.cv_results_["mean_test_score"]).sum()
    assert (
        np.isfinite(two.cv_results_["mean_test_score"]).sum() <= len(full.cv_results_["params"]) / 5
    )


def test_bad_search_value():
    X = np.random.default_rng(0).standard_normal((30, 4))
    with pytest.raises(ValueError, match="search"):
        MVMLRegressorCV(search="fast", views=[2, 2]).fit(X, X[:, 0])


def test_hinge_screen_cross_validates_one_pair_at_every_alpha(rng):
    """MVMLSVCCV's screen: one (joint view, bandwidth factor) pair, the one of highest
    screen_score (MVML_I's best leave-one-out accuracy over the square loss's alpha grid),
    cross-validated at every searched alpha, eta and iteration with exactly the exhaustive
    search's scores; the other candidates are NaN and rank last; search="exhaustive" scores
    the whole grid."""
    from mvkernels import MVMLSVCCV
    from mvkernels.mvml.cv import DEFAULT_ALPHAS

    Xs, y = _views(rng)
    y = np.digitize(y, [-0.5, 0.5])
    kw = dict(
        alphas=[1e-3, 1e-2],
        etas=[0.1, 1.0],
        bandwidth_factors=[0.25, 1.0, 8.0],
        max_iter=2,
        n_landmarks=15,
        random_state=0,
    )
    full = MVMLSVCCV(search="exhaustive", **kw).fit(Xs, y)
    scr = MVMLSVCCV(**kw).fit(Xs, y)
    res, ref = scr.cv_results_, full.cv_results_
    assert np.all(np.isfinite(ref["mean_test_score"])) and "screen_score" not in ref
    assert res["params"] == ref["params"]
    mean = res["mean_test_score"]
    scored = np.isfinite(mean)
    factors = np.asarray(res["param_bandwidth_factor"], dtype=float)
    kept = set(factors[scored])
    assert len(kept) == 1 and scored.sum() == 2 * 2 * 2  # alphas x etas x iterations
    np.testing.assert_allclose(mean[scored], ref["mean_test_score"][scored], atol=1e-12)
    for k in range(scr.n_splits_):
        assert np.all(np.isnan(res[f"split{k}_test_score"][~scored]))
    assert res["rank_test_score"][scored].max() < res["rank_test_score"][~scored].min()
    by_factor = dict(zip(factors, res["screen_score"]))
    assert by_factor[kept.pop()] == max(by_factor.values())
    assert scr.best_score_ == pytest.approx(mean[scored].max())
    # the screen score of the kept pair: ridge leave-one-out accuracy at its best alpha
    nys = BlockNystrom(kernel_params=scr.best_kernel_params_, n_landmarks=15, random_state=0)
    U = nys.fit(Xs).transform(Xs)
    classes = np.unique(y)
    Y = np.where(y[:, None] == classes[None, :], 1.0, -1.0)
    loo = ridge_loo_outputs(U, Y, np.asarray(DEFAULT_ALPHAS), 2)
    expected = max(np.mean(classes[D.argmax(axis=1)] == y) for D in loo)
    assert res["screen_score"][scr.best_index_] == pytest.approx(expected, abs=1e-12)


@pytest.mark.slow
def test_hinge_screen_picks_the_exhaustive_bandwidth_on_digits():
    """On digits cut into 2 views (the benchmark's 1347 training rows), MVMLSVCCV's
    screened default search keeps the bandwidth factor of the exhaustive search's best
    candidate and finds the same best candidate."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    from mvkernels import MVMLSVCCV

    X, y = load_digits(return_X_y=True)
    tr, _ = train_test_split(np.arange(len(y)), train_size=1347, random_state=0, stratify=y)
    Xs = [X[tr, :32], X[tr, 32:]]
    full = MVMLSVCCV(search="exhaustive", random_state=0).fit(Xs, y[tr])
    scr = MVMLSVCCV(random_state=0).fit(Xs, y[tr])
    assert np.isfinite(scr.cv_results_["mean_test_score"]).sum() == 12
    assert scr.best_params_ == full.best_params_
    assert scr.best_score_ == pytest.approx(full.best_score_, abs=1e-12)


def test_folds_with_fewer_rows_than_features_use_the_row_space(rng, monkeypatch):
    """When a fold has fewer training rows than features, its dense-metric paths run in the
    span of the fold Gram matrix's nonzero eigenvectors (n x n factorisation): the same
    cross-validation scores as the full d x d eigenbasis, and the factorisation is used."""
    from mvkernels.mvml._lowrank import SharedSpectrum

    Xs, y = _views(rng, n=60)
    kw = dict(
        alphas=[1e-2, 1.0],
        etas=[0.1, 1.0],
        bandwidth_factors=[1.0],
        max_iter=3,
        cv=3,
        n_landmarks=40,
        random_state=0,
    )  # 2 views x 40 landmarks (+ 40 joint) > 40 training rows per fold
    calls = []
    real = SharedSpectrum.from_rows.__func__
    monkeypatch.setattr(
        SharedSpectrum, "from_rows", classmethod(lambda c, R: calls.append(R.shape) or real(c, R))
    )
    got = MVMLRegressorCV(**kw).fit(Xs, y).cv_results_["mean_test_score"]
    assert calls and all(r < d for r, d in calls)
    monkeypatch.setattr(
        SharedSpectrum, "from_rows", classmethod(lambda c, R: c.from_matrix(R.T @ R))
    )
    ref = MVMLRegressorCV(**kw).fit(Xs, y).cv_results_["mean_test_score"]
    scored = np.isfinite(ref)
    assert scored.sum() > 4
    np.testing.assert_allclose(got[scored], ref[scored], rtol=1e-9, atol=1e-10)


def test_screen_grams_of_a_map_with_an_intercept_equal_the_centred_features(rng):
    """With an unpenalised intercept the screen's row-side Gram matrix is that of the
    centred features, J W J (J = I - 11^T / n) from the landmark Gram matrices: equal to
    the centred features' product, and the leave-one-out outputs equal ridge_loo_outputs
    with fit_intercept on the features (no normalisers fitted for either)."""
    Xs = [rng.standard_normal((16, 3)), rng.standard_normal((16, 2))]
    Xs.append(np.hstack(Xs))
    nys = _deferred_map(Xs, 16)
    grams = ScreenGrams.of_map(nys, Xs, 32)
    assert grams.row_side
    U = BlockNystrom(n_landmarks=16, random_state=0)._fit_views(Xs).transform(Xs)
    Y = np.where(rng.standard_normal((16, 3)) > 0, 1.0, -1.0)
    alphas = np.array([1e-3, 0.1, 2.0])
    for cols, v in ((slice(0, 32), 2), (slice(None), 3), (slice(32, None), 1)):
        B = U[:, cols] - U[:, cols].mean(axis=0)
        for G in (grams.centred(cols), grams.row_gram(cols, centred=True)):
            np.testing.assert_allclose(G, B @ B.T, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(
            grams.row_gram(cols), U[:, cols] @ U[:, cols].T, rtol=1e-9, atol=1e-9
        )
        np.testing.assert_allclose(
            grams.loo_outputs(cols, Y, alphas, v, fit_intercept=True),
            ridge_loo_outputs(U[:, cols], Y, alphas, v, fit_intercept=True),
            rtol=1e-7,
            atol=1e-9,
        )
    assert "normalizers_" not in nys.__dict__ and grams._U is None


@pytest.mark.parametrize("multi_class, fit_intercept", [("ovr", False), ("ovo", True)])
def test_batched_finalist_reads_the_screen_gram(rng, monkeypatch, multi_class, fit_intercept):
    """The finalist's batched folds (fewer rows per problem than features, every row a
    landmark) read the screen's landmark Gram matrices as their row Gram matrix: the
    same scores and choices as from the features (ScreenGrams.row_side off), and the
    search fits no normaliser of the map (the refit fits its own)."""
    n = 36
    Xs = [rng.standard_normal((n, 4)), rng.standard_normal((n, 3))]
    y = np.argmax(Xs[0][:, :3] + 0.5 * Xs[1][:, :3], axis=1)
    kw = dict(
        multi_class=multi_class,
        fit_intercept=fit_intercept,
        etas=[0.1, 1.0],
        max_iter=3,
        cv=3,
        random_state=0,
    )
    fitted = []
    real = ScreenGrams.fitted
    monkeypatch.setattr(ScreenGrams, "fitted", lambda self: fitted.append(1) or real(self))
    got = MVMLClassifierCV(**kw).fit(Xs, y)
    assert not fitted  # the batched CV needed neither the normalisers nor the features
    monkeypatch.setattr(ScreenGrams, "row_side", property(lambda self: False))
    ref = MVMLClassifierCV(**kw).fit(Xs, y)
    assert fitted  # the features' route
    a, b = got.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"]
    np.testing.assert_array_equal(np.isfinite(a), np.isfinite(b))
    assert np.isfinite(a).sum() >= 4
    np.testing.assert_allclose(a[np.isfinite(a)], b[np.isfinite(b)], rtol=1e-12, atol=1e-12)
    assert got.best_params_ == ref.best_params_ and got.best_score_ == ref.best_score_
    np.testing.assert_allclose(
        got.decision_function(Xs), ref.decision_function(Xs), rtol=0, atol=1e-12
    )

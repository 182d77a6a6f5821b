"""The multi-class decomposition axis of the CV estimators:
``MVMLClassifierCV(multi_class="ovr" | "ovo" | "auto")`` and ``MVMLSVCCV``'s."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.model_selection import StratifiedKFold

from _abandon import check_abandoned
from mvkernels import MVMLSVC, MVMLSVCCV, MVMLClassifier, MVMLClassifierCV
from mvkernels.mvml.cv._grid import PART_AXES


def _line(seed=0, n=90):
    """Three classes on a line, the middle one between the others (a second view of
    noise): a least-squares one-vs-rest fit masks the middle class (its +-1 target is
    not linear along the line), the pairs separate it."""
    rng = np.random.RandomState(seed)
    t = rng.uniform(-3, 3, n)
    y = np.digitize(t, [-1.0, 1.0])
    return [np.c_[t + 0.1 * rng.randn(n), rng.randn(n)], rng.randn(n, 2)], y


def _blobs(seed=0, n_per=20, k=4):
    rng = np.random.RandomState(seed)
    centres = rng.randn(k, 3) * 2.0
    y = np.repeat(np.arange(k), n_per)
    X = centres[y] + rng.randn(y.size, 3)
    return [X[:, :2], np.c_[X[:, 2:], rng.randn(y.size, 1)]], y


def _true_class_score(est, X, y, sample_weight=None):
    """A continuous score (the mean decision value of the true class), so that fold
    scores compare to 1e-8 rather than as accuracies."""
    D = est.decision_function(X)
    return float(np.average(D[np.arange(len(y)), np.asarray(y)], weights=sample_weight))


def test_picks_ovo_where_one_vs_rest_cannot_separate():
    Xs, y = _line()
    kw = dict(kernel="linear", fit_intercept=True, cv=3, random_state=0)
    auto = MVMLClassifierCV(multi_class="auto", **kw).fit(Xs, y)
    ovr = MVMLClassifierCV(**kw).fit(Xs, y)
    ovo = MVMLClassifierCV(multi_class="ovo", **kw).fit(Xs, y)
    assert auto.best_params_["multi_class"] == "ovo"
    assert ovo.best_score_ > 0.9 and ovo.best_score_ > ovr.best_score_ + 0.09
    assert auto.best_score_ == ovo.best_score_
    assert auto.best_estimator_.multi_class == "ovo"
    assert_allclose(auto.decision_function(Xs), ovo.decision_function(Xs), rtol=1e-12)
    assert auto.score(Xs, y) > 0.9


def test_picks_ovr_where_it_is_better():
    """Eight overlapping classes of 6 rows: each pair trains on 8 rows of a fold, and 21
    of the 28 pairs do not involve a row's class (their votes are noise); one-vs-rest
    trains every class on all the fold's rows."""
    rng = np.random.RandomState(1)
    k, n_per = 8, 6
    centres = rng.randn(k, 4)
    y = np.repeat(np.arange(k), n_per)
    X = centres[y] + 0.8 * rng.randn(y.size, 4)
    Xs = [X[:, :2], X[:, 2:]]
    kw = dict(cv=3, random_state=0, bandwidth_factors=[1.0, 4.0])
    auto = MVMLClassifierCV(multi_class="auto", **kw).fit(Xs, y)
    ovo = MVMLClassifierCV(multi_class="ovo", **kw).fit(Xs, y)
    assert auto.best_params_["multi_class"] == "ovr"
    assert auto.best_score_ > ovo.best_score_ + 0.03
    assert auto.best_estimator_.multi_class == "ovr"


@pytest.mark.parametrize(
    "mode",
    [
        dict(n_landmarks=None, kernel_params=None),  # full kernels
        dict(n_landmarks=20, kernel="linear"),  # Nystrom: the pairs' fold statistics
        dict(n_landmarks=20, kernel="linear", fit_intercept=True),
        dict(n_landmarks=20, kernel="linear", fit_intercept=True, weighted=True),
        dict(n_landmarks=None, hinge=True),
        dict(n_landmarks=20, kernel="linear", fit_intercept=True, hinge=True),
    ],
    ids=[
        "full",
        "nystrom",
        "nystrom-intercept",
        "nystrom-weighted",
        "hinge-full",
        "hinge-nystrom-intercept",
    ],
)
def test_ovo_fold_scores_equal_fits_on_each_fold(mode):
    """Every candidate's held-out score is that of MVMLClassifier(multi_class="ovo")
    (MVMLSVC's for MVMLSVCCV) fitted on the fold's training rows (a linear kernel in
    Nystrom mode: the features
    of the fold's own map span the same space as the search's map of all rows)."""
    Xs, y = _blobs(1, n_per=12, k=3)
    mode = dict(mode)
    w = np.random.RandomState(7).uniform(0.5, 2.0, y.size) if mode.pop("weighted", False) else None
    hinge = mode.pop("hinge", False)
    CV, Est = (MVMLSVCCV, MVMLSVC) if hinge else (MVMLClassifierCV, MVMLClassifier)
    kw = dict(
        alphas=[1e-4, 1e-3] if hinge else [1e-2, 1.0],
        etas=[0.1],
        bandwidth_factors=[2.0],
        max_iter=2,
        cv=3,
        search="exhaustive",
        joint_view=False,
        random_state=0,
        **mode,
    )
    cv = CV(multi_class="ovo", scoring=_true_class_score, **kw)
    cv.fit(Xs, y, sample_weight=w)
    splits = list(StratifiedKFold(3).split(Xs[0], y))
    res = cv.cv_results_
    checked = 0
    for c, params in enumerate(res["params"]):
        for k, (tr, te) in enumerate(splits):
            est = Est(
                multi_class="ovo",
                alpha=params["alpha"],
                eta=params["eta"],
                max_iter=params["max_iter"],
                tol=None,
                kernel=mode.get("kernel", "rbf"),
                kernel_params=cv.best_kernel_params_,
                n_landmarks=mode["n_landmarks"],
                fit_intercept=mode.get("fit_intercept", False),
                joint_view=False,
                random_state=0,
            ).fit([X[tr] for X in Xs], y[tr], sample_weight=None if w is None else w[tr])
            w_te = None if w is None else w[te]
            direct = _true_class_score(est, [X[te] for X in Xs], y[te], w_te)
            assert_allclose(res[f"split{k}_test_score"][c], direct, rtol=1e-8, atol=1e-10)
            checked += 1
    assert checked == 4 * 3


def test_auto_is_the_union_of_both_searches_on_the_same_folds():
    Xs, y = _blobs(2)
    kw = dict(cv=3, random_state=0, bandwidth_factors=[1.0, 4.0])
    auto = MVMLClassifierCV(multi_class="auto", **kw).fit(Xs, y)
    ovr = MVMLClassifierCV(**kw).fit(Xs, y)
    ovo = MVMLClassifierCV(multi_class="ovo", **kw).fit(Xs, y)
    dec = np.asarray(auto.cv_results_["param_multi_class"])
    n_ovr = len(ovr.cv_results_["params"])
    assert_array_equal(dec, ["ovr"] * n_ovr + ["ovo"] * len(ovo.cv_results_["params"]))
    mean = auto.cv_results_["mean_test_score"]
    assert_array_equal(mean[dec == "ovr"], ovr.cv_results_["mean_test_score"])
    # one-vs-one's candidates: scored on every fold as in its search alone, or abandoned
    # once they could not beat one-vs-rest's best
    check_abandoned(auto.cv_results_, dec == "ovo", ovo.cv_results_, ovr.best_score_)
    for key in ("params", "split0_test_score", "rank_test_score", "screen_score"):
        assert len(auto.cv_results_[key]) == len(dec)
    assert auto.best_score_ == max(ovr.best_score_, ovo.best_score_)
    winner = ovr if ovr.best_score_ >= ovo.best_score_ else ovo
    assert auto.best_params_ == {"multi_class": winner.multi_class, **winner.best_params_}
    assert auto.cv_results_["rank_test_score"][auto.best_index_] == 1
    assert_allclose(auto.predict_proba(Xs), winner.predict_proba(Xs), rtol=1e-12)


def test_ovo_refit_and_probabilities():
    Xs, y = _blobs(4)
    cv = MVMLClassifierCV(multi_class="ovo", cv=3, random_state=0).fit(Xs, y)
    est = cv.best_estimator_
    assert isinstance(est, MVMLClassifier) and est.multi_class == "ovo"
    assert est.coef_.shape[0] == 4 * 3 // 2  # one problem per pair
    P = cv.predict_proba(Xs)
    assert_allclose(P.sum(axis=1), 1.0)
    assert cv.calibration_.slopes.shape == (6,)  # one Platt sigmoid per pair
    assert_array_equal(cv.predict(Xs), est.predict(Xs))
    # two classes: one-vs-one is one-vs-rest, "auto" searches "ovr" only
    y2 = (y > 1).astype(int)
    a = MVMLClassifierCV(multi_class="auto", cv=3, random_state=0).fit(Xs, y2)
    b = MVMLClassifierCV(cv=3, random_state=0).fit(Xs, y2)
    assert set(np.asarray(a.cv_results_["param_multi_class"])) == {"ovr"}
    assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])


def test_both_part_axes_together():
    Xs, y = _line(5, n=60)
    cv = MVMLClassifierCV(
        loss="auto", multi_class="auto", cv=3, random_state=0, bandwidth_factors=[2.0]
    ).fit(Xs, y)
    pairs = set(zip(cv.cv_results_["param_loss"], cv.cv_results_["param_multi_class"]))
    assert pairs == {("squared", "ovr"), ("squared", "ovo"), ("hinge", "ovr"), ("hinge", "ovo")}
    assert {"loss", "multi_class"} <= set(cv.best_params_)
    best = cv.best_params_
    expected = MVMLSVC if best["loss"] == "hinge" else MVMLClassifier
    assert type(cv.best_estimator_) is expected
    assert cv.best_estimator_.multi_class == best["multi_class"]


def test_svc_cv_ovo():
    Xs, y = _line(6, n=60)
    cv = MVMLSVCCV(multi_class="ovo", fit_intercept=True, kernel="linear").fit(Xs, y)
    assert isinstance(cv.best_estimator_, MVMLSVC)
    assert cv.best_estimator_.multi_class == "ovo"
    assert "multi_class" not in cv.best_params_
    assert cv.score(Xs, y) > 0.9


def test_ovr_is_the_default_and_unchanged():
    Xs, y = _blobs(5)
    a = MVMLClassifierCV(cv=3, random_state=0).fit(Xs, y)
    b = MVMLClassifierCV(multi_class="ovr", cv=3, random_state=0).fit(Xs, y)
    assert "multi_class" not in a.best_params_ and "param_multi_class" not in a.cv_results_
    assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])
    assert a.best_estimator_.multi_class == "ovr"


def test_multi_class_is_validated_and_declared():
    Xs, y = _blobs(0)
    with pytest.raises(ValueError, match="multi_class"):
        MVMLClassifierCV(multi_class="ova").fit(Xs, y)
    assert [a.name for a in PART_AXES] == [
        "feature_relevance",
        "loss",
        "multi_class",
        "fit_intercept",
    ]


@pytest.mark.parametrize(
    "params",
    [dict(), dict(fit_intercept=True), dict(n_a_steps=2, step_size=0.5)],
    ids=["plain", "intercept", "two-a-steps"],
)
def test_batched_pair_paths_equal_per_pair_paths(params):
    """SquareLoss.subset_fold_outputs (the pairs of a fold in one path, each from its
    rows' Gram blocks) gives each pair's held-out decision values of its own fold path
    on its statistics (Loss.fold_paths, the d x d spectrum of M), to 1e-10."""
    from mvkernels.mvml._losses import SquareLoss
    from mvkernels.mvml._problem import MVMLProblem
    from mvkernels.nystrom import FeatureMoments

    rng = np.random.RandomState(3)
    v, p = 2, 12  # dim 24, more than the pairs' rows (two sizes: 16 and 18)
    U = rng.rand(35, v * p)
    tr, te = np.arange(2, 29), np.r_[0, 1, 29:35]
    U_tr, U_te = U[tr], U[te]
    yi = np.repeat([0, 1, 2], [7, 9, 11])
    est = MVMLClassifier(max_iter=3, tol=None, **params)
    loss = SquareLoss(est)
    assert loss.subset_paths_apply()
    alphas, etas = np.array([1e-2, 0.3]), np.array([0.05, 1.0])
    subsets = [
        (rows, np.where(yi[rows] == i, 1.0, -1.0))
        for i, j in [(0, 1), (0, 2), (1, 2)]
        for rows in [np.flatnonzero((yi == i) | (yi == j))]
    ]
    D = loss.subset_fold_outputs(loss.row_gram(U), tr, te, subsets, alphas, etas, v, v * p)
    assert D.shape == (2, 2, 3, 8, 3)
    feature_map = type("Map", (), {"n_views_": v, "n_landmarks_": p})()
    for k, (rows, y) in enumerate(subsets):
        mom = FeatureMoments.from_features(U_tr[rows], y[:, None]).symmetrize()
        problem = loss.with_intercept(MVMLProblem.from_moments(mom, feature_map, y[:, None]))
        GW, basis = loss.fold_paths(est._fit_context(), problem, None, alphas, etas, 3)
        assert basis.shape == (v * p, v * p)  # the d x d spectrum, not the rows'
        coef = GW[..., 0, :] @ basis.T  # (n_alpha, n_eta, K, d)
        b = loss.intercepts(problem, GW, basis)[..., 0]
        direct = coef @ U_te.T + b[..., None]
        assert_allclose(D[..., k], direct, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("multi_class", ["ovo", "ovr"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_search_batched_equals_pair_by_pair(multi_class, fit_intercept, monkeypatch):
    """The search with the problems of each fold in one batch from the Gram blocks of
    its rows (one-vs-one: the pairs; one-vs-rest: the classes on every training row) has
    the scores (a continuous scorer: to 1e-10) and the held-out calibration of the
    search that solves each problem on its fold's statistics."""
    from mvkernels.mvml._losses import SquareLoss

    calls = []
    batch = SquareLoss.subset_fold_outputs

    def counted(self, *args, **kwargs):
        calls.append(len(args[3]))  # the subsets of the batch
        return batch(self, *args, **kwargs)

    monkeypatch.setattr(SquareLoss, "subset_fold_outputs", counted)
    Xs, y = _blobs(3, n_per=10, k=4)
    kw = dict(
        multi_class=multi_class,
        n_landmarks=15,
        cv=3,
        random_state=0,
        max_iter=3,
        fit_intercept=fit_intercept,
        scoring=_true_class_score,
    )
    batched = MVMLClassifierCV(**kw).fit(Xs, y)
    assert calls and set(calls) == {6 if multi_class == "ovo" else 1}
    monkeypatch.setattr(SquareLoss, "subset_paths_apply", lambda self: False)
    apart = MVMLClassifierCV(**kw).fit(Xs, y)
    a, b = batched.cv_results_, apart.cv_results_
    assert_array_equal(np.isnan(a["mean_test_score"]), np.isnan(b["mean_test_score"]))
    assert np.isfinite(a["mean_test_score"]).sum() >= 15
    for key in ("split0_test_score", "split2_test_score", "mean_test_score"):
        assert_allclose(a[key], b[key], rtol=1e-10, atol=1e-10)
    assert batched.best_params_ == apart.best_params_
    cal_a, cal_b = batched.calibration_, apart.calibration_
    assert type(cal_a) is type(cal_b)  # one-vs-one: pairwise slopes; one-vs-rest: softmax
    for name in ("slopes", "scale"):
        if hasattr(cal_a, name):
            assert_allclose(getattr(cal_a, name), getattr(cal_b, name), rtol=1e-8)
    assert_allclose(batched.predict_proba(Xs), apart.predict_proba(Xs), atol=1e-10)


def test_stacked_row_gram_spectra_equal_one_by_one():
    """row_gram_spectra (the matrices of one size in one stacked eigendecomposition)
    gives each matrix's row_gram_spectrum to 1e-10: the eigenvalues, and the eigenvectors
    up to sign (their projector and the matrix rebuilt); a size met once and a rank
    deficient matrix (its rounding-zero eigenvalues dropped) included; NaN raises."""
    from mvkernels.mvml._lowrank import row_gram_spectra, row_gram_spectrum

    rng = np.random.RandomState(4)
    sizes = [7, 9, 7, 5, 9, 7]
    blocks = []
    for n in sizes:
        R = rng.randn(n, 12)
        blocks.append(R @ R.T)
    R = rng.randn(7, 3)  # rank 3 of 7
    blocks.append(R @ R.T)
    got = row_gram_spectra(blocks)
    assert len(got) == len(blocks)
    for B, (s, V) in zip(blocks, got):
        s1, V1 = row_gram_spectrum(B)
        assert s.shape == s1.shape and V.shape == V1.shape
        assert_allclose(s, s1, rtol=1e-10, atol=1e-10 * s1.max())
        assert_allclose(V @ V.T, V1 @ V1.T, atol=1e-10)
        assert_allclose((V * s) @ V.T, B, atol=1e-10 * np.abs(B).max())
    assert got[-1][0].size == 3
    with pytest.raises(ValueError, match="NaN"):
        row_gram_spectra([blocks[0], np.full((7, 7), np.nan)])


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_batched_target_columns_equal_fold_paths(fit_intercept):
    """SquareLoss.subset_fold_outputs with several target columns on one subset (a
    one-vs-rest fold: every training row, a column per class, one spectrum for all)
    gives each column's held-out decision values of the fold path on the fold's
    statistics (Loss.fold_paths, the d x d spectrum of M), to 1e-10; a subset of one
    column in the same batch (a pair) keeps its own values."""
    from mvkernels.mvml._losses import SquareLoss
    from mvkernels.mvml._problem import MVMLProblem
    from mvkernels.nystrom import FeatureMoments

    rng = np.random.RandomState(5)
    v, p = 3, 10  # dim 30, more than the fold's 24 training rows
    U = rng.rand(32, v * p)
    tr, te = np.arange(8, 32), np.arange(8)
    yi = rng.randint(3, size=tr.size)
    Y = np.where(yi[:, None] == np.arange(3), 1.0, -1.0)
    est = MVMLClassifier(max_iter=4, tol=None, fit_intercept=fit_intercept)
    loss = SquareLoss(est)
    alphas, etas = np.array([1e-3, 0.1, 2.0]), np.array([0.01, 1.0])
    pair = np.flatnonzero(yi != 2)
    subsets = [(np.arange(tr.size), Y), (pair, Y[pair, 0])]
    D = loss.subset_fold_outputs(loss.row_gram(U), tr, te, subsets, alphas, etas, v, v * p)
    assert D.shape == (3, 2, 4, 8, 4)
    only = loss.subset_fold_outputs(loss.row_gram(U), tr, te, subsets[1:], alphas, etas, v, v * p)
    assert_allclose(D[..., 3], only[..., 0], rtol=1e-12, atol=1e-12)
    feature_map = type("Map", (), {"n_views_": v, "n_landmarks_": p})()
    mom = FeatureMoments.from_features(U[tr], Y).symmetrize()
    problem = loss.with_intercept(MVMLProblem.from_moments(mom, feature_map, Y))
    GW, basis = loss.fold_paths(est._fit_context(), problem, None, alphas, etas, 4)
    coef = GW @ basis.T  # (n_alpha, n_eta, K, T, d)
    b = loss.intercepts(problem, GW, basis)  # (n_alpha, n_eta, K, T)
    direct = np.einsum("aektd,nd->aeknt", coef, U[te]) + b[..., None, :]
    assert_allclose(D[..., :3], direct, rtol=1e-10, atol=1e-10)


def test_the_searches_of_one_loss_share_the_screen(monkeypatch):
    """multi_class="auto" screens once per loss: "ovr" and "ovo" read the same screen
    (the same candidates cross-validated, test_auto_is_the_union_... checks the scores)."""
    from mvkernels.mvml.cv import _folds_screen

    calls = []
    screen = _folds_screen.screen_pairs

    def counted(fs, S):
        calls.append(fs.loss)
        return screen(fs, S)

    monkeypatch.setattr(_folds_screen, "screen_pairs", counted)
    Xs, y = _line(5, n=60)
    kw = dict(cv=3, random_state=0, bandwidth_factors=[1.0, 4.0])
    MVMLClassifierCV(multi_class="auto", **kw).fit(Xs, y)
    assert calls == ["squared"]
    calls.clear()
    # a scoring without a known bound: no part is abandoned, the hinge is searched too
    MVMLClassifierCV(multi_class="auto", loss="auto", scoring="accuracy", **kw).fit(Xs, y)
    assert sorted(calls) == ["hinge", "squared"]


def test_a_part_axis_that_changes_the_screen_gets_its_own(monkeypatch):
    """The screen cache is keyed by the values of the part axes that declare
    ``changes_screen``: declared on the decomposition too, "ovr" and "ovo" each screen
    (the loss's key has both values), and the search is the same (the screen does not
    read the decomposition). A scoring without a known bound: no part is abandoned."""
    from dataclasses import replace

    from mvkernels.mvml.cv import _folds_screen, _search

    Xs, y = _line(5, n=60)
    kw = dict(cv=3, random_state=0, bandwidth_factors=[1.0, 4.0], scoring="accuracy")
    shared = MVMLClassifierCV(multi_class="auto", **kw).fit(Xs, y)
    keys = []
    screen = _folds_screen.screen_pairs

    def counted(fs, S):
        keys.append(fs.screen_key)
        return screen(fs, S)

    axes = tuple(
        replace(a, changes_screen=True) if a.name == "multi_class" else a for a in PART_AXES
    )
    monkeypatch.setattr(_search, "PART_AXES", axes)
    monkeypatch.setattr(_folds_screen, "screen_pairs", counted)
    apart = MVMLClassifierCV(multi_class="auto", **kw).fit(Xs, y)
    names = [tuple(name for name, _ in key) for key in keys]
    assert names == [("feature_relevance", "loss", "multi_class", "fit_intercept")] * 2
    assert [dict(key)["multi_class"] for key in keys] == ["ovr", "ovo"]
    for name in ("mean_test_score", "screen_score", "params"):
        assert_array_equal(np.asarray(apart.cv_results_[name]), shared.cv_results_[name])
    assert apart.best_params_ == shared.best_params_

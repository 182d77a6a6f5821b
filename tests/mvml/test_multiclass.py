"""One-vs-one MVML (``multi_class="ovo"`` of MVMLClassifier and MVMLSVC)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import _ovr_decision_function

from mvkernels import MVMLSVC, MVMLClassifier
from mvkernels.mvml._base import _BaseMVML
from mvkernels.mvml._multiclass import (
    _fit_sigmoid,
    class_moments,
    couple_pairwise,
    fit_pairwise_calibration,
    ovo_pairs,
    ovo_predicted_indices,
    ovo_vote_scores,
    pair_problem,
)
from mvkernels.nystrom import FeatureMoments


def _blobs(n_per=15, K=4, seed=0, spread=1.5):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), n_per)
    X1 = rng.normal(size=(y.size, 3))
    X2 = rng.normal(size=(y.size, 2))
    X1[:, 0] += spread * y
    X2[:, 1] -= spread * (y % 2)
    return [X1, X2], y


def _quiet():
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("ignore", ConvergenceWarning)
    return ctx


@pytest.mark.parametrize(
    "cls, params",
    [
        (MVMLClassifier, dict(alpha=0.5, max_iter=3)),
        (MVMLClassifier, dict(alpha=0.5, max_iter=2, metric="sparse", eta=0.1)),
        (MVMLSVC, dict(alpha=1e-2, max_iter=2, C=1.0)),
    ],
)
def test_ovo_equals_separate_binary_fits_full_mode(cls, params):
    Xs, y = _blobs(n_per=8, K=4)
    labels = np.array(["a", "b", "c", "d"])[y]
    Xt = [X + 0.3 for X in Xs]
    common = dict(n_landmarks=None, kernel_params={"gamma": 0.3}, random_state=0, **params)
    ctx = _quiet()
    ovo = cls(multi_class="ovo", decision_function_shape="ovo", **common).fit(Xs, labels)
    D = ovo.decision_function(Xt)
    assert D.shape == (Xt[0].shape[0], 6)
    for k, (i, j) in enumerate(ovo_pairs(4)):
        rows = (y == i) | (y == j)
        sep = cls(**common).fit([X[rows] for X in Xs], labels[rows])
        # the separate fit's +1 is its classes_[1] = class j; the pair's +1 is class i
        np.testing.assert_allclose(D[:, k], -sep.decision_function(Xt), rtol=0, atol=1e-10)
        np.testing.assert_allclose(ovo.weights_[k], sep.weights_, atol=1e-12)
        A = ovo.metric_[k]
        np.testing.assert_allclose(A, sep.metric_, atol=1e-10)
    ctx.__exit__(None, None, None)
    if cls is MVMLSVC:  # one dual column per pair, zero off the pair's rows
        assert ovo.dual_coef_.shape == (y.size, 6)
        for k, (i, j) in enumerate(ovo_pairs(4)):
            assert np.all(ovo.dual_coef_[(y != i) & (y != j), k] == 0)


@pytest.mark.parametrize("metric", ["dense", "cov"])
def test_pair_statistics_are_sums_of_class_moments(metric):
    """Nystrom mode: the pair's C, c, y^T y, feature sum and scatter from the per-class
    moments equal those of one pass over the pair's rows; the pair fit solves that problem."""
    Xs, y = _blobs(n_per=10, K=3)
    clf = MVMLClassifier(
        multi_class="ovo", n_landmarks=6, metric=metric, joint_view=False, random_state=0
    )
    clf.fit(Xs, y)
    nys = clf.nystrom_
    problem = clf._build_problem(Xs, np.where(y[:, None] == np.arange(3), 1.0, -1.0))
    moms = class_moments(nys, problem.row_data.Xs, y, 3)
    for i, j in ovo_pairs(3):
        sub, rows = pair_problem(problem, y, i, j, moms)
        yp = np.where(y[rows] == i, 1.0, -1.0)[:, None]
        ref = nys.moments([X[rows] for X in Xs], yp)
        np.testing.assert_allclose(sub.stats.gram, ref.gram, atol=1e-10)
        np.testing.assert_allclose(sub.stats.cross, ref.cross, atol=1e-10)
        np.testing.assert_allclose(sub.stats.target_sq, [rows.size], atol=1e-12)
        np.testing.assert_allclose(sub.stats.feature_sum, ref.sum, atol=1e-10)
        np.testing.assert_allclose(sub.stats.feature_scatter, ref.centered_gram(), atol=1e-10)
    # the fitted pair models are the solutions of those problems
    for k, (i, j) in enumerate(ovo_pairs(3)):
        sub, _ = pair_problem(problem, y, i, j, moms)
        (r,) = _BaseMVML._solve(clf, sub)  # the binary solve, not the pairs'
        np.testing.assert_allclose(clf.coef_[k], r.g, atol=1e-10)


def test_vote_scores_match_sklearn_rule():
    rng = np.random.default_rng(1)
    for K in (3, 4, 6):
        P = K * (K - 1) // 2
        D = rng.normal(size=(500, P))
        D[:50] = np.round(D[:50])  # exact zeros and vote ties
        ref = _ovr_decision_function(D < 0, -D, K)
        np.testing.assert_allclose(ovo_vote_scores(D, K), ref, atol=1e-12)
        np.testing.assert_array_equal(ovo_predicted_indices(D, K), np.argmax(ref, axis=1))


def test_predict_is_votes_then_summed_values():
    # 3 classes, a 3-cycle of votes: each class 1 vote; the largest summed value wins
    D = np.array([[1.0, -0.5, 2.0]])  # (0,1)->0, (0,2)->2, (1,2)->1
    # summed towards each class: 0: 1 - 0.5 = 0.5; 1: -1 + 2 = 1; 2: 0.5 - 2 = -1.5
    assert ovo_predicted_indices(D, 3)[0] == 1


def test_estimator_decisions_and_predict_agree():
    Xs, y = _blobs(n_per=12, K=4)
    clf = MVMLClassifier(multi_class="ovo", random_state=0).fit(Xs, y)
    S = clf.decision_function(Xs)
    D = clf.set_params(decision_function_shape="ovo").decision_function(Xs)
    np.testing.assert_allclose(S, _ovr_decision_function(D < 0, -D, 4), atol=1e-12)
    np.testing.assert_array_equal(clf.predict(Xs), np.argmax(S, axis=1))


def test_binary_ovo_is_ovr():
    Xs, y = _blobs(n_per=15, K=2)
    a = MVMLClassifier(random_state=0).fit(Xs, y)
    b = MVMLClassifier(multi_class="ovo", decision_function_shape="ovo", random_state=0)
    b.fit(Xs, y)
    np.testing.assert_array_equal(a.decision_function(Xs), b.decision_function(Xs))


def test_coupling_solves_method_2():
    rng = np.random.default_rng(2)
    K = 5
    R = rng.uniform(0.05, 0.95, size=(20, K, K))
    R = np.triu(R, 1) + np.tril(1 - np.swapaxes(np.triu(R, 1), 1, 2), -1)
    P = couple_pairwise(R)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.all(P >= 0)
    for r, p in zip(R, P):  # stationarity: Q p = b e with Q of method 2
        Q = -(r.T * r)
        np.fill_diagonal(Q, 0.0)
        np.fill_diagonal(Q, np.sum(r**2, axis=0) - np.diag(r) ** 2)
        g = Q @ p
        np.testing.assert_allclose(g, g.mean(), atol=1e-10)


@pytest.mark.parametrize("cls", [MVMLClassifier, MVMLSVC])
def test_predict_proba_ovo(cls):
    Xs, y = _blobs(n_per=15, K=3, spread=6.0)
    ctx = _quiet()
    clf = cls(multi_class="ovo", probability=True, random_state=0).fit(Xs, y)
    ctx.__exit__(None, None, None)
    P = clf.predict_proba(Xs)
    assert P.shape == (y.size, 3)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(np.argmax(P, axis=1), clf.predict(Xs))
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(Xs)), P, atol=1e-12)
    assert clf.calibration_.slopes.shape == (3,)


def test_ovo_beats_ovr_on_a_middle_class():
    """Three classes along a line, a linear kernel on ``[x, 1]``: no linear function
    separates the middle class from the two others (one-vs-rest), every pair is separable."""
    rng = np.random.default_rng(3)
    y = np.repeat(np.arange(3), 30)
    x = 3.0 * y + rng.uniform(-1, 1, size=y.size)
    V = np.column_stack([x, np.ones_like(x)])
    W = rng.normal(size=(y.size, 2))  # an uninformative second view
    Xs = [V, W]
    common = dict(kernel="linear", alpha=1e-3, metric="identity", n_landmarks=None)
    ovr = MVMLClassifier(**common).fit(Xs, y).score(Xs, y)
    ovo = MVMLClassifier(multi_class="ovo", **common).fit(Xs, y).score(Xs, y)
    assert ovo >= 0.95
    assert ovo - ovr >= 0.15  # measured: 1.0 and 0.8 (the middle class masked at its edges)


def test_missing_and_sparse_views():
    Xs, y = _blobs(n_per=12, K=3)
    Xm = [X.copy() for X in Xs]
    Xm[1][::5] = np.nan
    for nl in ("auto", None):
        clf = MVMLClassifier(multi_class="ovo", n_landmarks=nl, random_state=0).fit(Xm, y)
        assert clf.score(Xm, y) > 0.8
    S = [sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0)) for X in Xs]
    clf = MVMLClassifier(multi_class="ovo", random_state=0).fit(S, y)
    dense = MVMLClassifier(multi_class="ovo", random_state=0).fit([s.toarray() for s in S], y)
    np.testing.assert_allclose(clf.decision_function(S), dense.decision_function(S), atol=1e-8)


def test_dask_fit_is_refused_and_predict_is_lazy():
    da = pytest.importorskip("dask.array")
    Xs, y = _blobs(n_per=10, K=3)
    Xd = [da.from_array(X, chunks=10) for X in Xs]
    with pytest.raises(ValueError, match=r"multi_class='ovo'\) does not support Dask"):
        MVMLClassifier(multi_class="ovo").fit(Xd, y)
    clf = MVMLClassifier(multi_class="ovo", random_state=0).fit(Xs, y)
    np.testing.assert_array_equal(clf.predict(Xd).compute(), clf.predict(Xs))
    np.testing.assert_allclose(
        clf.decision_function(Xd).compute(), clf.decision_function(Xs), atol=1e-12
    )


def test_svc_auto_is_one_vs_one_with_more_than_two_classes():
    """MVMLSVC's default ``multi_class="auto"``: the one-vs-one model in memory with
    K > 2 classes, the one binary problem with two; the square-loss classifier keeps
    "ovr" / "ovo" only. The CV's folds and refit stay one-vs-rest."""
    from mvkernels import MVMLSVCCV

    Xs, y = _blobs(n_per=8, K=3)
    kw = dict(alpha=1e-2, max_iter=2, n_landmarks=10, random_state=0)
    ctx = _quiet()
    auto = MVMLSVC(**kw).fit(Xs, y)
    ovo = MVMLSVC(multi_class="ovo", **kw).fit(Xs, y)
    assert auto.multi_class == "auto" and auto._ovo_active()
    np.testing.assert_array_equal(auto.decision_function(Xs), ovo.decision_function(Xs))
    binary = y < 2
    auto2 = MVMLSVC(**kw).fit([X[binary] for X in Xs], y[binary])
    ovr2 = MVMLSVC(multi_class="ovr", **kw).fit([X[binary] for X in Xs], y[binary])
    np.testing.assert_array_equal(auto2.decision_function(Xs), ovr2.decision_function(Xs))
    cv = MVMLSVCCV(alphas=[1e-2], etas=[1.0], bandwidth_factors=[2.0], cv=2, random_state=0)
    cv.fit(Xs, y)
    ctx.__exit__(None, None, None)
    assert cv.best_estimator_.multi_class == "ovr" and not cv.best_estimator_._ovo_active()
    with pytest.raises(ValueError, match="multi_class"):
        MVMLClassifier(multi_class="auto").fit(Xs, y)


def test_invalid_multi_class():
    Xs, y = _blobs(n_per=5, K=3)
    with pytest.raises(ValueError, match="multi_class"):
        MVMLClassifier(multi_class="crammer").fit(Xs, y)


def test_unequal_classes_full_mode_attributes():
    Xs, y = _blobs(n_per=10, K=3)
    keep = np.r_[0:10, 10:16, 20:30]  # 10, 6 and 10 rows
    Xs, y = [X[keep] for X in Xs], y[keep]
    clf = MVMLClassifier(multi_class="ovo", n_landmarks=None, joint_view=False, random_state=0)
    clf.fit(Xs, y)
    v = len(Xs)
    assert [A.shape[0] for A in clf.metric_] == [v * 16, v * 20, v * 16]
    assert clf.coef_.shape == (3, v * y.size)
    G = clf.coef_.reshape(3, v, y.size)
    for k, (i, j) in enumerate(ovo_pairs(3)):
        assert np.all(G[k][:, (y != i) & (y != j)] == 0)
    assert clf.score(Xs, y) > 0.8


@pytest.mark.parametrize("weighted", [False, True])
def test_svc_ovo_hinge_weight_is_each_pairs_own(weighted):
    """``C=None`` under one-vs-one: ``C_[k]`` is the weight the pair's own binary fit uses,
    ``1 / n_ij`` (``1 / sum`` of the pair's row weights), and bounds its multipliers."""
    Xs, y = _blobs(n_per=6, K=3, seed=2)
    keep = np.r_[np.arange(12), np.arange(12, 16)]  # classes of 6, 6 and 4 rows
    Xs, y = [X[keep] for X in Xs], y[keep]
    sw = np.random.default_rng(1).integers(1, 4, size=y.size).astype(float) if weighted else None
    common = dict(n_landmarks=None, kernel_params={"gamma": 0.3}, alpha=1e-2, max_iter=2)
    ctx = _quiet()
    ovo = MVMLSVC(multi_class="ovo", **common).fit(Xs, y, sample_weight=sw)
    assert np.shape(ovo.C_) == (3,)
    for k, (i, j) in enumerate(ovo_pairs(3)):
        rows = (y == i) | (y == j)
        sep = MVMLSVC(**common).fit(
            [X[rows] for X in Xs], y[rows], sample_weight=None if sw is None else sw[rows]
        )
        assert ovo.C_[k] == pytest.approx(sep.C_, rel=1e-15)
        box = ovo.C_[k] * (1.0 if sw is None else sw)
        assert np.all(ovo.dual_coef_[:, k] <= box * (1 + 1e-9) + 1e-15)
    ctx.__exit__(None, None, None)
    assert not np.allclose(ovo.C_, ovo.C_[0])  # unequal pairs: the old single 1/n was wrong


@pytest.mark.parametrize(
    "params",
    [
        dict(),
        dict(fit_intercept=True),
        dict(tol=1e-2, max_iter=8),  # pairs stopping apart
        dict(n_a_steps=2, joint_view=True),
    ],
    ids=["plain", "intercept", "tol", "two-a-steps-joint"],
)
def test_nystrom_pairs_in_one_batch_equal_binary_solves(params):
    """Nystrom mode with the structured path: the pairs (fewer rows than features: each
    spectrum from its rows) solved in one batched path are the binary solves of the
    pairs' problems on their statistics (the d x d spectrum), to 1e-10."""
    Xs, y = _blobs(n_per=10, K=4)  # 20 rows a pair, 30 features (15 a view)
    kw = dict(alpha=0.1, eta=0.5, max_iter=4, joint_view=False, random_state=0)
    kw.update(params)
    ctx = _quiet()
    clf = MVMLClassifier(multi_class="ovo", n_landmarks=15, **kw).fit(Xs, y)
    assert clf.solver_ == "structured"
    problem = clf._build_problem(Xs, np.where(y[:, None] == np.arange(4), 1.0, -1.0))
    moms = class_moments(clf.nystrom_, problem.row_data.Xs, y, 4)
    for k, (i, j) in enumerate(ovo_pairs(4)):
        sub, rows = pair_problem(problem, y, i, j, moms)
        assert rows.size < sub.dim
        (r,) = _BaseMVML._solve(clf, sub)  # the binary solve, not the pairs'
        np.testing.assert_allclose(clf.coef_[k], r.g, rtol=0, atol=1e-10)
        np.testing.assert_allclose(clf.intercept_[k], r.intercept, atol=1e-10)
        assert clf.n_iter_[k] == r.n_iter
        A = _BaseMVML._metric_stack(clf, [r]).toarray()[0]
        np.testing.assert_allclose(clf.metric_[k], A, atol=1e-10)
        min_eig = r.metric.min_eigenvalue()
        np.testing.assert_allclose(clf.metric_min_eigenvalue_[k], min_eig, atol=1e-10)
    ctx.__exit__(None, None, None)


def merged_targets(moms, Y_rows):
    """The moments of all rows with targets, from class moments ``moms`` whose rows all have
    the target row ``Y_rows[k]`` (e.g. the one-vs-all ``+-1`` row of class ``k``): the
    reference for the one-pass training moments of a one-vs-one Nystrom fit."""
    total = None
    for mom, y in zip(moms, Y_rows):
        n = mom.total
        part = FeatureMoments(
            mom.n_samples,
            mom.sum,
            mom.gram,
            cross=np.outer(mom.sum, y),
            target_sum=n * y,
            target_gram=n * np.outer(y, y),
            scatter=mom.scatter,
            weight=mom.weight,
        )
        total = part if total is None else total.merge(part)
    return total.symmetrize()


def test_ovo_training_moments_in_one_pass_and_class_moments_on_demand(monkeypatch):
    """One-vs-one in Nystrom mode: the merged training moments come from one pass over the
    rows (merged_targets of the class moments, to rounding), and the classes' moments are
    computed only when a pair reads them: not by the batched square-loss pairs with fewer
    rows than features (the fit is unchanged), but by a pair fitted from its statistics."""
    from mvkernels.mvml import _multiclass as mc

    Xs, y = _blobs(n_per=12, K=4)
    made = []
    real = mc.class_moments

    def counted(*args, **kw):
        made.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(mc, "class_moments", counted)
    seen = {}
    real_training = mc.OneVsOneMixin._training_moments

    def keep(self, nys, Xs_, Y):
        mom = real_training(self, nys, Xs_, Y)
        seen["merged"], seen["lazy"] = mom, self._ovo_class_moments
        yi = np.argmax(np.asarray(Y), axis=1)
        seen["want"] = merged_targets(real(nys, Xs_, yi, 4), mc.one_vs_all_targets(np.arange(4), 4))
        return mom

    monkeypatch.setattr(mc.OneVsOneMixin, "_training_moments", keep)
    est = MVMLClassifier(multi_class="ovo", n_landmarks=20, max_iter=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(Xs, y)
    for name in ("gram", "sum", "cross", "target_gram"):
        np.testing.assert_allclose(
            getattr(seen["merged"], name), getattr(seen["want"], name), rtol=1e-12, atol=1e-12
        )
    assert not seen["lazy"].computed and not made  # the pairs read their rows
    # the classes' moments on demand: the same as class_moments, computed once
    lazy = seen["lazy"]
    assert len(lazy) == 4 and lazy[2] is lazy[2] and len(made) == 1
    # fewer features than a pair's rows: the pairs are fitted from the classes' moments
    made.clear()
    est = MVMLClassifier(multi_class="ovo", n_landmarks=4, max_iter=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(Xs, y)
    assert seen["lazy"].computed and len(made) == 1


@pytest.mark.parametrize("alpha", [1e-4, 0.3])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("joint_view", ["only", False])
def test_identity_metric_pairs_in_row_space_equal_statistics_form(
    monkeypatch, alpha, fit_intercept, weighted, joint_view
):
    """Identity metric, one-vs-one, fewer rows a pair than features: the pairs' ridge fits
    in the row space (one m x m Cholesky a pair from the rows' Gram) equal the fits from
    the pairs' d x d statistics to 1e-10 (coefficients, offsets, decision values), with
    and without intercept and sample weights, small alphas included; and the fallback (a
    failed factorisation) is the statistics' form."""
    from mvkernels.mvml import _multiclass as mc

    Xs, y = _blobs(n_per=8, K=4)  # 16 rows a pair, 30 or 40 features
    sw = np.random.default_rng(1).uniform(0.2, 2.0, y.size) if weighted else None
    kw = dict(
        multi_class="ovo",
        metric="identity",
        alpha=alpha,
        fit_intercept=fit_intercept,
        joint_view=joint_view,
        n_landmarks=30 if joint_view == "only" else 20,
        random_state=0,
    )
    calls = []
    real = mc.ridge_rows_solve

    def counted(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(mc, "ridge_rows_solve", counted)
    row = MVMLClassifier(**kw).fit(Xs, y, sample_weight=sw)
    assert len(calls) == 6 and row.solver_ == "structured"
    monkeypatch.setattr(mc.OneVsOneMixin, "_ridge_row_form", lambda self, p, loss: None)
    stats = MVMLClassifier(**kw).fit(Xs, y, sample_weight=sw)
    np.testing.assert_allclose(row.coef_, stats.coef_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(row.intercept_, stats.intercept_, rtol=0, atol=1e-10)
    D_row, D_stats = row.decision_function(Xs), stats.decision_function(Xs)
    np.testing.assert_allclose(D_row, D_stats, rtol=0, atol=1e-10)
    monkeypatch.undo()
    monkeypatch.setattr(mc, "ridge_rows_solve", lambda *a: None)  # every Cholesky fails
    fallback = MVMLClassifier(**kw).fit(Xs, y, sample_weight=sw)
    np.testing.assert_array_equal(fallback.coef_, stats.coef_)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pairwise_calibration_batched_equals_one_sigmoid_per_pair(seed):
    """fit_pairwise_calibration (the pairs of one row count in one batched Newton fit,
    _fit_sigmoids) gives the sigmoid of one _fit_sigmoid per pair: unbalanced classes (pairs
    of several row counts), a separable pair, a pair of constant values and noisy ones."""
    rng = np.random.default_rng(seed)
    K = 5
    yi = np.concatenate([np.full(m, c) for c, m in enumerate([6, 9, 9, 14, 7])])
    rng.shuffle(yi)
    pairs = ovo_pairs(K)
    D = rng.normal(size=(yi.size, len(pairs))) * rng.uniform(0.1, 5.0, size=len(pairs))
    D[:, 0] = np.where(yi == 0, 2.0, -2.0) + 0.1 * rng.normal(size=yi.size)  # separable
    D[:, 1] = 0.7  # constant values: std 0
    cal = fit_pairwise_calibration(D, yi, K)
    for k, (i, j) in enumerate(pairs):
        rows = (yi == i) | (yi == j)
        a, b = _fit_sigmoid(D[rows, k], yi[rows] == i)
        got = [cal.slopes[k], cal.intercepts[k]]
        np.testing.assert_allclose(got, [a, b], rtol=1e-12, atol=1e-12)
    assert np.all(np.isfinite(cal.slopes)) and cal.slopes[0] > 0

"""Sample and class weights of the hinge loss (MVMLSVC, MVMLSVCCV): row ``i``'s hinge is
weighted by ``s_i``, its dual box is ``0 <= alpha_i <= s_i C``. Integer weights equal
repeated rows (Nystrom mode, landmarks and bandwidths fixed, the dual solved tightly),
zero weights equal removed rows, the full-kernel mode's weighted g-step against
``LinearSVC`` with ``sample_weight`` and the KKT conditions with per-row boxes,
``class_weight`` as in ``SVC``, the solvers of ``_hinge.py`` with weights, and the CV."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import balanced_accuracy_score
from sklearn.svm import LinearSVC

from _weighted import fit_quietly, fixed_landmarks, split_scores, weighted_data, weighted_folds
from mvkernels import MVMLSVC, MVMLSVCCV, MVMLClassifierCV
from mvkernels.mvml._hinge import (
    dual_from_primal,
    hinge_offsets,
    linear_svm,
    linear_svm_polished,
)
from mvkernels.mvml._hinge_active import active_set_svm, polish_active_sets

#: MVMLSVC as the paper has it (one-vs-all, additive over the views), its defaults before
#: issue 32 (item 4) made them joint_view="auto", multi_class="auto": what these tests check
SVC_PAPER = dict(joint_view=False, multi_class="ovr")


def _paper(**kw: object) -> MVMLSVC:
    """MVMLSVC with :data:`SVC_PAPER`, unless ``kw`` sets the decomposition or the joint
    view."""
    return MVMLSVC(**{**SVC_PAPER, **kw})


KP = [{"gamma": 0.3}, {"gamma": 0.5}]
#: the repeated rows make the active-set solves singular (two copies on the margin):
#: their g-steps run liblinear, solved tightly here so that both fits are exact
TIGHT = dict(svm_tol=1e-12, svm_max_epochs=100000)


@pytest.fixture(scope="module")
def data():
    views, _, labels, w, test = weighted_data()
    return views, labels, w, test


VARIANTS = [
    dict(metric="dense"),
    dict(metric="dense", solver="dense"),
    dict(metric="identity"),
    dict(metric="cov"),
    dict(metric="sparse", eta=0.1),
    dict(metric="dense", learn_weights=True),
    dict(metric="dense", fit_intercept=True),
    dict(metric="identity", fit_intercept=True),
    dict(metric="dense", multi_class="ovo"),
]


@pytest.mark.parametrize("kw", VARIANTS, ids=lambda kw: "-".join(map(str, kw.values())))
def test_integer_weights_equal_repeated_rows_nystrom(data, kw):
    """Nystrom mode, landmarks held fixed (row indices) and fixed bandwidths: the
    weighted hinge ``C sum_i s_i max(0, 1 - m_i)`` with ``C = 1 / sum_i s_i`` is the
    repeated rows' hinge, every g-step's SVM (box ``s_i C'``) the repeated rows' SVM, so
    every iterate (structured and reference paths, w-step, offsets, one-vs-one) is."""
    Xs, labels, w, test = data
    lm, lm_rep, rep = fixed_landmarks(w)
    common = dict(kernel_params=KP, max_iter=3, **TIGHT, **kw)
    weighted = fit_quietly(_paper(landmarks=lm, **common), Xs, labels, sample_weight=w)
    repeated = fit_quietly(_paper(landmarks=lm_rep, **common), [X[rep] for X in Xs], labels[rep])
    np.testing.assert_allclose(
        weighted.decision_function(test), repeated.decision_function(test), rtol=0, atol=1e-8
    )
    np.testing.assert_allclose(weighted.C_, repeated.C_, rtol=1e-14)  # per pair under ovo
    if kw.get("multi_class") != "ovo":
        assert weighted.C_ == pytest.approx(1.0 / w.sum())


def test_missing_views_integer_weights_equal_repeated_rows(data):
    """Missing views (Nystrom mode, fixed landmarks of complete rows): the completion
    statistics are weighted as the loss, so the weighted fit is still the repeated rows',
    on test rows with a missing view too."""
    Xs, labels, w, test = data
    lm, lm_rep, rep = fixed_landmarks(w)
    Xm = [X.copy() for X in Xs]
    Xm[1][[5, 9, 21]] = np.nan  # view 1 missing in three rows
    ok = ~np.isin(lm, [5, 9, 21])
    common = dict(kernel_params=KP, max_iter=3, **TIGHT)
    a = fit_quietly(_paper(landmarks=lm[ok], **common), Xm, labels, sample_weight=w)
    b = fit_quietly(_paper(landmarks=lm_rep[ok], **common), [X[rep] for X in Xm], labels[rep])
    test_m = [test[0], test[1].copy()]
    test_m[1][:3] = np.nan
    np.testing.assert_allclose(
        a.decision_function(test_m), b.decision_function(test_m), rtol=0, atol=1e-8
    )


@pytest.mark.parametrize("n_landmarks", [None, 8], ids=["full", "nystrom"])
@pytest.mark.parametrize(
    "kw", [dict(metric="dense"), dict(metric="identity", fit_intercept=True)], ids=str
)
def test_zero_weights_equal_removed_rows(data, n_landmarks, kw):
    """Rows of zero weight are dropped before anything else (landmark draws and default
    bandwidths included); the other rows' unit weights are the unweighted fit, exactly."""
    Xs, labels, w, test = data
    keep = w > 0
    est = _paper(n_landmarks=n_landmarks, random_state=0, max_iter=3, **kw)
    weighted = fit_quietly(est, Xs, labels, sample_weight=keep.astype(float))
    removed = fit_quietly(est, [X[keep] for X in Xs], labels[keep])
    np.testing.assert_array_equal(weighted.decision_function(test), removed.decision_function(test))


@pytest.mark.parametrize("C", [None, 5.0])
def test_full_mode_weighted_g_step_is_weighted_linear_svc(data, C):
    """Full-kernel mode, ``A = I``, fixed view weights ``1/v``, two classes: the g-step
    is the bias-free SVM ``min_g C sum_i s_i max(0, 1 - y_i (P g)_i) + alpha ||g||^2``,
    ``P = [K_1, K_2] / 2``, i.e. ``LinearSVC(loss="hinge", fit_intercept=False,
    C=C / (2 alpha))`` with ``sample_weight=s`` on the rows of ``P``. The multipliers
    satisfy the KKT conditions with per-row boxes ``0 <= alpha_i <= s_i C``."""
    Xs, labels, w, test = data
    y01 = (labels == "a").astype(int)
    s = w.astype(float)
    s[s == 0] = 0.5  # fractional weights, no row removed
    alpha = 0.05
    est = _paper(
        n_landmarks=None,
        metric="identity",
        kernel_params=KP,
        alpha=alpha,
        C=C,
        **TIGHT,
    )
    est = fit_quietly(est, Xs, y01, sample_weight=s)
    Cw = 1.0 / s.sum() if C is None else C
    assert est.C_ == pytest.approx(Cw)
    Ks = [k(V, V) for k, V in zip(est.kernels_, Xs)]
    Kt = [k(T, V) for k, T, V in zip(est.kernels_, test, Xs)]
    P, Pt = np.hstack(Ks) / 2, np.hstack(Kt) / 2
    y = np.where(y01 == 1, 1.0, -1.0)
    svc = LinearSVC(
        loss="hinge",
        fit_intercept=False,
        C=Cw / (2 * alpha),
        tol=1e-12,
        max_iter=10**6,
        random_state=0,  # liblinear's row order: seeded (unseeded, the test was flaky)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svc.fit(P, y01, sample_weight=s)
    np.testing.assert_allclose(est.decision_function(test), Pt @ svc.coef_[0], atol=1e-7)
    # KKT with per-row boxes: g = A/(2 alpha) sum_i alpha_i y_i phi_i; alpha_i = s_i C
    # below the margin, 0 above, inside the box on it
    a = est.dual_coef_
    assert np.all(a >= -1e-12) and np.all(a <= s * Cw * (1 + 1e-9))
    np.testing.assert_allclose(est.coef_, (a * y) @ P / (2 * alpha), atol=1e-9)
    m = y * (P @ est.coef_)
    below, above = m < 1 - 1e-6, m > 1 + 1e-6
    np.testing.assert_allclose(a[below], s[below] * Cw, rtol=1e-9)
    np.testing.assert_allclose(a[above], 0.0, atol=1e-12)


def test_full_mode_integer_weight_is_not_a_repeated_row(data):
    """Full-kernel mode: the coefficients ``g`` are indexed by the training rows, so a
    repeated row has two coefficients (and two kernel columns: ``phi_i`` of every row
    changes) and the fits differ; what holds is the weighted problem on the rows given
    (the test above). The weighted fit equals the repeated rows' in Nystrom mode with
    fixed landmarks (the first test)."""
    Xs, labels, w, test = data
    rep = np.repeat(np.arange(len(w)), w)
    kw = dict(n_landmarks=None, metric="identity", kernel_params=KP, alpha=0.1, **TIGHT)
    weighted = fit_quietly(_paper(**kw), Xs, labels, sample_weight=w).decision_function(test)
    repeated = fit_quietly(_paper(**kw), [X[rep] for X in Xs], labels[rep]).decision_function(test)
    assert np.abs(weighted - repeated).max() > 0.05  # 0.28 measured (docs/mvml.md)


def test_unit_weights_are_the_unweighted_fit(data):
    Xs, labels, _, test = data
    est = _paper(max_iter=3, random_state=0)
    a = fit_quietly(est, Xs, labels, sample_weight=np.ones(len(labels))).decision_function(test)
    b = fit_quietly(est, Xs, labels).decision_function(test)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("multi_class", ["ovr", "ovo"])
def test_class_weight_is_a_row_weight(data, multi_class):
    """``class_weight`` multiplies each row's box: a dict equals the sample weights of the
    classes (bandwidths fixed: they take ``sample_weight`` only)."""
    Xs, labels, w, test = data
    cw = {"a": 2.0, "b": 0.5}
    per_row = np.array([cw.get(c, 1.0) for c in labels])
    kw = dict(kernel_params=KP, max_iter=3, random_state=0, multi_class=multi_class)
    a = fit_quietly(_paper(class_weight=cw, **kw), Xs, labels, sample_weight=w)
    b = fit_quietly(_paper(**kw), Xs, labels, sample_weight=w * per_row)
    np.testing.assert_allclose(
        a.decision_function(test), b.decision_function(test), rtol=0, atol=1e-10
    )


@pytest.mark.parametrize("multi_class", ["ovr", "ovo"])
def test_zero_class_weight_rows_have_zero_multipliers(data, multi_class):
    """A class weight 0 leaves rows of loss weight 0 in the problem: their box is 0, so
    their multipliers are 0 in every problem (the active sets never free them)."""
    Xs, labels, _, _ = data
    est = MVMLSVC(
        joint_view=False,
        class_weight={"a": 0.0},
        multi_class=multi_class,
        max_iter=3,
        random_state=0,
    )
    est = fit_quietly(est, Xs, labels)
    assert np.all(est.dual_coef_[labels == "a"] == 0.0)
    assert np.any(est.dual_coef_[labels != "a"] > 0.0)


def test_balanced_class_weight_raises_balanced_accuracy():
    """An imbalanced split (about 16% positives): "balanced" raises the held-out balanced
    accuracy of the hinge loss (measured 0.50 -> 0.83 at alpha=1e-2)."""
    rng = np.random.default_rng(3)
    n = 400
    X1, X2 = rng.normal(size=(n, 4)), rng.normal(size=(n, 3))
    score = X1[:, 0] + X2[:, 0] + 0.5 * rng.normal(size=n)
    y = (score > 1.6).astype(int)
    tr, te = np.arange(300), np.arange(300, n)
    acc = {}
    for cw in (None, "balanced"):
        est = _paper(class_weight=cw, alpha=1e-2, random_state=0, max_iter=3)
        est = fit_quietly(est, [X1[tr], X2[tr]], y[tr])
        acc[cw] = balanced_accuracy_score(y[te], est.predict([X1[te], X2[te]]))
    assert acc["balanced"] > acc[None] + 0.2, acc


def test_bad_weights_are_refused(data):
    Xs, labels, w, _ = data
    with pytest.raises(ValueError, match="sample_weight must be >= 0"):
        _paper().fit(Xs, labels, sample_weight=-np.ones(len(labels)))
    with pytest.raises(ValueError, match="sample_weight must be >= 0"):
        MVMLSVCCV(cv=3).fit(Xs, labels, sample_weight=w - 1.0)
    with pytest.raises(ValueError, match=r"class_weight\['a'\] must be a finite number >= 0"):
        _paper(class_weight={"a": -1.0}).fit(Xs, labels)


# ------------------------------------------------------------------ the solvers
@pytest.fixture(scope="module")
def svm_problem():
    """A bias-free SVM with fewer support vectors on the margin than features (the
    active sets settle), integer weights with zeros, and its repeated rows' solution."""
    rng = np.random.RandomState(0)
    n, d = 150, 60
    X = rng.randn(n, d) / 3
    y = np.where(X[:, 0] + 0.3 * rng.randn(n) > 0, 1.0, -1.0)
    s = rng.randint(0, 4, n).astype(float)
    rep = np.repeat(np.arange(n), s.astype(int))
    ref = linear_svm(X[rep], y[rep], 0.5, tol=1e-12, max_iter=100000, random_state=0)
    return X, y, s, 0.5, ref.coef


def test_weighted_solvers_equal_repeated_rows(svm_problem):
    """liblinear's per-row weights, the active set from scratch, the polish of a loose
    solution and the lockstep warm start solve the weighted SVM (box ``s_i C``) to the
    repeated rows' solution; the multipliers are in their boxes, 0 on rows of weight 0."""
    X, y, s, C, v = svm_problem
    lib = linear_svm(X, y, C, tol=1e-12, max_iter=100000, random_state=0, weight=s)
    np.testing.assert_allclose(lib.coef, v, atol=1e-9)
    [(va, a, m)] = active_set_svm(X, y[:, None], C, weight=s)
    np.testing.assert_allclose(va, v, atol=1e-9)
    assert np.all((a >= 0) & (a <= C * s)) and np.all(a[s == 0] == 0)
    np.testing.assert_allclose(va, (a * y) @ X, atol=1e-12)
    res, _, a2 = linear_svm_polished(X, y, C, None, tol=1e-3, random_state=0, weight=s)
    np.testing.assert_allclose(res.coef, v, atol=1e-9)
    rough = linear_svm(X, y, C, tol=0.05, random_state=0, weight=s)
    [(vp, ap, _)] = polish_active_sets(
        X, y[:, None], np.array([C]), (y * (X @ rough.coef))[None], 0.05, weight=s
    )
    np.testing.assert_allclose(vp, v, atol=1e-9)
    # KKT recovery from v alone: the same multipliers, the same v
    ad = dual_from_primal(X, y, v, C, weight=s)
    np.testing.assert_allclose((ad * y) @ X, v, atol=1e-9)
    assert np.all((ad >= 0) & (ad <= C * s))


def test_weighted_hinge_offsets_equal_repeated_rows():
    rng = np.random.default_rng(4)
    F, Y = rng.normal(size=(40, 3)), np.where(rng.normal(size=(40, 3)) > 0, 1.0, -1.0)
    s = rng.integers(0, 4, size=40)
    rep = np.repeat(np.arange(40), s)
    b, val = hinge_offsets(F, Y, 10.0, s.astype(float))
    b_rep, val_rep = hinge_offsets(F[rep], Y[rep], 10.0)
    np.testing.assert_allclose(b, b_rep, atol=1e-12)
    np.testing.assert_allclose(val, val_rep, rtol=1e-12)


# ------------------------------------------------------------------ CV estimators
CV_GRID = dict(alphas=[1e-3, 1e-2], etas=[0.5], max_iter=2, random_state=0)


@pytest.mark.parametrize("kw", [dict(), dict(fit_intercept=True), dict(n_landmarks=None)], ids=str)
def test_cv_zero_weight_is_a_removed_row(data, kw):
    """Explicit folds: a zero weight equals the row removed from its fold, in every
    fold's score and in the refit."""
    Xs, labels, w, test = data
    keep = w > 0
    splits, removed, _ = weighted_folds(len(labels), w, n_splits=3)
    params = {**CV_GRID, **kw}
    a = fit_quietly(MVMLSVCCV(cv=splits, **params), Xs, labels, sample_weight=w)
    b = fit_quietly(
        MVMLSVCCV(cv=removed, **params), [X[keep] for X in Xs], labels[keep], sample_weight=w[keep]
    )
    np.testing.assert_array_equal(split_scores(a), split_scores(b))
    assert a.best_params_ == b.best_params_
    np.testing.assert_array_equal(a.decision_function(test), b.decision_function(test))


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_cv_integer_weights_equal_repeated_rows(data, fit_intercept):
    """Fixed landmarks and bandwidths, every candidate cross-validated: the weighted fold
    problems and the weighted held-out accuracy are the repeated rows' (the CV solves the
    repeated rows' g-steps at the default ``svm_tol``: the held-out accuracies agree, the
    decision values to about ``svm_tol``)."""
    Xs, labels, w, _ = data
    splits, _, repeated = weighted_folds(len(labels), w, n_splits=3)
    lm, lm_rep, rep = fixed_landmarks(w)
    params = dict(
        CV_GRID,
        kernel_params=KP,
        bandwidth_factors=[1.0],
        search="exhaustive",
        fit_intercept=fit_intercept,
    )
    a = fit_quietly(MVMLSVCCV(cv=splits, landmarks=lm, **params), Xs, labels, sample_weight=w)
    b = fit_quietly(
        MVMLSVCCV(cv=repeated, landmarks=lm_rep, **params), [X[rep] for X in Xs], labels[rep]
    )
    np.testing.assert_allclose(split_scores(a), split_scores(b), rtol=0, atol=1e-8)


def test_cv_class_weight_with_the_loss_axis(data):
    """``MVMLClassifierCV(loss="auto")`` with ``class_weight`` and ``sample_weight``:
    both losses' folds are weighted, and the refitted winner carries the class weights;
    a dict equals the classes' sample weights in every fold's score."""
    Xs, labels, w, _ = data
    cw = {"a": 2.0, "b": 0.5}
    per_row = np.array([cw.get(c, 1.0) for c in labels])
    splits, _, _ = weighted_folds(len(labels), w, n_splits=3)
    params = dict(CV_GRID, kernel_params=KP, bandwidth_factors=[1.0], cv=splits)
    a = fit_quietly(
        MVMLClassifierCV(loss="auto", class_weight=cw, **params), Xs, labels, sample_weight=w
    )
    assert set(a.cv_results_["param_loss"]) == {"squared", "hinge"}
    assert a.best_estimator_.class_weight == cw
    # one candidate (the held-out scores take sample_weight only: compare the refits)
    one = dict(params, alphas=[1e-2], metric="identity")
    b = fit_quietly(MVMLSVCCV(class_weight=cw, **one), Xs, labels, sample_weight=w)
    c = fit_quietly(MVMLSVCCV(**one), Xs, labels, sample_weight=w * per_row)
    np.testing.assert_allclose(
        b.best_estimator_.decision_function(Xs),
        c.best_estimator_.decision_function(Xs),
        rtol=0,
        atol=1e-10,
    )

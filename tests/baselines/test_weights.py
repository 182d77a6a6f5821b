"""Sample and class weights of the baselines: integer weights are repeated rows, zero
weights removed rows, ``class_weight`` as in ``sklearn.svm.SVC``, bad weights refused;
and sparse views give the dense views' outputs."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import balanced_accuracy_score

from _weighted import fit_quietly, outputs, weighted_data
from mvkernels import baselines as B
from mvkernels.baselines import _base
from mvkernels.kernels import mean_pairwise_distance


@pytest.fixture(scope="module")
def data():
    return weighted_data()


EXACT = [
    B.SingleViewRegressor(view=1),
    B.SingleViewClassifier(view=0, loss="squared"),
    B.EarlyFusionRegressor(),
    B.EarlyFusionClassifier(loss="squared"),
    B.LateFusionRegressor(kernel=["rbf", "laplacian"]),
    B.LateFusionClassifier(loss="squared"),
    B.LpMKLRegressor(),
    B.LpMKLClassifier(loss="squared"),
    B.OKLRegressor(),
    B.OKLClassifier(),
    B.MLKRRegressor(max_iter=30),
    B.MLKRClassifier(max_iter=30),
]
HINGE = [
    B.SingleViewClassifier(view=0),
    B.EarlyFusionClassifier(),
    B.LateFusionClassifier(),
    B.LpMKLClassifier(),
]


def _ids(ests):
    return [f"{type(e).__name__}-{getattr(e, 'loss', '')}" for e in ests]


@pytest.mark.parametrize("est", EXACT, ids=_ids(EXACT))
def test_integer_weights_equal_repeated_rows(data, est):
    """Default bandwidths included: they are weighted as frequency weights. The repeated
    data's bandwidth has distances of about 1e-8 between copies (the distance formula's
    rounding) where the weighted one has exact zeros: outputs agree to 1e-8, not to
    rounding."""
    Xs, r, labels, w, test = data
    y = labels if est._is_classifier else r
    rep = np.repeat(np.arange(len(y)), w)
    weighted = outputs(fit_quietly(est, Xs, y, sample_weight=w), test)
    repeated = outputs(fit_quietly(est, [X[rep] for X in Xs], y[rep]), test)
    np.testing.assert_allclose(weighted, repeated, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("est", EXACT + HINGE, ids=_ids(EXACT + HINGE))
def test_zero_weights_equal_removed_rows(data, est):
    """Exact: rows of zero weight are dropped before anything is fitted."""
    Xs, r, labels, w, test = data
    y = labels if est._is_classifier else r
    keep = w > 0
    weighted = outputs(fit_quietly(est, Xs, y, sample_weight=w), test)
    removed = outputs(fit_quietly(est, [X[keep] for X in Xs], y[keep], sample_weight=w[keep]), test)
    np.testing.assert_array_equal(weighted, removed)
    ones = outputs(fit_quietly(est, Xs, y, sample_weight=np.ones(len(y))), test)
    np.testing.assert_array_equal(ones, outputs(fit_quietly(est, Xs, y), test))


@pytest.mark.parametrize("est", HINGE, ids=_ids(HINGE))
def test_hinge_weights_equal_repeated_rows_when_solved_exactly(data, est, monkeypatch):
    """The SVMs get ``C w_i`` per row: the problem of the repeated rows. libsvm solves both
    to its ``tol`` (1e-3, they then agree to about 1e-3); solved to 1e-10 they agree to
    1e-6."""
    from sklearn.svm import SVC

    monkeypatch.setattr(
        _base, "_svc", lambda C, rs: SVC(kernel="precomputed", C=C, random_state=rs, tol=1e-10)
    )
    Xs, _, labels, w, test = data
    rep = np.repeat(np.arange(len(labels)), w)
    weighted = outputs(fit_quietly(est, Xs, labels, sample_weight=w), test)
    repeated = outputs(fit_quietly(est, [X[rep] for X in Xs], labels[rep]), test)
    np.testing.assert_allclose(weighted, repeated, rtol=0, atol=1e-6)


def test_view_selection_weighs_folds_and_scores(data):
    """``view="best"``: the CV of the view choice is weighted (fits and scores); with
    zero weights it is that of the removed rows (same folds)."""
    Xs, r, _, w, test = data
    keep = w > 0
    a = B.SingleViewRegressor().fit(Xs, r, sample_weight=w)
    b = B.SingleViewRegressor().fit([X[keep] for X in Xs], r[keep], sample_weight=w[keep])
    np.testing.assert_array_equal(a.view_cv_scores_, b.view_cv_scores_)
    c = B.SingleViewRegressor().fit(Xs, r)
    assert not np.allclose(a.view_cv_scores_, c.view_cv_scores_)


def test_nystrom_zero_weights_equal_removed_rows(data):
    """Landmarks are drawn from the rows of positive weight: those of the removed data."""
    Xs, r, labels, w, test = data
    keep = w > 0
    for est in [
        B.EarlyFusionRegressor(n_landmarks=12, random_state=0),
        B.LateFusionClassifier(n_landmarks=12, random_state=0),
    ]:
        y = labels if est._is_classifier else r
        a = outputs(est.fit(Xs, y, sample_weight=w), test)
        b = outputs(est.fit([X[keep] for X in Xs], y[keep], sample_weight=w[keep]), test)
        np.testing.assert_array_equal(a, b)


def test_weighted_bandwidth_is_that_of_repeated_rows(data):
    Xs, _, _, w, _ = data
    rep = np.repeat(np.arange(len(w)), w)
    X = Xs[0]
    for metric in ["euclidean", "cityblock"]:
        weighted = mean_pairwise_distance(X, metric, sample_weight=w)
        repeated = mean_pairwise_distance(X[rep], metric, precision="double")
        assert weighted == pytest.approx(repeated, rel=1e-8)
        unit = mean_pairwise_distance(X, metric, sample_weight=np.ones(len(X)))
        assert unit == pytest.approx(mean_pairwise_distance(X, metric, precision="double"))
    # fractional weights <= 1 of one value: the unweighted mean (no pairs of copies)
    half = mean_pairwise_distance(X, sample_weight=np.full(len(X), 0.5))
    assert half == pytest.approx(mean_pairwise_distance(X, precision="double"), rel=1e-12)


def test_precomputed_kernels_with_zero_weights(data):
    """Gram matrices: rows of zero weight are cut from rows and columns, and from the
    columns of the test-train matrices."""
    Xs, r, _, w, test = data
    keep = w > 0
    K = Xs[0] @ Xs[0].T
    Kt = test[0] @ Xs[0].T
    a = B.LpMKLRegressor(kernel="precomputed").fit([K], r, sample_weight=w).predict([Kt])
    ref = B.LpMKLRegressor(kernel="precomputed").fit(
        [K[np.ix_(keep, keep)]], r[keep], sample_weight=w[keep]
    )
    np.testing.assert_allclose(a, ref.predict([Kt[:, keep]]), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ class_weight
CLASSIFIERS = [
    B.SingleViewClassifier(),
    B.EarlyFusionClassifier(),
    B.LateFusionClassifier(),
    B.LpMKLClassifier(loss="squared"),
    B.OKLClassifier(),
    B.MLKRClassifier(max_iter=30),
]


def _imbalanced():
    rng = np.random.default_rng(3)
    n = 200
    X1, X2 = rng.normal(size=(n, 2)), rng.normal(size=(n, 2))
    score = X1[:, 0] + X2[:, 0] + 0.8 * rng.normal(size=n)
    y = (score > 1.6).astype(int)  # about 10 % positives
    return [X1[:120], X2[:120]], y[:120], [X1[120:], X2[120:]], y[120:]


@pytest.mark.parametrize("est", CLASSIFIERS, ids=_ids(CLASSIFIERS))
def test_balanced_class_weight_raises_balanced_accuracy(est):
    Xtr, ytr, Xte, yte = _imbalanced()
    assert 0.05 < ytr.mean() < 0.2
    plain = balanced_accuracy_score(yte, fit_quietly(est, Xtr, ytr).predict(Xte))
    est_b = est.set_params(class_weight="balanced")
    balanced = balanced_accuracy_score(yte, fit_quietly(est_b, Xtr, ytr).predict(Xte))
    est.set_params(class_weight=None)
    assert balanced > plain + 0.05, (plain, balanced)


@pytest.mark.parametrize("est", CLASSIFIERS[1:4], ids=_ids(CLASSIFIERS[1:4]))
def test_class_weight_is_a_per_class_sample_weight(data, est):
    """``class_weight`` multiplies each row's weight in the loss by its class's (SVC's
    definition; the default bandwidth takes ``sample_weight`` only, so it is fixed here);
    "balanced" is ``n / (n_classes * n_c)`` with weighted counts."""
    Xs, _, labels, w, test = data
    est = est.set_params(kernel_params={"gamma": 0.3})
    cw = {"a": 2.0, "c": 0.5}
    per_row = np.array([cw.get(c, 1.0) for c in labels])
    a = outputs(fit_quietly(est.set_params(class_weight=cw), Xs, labels, sample_weight=w), test)
    b = outputs(
        fit_quietly(est.set_params(class_weight=None), Xs, labels, sample_weight=w * per_row), test
    )
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    classes = np.unique(labels)
    counts = np.array([w[labels == c].sum() for c in classes])
    bal = dict(zip(classes, w.sum() / (len(classes) * counts)))
    per_row = np.array([bal[c] for c in labels])
    a = outputs(
        fit_quietly(est.set_params(class_weight="balanced"), Xs, labels, sample_weight=w), test
    )
    b = outputs(
        fit_quietly(est.set_params(class_weight=None), Xs, labels, sample_weight=w * per_row), test
    )
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_class_weight_errors(data):
    Xs, _, labels, _, _ = data
    with pytest.raises(ValueError, match=r"class_weight names label\(s\) \['z'\]"):
        B.EarlyFusionClassifier(class_weight={"z": 2.0}).fit(Xs, labels)
    with pytest.raises(ValueError, match="class_weight"):
        B.EarlyFusionClassifier(class_weight="uniform").fit(Xs, labels)
    with pytest.raises(ValueError, match="at least 2 classes"):
        w = (labels == "a").astype(float)
        B.EarlyFusionClassifier().fit(Xs, labels, sample_weight=w)


# ------------------------------------------------------------------ bad weights
@pytest.mark.parametrize(
    "bad, match",
    [
        (-1.0, "must be >= 0, got -1.0 at row 3"),
        (np.nan, "contains NaN"),
        (np.inf, "contains infinity"),
        ("short", "has 29 entries but there are 30 samples"),
        ("2d", "must be 1-D"),
        ("zeros", "every sample weight is zero"),
    ],
)
@pytest.mark.parametrize(
    "est", [B.EarlyFusionRegressor(), B.LateFusionClassifier(), B.MLKRRegressor(max_iter=2)]
)
def test_bad_weights_are_refused(data, est, bad, match):
    Xs, r, labels, _, _ = data
    y = labels if est._is_classifier else r
    w = np.ones(len(y))
    if bad == "short":
        w = w[:-1]
    elif bad == "2d":
        w = np.ones((len(y), 2))
    elif bad == "zeros":
        w = np.zeros(len(y))
    else:
        w[3] = bad
    with pytest.raises(ValueError, match=match):
        est.fit(Xs, y, sample_weight=w)


# ------------------------------------------------------------------ sparse views
@pytest.mark.parametrize("seed", [0, 2])
@pytest.mark.parametrize(
    "cls", [B.SingleViewClassifier, B.EarlyFusionClassifier, B.LateFusionClassifier]
)
@pytest.mark.parametrize("n_landmarks", [None, 60])
def test_sparse_views_give_the_dense_outputs(cls, seed, n_landmarks):
    """The default bandwidths are computed in double precision on dense rows too (single
    precision put them 1e-8 apart, which changed the SVMs' SMO path: 3e-4 apart)."""
    n = 400
    rng = np.random.default_rng(seed)
    S = sp.random(n, 400, density=0.03, format="csr", random_state=seed + 1)
    S2 = sp.random(n, 50, density=0.2, format="csr", random_state=seed + 7)
    r = np.asarray(S @ rng.standard_normal(400)).ravel() + np.asarray(S2.sum(1)).ravel()
    y = np.digitize(r, np.quantile(r, [0.33, 0.66]))
    tr, te = slice(0, 260), slice(260, None)
    est = cls(n_landmarks=n_landmarks, random_state=0)
    sparse = est.fit([S[tr], S2[tr]], y[tr]).decision_function([S[te], S2[te]])
    dense = est.fit([S[tr].toarray(), S2[tr].toarray()], y[tr]).decision_function(
        [S[te].toarray(), S2[te].toarray()]
    )
    np.testing.assert_allclose(sparse, dense, rtol=0, atol=1e-9)


# ------------------------------------------------------------------ MLKR's weighted loss
def test_weighted_mlkr_loss_and_gradient():
    """The weighted loss is the loss of the repeated rows; its gradient matches finite
    differences, with class weights too."""
    rng = np.random.default_rng(1)
    X, Y = rng.standard_normal((10, 3)), rng.standard_normal((10, 2))
    A = 0.5 * rng.standard_normal((2, 3))
    w = np.array([1.0, 2, 3, 1, 1, 2, 1, 4, 1, 1])
    c = rng.uniform(0.5, 2.0, size=10)
    rep = np.repeat(np.arange(10), w.astype(int))
    f_w, g_w = B.mlkr_loss_grad(A, X, Y, w)
    f_r, g_r = B.mlkr_loss_grad(A, X[rep], Y[rep])
    assert f_w == pytest.approx(f_r, rel=1e-12)
    np.testing.assert_allclose(g_w, g_r, rtol=1e-10, atol=1e-12)
    f, g = B.mlkr_loss_grad(A, X, Y, w, c)
    eps, num = 1e-6, np.zeros_like(A)
    for idx in np.ndindex(*A.shape):
        Ap, Am = A.copy(), A.copy()
        Ap[idx] += eps
        Am[idx] -= eps
        num[idx] = (B.mlkr_loss_grad(Ap, X, Y, w, c)[0] - B.mlkr_loss_grad(Am, X, Y, w, c)[0]) / (
            2 * eps
        )
    np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-7)

"""Calibrated probabilities of the MVML classifiers (``mvkernels.mvml._proba``)."""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import expit, logsumexp
from sklearn.datasets import load_digits
from sklearn.metrics import log_loss
from sklearn.model_selection import StratifiedKFold, train_test_split

from mvkernels import MVMLSVC, MVMLClassifier, MVMLClassifierCV
from mvkernels.mvml._proba import cross_val_decisions, fit_softmax_calibration

#: MVMLSVC as the paper has it (one-vs-all, additive over the views), its defaults before
#: issue 32 (item 4) made them joint_view="auto", multi_class="auto": what these tests check
SVC_PAPER = dict(joint_view=False, multi_class="ovr")


def _views(A):
    return [A[:, :32], A[:, 32:]]


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return train_test_split(X, y, train_size=500, random_state=0, stratify=y)


def test_calibration_minimises_the_smoothed_log_loss():
    """The fitted slope is the minimiser of the convex 1-D loss (checked by a scalar
    optimiser on the same formula), for binary and multiclass decision values."""
    rng = np.random.RandomState(0)
    for K in (2, 4):
        yi = rng.randint(K, size=200)
        D = rng.randn(200, K) * 0.5
        D[np.arange(200), yi] += 1.0
        if K == 2:
            D = D[:, 1] - D[:, 0]
            Dc = np.column_stack([-D, D])
        else:
            Dc = D
        n = len(yi)
        T = np.full((n, K), 1.0 / (n + K))
        T[np.arange(n), yi] = (n + 1.0) / (n + K)

        def loss(a, Dc=Dc, T=T):
            return float(np.sum(logsumexp(a * Dc, axis=1)) - a * np.sum(T * Dc))

        ref = minimize_scalar(loss, bounds=(0, 100), method="bounded", options={"xatol": 1e-12})
        cal = fit_softmax_calibration(D, yi, K)
        assert cal.scale == pytest.approx(ref.x, rel=1e-6)
        P = cal.predict_proba(D)
        assert P.shape == (n, K)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
        np.testing.assert_allclose(cal.predict_log_proba(D), np.log(P), atol=1e-12)
        if K == 2:  # Platt's sigmoid without intercept on d
            np.testing.assert_allclose(P[:, 1], expit(2 * cal.scale * D), atol=1e-12)


def test_uninformative_values_give_uniform_probabilities():
    cal = fit_softmax_calibration(np.zeros((10, 3)), np.arange(10) % 3, 3)
    assert cal.scale == 0.0
    np.testing.assert_allclose(cal.predict_proba(np.ones((4, 3))), 1 / 3)


def test_probability_is_opt_in():
    X, y = load_digits(n_class=3, return_X_y=True)
    est = MVMLClassifier(max_iter=2).fit(_views(X), y)
    assert not hasattr(est, "predict_proba") and not hasattr(est, "predict_log_proba")
    with pytest.raises(AttributeError, match="predict_proba") as exc:
        est.predict_proba(_views(X))
    assert "probability=False" in str(exc.value.__cause__)
    assert not hasattr(MVMLSVC(**SVC_PAPER), "predict_proba")
    assert hasattr(MVMLClassifierCV(), "predict_proba")


def test_internal_cv_is_a_stratified_five_fold_of_the_same_model():
    """probability=True: the slope is fitted on the decision values of 5 fold models
    (same resolved kernels) on their held-out rows."""
    X, y = load_digits(n_class=4, return_X_y=True)
    Xs = _views(X[:200])
    y = y[:200]
    est = MVMLClassifier(probability=True, max_iter=3, random_state=0).fit(Xs, y)
    D = np.zeros((200, 4))
    for tr, te in StratifiedKFold(5).split(Xs[0], y):
        fold = MVMLClassifier(max_iter=3, random_state=0, kernel_params=est.kernel_params_)
        D[te] = fold.fit([V[tr] for V in Xs], y[tr]).decision_function([V[te] for V in Xs])
    ref = fit_softmax_calibration(D, y, 4)
    assert est.calibration_.scale == pytest.approx(ref.scale, rel=1e-10)
    D2, yi = cross_val_decisions(est, Xs, y)
    np.testing.assert_allclose(D2, D, atol=1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda: MVMLClassifier(probability=True, random_state=0),
        lambda: MVMLClassifierCV(cv=3, bandwidth_factors=[2, 8], random_state=0),
        lambda: MVMLClassifierCV(cv=3, metric="identity", random_state=0),
    ],
)
def test_probabilities_on_digits_views_beat_uniform(digits, make):
    Xtr, Xte, ytr, yte = digits
    est = make().fit(_views(Xtr), ytr)
    P = est.predict_proba(_views(Xte))
    assert P.shape == (len(yte), 10)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(est.classes_, np.arange(10))
    # documented: the most probable class is the predicted one
    np.testing.assert_array_equal(est.classes_[P.argmax(axis=1)], est.predict(_views(Xte)))
    np.testing.assert_allclose(est.predict_log_proba(_views(Xte)), np.log(P), atol=1e-10)
    ll = log_loss(yte, P)
    assert ll < 0.25 < np.log(10), ll


def test_binary_probabilities_and_class_order(digits):
    Xtr, Xte, ytr, yte = digits
    labels = np.array(["low", "high"])
    ytr_s, yte_s = labels[(ytr > 4).astype(int)], labels[(yte > 4).astype(int)]
    est = MVMLClassifier(probability=True, random_state=0).fit(_views(Xtr), ytr_s)
    P = est.predict_proba(_views(Xte))
    assert list(est.classes_) == ["high", "low"] and P.shape == (len(yte), 2)
    d = est.decision_function(_views(Xte))  # positive = classes_[1] = "low"
    np.testing.assert_allclose(P[:, 1], expit(2 * est.calibration_.scale * d), atol=1e-12)
    np.testing.assert_array_equal(est.classes_[P.argmax(axis=1)], est.predict(_views(Xte)))
    assert log_loss(yte_s, P, labels=est.classes_) < 0.5 * np.log(2)


def test_cv_calibration_uses_the_selected_candidates_held_out_values():
    """Full-kernel CV: the held-out decision values kept for the calibration are those of
    fold models with the selected hyperparameters (checked by refitting them)."""
    X, y = load_digits(n_class=3, return_X_y=True)
    Xs, y = _views(X[:90]), y[:90]
    kw = dict(alphas=[0.01, 1.0], etas=[0.1], bandwidth_factors=[1.0, 4.0], max_iter=3, cv=3)
    cv = MVMLClassifierCV(n_landmarks=None, random_state=0, **kw).fit(Xs, y)
    best = cv.best_params_
    D = np.zeros((90, 3))
    for tr, te in StratifiedKFold(3).split(Xs[0], y):
        fold = MVMLClassifier(
            n_landmarks=None,
            joint_view=cv.best_joint_view_,
            alpha=best["alpha"],
            eta=best["eta"],
            max_iter=best["max_iter"],
            kernel_params=cv.best_kernel_params_,
        )
        D[te] = fold.fit([V[tr] for V in Xs], y[tr]).decision_function([V[te] for V in Xs])
    ref = fit_softmax_calibration(D, y, 3)
    assert cv.calibration_.scale == pytest.approx(ref.scale, rel=1e-8)


def test_cv_without_refit_has_no_probabilities():
    X, y = load_digits(n_class=3, return_X_y=True)
    cv = MVMLClassifierCV(refit=False, cv=3, max_iter=2).fit(_views(X[:90]), y[:90])
    assert not hasattr(cv, "calibration_")
    with pytest.raises(AttributeError, match="refit=False"):
        cv.predict_proba(_views(X[:5]))


def test_svc_probabilities():
    X, y = load_digits(n_class=3, return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, train_size=150, random_state=0, stratify=y)
    est = MVMLSVC(**SVC_PAPER, probability=True, max_iter=2, random_state=0).fit(_views(Xtr), ytr)
    P = est.predict_proba(_views(Xte))
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(est.classes_[P.argmax(axis=1)], est.predict(_views(Xte)))
    assert log_loss(yte, P) < 0.5 * np.log(3)


def test_tiny_class_falls_back_to_in_sample_values_with_a_warning():
    rng = np.random.RandomState(0)
    Xs = [rng.randn(20, 2), rng.randn(20, 3)]
    y = np.r_[np.zeros(10), np.ones(9), 2]
    with pytest.warns(UserWarning, match="fewer than 2 rows"):
        est = MVMLClassifier(probability=True, max_iter=2).fit(Xs, y)
    assert est.predict_proba(Xs).shape == (20, 3)


def test_probabilities_on_dask_views():
    da = pytest.importorskip("dask.array")
    X, y = load_digits(n_class=3, return_X_y=True)
    Xs = _views(X[:150])
    est = MVMLClassifier(probability=True, n_landmarks=20, max_iter=2, random_state=0)
    est.fit(Xs, y[:150])
    Xd = [da.from_array(V, chunks=40) for V in Xs]
    P = est.predict_proba(Xd)
    assert isinstance(P, da.Array)
    np.testing.assert_allclose(P.compute(), est.predict_proba(Xs), atol=1e-12)


def _with_missing_views(Xs, frac, seed):
    """Whole-view NaN rows (missing views) at random, every row keeping one view."""
    rng = np.random.RandomState(seed)
    n = Xs[0].shape[0]
    observed = rng.rand(n, len(Xs)) >= frac
    observed[np.arange(n), rng.randint(len(Xs), size=n)] = True
    out = [V.astype(np.float64) for V in Xs]
    for v, V in enumerate(out):
        V[~observed[:, v]] = np.nan
    return out, observed


@pytest.mark.parametrize(
    "make",
    [
        lambda: MVMLClassifier(probability=True, max_iter=3, random_state=0),
        lambda: MVMLClassifier(probability=True, n_landmarks=None, max_iter=3, random_state=0),
        lambda: MVMLSVC(**SVC_PAPER, probability=True, max_iter=2, random_state=0),
    ],
    ids=["square-nystrom", "square-full", "svc"],
)
def test_probabilities_with_missing_views(digits, make):
    """probability=True fits the data with missing views that the fit without it accepts:
    the 5 fold models see the same NaN rows, the slope is the one fitted on their
    held-out values, rows sum to 1 and the most probable class is the predicted one."""
    Xtr, Xte, ytr, _ = digits
    Xs, observed = _with_missing_views(_views(Xtr[:200]), 0.25, 0)
    ytr = ytr[:200]
    assert (~observed).any(axis=0).all()  # every view misses some rows
    est = make().fit(Xs, ytr)
    D = np.zeros((200, 10))
    base = make().set_params(probability=False, kernel_params=est.kernel_params_)
    for tr, te in StratifiedKFold(5).split(Xs[0], ytr):
        fold = base.fit([V[tr] for V in Xs], ytr[tr])
        D[te] = fold.decision_function([V[te] for V in Xs])
    assert est.calibration_.scale == pytest.approx(fit_softmax_calibration(D, ytr, 10).scale)
    assert est.calibration_.scale > 0
    Xs_te, _ = _with_missing_views(_views(Xte[:100]), 0.25, 1)
    for X in (Xs, Xs_te):
        P = est.predict_proba(X)
        assert P.shape == (len(X[0]), 10) and np.isfinite(P).all()
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
        np.testing.assert_array_equal(est.classes_[P.argmax(axis=1)], est.predict(X))

"""The input is validated once, at the estimator's boundary (``ValidatedViews``)."""

from __future__ import annotations

import numpy as np
import pytest

import mvkernels._validation as validation
from mvkernels import (
    BlockNystrom,
    MVMLClassifier,
    MVMLClassifierCV,
    MVMLRegressor,
    MVMLRegressorCV,
    check_views,
)
from mvkernels._validation import ValidatedViews, views_kind


@pytest.fixture
def count_validations(monkeypatch):
    """Counts the full validations (every view's values read and checked)."""
    calls = []
    full = validation._validate_views

    def counted(*args, **kwargs):
        calls.append(1)
        return full(*args, **kwargs)

    monkeypatch.setattr(validation, "_validate_views", counted)
    return calls


def _data(n=90, seed=0):
    rng = np.random.default_rng(seed)
    X1, X2 = rng.normal(size=(n, 4)), rng.normal(size=(n, 3))
    y = (X1[:, 0] + X2[:, 0] > 0).astype(int)
    return X1, X2, y


@pytest.mark.parametrize(
    "make",
    [
        lambda: MVMLClassifierCV(cv=3, alphas=[1e-2, 1e-1], random_state=0),
        lambda: MVMLClassifierCV(cv=3, alphas=[1e-2], joint_view="auto", random_state=0),
        lambda: MVMLClassifier(random_state=0),
        lambda: MVMLClassifier(joint_view=True, random_state=0),
    ],
)
@pytest.mark.parametrize("container", ["list", "array"])
def test_views_validated_once_per_fit_and_predict(count_validations, make, container):
    X1, X2, y = _data()
    X = [X1, X2] if container == "list" else np.hstack([X1, X2])
    est = make()
    if container == "array":
        est.set_params(views=[4, 3])
    est.fit(X, y)
    assert len(count_validations) == 1  # the estimator's boundary, nothing below it
    count_validations.clear()
    pred = est.predict(X)
    assert len(count_validations) == 1
    assert pred.shape == (X1.shape[0],)


def test_cv_refit_matches_a_direct_fit_on_the_same_views():
    """The refit gets the validated views: same model as fitting the best parameters."""
    X1, X2, y = _data(seed=1)
    cv = MVMLClassifierCV(cv=3, alphas=[1e-2, 1e-1], random_state=0).fit(np.hstack([X1, X2]), y)
    assert cv.best_estimator_.n_features_in_ == 7  # what predict checks on a 2-D array
    with pytest.raises(ValueError, match="7 features"):
        cv.predict(np.zeros((3, 6)))
    direct = MVMLClassifier(**cv.best_estimator_.get_params()).fit(np.hstack([X1, X2]), y)
    np.testing.assert_allclose(
        cv.decision_function(np.hstack([X1, X2])),
        direct.decision_function(np.hstack([X1, X2])),
        rtol=1e-10,
        atol=1e-12,
    )


def test_check_views_returns_validated_views_and_passes_them_through(count_validations):
    X1, X2, _ = _data(n=20)
    Xs = check_views([X1, X2])
    assert isinstance(Xs, ValidatedViews) and isinstance(Xs, list)
    assert (Xs.kind, Xs.n_samples, Xs.n_features, Xs.dtype) == ("numpy", 20, (4, 3), np.float64)
    assert check_views(Xs, n_views=2, n_features=[4, 3]) is Xs
    assert len(count_validations) == 1
    # the expected sizes are still checked on validated views
    with pytest.raises(ValueError, match="expected 3 view"):
        check_views(Xs, n_views=3)
    with pytest.raises(ValueError, match="view 1 has 3 features, but 5"):
        check_views(Xs, n_features=[4, 5])
    with pytest.raises(ValueError, match="at least 30 required"):
        check_views(Xs, ensure_min_samples=30)
    # rows and slices stay validated
    part = Xs.take(np.arange(5))
    assert isinstance(part, ValidatedViews) and part.n_samples == 5
    assert isinstance(Xs[:1], ValidatedViews) and Xs[:1].n_features == (4,)
    np.testing.assert_array_equal(part[1], X2[:5])


def test_validated_under_weaker_options_is_validated_again():
    """Views accepted with missing rows are checked again where NaN is refused."""
    X1, X2, _ = _data(n=20)
    X1 = X1.copy()
    X1[3] = np.nan
    Xs = check_views([X1, X2], allow_missing=True)
    np.testing.assert_array_equal(Xs.observed[:, 0], ~np.isnan(X1[:, 0]))
    assert Xs.observed[:, 1].all()
    with pytest.raises(ValueError, match="view 0 contains NaN"):
        check_views(Xs)


def test_views_kind_is_the_one_numpy_sparse_dask_choice():
    sp = pytest.importorskip("scipy.sparse")
    da = pytest.importorskip("dask.array")
    X = np.ones((6, 2))
    assert views_kind([X, X]) == "numpy"
    assert views_kind([X, sp.csr_matrix(X)]) == "sparse"
    assert views_kind([da.from_array(X, chunks=3), X]) == "dask"
    Xs = check_views([da.from_array(X, chunks=3), da.from_array(X, chunks=3)])
    assert Xs.kind == "dask" and views_kind(Xs) == "dask"


def test_block_nystrom_transform_does_not_validate_validated_views(count_validations):
    X1, X2, _ = _data(n=40)
    nys = BlockNystrom(n_landmarks=8, random_state=0).fit([X1, X2])
    count_validations.clear()
    Xs = check_views([X1, X2], allow_missing=True)
    U = nys.transform(Xs)
    assert len(count_validations) == 1
    np.testing.assert_allclose(U, nys.transform([X1, X2]))
    with pytest.raises(ValueError, match="view 0 has 3 features, but 4"):
        nys.transform(check_views([X1[:, :3], X2]))


def test_regressor_with_missing_views_validates_once(count_validations):
    X1, X2, _ = _data(n=60, seed=2)
    X1 = X1.copy()
    X1[::7] = np.nan
    y = np.nan_to_num(X1[:, 0]) + X2[:, 1]
    est = MVMLRegressor(n_landmarks=10, random_state=0).fit([X1, X2], y)
    assert len(count_validations) == 1
    assert np.isfinite(est.predict([X1, X2])).all()


def test_reduced_models_take_the_validated_views(count_validations):
    """With reduced models (missing views at fit), predict validates the input once at
    the boundary and once per reduced model it calls (each its own estimator), and the
    model of all the views is evaluated on the other rows only."""
    rng = np.random.default_rng(0)
    n = 120
    X1, X2, X3 = rng.normal(size=(n, 4)), rng.normal(size=(n, 3)), rng.normal(size=(n, 2))
    y = X1[:, 0] + X2[:, 0] - X3[:, 0]
    X1[0::5] = np.nan
    X2[1::5] = np.nan
    X3[2::10] = np.nan
    kw = dict(alphas=[0.1], etas=[1.0], bandwidth_factors=[1.0], max_iter=1, cv=3)
    est = MVMLRegressorCV(random_state=0, **kw).fit([X1, X2, X3], y)
    models = est.best_estimator_.reduced_models_
    assert len(models) == 3
    count_validations.clear()
    est.predict([X1, X2, X3])
    assert len(count_validations) == 1 + len(models)


def test_slices_and_rows_keep_the_observed_mask(monkeypatch):
    """``take`` and view slices restrict an observed mask already computed instead of
    reading the views again, and the kept mask equals a fresh one."""
    X1, X2, _ = _data(n=30, seed=3)
    X1 = X1.copy()
    X1[::4] = np.nan
    X2 = X2.copy()
    X2[1::6] = np.nan
    Xs = check_views([X1, X2, X1 + 1.0], allow_missing=True)
    full = Xs.observed
    rows = np.array([0, 1, 2, 5, 8, 13, 29])
    calls = []
    real = validation.observed_rows
    monkeypatch.setattr(validation, "observed_rows", lambda Xv: calls.append(1) or real(Xv))
    sub = Xs.take(rows)
    np.testing.assert_array_equal(sub.observed, full[rows])
    mask_rows = Xs.take(np.arange(30) % 3 == 0)
    np.testing.assert_array_equal(mask_rows.observed, full[::3])
    np.testing.assert_array_equal(Xs[1:].observed, full[:, 1:])
    np.testing.assert_array_equal(Xs[1:].take(slice(2, 9)).observed, full[2:9, 1:])
    assert calls == []
    fresh = check_views([Xv[rows] for Xv in Xs], allow_missing=True)
    np.testing.assert_array_equal(fresh.observed, sub.observed)
    assert len(calls) == 3


def _every_estimator_on_views():
    """One default configuration of each public estimator that takes views (not OLOK's
    single arrays nor the forecaster's series)."""
    from mvkernels import MVMLSVC, MVMLSVCCV, MultiViewKPCA
    from mvkernels import baselines as B

    grid = dict(cv=3, alphas=[1e-2, 1e-1], random_state=0)
    out = [
        MVMLClassifier(random_state=0),
        MVMLRegressor(random_state=0),
        MVMLSVC(random_state=0),
        MVMLClassifierCV(**grid),
        MVMLRegressorCV(**grid),
        MVMLSVCCV(**grid),
        MultiViewKPCA(kernel="rbf", n_components=2),
        BlockNystrom(n_landmarks=8, random_state=0),
    ]
    names = [n for n in B.__all__ if n.endswith(("Classifier", "Regressor"))]
    return out + [getattr(B, n)() for n in sorted(names)]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("est", _every_estimator_on_views(), ids=lambda e: type(e).__name__)
def test_every_estimator_validates_its_views_once(count_validations, est):
    """Fit, then predict (or transform), each read and check the views once: early fusion's
    concatenation (``ValidatedViews.derived``) and late fusion's views, checked with
    missing rows allowed and found complete, are not validated again."""
    X1, X2, y = _data()
    target = X1[:, 0] + X2[:, 1] if "Regressor" in type(est).__name__ else y
    predicts = hasattr(est, "predict")
    est.fit([X1, X2], target if predicts else None)
    assert len(count_validations) == 1
    count_validations.clear()
    (est.predict if predicts else est.transform)([X1, X2])
    assert len(count_validations) == 1


def test_complete_views_checked_with_missing_rows_allowed_pass_a_strict_check(
    count_validations,
):
    """Views validated with ``allow_missing`` satisfy a check without it once their observed
    mask is known to be full; with a missing row they are checked (and refused) again."""
    X1, X2, _ = _data(n=20)
    Xs = check_views([X1, X2], allow_missing=True)
    assert check_views(Xs) is not Xs  # mask not read yet: validated again
    assert Xs.observed.all()
    assert check_views(Xs) is Xs
    assert len(count_validations) == 2
    joined = Xs.derived([np.hstack([X1, X2])])
    assert check_views(joined, allow_missing=True) is joined and joined.n_features == (7,)
    assert joined.kind == "numpy" and joined.allow_missing

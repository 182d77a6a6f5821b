"""Landmarks chosen by the user (row indices) and ridge leverage-score sampling."""

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from mvkernels import MVMLRegressor, MVMLRegressorCV
from mvkernels.kernels import make_view_kernels
from mvkernels.nystrom import (
    BlockNystrom,
    check_landmark_indices,
    leverage_indices,
    sqrt_pinv_psd,
    uniform_indices,
)


def two_views(rng, n=80):
    return [rng.standard_normal((n, 3)), rng.standard_normal((n, 4))]


def uneven(seed=0, n_dense=950, n_sparse=50):
    """A tight cluster holding most rows and a few rows spread far around it."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0.0, 0.3, (n_dense, 2)), rng.uniform(-8.0, 8.0, (n_sparse, 2))])
    return [X, X @ np.array([[0.0, 1.0], [1.0, 0.0]])]


def nystrom_error(Xs, kernels, idx):
    """Trace-norm error of the block Nystrom approximation of every view's kernel."""
    err = 0.0
    for Xv, kern in zip(Xs, kernels):
        K = kern(Xv, Xv)
        S, _ = sqrt_pinv_psd(K[np.ix_(idx, idx)])
        U = K[:, idx] @ S
        err += np.trace(K - U @ U.T)  # K - U U^T is PSD: its trace is its trace norm
    return err


# ------------------------------------------------------------ index landmarks
def test_index_landmarks_are_exactly_those_rows(rng):
    Xs = two_views(rng)
    given = np.array([17, 3, 60, 41, 8])
    nys = BlockNystrom(n_landmarks=0.5, landmarks=given, random_state=0).fit(Xs)
    # the array fixes the count; BlockNystrom ignores a fraction (its default is one)
    assert nys.n_landmarks_ == 5
    np.testing.assert_array_equal(nys.landmark_indices_, given)
    U = nys.transform(Xs)
    assert U.shape == (80, 10)
    for l, (Xv, kern) in enumerate(zip(Xs, nys.kernels_)):
        np.testing.assert_array_equal(nys.landmarks_[l], Xv[given])
        S, _ = sqrt_pinv_psd(kern(Xv[given], Xv[given]))
        np.testing.assert_allclose(U[:, 5 * l : 5 * (l + 1)], kern(Xv, Xv[given]) @ S, atol=1e-12)
    # the parameter is stored unchanged, and the same rows give the same map whatever the seed
    assert nys.get_params()["landmarks"] is given
    other = BlockNystrom(landmarks=list(given), random_state=7).fit(Xs)
    np.testing.assert_allclose(other.transform(Xs), U, atol=1e-12)


def test_index_landmarks_precomputed(rng):
    Xs = two_views(rng, n=30)
    Ks = [X @ X.T for X in Xs]
    given = [2, 11, 29]
    nys = BlockNystrom(kernel="precomputed", landmarks=given).fit(Ks)
    np.testing.assert_array_equal(nys.landmark_indices_, given)
    U = nys.transform(Ks)
    S, _ = sqrt_pinv_psd(Ks[1][np.ix_(given, given)])
    np.testing.assert_allclose(U[:, 3:], Ks[1][:, given] @ S, atol=1e-10)


@pytest.mark.parametrize(
    "given, match",
    [
        ([0.0, 1.0], "must be integers"),
        ([True, False, True], "must be integers"),
        ([[0, 1], [2, 3]], "1-D array"),
        (np.array([], dtype=int), "1-D array"),
        ([0, 80], r"in \[0, 80\)"),
        ([-1, 3], r"in \[0, 80\)"),
        ([4, 2, 4], "distinct; repeated: \\[4\\]"),
    ],
)
def test_index_landmarks_refused(rng, given, match):
    with pytest.raises(ValueError, match=match):
        BlockNystrom(landmarks=given).fit(two_views(rng))


def test_unknown_strategy_refused_by_parameter_validation(rng):
    for est in (BlockNystrom(landmarks="random"), MVMLRegressor(landmarks="random")):
        with pytest.raises(InvalidParameterError, match="landmarks"):
            est.fit(two_views(rng), np.zeros(80))


def test_check_landmark_indices_keeps_order():
    np.testing.assert_array_equal(check_landmark_indices(np.array([5, 1, 3]), 6), [5, 1, 3])


def test_index_landmarks_with_missing_views(rng):
    Xs = two_views(rng, n=60)
    Xs[1][[4, 9, 20]] = np.nan  # view 1 missing on three rows
    given = np.array([0, 5, 30, 31])
    nys = BlockNystrom(landmarks=given, random_state=0).fit(Xs)
    assert nys.landmark_indices_.shape == (2, 4)  # one row per view, as for strategies
    for l in range(2):
        np.testing.assert_array_equal(nys.landmark_indices_[l], given)
        np.testing.assert_array_equal(nys.landmarks_[l], Xs[l][given])
    assert np.isfinite(nys.transform(Xs)).all()
    with pytest.raises(ValueError, match=r"rows \[9\] are missing in view 1"):
        BlockNystrom(landmarks=[0, 9, 30]).fit(Xs)


def test_index_landmarks_in_mvml_estimators(rng):
    Xs = two_views(rng, n=70)
    y = Xs[0][:, 0] + np.sin(Xs[1][:, 1])
    given = np.arange(0, 70, 5)
    est = MVMLRegressor(landmarks=given, max_iter=2, random_state=0).fit(Xs, y)
    np.testing.assert_array_equal(est.nystrom_.landmark_indices_, given)
    assert est.n_landmarks_ == given.size
    cv = MVMLRegressorCV(
        landmarks=given, cv=3, alphas=[1e-3, 1e-1], bandwidth_factors=[1.0], random_state=0
    ).fit(Xs, y)
    np.testing.assert_array_equal(cv.best_estimator_.nystrom_.landmark_indices_, given)
    with pytest.raises(ValueError, match=r"in \[0, 70\)"):
        MVMLRegressor(landmarks=[3, 70]).fit(Xs, y)


@pytest.mark.parametrize(
    "make",
    [
        lambda n, idx: BlockNystrom(n_landmarks=n, landmarks=idx),
        lambda n, idx: MVMLRegressor(n_landmarks=n, landmarks=idx, max_iter=1),
        lambda n, idx: MVMLRegressorCV(
            n_landmarks=n, landmarks=idx, cv=3, alphas=[0.1], bandwidth_factors=[1.0]
        ),
    ],
)
def test_landmark_count_disagreeing_with_indices_is_refused(rng, make):
    """A count set beside landmark indices is checked, never silently replaced: the same
    number is accepted (the same map as without it), another is a ValueError."""
    Xs = two_views(rng, n=60)
    y = Xs[0][:, 0]
    given = np.arange(0, 60, 6)  # 10 rows
    with pytest.raises(ValueError, match=r"n_landmarks=4 disagrees with the 10 landmark"):
        make(4, given).fit(Xs, y)
    agreeing = make(10, given).fit(Xs, y)
    nys = getattr(agreeing, "nystrom_", None) or getattr(agreeing, "best_estimator_", agreeing)
    nys = getattr(nys, "nystrom_", nys)
    np.testing.assert_array_equal(nys.landmark_indices_, given)


def test_landmark_fraction_beside_indices():
    """The MVML estimators read a fraction as a count too (their default is "auto");
    BlockNystrom, whose default is the fraction 0.1, leaves a fraction to the indices."""
    rng = np.random.default_rng(3)
    Xs = two_views(rng, n=50)
    y = Xs[1][:, 0]
    given = np.arange(5)  # 5 of 50 rows: the fraction 0.1
    assert MVMLRegressor(n_landmarks=0.1, landmarks=given).fit(Xs, y).n_landmarks_ == 5
    with pytest.raises(ValueError, match="n_landmarks=0.5 disagrees"):
        MVMLRegressor(n_landmarks=0.5, landmarks=given).fit(Xs, y)
    assert BlockNystrom(n_landmarks=0.5, landmarks=given).fit(Xs).n_landmarks_ == 5


def test_index_landmarks_follow_rows_in_reduced_models(rng):
    """With missing training views, the CV estimators' reduced models are fitted on a
    subset of rows: the given indices are renumbered so the same rows stay landmarks."""
    n = 90
    Xs = two_views(rng, n=n)
    y = Xs[0][:, 0] + Xs[1][:, 1]
    Xs[1][np.arange(1, n, 6)] = np.nan
    Xs[0][np.arange(5, n, 6)] = np.nan  # each reduced model drops some rows
    given = np.array([0, 12, 24, 36, 48, 60, 72, 84, 2, 3])
    cv = MVMLRegressorCV(
        landmarks=given, cv=3, alphas=[1e-2], bandwidth_factors=[1.0], random_state=0
    ).fit(Xs, y)
    models = cv.best_estimator_.reduced_models_
    assert len(models) == 2  # "view 0 only" and "view 1 only"
    for pattern, model in models.items():
        views = np.flatnonzero(pattern)
        for j, l in enumerate(views):
            np.testing.assert_array_equal(model.nystrom_.landmarks_[j], Xs[l][given])


# ------------------------------------------------------------ leverage scores
def test_leverage_reproducible_and_valid():
    Xs = uneven()
    kernels = [k.fit(X) for k, X in zip(make_view_kernels("rbf", {"gamma": 1.0}, 2), Xs)]
    a = leverage_indices(Xs, kernels, 30, random_state=4)
    b = leverage_indices(Xs, kernels, 30, random_state=4)
    np.testing.assert_array_equal(a, b)
    assert a.size == np.unique(a).size == 30
    assert a.min() >= 0 and a.max() < 1000
    assert not np.array_equal(a, leverage_indices(Xs, kernels, 30, random_state=5))
    np.testing.assert_array_equal(leverage_indices(Xs, kernels, 1000, 0), np.arange(1000))
    nys = BlockNystrom(n_landmarks=30, landmarks="leverage", random_state=4).fit(Xs)
    again = BlockNystrom(n_landmarks=30, landmarks="leverage", random_state=4).fit(Xs)
    np.testing.assert_array_equal(nys.landmark_indices_, again.landmark_indices_)


def test_leverage_approximates_better_than_uniform_on_uneven_density():
    Xs = uneven()
    kernels = [k.fit(X) for k, X in zip(make_view_kernels("rbf", {"gamma": 1.0}, 2), Xs)]
    for p in (40, 60):  # above the ~20 directions that dominate the spectrum
        lev = np.mean(
            [nystrom_error(Xs, kernels, leverage_indices(Xs, kernels, p, s)) for s in range(4)]
        )
        uni = np.mean([nystrom_error(Xs, kernels, uniform_indices(1000, p, s)) for s in range(4)])
        assert lev <= 0.85 * uni, (p, lev, uni)
    # the isolated rows are the ones a uniform draw misses (3 of 60 expected): leverage
    # keeps several times as many
    idx = leverage_indices(Xs, kernels, 60, random_state=0)
    assert (idx >= 950).sum() >= 12


def test_leverage_never_forms_the_full_kernel():
    Xs = uneven()
    sizes = []

    def kernel(A, B, gamma=1.0):
        sizes.append((A.shape[0], B.shape[0]))
        d = (A**2).sum(1)[:, None] + (B**2).sum(1)[None] - 2 * A @ B.T
        return np.exp(-gamma * np.maximum(d, 0))

    kernels = [k.fit(X) for k, X in zip(make_view_kernels(kernel, None, 2), Xs)]
    sizes.clear()  # the kernel's diagonal calls are 1 x 1
    idx = leverage_indices(Xs, kernels, 40, random_state=0)
    assert idx.size == 40
    assert max(a * b for a, b in sizes) <= 1000 * 200  # n rows x a few p columns at most
    assert all(min(a, b) < 500 for a, b in sizes)
    for p in (2, 3):  # tiny counts: a level's sample stays at most 2 p rows
        sizes.clear()
        assert leverage_indices(Xs, kernels, p, random_state=0).size == p
        assert max(min(a, b) for a, b in sizes) <= 2 * p


def test_leverage_with_missing_views_draws_observed_rows(rng):
    Xs = two_views(rng, n=120)
    Xs[0][:30] = np.nan
    nys = BlockNystrom(n_landmarks=15, landmarks="leverage", random_state=0).fit(Xs)
    assert (nys.landmark_indices_[0] >= 30).all()
    assert np.isfinite(nys.transform(Xs)).all()


def test_leverage_in_estimator_is_seeded(rng):
    Xs = two_views(rng, n=100)
    y = Xs[0][:, 0] ** 2 + Xs[1][:, 2]
    a = MVMLRegressor(n_landmarks=20, landmarks="leverage", max_iter=2, random_state=1).fit(Xs, y)
    b = MVMLRegressor(n_landmarks=20, landmarks="leverage", max_iter=2, random_state=1).fit(Xs, y)
    np.testing.assert_array_equal(a.nystrom_.landmark_indices_, b.nystrom_.landmark_indices_)
    np.testing.assert_array_equal(a.predict(Xs), b.predict(Xs))


# ------------------------------------------------------------ feature names
def test_block_nystrom_feature_names_and_pandas_output(rng):
    pd = pytest.importorskip("pandas")
    Xs = two_views(rng, n=40)
    df = pd.DataFrame(np.hstack(Xs), columns=[f"c{i}" for i in range(7)], index=np.arange(40) + 100)
    views = [["c0", "c1", "c2"], ["c3", "c4", "c5", "c6"]]
    nys = BlockNystrom(n_landmarks=4, views=views, random_state=0).set_output(transform="pandas")
    out = nys.fit(df).transform(df)
    names = nys.get_feature_names_out()
    assert list(out.columns) == list(names)
    assert names[0] == "blocknystrom_view0_0" and names[-1] == "blocknystrom_view1_3"
    assert list(out.index) == list(df.index)
    np.testing.assert_allclose(out.to_numpy(), nys.set_output(transform="default").transform(df))


# ------------------------------------------------------------ Dask views
@pytest.mark.parametrize("landmarks", ["leverage", np.array([7, 150, 3, 99, 42])])
def test_dask_views_give_the_numpy_landmarks(rng, landmarks):
    da = pytest.importorskip("dask.array")
    import dask

    Xs = two_views(rng, n=240)
    Xs[1][[10, 11]] = np.nan  # missing rows: the per-view path
    p = 12 if isinstance(landmarks, str) else len(landmarks)  # indices fix the count
    for views in (Xs[:1] + [np.nan_to_num(Xs[1])], Xs):
        ref = BlockNystrom(n_landmarks=p, landmarks=landmarks, random_state=3).fit(views)
        with dask.config.set(scheduler="synchronous"):
            lazy = [da.from_array(X, chunks=(70, X.shape[1])) for X in views]
            got = BlockNystrom(n_landmarks=p, landmarks=landmarks, random_state=3).fit(lazy)
            U = np.asarray(got.transform(lazy))
        np.testing.assert_array_equal(got.landmark_indices_, ref.landmark_indices_)
        for a, b in zip(got.landmarks_, ref.landmarks_):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        np.testing.assert_allclose(U, ref.transform(views), rtol=1e-9, atol=1e-12)

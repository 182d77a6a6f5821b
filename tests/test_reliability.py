"""Reliability: parameters checked once at fit, one validation path, clear errors, limits."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mvkernels import baselines as B
from mvkernels.kernels import ViewKernel
from mvkernels.nystrom import BlockNystrom
from mvkernels.olok import OLOKRegressor, VVRLSRegressor


@pytest.fixture
def data():
    rng = np.random.RandomState(0)
    Xs = [rng.standard_normal((30, 3)), rng.standard_normal((30, 2))]
    y = Xs[0][:, 0] + Xs[1][:, 1]
    return Xs, y


BASELINES = [
    B.SingleViewRegressor,
    B.EarlyFusionRegressor,
    B.LateFusionRegressor,
    B.LpMKLRegressor,
    B.OKLRegressor,
]


# ------------------------------------------------------------------ parameters at fit
@pytest.mark.parametrize(
    "params, match",
    [
        (
            {"eig_floor": 2},
            (
                "'eig_floor' parameter of BlockNystrom must be a float in the range "
                r"\[0.0, 1.0\)"
            ),
        ),
        ({"eig_floor": -0.1}, "eig_floor"),
        ({"chunk_size": -1}, "'chunk_size' parameter"),
        ({"chunk_size": 2.5}, "'chunk_size' parameter"),
        ({"landmarks": "foo"}, "'landmarks' parameter"),
        ({"n_landmarks": 1.5}, "'n_landmarks' parameter"),
        ({"n_landmarks": 0}, "'n_landmarks' parameter"),
        ({"kernel": "cosine"}, "'kernel' parameter"),
        ({"kernel_params": "gamma=1"}, "'kernel_params' parameter"),
        ({"kernel_params": {"gamma": "1"}}, "view 0: kernel parameter gamma must be a real"),
        (
            {"kernel": "poly", "kernel_params": {"degree": 2.5}},
            "view 0: kernel parameter degree must be an int",
        ),
        ({"kernel": "poly", "kernel_params": {"coef0": np.nan}}, "coef0 must be finite"),
    ],
)
def test_blocknystrom_parameters_checked_at_fit(data, params, match):
    Xs, _ = data
    with pytest.raises((ValueError, TypeError), match=match):
        BlockNystrom(**params).fit(Xs)


def test_eig_floor_and_chunk_size_valid_values_work(data):
    Xs, _ = data
    U = BlockNystrom(n_landmarks=10, eig_floor=0.0, chunk_size=7, random_state=0).fit(Xs)
    out = U.transform(Xs)
    assert out.shape == (30, 20) and np.isfinite(out).all()


@pytest.mark.parametrize("cls", BASELINES)
@pytest.mark.parametrize(
    "params, match",
    [
        ({"landmarks": "foo"}, "'landmarks' parameter"),  # unused (full kernels), still refused
        ({"alpha": -1.0}, "'alpha' parameter"),
        ({"alpha": np.nan}, "'alpha' parameter"),
        ({"kernel_params": {"gamma": "big"}}, "kernel parameter gamma must be a real"),
        ({"kernel": "poly", "kernel_params": {"degree": 1.5}}, "degree must be an int"),
        ({"n_landmarks": -3}, "'n_landmarks' parameter"),
        ({"random_state": "seed"}, "'random_state' parameter"),
    ],
)
def test_baselines_parameters_checked_at_fit_whatever_the_mode(data, cls, params, match):
    Xs, y = data
    with pytest.raises((ValueError, TypeError), match=match):
        cls(**params).fit(Xs, y)


@pytest.mark.parametrize(
    "cls, params, match",
    [
        (B.LpMKLRegressor, {"p": 0.5}, "'p' parameter"),
        (B.LpMKLRegressor, {"max_iter": 2.5}, "'max_iter' parameter"),
        (B.OKLRegressor, {"tol": -1}, "'tol' parameter"),
        (B.SingleViewRegressor, {"cv": 1}, "'cv' parameter"),
        (B.SingleViewRegressor, {"view": "worst"}, "'view' parameter"),
        (B.SingleViewClassifier, {"loss": "log"}, "'loss' parameter"),
        (B.EarlyFusionClassifier, {"kernel": "precomputed"}, "'kernel' parameter"),
        (B.MLKRRegressor, {"n_components": 0}, "'n_components' parameter"),
        (B.MLKRRegressor, {"max_iter": -5}, "'max_iter' parameter"),
    ],
)
def test_baseline_specific_parameters(data, cls, params, match):
    Xs, y = data
    target = y if "Regressor" in cls.__name__ else y > 0
    with pytest.raises((ValueError, TypeError), match=match):
        cls(**params).fit(Xs, target)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"eta0": "1"}, "'eta0' parameter"),
        ({"truncation": 2.5}, "'truncation' parameter"),
        ({"truncation_eps": 0.7}, "'truncation_eps' parameter"),
        ({"kernel_params": {"gamma": "x"}}, "kernel parameter gamma"),
        ({"kernel": "poly", "kernel_params": {"degree": 0.5}}, "degree must be an int"),
    ],
)
def test_olok_parameters(data, params, match):
    Xs, y = data
    with pytest.raises((ValueError, TypeError), match=match):
        OLOKRegressor(**params).fit(Xs[0], y)


def test_kernel_param_values_are_checked_when_built():
    with pytest.raises(TypeError, match="view 2: kernel parameter sigma must be a real"):
        ViewKernel("rbf", {"sigma": [1.0]}, view=2)
    with pytest.raises(TypeError, match="degree must be an int"):
        ViewKernel("poly", {"degree": True})
    ViewKernel("poly", {"degree": np.int64(2), "gamma": np.float32(0.5), "coef0": 0})


# ------------------------------------------------------------------ vv-RLS memory budget
def test_vvrls_refuses_above_memory_budget(data):
    Xs, y = data
    with pytest.raises(MemoryError, match="OLOKRegressor.*Nystrom"):
        VVRLSRegressor(max_memory_bytes=1000).fit(Xs[0], y)
    est = VVRLSRegressor(max_memory_bytes=None).fit(Xs[0], y)
    assert est.memory_estimate(30, 1) == 3 * 8 * 30 * 30
    # the default budget (2 GiB) refuses n = 15000 before building anything
    assert VVRLSRegressor().memory_estimate(15000, 20) > 2 * 1024**3


# ------------------------------------------------------------------ one validation path
def _containers(Xs, views=(3, 2)):
    import pandas as pd

    X = np.hstack(Xs)
    return {
        "list of views": (list(Xs), None),
        "list of nested lists": ([Xs[0], Xs[1].tolist()], None),
        "single array": (X, list(views)),
        "DataFrame": (pd.DataFrame(X, columns=list("abcde")), list(views)),
    }


@pytest.mark.parametrize(
    "container", ["list of views", "list of nested lists", "single array", "DataFrame"]
)
@pytest.mark.parametrize(
    "make",
    [
        lambda v: B.LateFusionRegressor(views=v),
        lambda v: B.OKLRegressor(views=v, max_iter=3),
        lambda v: B.MLKRRegressor(views=v, max_iter=3),
        lambda v: BlockNystrom(views=v),
    ],
)
def test_complex_views_refused_on_every_container(data, container, make):
    Xs, y = data
    Xc = [Xs[0], Xs[1] + 1j]
    X, views = _containers(Xc)[container]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # never a ComplexWarning
        with pytest.raises(ValueError, match="Complex data not supported: (view 1|X) is complex"):
            make(views).fit(X, y)


@pytest.mark.parametrize(
    "est",
    [
        B.LateFusionRegressor(),
        B.LpMKLRegressor(max_iter=2),
        B.SingleViewClassifier(),
        B.MLKRRegressor(max_iter=2),
    ],
)
def test_complex_targets_refused(data, est):
    Xs, y = data
    target = (y > 0) + 0j if "Classifier" in type(est).__name__ else y + 1j
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="Complex data not supported: y is complex"):
            est.fit(Xs, target)


@pytest.mark.parametrize("X_c, y_c", [(True, False), (False, True)])
@pytest.mark.parametrize("cls", [OLOKRegressor, VVRLSRegressor])
def test_olok_complex_refused(data, cls, X_c, y_c):
    Xs, y = data
    X = Xs[0] + (1j if X_c else 0)
    yy = y + (1j if y_c else 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="Complex data not supported"):
            cls().fit(X, yy)
    with pytest.raises(ValueError, match="Complex data not supported: x is complex"):
        OLOKRegressor().learn_one(Xs[0][0] + 1j, 1.0)


def test_dataframe_views_by_column_labels(data):
    import pandas as pd

    Xs, y = data
    df = pd.DataFrame(np.hstack(Xs), columns=["a", "b", "c", "d", "e"])
    by_label = B.LateFusionRegressor(views=[["a", "b", "c"], ["d", "e"]]).fit(df, y)
    by_size = B.LateFusionRegressor(views=[3, 2]).fit(np.hstack(Xs), y)
    np.testing.assert_allclose(by_label.predict(df), by_size.predict(np.hstack(Xs)))
    # labels in another order select those columns
    swapped = B.LateFusionRegressor(views=[["d", "e"], ["a", "b", "c"]]).fit(df, y)
    np.testing.assert_allclose(
        swapped.predict(df), B.LateFusionRegressor().fit([Xs[1], Xs[0]], y).predict(Xs[::-1])
    )
    with pytest.raises(ValueError, match="view 1: column label 'zz' is not a column of X"):
        B.LateFusionRegressor(views=[["a"], ["zz"]]).fit(df, y)
    with pytest.raises(TypeError, match="labels need a pandas DataFrame"):
        B.LateFusionRegressor(views=[["a"], ["b"]]).fit(np.hstack(Xs), y)


def test_cross_validation_with_single_array_and_views(data):
    from sklearn.model_selection import cross_val_score

    Xs, y = data
    scores = cross_val_score(B.LateFusionRegressor(views=[3, 2]), np.hstack(Xs), y, cv=3)
    assert scores.shape == (3,) and np.isfinite(scores).all()


# ------------------------------------------------------------------ right view, right cause
def _not_psd(A, Z):
    return -A @ Z.T


@pytest.mark.parametrize(
    "est",
    [
        B.LateFusionRegressor(kernel=["rbf", _not_psd]),
        B.OKLRegressor(kernel=["rbf", _not_psd]),
        B.LpMKLRegressor(kernel=["rbf", _not_psd]),
        B.SingleViewRegressor(kernel=["rbf", _not_psd]),
        B.OKLRegressor(kernel=["rbf", _not_psd], n_landmarks=8, random_state=0),
        BlockNystrom(kernel=["rbf", _not_psd], n_landmarks=8, random_state=0),
    ],
)
def test_callable_kernel_that_is_not_psd_is_named(data, est):
    Xs, y = data
    with pytest.raises(
        ValueError,
        match="view 1: the kernel callable's (training|landmark) "
        "Gram matrix is not positive semi-definite",
    ):
        est.fit(Xs, y)


def test_psd_callable_kernel_still_works(data):
    Xs, y = data
    lin = B.LateFusionRegressor(kernel="linear", alpha=0.1).fit(Xs, y)
    cal = B.LateFusionRegressor(kernel=lambda A, Z: A @ Z.T, alpha=0.1).fit(Xs, y)
    np.testing.assert_allclose(cal.predict(Xs), lin.predict(Xs), atol=1e-10)


def test_early_fusion_errors_name_the_right_view(data):
    Xs, y = data
    est = B.EarlyFusionRegressor().fit(Xs, y)
    with pytest.raises(ValueError, match="view 1 has 1 features, but 2 were seen in fit"):
        est.predict([Xs[0], Xs[1][:, :1]])
    with pytest.raises(ValueError, match="view 1 contains NaN"):
        est.predict([Xs[0], np.full((4, 2), np.nan)])
    with pytest.raises(
        ValueError,
        match="the concatenated views \\(early fusion\\): all training points are identical",
    ):
        B.EarlyFusionRegressor().fit([np.ones((5, 2)), np.ones((5, 1))], np.arange(5.0))


@pytest.mark.parametrize(
    "est", [B.LateFusionClassifier(), B.MLKRClassifier(), BlockNystrom(), B.OKLRegressor()]
)
def test_zero_row_views_are_a_validation_error(est):
    Xs = [np.empty((0, 3)), np.empty((0, 2))]
    with pytest.raises(ValueError, match="view 0 has 0 sample"):
        est.fit(Xs, np.empty(0))


def test_corrupt_data_file_is_named(tmp_path):
    from mvkernels import datasets

    folder = tmp_path / "uwave"
    folder.mkdir()
    bad = folder / "uwave_ucr_split_rebuilt.npz"
    bad.write_bytes(b"this is not a numpy archive" * 10)
    with pytest.raises(
        datasets.DataFileError,
        match="could not read .*uwave_ucr_split_rebuilt.npz: the file looks corrupt",
    ):
        datasets.load_uwave(tmp_path)
    (tmp_path / "santafe").mkdir()
    (tmp_path / "santafe" / "lasertrain.dat").write_text("1\n2\nthree\n")
    (tmp_path / "santafe" / "laserpred.dat").write_text("1\n")
    with pytest.raises(datasets.DataFileError, match="lasertrain.dat"):
        datasets.load_santafe(tmp_path)
    with pytest.raises(datasets.DataNotFoundError):
        datasets.load_sarcos(tmp_path)
    with pytest.raises(ValueError, match="color must be"):  # argument errors stay as they are
        datasets.load_winequality(tmp_path, color="blue")


# ------------------------------------------------------------------ numerically unsafe
@pytest.mark.parametrize("constant", [False, True])
def test_olok_divergence_detected_early(constant):
    rng = np.random.RandomState(0)
    X = np.ones((40, 3)) if constant else rng.standard_normal((40, 3))
    y = rng.standard_normal(40)
    est = OLOKRegressor(eta0=10, alpha=0, learning_rate="constant", kernel_params={"gamma": 0.5})
    with pytest.raises(ValueError, match="diverged at t=(\\d+) .*growing geometrically") as info:
        est.fit(X, y)
    t = int(info.value.args[0].split("t=")[1].split(" ")[0])
    assert t <= 30  # flagged from growth, long before overflow (|f| ~ 9^t)


def test_olok_growth_test_leaves_stable_runs_alone():
    rng = np.random.RandomState(1)
    X = rng.standard_normal((500, 3))
    y = 1e-9 * np.sin(X[:, 0])  # tiny targets: the test is relative to them
    est = OLOKRegressor(eta0=0.5, alpha=1e-3, kernel_params={"gamma": 0.5}).fit(X, y)
    assert np.isfinite(est.predict(X)).all()


def test_mlkr_warns_when_stopping_at_max_iter(data):
    Xs, y = data
    with pytest.warns(ConvergenceWarning, match="MLKR stopped at max_iter=2"):
        B.MLKRRegressor(max_iter=2).fit(Xs, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        B.MLKRRegressor(max_iter=2000).fit(Xs, y)


# ------------------------------------------------------------------ BlockNystrom


def test_blocknystrom_containers_agree(data):
    import pandas as pd

    Xs, _ = data
    X = np.hstack(Xs)
    ref = BlockNystrom(n_landmarks=10, random_state=0).fit(Xs).transform(Xs)
    single = BlockNystrom(n_landmarks=10, views=[3, 2], random_state=0).fit(X)
    np.testing.assert_allclose(single.transform(X), ref)
    assert single.n_features_in_ == 5
    df = pd.DataFrame(X, columns=list("abcde"))
    by_label = BlockNystrom(
        n_landmarks=10, views=[["a", "b", "c"], ["d", "e"]], random_state=0
    ).fit(df)
    np.testing.assert_allclose(by_label.transform(df), ref)
    np.testing.assert_array_equal(by_label.feature_names_in_, list("abcde"))
    # a single array given as a list of lists: the same at fit and at transform
    lol = BlockNystrom(n_landmarks=10, views=[3, 2], random_state=0).fit(X.tolist())
    np.testing.assert_allclose(lol.transform(X.tolist()), ref)
    np.testing.assert_allclose(lol.transform(X), ref)
    with pytest.raises(ValueError, match="view 1 has 1 features, but 2 were seen"):
        single.transform([Xs[0], Xs[1][:, :1]])


@pytest.mark.parametrize(
    "make",
    [
        lambda v: __import__("mvkernels").MVMLRegressor(views=v, max_iter=2),
        lambda v: __import__("mvkernels").MultiViewKPCA(views=v),
        lambda v: B.MLKRRegressor(views=v, max_iter=200),
    ],
)
def test_label_views_work_through_validate_array_input(data, make):
    """Estimators that validate one array first (validate_array_input) keep the labels."""
    import pandas as pd

    Xs, y = data
    X = np.hstack(Xs)
    df = pd.DataFrame(X, columns=list("abcde"))
    a = make([["a", "b", "c"], ["d", "e"]]).fit(df, y)
    b = make([3, 2]).fit(X, y)
    out = "predict" if hasattr(a, "predict") else "transform"
    # same data, same model; L-BFGS (MLKR) amplifies last-bit differences of the layout
    np.testing.assert_allclose(np.abs(getattr(a, out)(df)), np.abs(getattr(b, out)(X)), atol=1e-5)

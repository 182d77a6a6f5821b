"""Loaders and fetchers return a scikit-learn Bunch, or ``(X, y)`` with ``return_X_y=True``.

For multi-view data ``X`` is the list of views (``data`` in the Bunch) and ``y`` the target
(``target``); data sets with a fixed split return their parts in the order of
``train_test_split``. The former keys stay (the Bunch is a dict).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from sklearn.utils import Bunch

from mvkernels import datasets

LOADERS = ["load_uwave", "load_sarcos", "load_winequality", "load_parkinsons", "load_santafe"]
LOADERS += ["load_nutrimouse", "load_digits_views", "load_uwave_raw"]
FETCHERS = ["fetch_uwave", "fetch_sarcos", "fetch_winequality", "fetch_parkinsons"]
FETCHERS += ["fetch_santafe", "fetch_nutrimouse"]


def _equal(a, b) -> None:
    """Arrays or lists of arrays: the same values."""
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)
    else:
        np.testing.assert_array_equal(a, b)


def test_every_loader_and_fetcher_takes_return_x_y_keyword_only():
    public = {n for n in datasets.__all__ if n.startswith(("load_", "fetch_"))}
    assert public == set(LOADERS) | set(FETCHERS)  # a new one needs an entry here
    for name in public:
        param = inspect.signature(getattr(datasets, name)).parameters["return_X_y"]
        assert param.default is False and param.kind is param.KEYWORD_ONLY, name


def test_digits_views_bunch_and_x_y():
    d = datasets.load_digits_views()
    assert isinstance(d, Bunch) and isinstance(d, dict)
    assert d.data is d["data"] and d.view_names == ["top", "bottom", "profiles"]
    assert [X.shape for X in d.data] == [(1797, 32), (1797, 32), (1797, 16)]
    Xs, y = datasets.load_digits_views(return_X_y=True)
    _equal(Xs, d.data)
    _equal(y, d.target)
    np.testing.assert_array_equal(np.unique(y), d.target_names)
    # a view is what an estimator takes: the list fits as it comes
    from mvkernels import MVMLClassifier

    rows = np.r_[0:60, 900:960]
    clf = MVMLClassifier(n_landmarks=20, max_iter=2, random_state=0)
    clf.fit([X[rows] for X in Xs], y[rows])
    assert clf.score([X[rows] for X in Xs], y[rows]) > 0.5


# (loader, its keyword arguments, the Bunch keys return_X_y gives, the former keys kept)
REAL = [
    ("load_uwave", {}, ["Xs_train", "Xs_test", "y_train", "y_test"], ["view_names"]),
    ("load_uwave_raw", {"length": 20}, ["data", "target"], ["user", "day", "view_names"]),
    ("load_sarcos", {}, ["data", "target"], ["Xs", "y", "view_names"]),
    ("load_sarcos", {"torque": None}, ["data", "target"], ["Xs", "y"]),
    ("load_winequality", {"color": "red"}, ["data", "target"], ["X", "quality", "columns"]),
    ("load_parkinsons", {}, ["data", "target"], ["X", "Y", "subject", "columns", "targets"]),
    ("load_santafe", {}, ["train", "test"], []),
    ("load_nutrimouse", {}, ["data", "target"], ["Xs", "genotype", "diet", "view_names"]),
]


@pytest.mark.parametrize("name, kwargs, x_y, kept", REAL, ids=[f"{r[0]}{r[1]}" for r in REAL])
def test_real_loaders_bunch_and_x_y(data_dir, name, kwargs, x_y, kept):
    load = getattr(datasets, name)
    d = load(data_dir, **kwargs)
    assert isinstance(d, Bunch)
    assert set(x_y + kept) <= set(d)
    got = load(data_dir, **kwargs, return_X_y=True)
    assert isinstance(got, tuple) and len(got) == len(x_y)
    for value, key in zip(got, x_y, strict=True):
        _equal(value, d[key])
        assert getattr(d, key) is d[key]


def test_real_loaders_x_and_y_shapes(data_dir):
    """X is the list of views (multi-view) or one array (single view); y has one row per
    sample; the former keys hold the same objects as data/target."""
    Xs, y = datasets.load_sarcos(data_dir, return_X_y=True)
    assert [X.shape for X in Xs] == [(4449, 7)] * 3 and y.shape == (4449,)
    d = datasets.load_sarcos(data_dir, torque=None)
    assert d.target.shape == (4449, 7) and d.Xs is d.data and d.y is d.target
    Xs, y = datasets.load_nutrimouse(data_dir, return_X_y=True)
    assert [X.shape for X in Xs] == [(40, 120), (40, 21)] and y.shape == (40, 2)
    d = datasets.load_nutrimouse(data_dir)
    np.testing.assert_array_equal(y[:, 0], d.genotype)
    np.testing.assert_array_equal(y[:, 1], d.diet)
    assert d.target_names == ["genotype", "diet"]
    X, Y = datasets.load_parkinsons(data_dir, return_X_y=True)
    assert X.shape[1] == 19 and Y.shape == (len(X), 2)
    d = datasets.load_parkinsons(data_dir)
    assert d.feature_names == d.columns and len(d.feature_names) == 19
    Xs_train, Xs_test, y_train, y_test = datasets.load_uwave(data_dir, return_X_y=True)
    assert [len(y_train), len(y_test)] == [896, 3582]
    assert [X.shape[0] for X in Xs_train] == [896] * 3 and len(Xs_test) == 3


def test_fetchers_pass_return_x_y(data_dir):
    """The shared folder is a complete data home: each fetcher returns what its loader
    does, Bunch or tuple, without a request."""
    for fetch, load in [
        (datasets.fetch_sarcos, datasets.load_sarcos),
        (datasets.fetch_nutrimouse, datasets.load_nutrimouse),
        (datasets.fetch_santafe, datasets.load_santafe),
    ]:
        bunch = fetch(data_dir, download_if_missing=False)
        assert isinstance(bunch, Bunch)
        got = fetch(data_dir, download_if_missing=False, return_X_y=True)
        ref = load(data_dir, return_X_y=True)
        assert isinstance(got, tuple) and len(got) == len(ref)
        for a, b in zip(got, ref, strict=True):
            _equal(a, b)


def test_bad_torque_is_named(data_dir):
    with pytest.raises(ValueError, match=r"torque must be an int in \[0, 6\] or None, got 7"):
        datasets.load_sarcos(data_dir, torque=7)

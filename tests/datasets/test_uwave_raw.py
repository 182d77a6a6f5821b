"""``load_uwave_raw``: the raw uWave accelerometer recordings, resampled, in raw units."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from mvkernels.datasets import DataNotFoundError, load_uwave, load_uwave_raw
from mvkernels.datasets._loaders import _resample

ZIP = "uWaveGestureLibrary_raw.zip"


@pytest.fixture(scope="module")
def raw(data_dir):
    return load_uwave_raw(data_dir)


def test_shapes_and_counts(raw):
    # 8 users x 7 days x 8 gestures x 10 repetitions, every recording present
    assert raw.view_names == ["x", "y", "z"]
    assert [X.shape for X in raw.data] == [(4480, 300)] * 3
    assert all(X.dtype == np.float64 and X.flags.c_contiguous for X in raw.data)
    for key, values, count in [
        ("target", range(1, 9), 560),
        ("user", range(1, 9), 560),
        ("day", range(1, 8), 640),
        ("repetition", range(1, 11), 448),
    ]:
        got_values, counts = np.unique(raw[key], return_counts=True)
        np.testing.assert_array_equal(got_values, list(values), err_msg=key)
        assert (counts == count).all(), key
    keys = np.column_stack([raw.user, raw.day, raw.target, raw.repetition])
    assert len(np.unique(keys, axis=0)) == 4480  # one row per recording
    assert (np.diff(keys @ [10**6, 10**4, 100, 1]) > 0).all()  # ordered by the keys
    assert 1 <= raw.n_raw_samples.min() and raw.n_raw_samples.max() == 315


def test_raw_units_not_normalised(raw):
    # gravity: the mean of z is far from 0, and the series are not unit-variance
    assert raw.data[2].mean() > 0.5
    assert not np.allclose(raw.data[0].std(axis=1), 1.0)


def test_end_points_are_the_recorded_samples(raw, data_dir):
    i = int(np.flatnonzero((raw.user == 3) & (raw.day == 2) & (raw.target == 5))[3])
    name = f"uWaveGestureLibrary/U3/U3 (2)/E_Template_Acceleration5-{raw.repetition[i]}.txt"
    with zipfile.ZipFile(data_dir / "uwave" / ZIP) as archive:
        rec = np.array(archive.read(name).split(), dtype=float).reshape(-1, 3)
    assert rec.shape[0] == raw.n_raw_samples[i]
    for a in range(3):
        assert raw.data[a][i, 0] == rec[0, a] and raw.data[a][i, -1] == rec[-1, a]
        np.testing.assert_allclose(_resample(rec[:, a], 300), raw.data[a][i], rtol=0, atol=0)


def test_same_series_as_the_ucr_split(data_dir):
    # at 315 samples and z-normalised per series, the raw recordings are the UCR split's
    # training series (float32 there): the resampling is the archive's
    raw = load_uwave_raw(data_dir, length=315)
    ucr = load_uwave(data_dir)
    member = np.loadtxt(
        data_dir / "uwave" / "uwave_ucr_train_membership.csv", delimiter=",", skiprows=1
    ).astype(int)
    where = {k: i for i, k in enumerate(zip(raw.user, raw.day, raw.target, raw.repetition))}
    rows = np.array([where[tuple(m[1:5])] for m in member])
    np.testing.assert_array_equal(raw.target[rows], ucr.y_train[member[:, 0]])
    for a in range(3):
        R = raw.data[a][rows]
        Z = (R - R.mean(axis=1, keepdims=True)) / R.std(axis=1, keepdims=True)
        np.testing.assert_allclose(Z, ucr.Xs_train[a][member[:, 0]], rtol=0, atol=1e-6)


def test_views_length_and_return_x_y(raw, data_dir):
    Xs, y = load_uwave_raw(data_dir, length=50, views=["y", "x"], return_X_y=True)
    assert [X.shape for X in Xs] == [(4480, 50), (4480, 50)]
    np.testing.assert_array_equal(y, raw.target)
    for X, a in zip(Xs, (1, 0), strict=True):
        np.testing.assert_array_equal(X[:, [0, -1]], raw.data[a][:, [0, -1]])
    assert load_uwave_raw(data_dir, length=50, views=("z",)).view_names == ["z"]


def test_resample_known_series():
    # a line is resampled exactly; the end points are kept; one sample is a constant
    t = np.linspace(0.0, 1.0, 7)
    series = np.column_stack([3.0 * t - 1.0, -2.0 * t])
    out = _resample(series, 13)
    s = np.linspace(0.0, 1.0, 13)
    np.testing.assert_allclose(out, np.column_stack([3.0 * s - 1.0, -2.0 * s]), atol=1e-15)
    bumpy = np.array([1.0, 5.0, -2.0, 4.0])
    down = _resample(bumpy, 3)
    assert down[0] == 1.0 and down[-1] == 4.0
    assert down[1] == pytest.approx(0.5 * (5.0 - 2.0))  # s = 1/2 between samples 1 and 2
    np.testing.assert_array_equal(_resample(np.array([[0.5, -1.0, 2.0]]), 4), [[0.5, -1, 2]] * 4)


@pytest.mark.parametrize("length", [1, 0, -5, 2.5, True, "300", None])
def test_wrong_length_is_a_clear_error(length):
    with pytest.raises(ValueError, match="length must be an int >= 2"):
        load_uwave_raw("/nonexistent", length=length)


@pytest.mark.parametrize("views", ["x", [], ["x", "w"], ["x", "x"], [0, 1]])
def test_wrong_views_is_a_clear_error(views):
    with pytest.raises(ValueError, match="views must"):
        load_uwave_raw("/nonexistent", views=views)


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(DataNotFoundError, match=ZIP):
        load_uwave_raw(tmp_path)

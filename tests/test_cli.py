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

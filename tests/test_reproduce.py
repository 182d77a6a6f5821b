"""The reproduction harness: run metadata, the generated results index, the CLI."""

from __future__ import annotations

import json
import sys
import types

import pytest

from mvkernels import cli, reproduce


@pytest.fixture
def fake_experiment(monkeypatch):
    """Register a tiny experiment module that writes a report and a 'figure'."""
    module = types.ModuleType("mvkernels.reproduce._fake")
    calls = []

    def run(quick, output, data_dir, random_state):
        calls.append((quick, data_dir, random_state))
        (output / "results.md").write_text("# fake\n")
        (output / "curve.png").write_bytes(b"\x89PNG fake")
        if data_dir == "fail":
            raise RuntimeError("boom")
        return {"score": 1.0}

    module.run = run
    monkeypatch.setitem(sys.modules, "mvkernels.reproduce._fake", module)
    monkeypatch.setitem(reproduce.EXPERIMENTS, "fake", "_fake")
    return calls


def test_run_experiment_writes_metadata_and_index(tmp_path, fake_experiment):
    out = tmp_path / "res" / "fake"
    result = reproduce.run_experiment("fake", quick=True, output=out, data_dir="d", random_state=3)
    assert result == {"score": 1.0}
    assert fake_experiment == [(True, "d", 3)]
    meta = json.loads((out / "run.json").read_text())
    assert meta["command"] == "mvkernels reproduce fake --quick --random-state 3"
    assert meta["quick"] is True and meta["seconds"] >= 0
    index = (tmp_path / "res" / "README.md").read_text()
    assert "[fake](fake/results.md)" in index
    assert "![curve](fake/curve.png)" in index
    assert "| quick |" in index


def test_index_lists_runs_in_registry_order(tmp_path):
    for name in ["olok", "mvml-uwave"]:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "run.json").write_text(json.dumps({
            "name": name, "title": "t", "command": f"mvkernels reproduce {name}", "quick": False,
            "seconds": 12.0, "date": "2026-11-22T10:00:00", "versions": {}}))
    text = reproduce.write_results_index(tmp_path).read_text()
    assert text.index("[mvml-uwave]") < text.index("[olok]")
    assert "| full |" in text


def test_unknown_experiment_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown experiment 'nope'"):
        reproduce.run_experiment("nope")


def test_cli_all_keeps_going_and_reports_failure(tmp_path, fake_experiment, monkeypatch, capsys):
    monkeypatch.setattr(reproduce, "EXPERIMENTS", {"fake": "_fake"})
    code = cli.main(["reproduce", "all", "--quick", "--output", str(tmp_path), "--data", "fail"])
    assert code == 1
    assert "failed: fake" in capsys.readouterr().err
    assert (tmp_path / "README.md").exists()
    assert not (tmp_path / "fake" / "run.json").exists()  # a failed run records no metadata


def test_cli_rejects_unknown_experiment(capsys):
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "nope"])

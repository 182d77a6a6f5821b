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


def _snapshot(root):
    """Every file under ``root`` with its bytes."""
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_run_experiment_writes_metadata_and_index(tmp_path, fake_experiment):
    out = tmp_path / "res" / "fake"
    result = reproduce.run_experiment(
        "fake", quick=True, output=out, data_dir="d", random_state=3, index=tmp_path / "res"
    )
    assert result == {"score": 1.0}
    assert fake_experiment == [(True, "d", 3)]
    meta = json.loads((out / "run.json").read_text())
    assert meta["command"] == "mvkernels reproduce fake --quick --random-state 3"
    assert meta["quick"] is True and meta["seconds"] >= 0
    index = (tmp_path / "res" / "README.md").read_text()
    assert "[fake](fake/results.md)" in index
    assert "![curve](fake/curve.png)" in index
    assert "| quick |" in index


def test_cli_single_experiment_writes_nothing_outside_output(tmp_path, fake_experiment):
    (tmp_path / "README.md").write_text("my own project readme\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "run.json").write_text("{}")
    before = _snapshot(tmp_path)
    out = tmp_path / "sines"
    assert cli.main(["reproduce", "fake", "--quick", "--output", str(out)]) == 0
    after = _snapshot(tmp_path)
    outside = {p: b for p, b in after.items() if p.parts[0] != "sines"}
    assert outside == before
    assert {p.name for p in out.iterdir()} == {"results.md", "curve.png", "run.json"}


def test_cli_all_writes_index_inside_output_only(tmp_path, fake_experiment, monkeypatch):
    monkeypatch.setattr(reproduce, "EXPERIMENTS", {"fake": "_fake"})
    (tmp_path / "README.md").write_text("sibling readme\n")
    before = _snapshot(tmp_path)
    root = tmp_path / "results"
    assert cli.main(["reproduce", "all", "--quick", "--output", str(root)]) == 0
    after = _snapshot(tmp_path)
    assert {p: b for p, b in after.items() if p.parts[0] != "results"} == before
    assert "[fake](fake/results.md)" in (root / "README.md").read_text()


def test_cli_index_option_is_explicit(tmp_path, fake_experiment):
    out = tmp_path / "res" / "fake"
    assert (
        cli.main(["reproduce", "fake", "--output", str(out), "--index", str(tmp_path / "res")]) == 0
    )
    assert "[fake](fake/results.md)" in (tmp_path / "res" / "README.md").read_text()
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "all", "--output", str(out), "--index", str(tmp_path)])


def test_index_lists_runs_in_registry_order(tmp_path):
    for name in ["olok", "mvml-uwave"]:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "run.json").write_text(
            json.dumps(
                {
                    "name": name,
                    "title": "t",
                    "command": f"mvkernels reproduce {name}",
                    "quick": False,
                    "seconds": 12.0,
                    "date": "2026-11-22T10:00:00",
                    "versions": {},
                }
            )
        )
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

"""``mvkernels reproduce NAME --quick`` on the real data: the commands run end to end,
write their report, figures and (when asked) the results index, and reach the stated numbers.

These are the quick modes (reduced grids, one landmark draw); the full runs are on the
results page (docs/results). Thresholds are the issues' targets or, where the quick mode
is coarser, stated per test.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from mvkernels import cli

pytest.importorskip("matplotlib")
pytestmark = [pytest.mark.realdata, pytest.mark.slow]


def _run(name, tmp_path, data_dir):
    from mvkernels.reproduce import run_experiment

    out = tmp_path / name
    result = run_experiment(name, quick=True, output=out, data_dir=str(data_dir),
                            index=tmp_path)  # the index only where asked explicitly
    report = (out / "results.md").read_text()
    assert "paper" in report.lower()
    assert list(out.glob("*.png")), f"{name} wrote no figure"
    meta = json.loads((out / "run.json").read_text())
    assert meta["quick"] and meta["command"] == f"mvkernels reproduce {name} --quick"
    assert f"[{name}]({name}/results.md)" in (tmp_path / "README.md").read_text()
    return result, report


def test_mvml_uwave_quick(tmp_path, data_dir):
    result, report = _run("mvml-uwave", tmp_path, data_dir)
    acc = {(r["method"], r["level"]): r["accuracy"] for r in result["rows"]}
    for level in (0.06, 0.12, 0.24):
        assert acc[("MVML", level)] >= 92.0          # paper: 92.67 / 93.03 / 92.59
        assert acc[("MVML_I", level)] >= 92.0
    assert acc[("MVML", 0.12)] >= 93.0               # issue 2's target at 12 %
    assert all(np.isfinite(r["accuracy"]) for r in result["rows"])
    assert "Flower17" in report                      # says what is not available


def test_mvml_svm_uwave_quick(tmp_path, data_dir):
    result, _ = _run("mvml-svm-uwave", tmp_path, data_dir)
    for row in result["rows"]:
        assert row["accuracy"] >= 93.0, row          # issue 3: >= 93 % at 6 % and 24 %


def test_mvml_sarcos_quick(tmp_path, data_dir):
    result, report = _run("mvml-sarcos", tmp_path, data_dir)
    assert "SARCOS-4449" in report                   # labelled as the substitute it is
    mvml = [c for c in result["curves"] if c["method"].startswith("MVML")]
    assert mvml and all(np.isfinite(c["nmse"]) for c in mvml)
    assert min(c["nmse"] for c in mvml) < 0.2        # measured 0.11; the mean predictor is 1


def test_olok_quick(tmp_path, data_dir):
    result, report = _run("olok", tmp_path, data_dir)
    assert "click" in report.lower()                 # names the missing data set
    assert result["speed"]["max_abs_diff"] < 1e-8    # fast path == per-sample Algorithm 1
    for name in ("wine", "parkinson"):
        row = result["table"][name]
        base = np.mean(row["baseline"])
        assert np.mean(row["mse"]["vv-RLS"]) < 0.6 * base
        assert np.mean(row["mse"]["OLOK"]) < 0.8 * base


def test_rkm_santafe_quick(tmp_path, data_dir):
    result, _ = _run("rkm-santafe", tmp_path, data_dir)
    rows = {r["solver"]: r for r in result["rows"]}
    assert abs(rows["primal-eig"]["mse"] - 499.79) < 0.5
    assert abs(rows["dual-eig"]["mse"] - 499.79) < 0.5
    assert result["primal_dual_max_diff"] < 1e-8


def test_cli_reproduce_quick_writes_report(tmp_path, data_dir, capsys):
    code = cli.main(["reproduce", "rkm-sines", "--quick", "--output", str(tmp_path / "s"),
                     "--data", str(data_dir)])
    assert code == 0
    assert (tmp_path / "s" / "results.md").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["s"]  # nothing written beside --output
    assert "[1/" in capsys.readouterr().err          # progress lines

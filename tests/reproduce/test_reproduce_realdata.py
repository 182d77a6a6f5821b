"""``mvkernels reproduce NAME --quick`` on the real data: the commands run end to end,
write their report, figures and (when asked) the results index, and reach the stated numbers.

These are the quick modes (reduced grids, one landmark draw); the full runs are on the
results page (docs/results). Accuracy thresholds are the papers' own figures (the quick
modes reach them); error levels are checked against independent references computed here
with scikit-learn on the same split (kernel ridge on the same kernels), and the claims
written to ``claims.json`` must agree with the numbers they quote.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import rbf_kernel

from mvkernels import cli

pytest.importorskip("matplotlib")
pytestmark = [pytest.mark.realdata, pytest.mark.slow]


def _run(name, tmp_path, data_dir):
    from mvkernels.reproduce import run_experiment

    out = tmp_path / name
    result = run_experiment(
        name, quick=True, output=out, data_dir=str(data_dir), index=tmp_path
    )  # the index only where asked explicitly
    report = (out / "results.md").read_text()
    assert "paper" in report.lower()
    assert list(out.glob("*.png")), f"{name} wrote no figure"
    meta = json.loads((out / "run.json").read_text())
    assert meta["quick"] and meta["command"] == f"mvkernels reproduce {name} --quick"
    index = (tmp_path / "README.md").read_text()
    assert f"[{name}]({name}/results.md)" in index
    for png in out.glob("*.png"):  # every figure on the results page
        assert f"({name}/{png.name})" in index
    if (out / "claims.json").exists():  # and the claims table per paper
        claims = json.loads((out / "claims.json").read_text())
        assert claims["paper"] in index and "Paper claims" in report
    return result, report


def _claims(result, start):
    return [c for c in result["claims"] if c.claim.startswith(start)]


def test_mvml_uwave_quick(tmp_path, data_dir):
    from mvkernels.reproduce.mvml_uwave import PAPER

    result, report = _run("mvml-uwave", tmp_path, data_dir)
    acc = {(r["method"], r["level"]): r["accuracy"] for r in result["rows"]}
    for j, level in enumerate((0.06, 0.12, 0.24)):
        for method in ("MVML", "MVMLsparse", "MVML_I"):  # quick: 93.9-94.6 %
            assert acc[(method, level)] >= PAPER[method][j][0], (method, level)
    assert all(np.isfinite(r["accuracy"]) for r in result["rows"])
    assert "Flower17" in report  # says what is not available
    (claim,) = _claims(result, "MVML accuracy")
    assert claim.verdict == "shown"
    (flower,) = _claims(result, "Flower17")
    assert flower.verdict == "not run"


def test_mvml_svm_uwave_quick(tmp_path, data_dir):
    from mvkernels.reproduce.mvml_svm_uwave import PAPER

    result, report = _run("mvml-svm-uwave", tmp_path, data_dir)
    for row in result["rows"]:  # the paper's figure, per method and level
        assert row["accuracy"] >= PAPER[(row["method"], row["level"])], row
    assert "factor picked" in report
    mumbo = result["mumbo"]
    if mumbo["ran"]:  # scikit-multimodallearn installed
        # the paper's MUMBO: 90.08 / 90.68 %; MVMLSVM above it at both levels
        assert abs(mumbo["accuracy"] - 90.08) < 2.5, mumbo
        assert all(r["accuracy"] > mumbo["accuracy"] + 2 for r in result["rows"])
        (claim,) = _claims(result, "MVMLSVM beats MUMBO")
        assert claim.verdict == "shown"
    else:
        assert "not run" in mumbo["why"] and "MUMBO" in report


def test_mvml_sarcos_quick(tmp_path, data_dir):
    from mvkernels.reproduce.mvml_sarcos import _split

    result, report = _run("mvml-sarcos", tmp_path, data_dir)
    assert "SARCOS-4449" in report  # labelled as the substitute it is
    X, y, Xt, yt = _split(str(data_dir), 0)

    def nmse(p):
        return float(np.mean((p - yt) ** 2) / np.var(yt))

    # full-kernel early fusion is kernel ridge on the 21 inputs, gamma = 1/21 (no intercept)
    (ef,) = [r for r in result["full"] if r["method"] == "KRR early fusion"]
    ref = KernelRidge(alpha=ef["best"]["alpha"], kernel="rbf", gamma=1 / 21).fit(X, y)
    np.testing.assert_allclose(ef["nmse"], nmse(ref.predict(Xt)), rtol=1e-6)
    # MVML_I (A~ = I, w = 1/3) tends to kernel ridge with sum_l K_l / 9 as landmarks grow:
    # at the largest quick level (50 %) its error is within 15 % of that limit
    rows = [c for c in result["curves"] if c["method"] == "MVML_I"]
    top = max(rows, key=lambda c: c["level"])
    blocks = [slice(7 * v, 7 * v + 7) for v in range(3)]
    K = sum(rbf_kernel(X[:, b], gamma=1 / 7) for b in blocks) / 9
    Kt = sum(rbf_kernel(Xt[:, b], X[:, b], gamma=1 / 7) for b in blocks) / 9
    limit = nmse(
        KernelRidge(alpha=top["best"]["alpha"], kernel="precomputed").fit(K, y).predict(Kt)
    )
    assert 0.95 * limit <= top["nmse"] <= 1.15 * limit, (top["nmse"], limit)
    # error decreases with the landmark level for every method (this substitute's shape)
    for m in {c["method"] for c in result["curves"]}:
        e = [
            c["nmse"]
            for c in sorted(result["curves"], key=lambda c: c["level"])
            if c["method"] == m
        ]
        assert e[-1] < e[0], m


def test_olok_quick(tmp_path, data_dir):
    from mvkernels.reproduce.olok import CLOSE_RATIO

    result, report = _run("olok", tmp_path, data_dir)
    # the click column runs on the synthetic substitute, marked as such
    assert "Click column of Table 1 (substitute" in report
    click = result["click"]["methods"]
    assert click["OLOK-rff"]["rows"] == 50_000 and click["OLOK"]["rows"] == 5_000
    assert click["OLOK-rff"]["mse"] < 0.9 * result["click"]["baseline"]  # it learns
    (sub,) = _claims(result, "click-rate column of Table 1")
    assert sub.verdict == "not comparable" and "substitute" in sub.ours
    (whole,) = _claims(result, "OLOK learns from the whole click stream")
    ok = click["OLOK-rff"]["mse"] <= click["OLOK"]["mse"]
    assert whole.verdict == ("shown" if ok else "not shown")
    for name in ("synthetic", "wine", "parkinson"):
        row = result["table"][name]
        vv, ol = np.mean(row["mse"]["vv-RLS"]), np.mean(row["mse"]["OLOK"])
        # the paper's claim "OLOK is close to vv-RLS" (full run: 1.13-1.19x). The quick run
        # (smaller grids, 5,000 synthetic rows, selection on 2,000 rows) reaches 1.12
        # (synthetic), 0.96 (wine) and 1.20 (parkinson) with seed 0, hence 1.3x here; the
        # training mean is 2-50x vv-RLS's error, so a learner that fails is far above it
        assert ol <= 1.3 * vv, (name, vv, ol)
        (claim,) = _claims(result, f"OLOK's test MSE close to vv-RLS's ({name}")
        assert claim.verdict == ("shown" if ol / vv <= CLOSE_RATIO else "not shown")
    # Fig. 1 on Parkinson: the verdict follows the curve's last point
    c = result["curves"]["parkinson"]
    (fig1,) = _claims(result, "OLOK quickly reaches the vv-RLS error (parkinson")
    ok = c["OLOK"][-1] <= CLOSE_RATIO * c["vv-RLS"]
    assert fig1.verdict == ("shown" if ok else "not shown")


def test_rkm_santafe_quick(tmp_path, data_dir):
    result, _ = _run("rkm-santafe", tmp_path, data_dir)
    rows = {r["solver"]: r for r in result["rows"]}
    assert abs(rows["primal-eig"]["mse"] - 499.79) < 0.5
    assert abs(rows["dual-eig"]["mse"] - 499.79) < 0.5
    assert result["primal_dual_max_diff"] < 1e-8


def test_cli_reproduce_quick_writes_report(tmp_path, data_dir, capsys):
    code = cli.main(
        [
            "reproduce",
            "rkm-sines",
            "--quick",
            "--output",
            str(tmp_path / "s"),
            "--data",
            str(data_dir),
        ]
    )
    assert code == 0
    assert (tmp_path / "s" / "results.md").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["s"]  # nothing written beside --output
    assert "[1/" in capsys.readouterr().err  # progress lines

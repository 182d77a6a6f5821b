"""``mvkernels demo``: the corrupted-views builder, the figure statistics, and a quick run."""

import csv
import os

import numpy as np
import pytest

from mvkernels import MVMLClassifier
from mvkernels.datasets import load_digits_views
from mvkernels.demo import (
    CLEAN_VIEW_NAMES,
    UNEQUAL_VIEW_NAMES,
    corrupted_digits_views,
    learned_block_norms,
    run_demo,
)
from mvkernels.mvml import group_norms


def test_corrupted_views_are_built_as_documented():
    (top, bottom, profiles), y0 = load_digits_views(return_X_y=True)
    Xs, y = corrupted_digits_views(noise=0.5, noise_dim=7, random_state=3)
    assert len(Xs) == len(UNEQUAL_VIEW_NAMES) == 5
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(Xs[0], top)
    np.testing.assert_array_equal(Xs[2], profiles)
    # view 1: the bottom half plus noise of the stated standard deviation
    resid = Xs[1] - bottom
    assert abs(resid.std() - 0.5) < 0.01 and abs(resid.mean()) < 0.01
    # view 3: uniform noise of the requested width
    assert Xs[3].shape == (len(y), 7)
    assert Xs[3].min() >= 0.0 and Xs[3].max() < 1.0
    # view 4: the rows of the bottom half, permuted (a multiset of rows, not in place)
    assert Xs[4].shape == bottom.shape
    np.testing.assert_array_equal(np.sort(Xs[4], axis=0), np.sort(bottom, axis=0))
    assert np.mean(np.all(Xs[4] == bottom, axis=1)) < 0.05
    # seeded: same views for the same seed, different for another
    Xs_again, _ = corrupted_digits_views(noise=0.5, noise_dim=7, random_state=3)
    for A, B in zip(Xs, Xs_again):
        np.testing.assert_array_equal(A, B)
    Xs_other, _ = corrupted_digits_views(noise=0.5, noise_dim=7, random_state=4)
    assert not np.array_equal(Xs[1], Xs_other[1])


def test_learned_block_norms_match_the_direct_formula():
    Xs, y = load_digits_views(return_X_y=True)
    idx = np.arange(0, len(y), 6)
    est = MVMLClassifier(
        n_landmarks=20, max_iter=3, alpha=1e-2, eta=1e-2, joint_view=False, random_state=0
    ).fit([X[idx] for X in Xs], y[idx])
    N = learned_block_norms(est)
    assert N.shape == (3, 3)
    np.testing.assert_allclose(N, N.T)
    expected = np.zeros((3, 3))
    for M in est.metric_:
        lmin = np.linalg.eigvalsh(M)[0]
        expected += group_norms(M - lmin * np.eye(M.shape[0]), 3)
    np.testing.assert_allclose(N, expected / len(est.metric_), rtol=1e-8, atol=1e-10)
    assert np.all(N >= 0) and N.max() > 0


@pytest.mark.slow
def test_quick_demo_writes_its_files_and_sane_numbers(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    out = tmp_path / "out"
    monkeypatch.chdir(tmp_path)  # anything written outside `out` would land here
    rows = run_demo(output=out, quick=True, random_state=0)

    assert sorted(os.listdir(tmp_path)) == ["out"]
    files = sorted(os.listdir(out))
    # the weights figure only when some learned weights left the uniform 1/v
    assert files[:3] == ["metric_blocks.png", "results.csv", "results.md"]
    assert files[3:] in ([], ["view_weights.png"])
    for name in files:
        if name.endswith(".png"):
            assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    cases = {"clean": CLEAN_VIEW_NAMES, "unequal": UNEQUAL_VIEW_NAMES}
    assert {r["case"] for r in rows} == set(cases)
    per_case = {c: {r["method"]: r for r in rows if r["case"] == c} for c in cases}
    for c, methods in per_case.items():
        assert len(methods) == 9, c
        for r in methods.values():
            # ten balanced classes: chance is 0.1; every method here is far above it
            assert 0.5 < r["test_accuracy"] <= 1.0, (c, r)
            assert 0.0 < r["fit_seconds"] < 600.0, (c, r)
            assert 0.0 < r["cpu_seconds"] < 600.0, (c, r)
    svc = {c: per_case[c]["SVC() on the concatenated views"]["test_accuracy"] for c in cases}
    default = {c: per_case[c]["MVMLClassifier() (defaults)"]["test_accuracy"] for c in cases}
    cv = {
        c: next(
            r["test_accuracy"] for m, r in per_case[c].items() if m.startswith("MVMLClassifierCV")
        )
        for c in cases
    }
    # clean views: everything is a good digit classifier
    assert svc["clean"] > 0.95 and default["clean"] > 0.95 and cv["clean"] > 0.95
    # unequal views: the noise views hurt a kernel on the concatenation far more than
    # per-view kernels (observed: SVC 0.875, MVML defaults 0.944, MVMLClassifierCV 0.971)
    assert svc["unequal"] < 0.92
    assert default["unequal"] > svc["unequal"] + 0.03
    assert cv["unequal"] > svc["unequal"] + 0.05

    with open(out / "results.csv") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == len(rows) == 18
    for r, t in zip(rows, table):
        assert t["case"] == r["case"] and t["method"] == r["method"]
        assert float(t["test_accuracy"]) == pytest.approx(r["test_accuracy"], abs=1e-4)
        assert float(t["cpu_seconds"]) == pytest.approx(r["cpu_seconds"], abs=1e-3)
    md = (out / "results.md").read_text()
    for r in rows:
        assert f"| {r['test_accuracy']:.4f}" in md
    # one aligned table: every row of it has the same width
    table_lines = [ln for ln in md.splitlines() if ln.startswith("|")]
    assert len(table_lines) == len(rows) + 2
    assert len({len(ln) for ln in table_lines}) == 1
    assert "898 images" in md and "899" in md


def test_weights_figure_only_when_weights_are_learned():
    from mvkernels.demo import weights_were_learned

    Xs, y = load_digits_views(return_X_y=True)
    idx = np.arange(0, len(y), 6)
    sub = [X[idx] for X in Xs]
    fixed = MVMLClassifier(n_landmarks=20, max_iter=3, random_state=0).fit(sub, y[idx])
    assert not weights_were_learned(fixed)  # w = 1/v by construction
    learned = MVMLClassifier(n_landmarks=20, max_iter=3, learn_weights=True, random_state=0).fit(
        sub, y[idx]
    )
    moved = np.max(np.abs(np.atleast_2d(learned.weights_) - 1 / 3))
    assert weights_were_learned(learned) == (moved > 0.02)

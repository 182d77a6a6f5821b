"""Time of the cross-validated MVML estimators against the tuned scikit-learn baseline, and
what the screen's number of finalist pairs (``n_finalists``) costs and buys.

Issue 32 asks for ``MVMLClassifierCV()`` (``MVMLRegressorCV()`` on SARCOS) in at most 2x the
time of the tuned SVC (tuned KernelRidge). Side by side in one process, on the same data,
the fits alternating (baseline, then each CV variant, repeated ``--repeats`` times; minimum
over the repeats):

* the tuned baseline of ``bench_vs_sklearn.py`` (``GridSearchCV(SVC(), 12 candidates)``,
  ``GridSearchCV(KernelRidge(kernel="rbf"), 15 candidates)``);
* the CV estimator with its default ``n_finalists`` (1) and with ``n_finalists=2`` (the
  default up to 0.1.0).

Sets: those of ``bench_vs_sklearn.py --quick`` (uWave, digits with 3 views, digits with
views of unequal quality, nutrimouse over 4 outer folds, SARCOS) and of
``bench_small_data.py`` (10 or 20 rows a class, 6 seeded draws; one fit per draw).
Reported: the test score (mean over splits / draws), the CPU time (``process_time``, the
steadier measure on a shared machine; every library runs on one thread here) and the wall
time, each as a ratio to the tuned baseline's, and the load average.

Run:  MVKERNELS_DATA=../shared/data OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
      .venv/bin/python benchmarks/bench_cv_speed.py [--repeats 3] [--draws 6]
Writes docs/results/benchmarks/cv_speed.md (``--out`` to change).
"""

from __future__ import annotations

import os
import time
import warnings
from typing import Any

import numpy as np
from _common import (
    RESULTS,
    add_out,
    cores,
    load_average,
    markdown_table,
    parser,
    report,
    write_report,
)
from bench_small_data import SETS, _views
from bench_vs_sklearn import load_cases, regressors

from mvkernels import MVMLClassifierCV, MVMLRegressorCV
from mvkernels.demo import tuned_svc

OUT = RESULTS / "cv_speed.md"
VARIANTS = {"n_finalists=1 (default)": None, "n_finalists=2": 2}


def _fit(est: Any, X: Any, y: np.ndarray) -> tuple[Any, float, float]:
    t, w = time.process_time(), time.perf_counter()
    est.fit(X, y)
    return est, time.process_time() - t, time.perf_counter() - w


def _split(
    Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, yte: np.ndarray, widths: list, reg: bool
) -> dict[str, tuple[float, float, float]]:
    """One train/test split: (score, CPU s, wall s) of the baseline and each CV variant."""
    base = regressors(widths, Xtr, anchor=False)[0][1] if reg else tuned_svc(Xtr)
    est, cpu, wall = _fit(base, Xtr, ytr)
    out = {"tuned": (float(est.score(Xte, yte)), cpu, wall)}
    cls = MVMLRegressorCV if reg else MVMLClassifierCV
    for name, k in VARIANTS.items():
        est, cpu, wall = _fit(cls(n_finalists=k, random_state=0), _views(Xtr, widths), ytr)
        out[name] = (float(est.score(_views(Xte, widths), yte)), cpu, wall)
    return out


def _row(name: str, n_train: int, runs: list[list[dict]]) -> list[str]:
    """``runs[split][repeat]``: scores averaged over splits, times (minimum over repeats)
    averaged over splits."""

    def stat(key: str, i: int) -> float:
        per_split = [[r[key][i] for r in reps] for reps in runs]
        if i == 0:
            return float(np.mean([s[0] for s in per_split]))
        return float(np.mean([min(s) for s in per_split]))

    cells = [name, str(n_train), str(len(runs)), f"{stat('tuned', 0):.4f}"]
    cells += [f"{stat('tuned', 1):.2f}"]
    for v in VARIANTS:
        cells += [
            f"{stat(v, 0):.4f}",
            f"{stat(v, 1):.2f}",
            f"{stat(v, 1) / stat('tuned', 1):.2f}",
            f"{stat(v, 2) / stat('tuned', 2):.2f}",
        ]
    return cells


def run(repeats: int, draws: int) -> list[list[str]]:
    rows = []
    for case in load_cases(quick=True):
        reg = case["task"] == "reg"
        runs = [
            [_split(*split, case["sizes"], reg) for _ in range(repeats)] for split in case["splits"]
        ]
        rows.append(_row(case["name"], len(case["splits"][0][1]), runs))
        print(" | ".join(rows[-1]), flush=True)
    for name, make in SETS:
        splits = list(make(draws))
        runs = [[_split(*split, False)] for split in splits]
        rows.append(_row(name, len(splits[0][1]), runs))
        print(" | ".join(rows[-1]), flush=True)
    return rows


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--repeats", type=int, default=3, help="fits per split (minimum time)")
    ap.add_argument("--draws", type=int, default=6, help="draws per small-data set")
    add_out(ap, OUT)
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # the baselines' convergence warnings, tiny folds
    load0 = load_average()
    rows = run(args.repeats, args.draws)
    head = ["Data set", "n train", "splits", "tuned score", "tuned CPU (s)"]
    for v in VARIANTS:
        head += [f"{v}: score", "CPU (s)", "x tuned (CPU)", "x tuned (wall)"]
    text = report(
        "Cross-validation time against the tuned baseline",
        "Generated by `benchmarks/bench_cv_speed.py` "
        f"(--repeats {args.repeats} --draws {args.draws}): `MVMLClassifierCV()` "
        "(`MVMLRegressorCV()` on SARCOS) with its default `n_finalists` and with "
        "`n_finalists=2` (the default up to 0.1.0) against the tuned SVC (tuned "
        "KernelRidge on SARCOS) of `bench_vs_sklearn.py`, fits alternating in one "
        "process on the same splits. Scores on the test rows, mean over splits; times "
        "the minimum over repeats, mean over splits; `x tuned`: time over the tuned "
        "baseline's (CPU: `process_time`; every library on one thread).",
        f"Machine: {cores()} cores, OMP/OpenBLAS threads "
        f"{os.environ.get('OMP_NUM_THREADS', 'unset')}/"
        f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}; load average "
        f"{load0:.1f} at the start, {load_average():.1f} at the end.",
        markdown_table(head, rows),
    )
    print(text)
    write_report(args.out, text)


if __name__ == "__main__":
    main()

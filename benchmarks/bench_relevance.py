"""Learned feature relevance on real data: ``feature_relevance="ard"`` against ``"none"``.

The default of ``feature_relevance`` is chosen on this table and on
``bench_scale.py`` (where a few columns of many carry the signal): ``"ard"`` would have to
win there and lose nothing here. Side by side on the same splits and the same machine:
``MVMLClassifier()`` and ``MVMLClassifierCV()`` (``MVMLRegressor()`` and
``MVMLRegressorCV()`` on SARCOS), each with ``feature_relevance="none"`` and ``"ard"`` (the
CV estimators also with ``"auto"``, which searches both on the same folds), on

* the cases of ``bench_vs_sklearn.py --quick`` (uWave 300 training rows, digits in 3 views
  and digits with views of unequal quality 600 rows, nutrimouse 4-fold, SARCOS 1000 rows);
* the draws of ``bench_small_data.py`` (40 training rows: uWave and digits, mean over
  ``--draws`` seeded draws).

Run:  MVKERNELS_DATA=../shared/data .venv/bin/python benchmarks/bench_relevance.py
Writes docs/results/benchmarks/relevance.md (``--out`` to change).
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np
from _common import (
    RESULTS,
    add_out,
    command_line,
    cores,
    generated_by,
    load_average,
    markdown_table,
    parser,
    write_report,
)
from bench_small_data import _draws_digits, _draws_uwave, _views
from bench_vs_sklearn import load_cases

from mvkernels import MVMLClassifier, MVMLClassifierCV, MVMLRegressor, MVMLRegressorCV

OUT = RESULTS / "relevance.md"


def _models(task: str) -> list[tuple[str, Any]]:
    base, cv = (
        (MVMLClassifier, MVMLClassifierCV) if task == "clf" else (MVMLRegressor, MVMLRegressorCV)
    )
    out = []
    for cls in (base, cv):
        for fr in ("none", "ard") + (("auto",) if cls is cv else ()):
            out.append((f"{cls.__name__}(feature_relevance={fr!r})", cls, fr))
    return out


def _fit_score(
    cls: Any, fr: str, Xs: list, y: Any, Xt: list, yt: Any
) -> tuple[float, float, str | None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        model = cls(feature_relevance=fr, random_state=0).fit(Xs, y)
        secs = time.perf_counter() - t
        chosen = getattr(model, "best_params_", {}).get("feature_relevance")
        return float(model.score(Xt, yt)), secs, chosen


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--draws", type=int, default=6, help="seeded draws of the small data sets")
    add_out(ap, OUT)
    args = ap.parse_args()
    cases = []
    for case in load_cases(quick=True):
        splits = [
            (_views(Xtr, case["sizes"]), ytr, _views(Xte, case["sizes"]), yte)
            for Xtr, ytr, Xte, yte in case["splits"]
        ]
        cases.append((case["name"] + " (quick)", case["task"], splits))
    for name, draws in (("uWave, 40 rows", _draws_uwave), ("digits, 40 rows", _draws_digits)):
        splits = [
            (_views(Xtr, w), ytr, _views(Xte, w), yte)
            for Xtr, ytr, Xte, yte, w in draws(args.draws)
        ]
        cases.append((name, "clf", splits))
    rows = []
    for name, task, splits in cases:
        for label, cls, fr in _models(task):
            res = [_fit_score(cls, fr, *split) for split in splits]
            score = float(np.mean([r[0] for r in res]))
            secs = float(np.mean([r[1] for r in res]))
            chosen = [r[2] for r in res if r[2] is not None]
            note = ", ".join(f"{k} {chosen.count(k)}" for k in ("none", "ard") if k in chosen)
            rows.append((name, len(splits), label, score, secs, note))
            print(f"{name:34s} {label:50s} {score:.4f} {secs:7.2f} s {note}", flush=True)
    body = [
        [name, k, f"`{label}`", f"{score:.4f}", f"{secs:.2f}", note]
        for name, k, label, score, secs, note in rows
    ]
    lines = [
        "# Learned feature relevance on real data",
        "",
        generated_by(command_line("bench_relevance.py", ["--draws", str(args.draws)]))
        + f" ({cores()} cores, load {load_average():.1f} "
        "at the end). Score: test accuracy (R^2 for SARCOS), mean over the splits; fit "
        "time in wall seconds, mean over the splits. Chosen: for "
        "`feature_relevance='auto'`, the relevance the search chose, counted over the splits.",
        "",
        markdown_table(
            ["data", "splits", "estimator", "score", "fit (s)", "chosen"], body, aligned=False
        ),
    ]
    write_report(args.out, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

"""The defaults of ``MVMLClassifier`` and ``MVMLSVC`` against ``SVC()`` on every benchmark set.

A newcomer compares the defaults first. This script fits, side by side on the same splits,
``SVC()`` on the concatenated views and the MVML classifiers at their defaults and at the
other candidate settings that were measured to choose them (``alpha``, ``bandwidth_factor``,
the joint view, the decomposition, the intercept, ``max_iter``), on the classification sets
of ``bench_vs_sklearn.py --quick`` (uWave 300 rows, digits in 3 views, digits with unequal
views, nutrimouse) and the small draws of ``bench_small_data.py`` (6 draws each: uWave and
digits with 4 classes x 10 rows, uWave with 8 classes x 10 rows, digits with 10 classes x
10 and x 20 rows). The default is the setting that is within half a point of ``SVC()`` (or
above it) on every set with the best mean at a comparable fit time (the last column: the
total fit time over ``SVC()``'s); the table says where it is not.

Run:  MVKERNELS_DATA=../shared/data .venv/bin/python benchmarks/bench_defaults.py
Writes docs/results/benchmarks/defaults.md (``--out`` to change).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.svm import SVC

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_small_data import _draws_digits, _draws_uwave, _views  # noqa: E402
from bench_vs_sklearn import load_cases  # noqa: E402

from mvkernels import MVMLSVC, MVMLClassifier  # noqa: E402
from mvkernels.demo import aligned_markdown_table  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "docs" / "results" / "benchmarks" / "defaults.md"

#: (estimator, label, parameters): the defaults first, then the candidates measured
#: (parameters not named are the estimator's defaults)
CANDIDATES: list[tuple[type, str, dict]] = [
    (
        MVMLClassifier,
        "MVMLClassifier() (default: joint_view='auto', alpha=0.1, bandwidth_factor=6)",
        {},
    ),
    (MVMLClassifier, "joint_view=False (the former default)", dict(joint_view=False)),
    (
        MVMLClassifier,
        "joint_view=False, alpha=1, bandwidth_factor=4 (the default before)",
        dict(joint_view=False, alpha=1.0, bandwidth_factor=4.0),
    ),
    (MVMLClassifier, "bandwidth_factor=4", dict(bandwidth_factor=4.0)),
    (MVMLClassifier, "bandwidth_factor=8", dict(bandwidth_factor=8.0)),
    (MVMLClassifier, "alpha=0.03", dict(alpha=0.03)),
    (MVMLClassifier, "alpha=0.3", dict(alpha=0.3)),
    (MVMLClassifier, "fit_intercept=True", dict(fit_intercept=True)),
    (MVMLClassifier, "multi_class='ovo'", dict(multi_class="ovo")),
    (
        MVMLClassifier,
        "joint_view=False, multi_class='ovo'",
        dict(joint_view=False, multi_class="ovo"),
    ),
    (
        MVMLSVC,
        "MVMLSVC() (default: joint_view='auto', multi_class='auto', alpha=1e-5, max_iter=2, "
        "bandwidth_factor=4)",
        {},
    ),
    (
        MVMLSVC,
        "MVMLSVC(joint_view=False, multi_class='ovr') (the former defaults)",
        dict(joint_view=False, multi_class="ovr"),
    ),
    (MVMLSVC, "MVMLSVC(joint_view=False)", dict(joint_view=False)),
    (MVMLSVC, "MVMLSVC(multi_class='ovr')", dict(multi_class="ovr")),
    (
        MVMLSVC,
        "MVMLSVC(joint_view=False, multi_class='ovr', fit_intercept=True)",
        dict(joint_view=False, multi_class="ovr", fit_intercept=True),
    ),
    (
        MVMLSVC,
        "MVMLSVC(joint_view=False, fit_intercept=True)",
        dict(joint_view=False, fit_intercept=True),
    ),
    (MVMLSVC, "MVMLSVC(fit_intercept=True)", dict(fit_intercept=True)),
    (MVMLSVC, "MVMLSVC(joint_view=False, alpha=3e-5)", dict(joint_view=False, alpha=3e-5)),
    (MVMLSVC, "MVMLSVC(joint_view=False, alpha=1e-4)", dict(joint_view=False, alpha=1e-4)),
    (MVMLSVC, "MVMLSVC(joint_view=False, max_iter=5)", dict(joint_view=False, max_iter=5)),
    (
        MVMLSVC,
        "MVMLSVC(joint_view=False, bandwidth_factor=3)",
        dict(joint_view=False, bandwidth_factor=3.0),
    ),
]


def _sets():
    for case in load_cases(True, ("uwave", "digits", "unequal", "nutrimouse")):
        yield (
            case["name"],
            [(Xtr, ytr, Xte, yte, case["sizes"]) for Xtr, ytr, Xte, yte in case["splits"]],
        )
    yield "uWave, 4 classes x 10 rows (6 draws)", list(_draws_uwave(6))
    yield "digits, 4 classes x 10 rows (6 draws)", list(_draws_digits(6))
    yield "uWave, 8 classes x 10 rows (6 draws)", list(_draws_uwave(6, n_classes=8))
    yield "digits, 10 classes x 10 rows (6 draws)", list(_draws_digits(6, n_classes=10))
    yield "digits, 10 classes x 20 rows (6 draws)", list(_draws_digits(6, 20, 10))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    load_start = os.getloadavg()[0]
    names, acc, secs = [], {"SVC()": []}, {"SVC()": 0.0}
    for _, label, _ in CANDIDATES:
        acc[label], secs[label] = [], 0.0
    for name, splits in _sets():
        names.append(name)
        per: dict[str, list[float]] = {label: [] for label in acc}
        for Xtr, ytr, Xte, yte, widths in splits:  # every setting on a split, side by side
            t0 = time.perf_counter()
            svc = SVC().fit(Xtr, ytr)
            secs["SVC()"] += time.perf_counter() - t0
            per["SVC()"].append(svc.score(Xte, yte))
            for cls, label, params in CANDIDATES:
                t0 = time.perf_counter()
                model = cls(random_state=0, **params).fit(_views(Xtr, widths), ytr)
                secs[label] += time.perf_counter() - t0
                per[label].append(model.score(_views(Xte, widths), yte))
        for label in acc:
            acc[label].append(float(np.mean(per[label])))
        print(name, {k: round(v[-1], 4) for k, v in acc.items()}, flush=True)
    load_end = os.getloadavg()[0]
    svc = np.array(acc["SVC()"])
    head = [
        "Setting",
        *names,
        "mean - SVC()",
        "worst set - SVC()",
        "sets within 0.5 pt of SVC()",
        "fit time / SVC()",
    ]
    rows = []
    for label, vals in acc.items():
        v = np.array(vals)
        rows.append(
            [
                label,
                *(f"{x:.4f}" for x in v),
                f"{100 * np.mean(v - svc):+.2f} pt",
                f"{100 * np.min(v - svc):+.2f} pt",
                f"{int(np.sum(v >= svc - 0.005))} / {len(v)}",
                f"{secs[label] / secs['SVC()']:.1f}",
            ]
        )
    table = aligned_markdown_table(head, rows)
    print(table)
    text = (
        "# Defaults against `SVC()`\n\n"
        "Generated by `benchmarks/bench_defaults.py`; every fit side by side in one run on the "
        f"same splits ({os.cpu_count()} CPUs, load average {load_start:.1f} at the start, "
        f"{load_end:.1f} at the end). Test accuracy: the `bench_vs_sklearn.py --quick` "
        "classification sets and the draws of 10 or 20 training rows a class of "
        "`bench_small_data.py` (means over the draws / nutrimouse's 4 outer folds). `SVC()` "
        "reads the concatenated views. Fit time: the total over all sets, over `SVC()`'s "
        "total.\n\n" + table + "\n"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

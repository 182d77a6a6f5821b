"""Small data: MVML with defaults against SVC on a few rows per class.

Tens of training rows is where hyperparameters chosen by cross-validation are noisiest and a
default can be far off. One run, side by side, on the same draws: ``SVC()`` and the tuned SVC
(``GridSearchCV(SVC(), {"C": [0.1, 1, 10, 100], "gamma": [s / 4, s, 4 s]}, cv=5)``, as in
``bench_vs_sklearn.py``) on the concatenated views, ``MVMLClassifier()`` and
``MVMLClassifierCV()`` on the views.

Sets: 40 training rows (10 per class of the first 4 classes), the rest of those classes as
test rows, several seeded draws; mean and min test accuracy over the draws.

* uWave (3 views of 315 values: x, y, z accelerations), classes 1-4 of the UCR split;
* scikit-learn digits cut into 2 views (top and bottom halves of the image), classes 0-3,
  standardised on the training rows.

Run:  MVKERNELS_DATA=../shared/data .venv/bin/python benchmarks/bench_small_data.py
``--extra "MVMLClassifier(multi_class='ovo')" ...`` adds MVML configurations (on the views).
Writes docs/results/benchmarks/small_data.md (``--out`` to change).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from mvkernels import MVMLClassifier, MVMLClassifierCV
from mvkernels.datasets import load_uwave
from mvkernels.demo import aligned_markdown_table, estimator_from_spec, tuned_svc

OUT = Path(__file__).resolve().parents[1] / "docs" / "results" / "benchmarks" / "small_data.md"
PER_CLASS = 10
CLASSES = 4


def _draws_uwave(n_draws: int):
    d = load_uwave()
    Xtr, ytr = np.hstack(d["Xs_train"]), np.asarray(d["y_train"])
    Xte, yte = np.hstack(d["Xs_test"]), np.asarray(d["y_test"])
    classes = np.unique(ytr)[:CLASSES]
    widths = [X.shape[1] for X in d["Xs_train"]]
    test = np.isin(yte, classes)
    for seed in range(n_draws):
        rng = np.random.default_rng(seed)
        tr = np.concatenate(
            [rng.choice(np.flatnonzero(ytr == c), PER_CLASS, replace=False) for c in classes]
        )
        yield Xtr[tr], ytr[tr], Xte[test], yte[test], widths


def _draws_digits(n_draws: int):
    X, y = load_digits(return_X_y=True)
    keep = y < CLASSES
    X, y = X[keep], y[keep]
    for seed in range(n_draws):
        rng = np.random.default_rng(seed)
        tr = np.concatenate(
            [rng.choice(np.flatnonzero(y == c), PER_CLASS, replace=False) for c in range(CLASSES)]
        )
        te = np.setdiff1d(np.arange(y.size), tr)
        scaler = StandardScaler().fit(X[tr])
        yield scaler.transform(X[tr]), y[tr], scaler.transform(X[te]), y[te], [32, 32]


def _views(X: np.ndarray, widths: list[int]) -> list[np.ndarray]:
    edges = np.cumsum([0, *widths])
    return [X[:, a:b] for a, b in zip(edges[:-1], edges[1:], strict=True)]


def _run(name: str, draws, extra: tuple[str, ...] = ()) -> list[list[str]]:
    methods = {
        "SVC()": lambda X, y, w: SVC().fit(X, y),
        "tuned SVC (GridSearchCV, 12 candidates)": lambda X, y, w: tuned_svc(X).fit(X, y),
        "MVMLClassifier()": lambda X, y, w: MVMLClassifier(random_state=0).fit(_views(X, w), y),
        "MVMLClassifierCV()": lambda X, y, w: MVMLClassifierCV(random_state=0).fit(_views(X, w), y),
        'MVMLClassifierCV(loss="auto")': lambda X, y, w: MVMLClassifierCV(
            loss="auto", random_state=0
        ).fit(_views(X, w), y),
    }
    for spec in extra:  # e.g. "MVMLClassifier(multi_class='ovo')"
        methods[spec] = lambda X, y, w, spec=spec: estimator_from_spec(spec, random_state=0).fit(
            _views(X, w), y
        )
    acc: dict[str, list[float]] = {m: [] for m in methods}
    secs: dict[str, list[float]] = {m: [] for m in methods}
    for Xtr, ytr, Xte, yte, widths in draws:
        for m, fit in methods.items():
            t0 = time.perf_counter()
            model = fit(Xtr, ytr, widths)
            secs[m].append(time.perf_counter() - t0)
            on_views = m.startswith("MVML")  # the SVCs read the concatenation
            acc[m].append(model.score(_views(Xte, widths) if on_views else Xte, yte))
    n = len(acc["SVC()"])
    return [
        [
            name,
            str(n),
            m,
            f"{np.mean(acc[m]):.4f}",
            f"{np.min(acc[m]):.4f}",
            f"{np.mean(secs[m]):.2f}",
        ]
        for m in methods
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=6, help="seeded draws per data set")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument(
        "--extra",
        nargs="*",
        default=[],
        help="extra MVML estimators on the views, e.g. \"MVMLClassifier(multi_class='ovo')\"",
    )
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # tiny folds: the tuned SVC's CV may warn
    extra = tuple(args.extra)
    rows = _run("uWave, classes 1-4", _draws_uwave(args.draws), extra)
    rows += _run("digits (2 views), classes 0-3", _draws_digits(args.draws), extra)
    head = ["Data set (40 train rows)", "draws", "Method", "mean acc.", "min acc.", "fit (s)"]
    table = aligned_markdown_table(head, rows)
    print(table)
    text = (
        "# Small data: 10 training rows per class\n\n"
        "Generated by `benchmarks/bench_small_data.py`; every fit side by side in one run on "
        f"the same draws ({os.cpu_count()} CPUs). Test accuracy over seeded draws of 10 "
        "training rows for each of 4 classes.\n\n" + table + "\n"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

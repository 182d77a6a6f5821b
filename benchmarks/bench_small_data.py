"""Small data: MVML with defaults against SVC on a few rows per class.

Tens of training rows is where hyperparameters chosen by cross-validation are noisiest and a
default can be far off. One run, side by side, on the same draws: ``SVC()`` and the tuned SVC
(``GridSearchCV(SVC(), {"C": [0.1, 1, 10, 100], "gamma": [s / 4, s, 4 s]}, cv=5)``, as in
``bench_vs_sklearn.py``) on the concatenated views, ``MVMLClassifier()`` and
``MVMLClassifierCV()`` on the views.

Sets: 10 (or 20) training rows a class drawn from the training split, the rest of those
classes as test rows, several seeded draws; mean and min test accuracy over the draws.

* uWave (3 views of 315 values: x, y, z accelerations): classes 1-4, and all 8 classes;
* scikit-learn digits cut into 2 views (top and bottom halves of the image), standardised on
  the training rows: classes 0-3, and all 10 classes at 10 and 20 rows a class;
* nutrimouse (genes and lipids of 40 mice): genotype (2 classes) and diet (5 classes), 30
  training mice a draw (stratified), 10 test mice;
* raw uWave (:func:`mvkernels.datasets.load_uwave_raw`: the recordings in the sensor's
  units, gravity's offset kept, each axis resampled to 300 samples, not normalised), a
  proxy of raw sensor data: views x and y (2 views of 300) with gestures 1-4, and the 3
  axes with all 8 gestures; 10 recordings a gesture drawn over all users and days, the
  other recordings of those gestures as test rows.

``--scaled`` also fits every method on the views standardised per column on the training
rows (``StandardScaler``, which per view or on the concatenation is the same);
``--sets raw`` runs the sets whose name contains "raw".

Run:  MVKERNELS_DATA=../shared/data .venv/bin/python benchmarks/bench_small_data.py
``--extra "MVMLClassifier(multi_class='ovo')" ...`` adds MVML configurations (on the views).
Writes docs/results/benchmarks/small_data.md (``--out`` to change).
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np
from _common import RESULTS, add_extra, add_out, cores, markdown_table, parser, report, write_report
from sklearn.datasets import load_digits
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from mvkernels import MVMLClassifier, MVMLClassifierCV
from mvkernels.datasets import load_nutrimouse, load_uwave, load_uwave_raw
from mvkernels.demo import estimator_from_spec, tuned_svc

OUT = RESULTS / "small_data.md"
PER_CLASS = 10
CLASSES = 4


def _per_class_rows(rng, y, classes, per_class: int) -> np.ndarray:
    """``per_class`` rows of each of ``classes`` drawn without replacement (class order)."""
    return np.concatenate(
        [rng.choice(np.flatnonzero(y == c), per_class, replace=False) for c in classes]
    )


def _draws_uwave(n_draws: int, per_class: int = PER_CLASS, n_classes: int = CLASSES):
    d = load_uwave()
    Xtr, ytr = np.hstack(d["Xs_train"]), np.asarray(d["y_train"])
    Xte, yte = np.hstack(d["Xs_test"]), np.asarray(d["y_test"])
    classes = np.unique(ytr)[:n_classes]
    widths = [X.shape[1] for X in d["Xs_train"]]
    test = np.isin(yte, classes)
    for seed in range(n_draws):
        rng = np.random.default_rng(seed)
        tr = _per_class_rows(rng, ytr, classes, per_class)
        yield Xtr[tr], ytr[tr], Xte[test], yte[test], widths


def _draws_digits(n_draws: int, per_class: int = PER_CLASS, n_classes: int = CLASSES):
    X, y = load_digits(return_X_y=True)
    keep = y < n_classes
    X, y = X[keep], y[keep]
    for seed in range(n_draws):
        rng = np.random.default_rng(seed)
        tr = _per_class_rows(rng, y, range(n_classes), per_class)
        te = np.setdiff1d(np.arange(y.size), tr)
        scaler = StandardScaler().fit(X[tr])
        yield scaler.transform(X[tr]), y[tr], scaler.transform(X[te]), y[te], [32, 32]


def _draws_nutrimouse(n_draws: int, target: str):
    """Nutrimouse (40 mice; genes and lipids), 30 training and 10 test mice a draw,
    stratified by ``target`` ("genotype": 2 classes, "diet": 5)."""
    d = load_nutrimouse()
    X, y = np.hstack(d["Xs"]), np.asarray(d[target])
    widths = [V.shape[1] for V in d["Xs"]]
    split = StratifiedShuffleSplit(n_splits=n_draws, test_size=10, random_state=0)
    for tr, te in split.split(X, y):
        yield X[tr], y[tr], X[te], y[te], widths


def _draws_uwave_raw(
    n_draws: int,
    per_class: int = PER_CLASS,
    gestures: tuple[int, ...] = (1, 2, 3, 4),
    views: tuple[str, ...] = ("x", "y"),
):
    """Raw uWave (sensor units, 300 samples an axis), ``per_class`` recordings of each of
    ``gestures`` drawn over all users and days; the other recordings of those gestures are
    the test rows."""
    Xs, y = load_uwave_raw(views=views, return_X_y=True)
    X, widths = np.hstack(Xs), [V.shape[1] for V in Xs]
    rows = np.flatnonzero(np.isin(y, gestures))
    for seed in range(n_draws):
        rng = np.random.default_rng(seed)
        tr = _per_class_rows(rng, y, gestures, per_class)
        te = np.setdiff1d(rows, tr)
        yield X[tr], y[tr], X[te], y[te], widths


#: (name, draws(n_draws)): the sets, 10 (or 20) training rows a class
SETS = [
    ("uWave, classes 1-4, 10 a class", lambda k: _draws_uwave(k)),
    ("uWave, 8 classes, 10 a class", lambda k: _draws_uwave(k, n_classes=8)),
    ("digits (2 views), classes 0-3, 10 a class", lambda k: _draws_digits(k)),
    ("digits (2 views), 10 classes, 10 a class", lambda k: _draws_digits(k, n_classes=10)),
    ("digits (2 views), 10 classes, 20 a class", lambda k: _draws_digits(k, 20, 10)),
    ("nutrimouse genotype (30 mice)", lambda k: _draws_nutrimouse(k, "genotype")),
    ("nutrimouse diet (30 mice)", lambda k: _draws_nutrimouse(k, "diet")),
    ("raw uWave (views x, y), gestures 1-4, 10 a class", lambda k: _draws_uwave_raw(k)),
    (
        "raw uWave (views x, y, z), 8 gestures, 10 a class",
        lambda k: _draws_uwave_raw(k, gestures=tuple(range(1, 9)), views=("x", "y", "z")),
    ),
]


def _views(X: np.ndarray, widths: list[int]) -> list[np.ndarray]:
    edges = np.cumsum([0, *widths])
    return [X[:, a:b] for a, b in zip(edges[:-1], edges[1:], strict=True)]


def _scaled(Xtr: np.ndarray, Xte: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both parts standardised per column on the training rows."""
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), scaler.transform(Xte)


def _run(name: str, draws, extra: tuple[str, ...] = (), scaled: bool = False) -> list[list[str]]:
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
    runs = [(m, fit, False) for m, fit in methods.items()]
    if scaled:
        runs += [(f"{m} [StandardScaler first]", fit, True) for m, fit in methods.items()]
    acc: dict[str, list[float]] = {m: [] for m, _, _ in runs}
    secs: dict[str, list[float]] = {m: [] for m, _, _ in runs}
    for Xtr, ytr, Xte, yte, widths in draws:
        parts = {False: (Xtr, Xte), True: _scaled(Xtr, Xte) if scaled else (Xtr, Xte)}
        for m, fit, scale in runs:
            Xa, Xb = parts[scale]
            t0 = time.process_time()
            model = fit(Xa, ytr, widths)
            secs[m].append(time.process_time() - t0)
            on_views = m.startswith("MVML")  # the SVCs read the concatenation
            acc[m].append(model.score(_views(Xb, widths) if on_views else Xb, yte))
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
        for m in acc
    ]


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--draws", type=int, default=6, help="seeded draws per data set")
    add_out(ap, OUT)
    add_extra(ap, "MVMLClassifier(multi_class='ovo')")
    ap.add_argument(
        "--sets",
        nargs="*",
        default=[],
        help="run only the sets whose name contains one of these words (case-insensitive), "
        "e.g. --sets raw",
    )
    ap.add_argument(
        "--scaled",
        action="store_true",
        help="also fit every method on the views standardised per column (StandardScaler "
        "on the training rows)",
    )
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # tiny folds: the tuned SVC's CV may warn
    extra = tuple(args.extra)
    words = [w.lower() for w in args.sets]
    rows = []
    for name, draws in SETS:
        if words and not any(w in name.lower() for w in words):
            continue
        rows += _run(name, draws(args.draws), extra, args.scaled)
    head = ["Data set", "draws", "Method", "mean acc.", "min acc.", "fit (CPU s)"]
    table = markdown_table(head, rows)
    print(table)
    text = report(
        "Small data: 10 or 20 training rows per class",
        "Generated by `benchmarks/bench_small_data.py`; every fit side by side in one run on "
        f"the same draws ({cores()} CPUs; fit times are CPU seconds of the process, run "
        f"with OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, so a loaded machine "
        "changes them little). Test accuracy over seeded draws of 10 (or 20) training rows a "
        "class (nutrimouse: 30 of its 40 mice, stratified).",
        table,
    )
    write_report(args.out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

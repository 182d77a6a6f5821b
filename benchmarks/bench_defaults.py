"""The MVML defaults against scikit-learn's defaults and a tuned model, on every benchmark set.

A newcomer compares the defaults first. This script fits, side by side on the same splits:

* classification: ``SVC()`` on the concatenated views and the MVML classifiers at their
  defaults and at the other candidate settings that were measured to choose them
  (``alpha``, ``bandwidth_factor``, the joint view, the decomposition, the intercept,
  ``max_iter``), on the classification sets of ``bench_vs_sklearn.py --quick`` (uWave 300
  rows, digits in 3 views, digits with unequal views, nutrimouse diet), two binary sets
  (breast cancer in 3 standardised views of 10 columns: means / standard errors / worst
  values, 4 stratified outer folds; nutrimouse genotype, 6 draws of 30 mice) and the small
  draws of ``bench_small_data.py`` (6 draws each: uWave and digits with 4 classes x 10
  rows, uWave with 8 classes x 10 rows, digits with 10 classes x 10 and x 20 rows; raw
  uWave, views x and y in the sensor's units, 4 classes x 10 rows: gestures 1-4, and
  gestures 3-6, the hardest choice for ``MVMLClassifier()`` of the 210 choices of 4
  gestures and 2 axes). The
  default is the setting that is within half a point of ``SVC()`` (or above it) on every
  set with the best mean at a comparable fit time (the last column: the total fit time over
  ``SVC()``'s); the table says where it is not.
* regression: ``MVMLRegressor()`` and the candidate settings (``alpha``,
  ``bandwidth_factor``, the joint view, the intercept, ``n_landmarks``, the metric, the
  former defaults) against ``KernelRidge(kernel="rbf")`` and ``SVR()`` at their defaults and
  the tuned ``GridSearchCV(KernelRidge(kernel="rbf"), alpha x gamma, cv=5)``
  (:func:`mvkernels.demo.tuned_kernel_ridge`) on the concatenated views, on SARCOS (torques
  1, 4 and 7; views: joint positions / velocities / accelerations), Wine Quality (white and
  red; views: acidity / sugar, density and alcohol / salts and sulphur, see
  :data:`WINE_VIEWS`) and Parkinson's telemonitoring (motor and total UPDRS, one 2-output
  fit; views: age, sex and test time / jitter / shimmer / noise and nonlinear measures):
  1,000 random training rows, the other rows for testing, 3 splits, every view
  standardised on the training rows, the targets as given. Test R^2 (the mean over the
  outputs for Parkinson's), mean over the splits. The default is the setting with the
  smallest worst-set gap to the tuned model, among those with the best mean, at a fit time
  well below the tuned model's.
* the CV estimator (``--part cv``): ``MVMLRegressorCV`` with and without the intercept,
  and the search over both values (both CVs on the same folds, the better
  ``best_score_`` kept), against the tuned kernel ridge on the same sets and splits; it
  chose ``MVMLRegressorCV``'s ``fit_intercept`` default.

Fit times are CPU seconds (``time.process_time``) with the BLAS and OpenMP pools on one
thread, so they do not depend on the machine's load.

Run:  MVKERNELS_DATA=../shared/data .venv/bin/python benchmarks/bench_defaults.py
Writes docs/results/benchmarks/defaults.md (``--out`` to change; ``--part`` runs one part
and prints its table without writing the file, except ``--part cv``, which replaces its
section of the file).
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _common import RESULTS, add_out, cores, load_average, markdown_table, parser, write_report
from sklearn.datasets import load_breast_cancer
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics import r2_score
from sklearn.model_selection import StratifiedKFold
from sklearn.multioutput import MultiOutputRegressor
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_small_data import (  # noqa: E402
    _draws_digits,
    _draws_nutrimouse,
    _draws_uwave,
    _draws_uwave_raw,
    _views,
)
from bench_vs_sklearn import load_cases  # noqa: E402

from mvkernels import MVMLSVC, MVMLClassifier, MVMLRegressor, MVMLRegressorCV  # noqa: E402
from mvkernels.datasets import load_parkinsons, load_sarcos, load_winequality  # noqa: E402
from mvkernels.demo import tuned_kernel_ridge  # noqa: E402

OUT = RESULTS / "defaults.md"

#: (estimator, label, parameters): the defaults first, then the candidates measured
#: (parameters not named are the estimator's defaults)
CANDIDATES: list[tuple[type, str, dict]] = [
    (
        MVMLClassifier,
        "MVMLClassifier() (default: joint_view='auto', alpha=0.1, bandwidth_factor=4)",
        {},
    ),
    (MVMLClassifier, "joint_view=False (the former default)", dict(joint_view=False)),
    (
        MVMLClassifier,
        "joint_view=False, alpha=1, bandwidth_factor=4 (the default before)",
        dict(joint_view=False, alpha=1.0, bandwidth_factor=4.0),
    ),
    (MVMLClassifier, "bandwidth_factor=3", dict(bandwidth_factor=3.0)),
    (MVMLClassifier, "bandwidth_factor=6 (the former default)", dict(bandwidth_factor=6.0)),
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


#: (MVMLRegressor parameters, label): the defaults first, then the candidates measured
REG_CANDIDATES: list[tuple[dict, str]] = [
    (
        {},
        "MVMLRegressor() (default: joint_view='auto', alpha=0.1, bandwidth_factor=1.5, "
        "fit_intercept=True)",
    ),
    (
        dict(joint_view=False, alpha=1.0, bandwidth_factor=4.0, fit_intercept=False),
        "joint_view=False, alpha=1, bandwidth_factor=4, fit_intercept=False (the former default)",
    ),
    (
        dict(joint_view=False, alpha=1.0, bandwidth_factor=4.0),
        "the former default with fit_intercept=True",
    ),
    (
        dict(alpha=1.0, bandwidth_factor=4.0, fit_intercept=False),
        "the former default with joint_view='auto'",
    ),
    (
        dict(bandwidth_factor=6.0, fit_intercept=False),
        "the classifier's former defaults (alpha=0.1, bandwidth_factor=6, fit_intercept=False)",
    ),
    (dict(fit_intercept=False), "fit_intercept=False"),
    (dict(joint_view=False), "joint_view=False"),
    (dict(joint_view="only"), "joint_view='only'"),
    (dict(alpha=0.03), "alpha=0.03"),
    (dict(alpha=0.3), "alpha=0.3"),
    (dict(bandwidth_factor=1.0), "bandwidth_factor=1"),
    (dict(bandwidth_factor=2.0), "bandwidth_factor=2"),
    (dict(bandwidth_factor=3.0), "bandwidth_factor=3"),
    (dict(metric="identity"), "metric='identity'"),
    (dict(n_landmarks=300), "n_landmarks=300 (twice 'auto''s 150 a view)"),
]

#: Wine Quality's 11 columns in 3 views: acidity (fixed and volatile acidity, citric acid,
#: pH), sugar, density and alcohol, salts and sulphur (chlorides, free and total sulphur
#: dioxide, sulphates)
WINE_VIEWS = [[0, 1, 2, 8], [3, 7, 10], [4, 5, 6, 9]]
#: Parkinson's 19 columns (age, sex, test_time, 5 jitter, 6 shimmer, NHR, HNR, RPDE, DFA,
#: PPE) in 4 views
PARKINSONS_VIEWS = [[0, 1, 2], list(range(3, 8)), list(range(8, 14)), list(range(14, 19))]
N_TRAIN, N_SPLITS = 1000, 3


def _standardised(Xtr: np.ndarray, Xte: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), scaler.transform(Xte)


def _binary_sets():
    """Breast cancer in 3 standardised views (4 stratified outer folds) and nutrimouse's
    genotype (6 draws of 30 training mice, as ``bench_small_data.py``)."""
    X, y = load_breast_cancer(return_X_y=True)
    splits = []
    for tr, te in StratifiedKFold(4, shuffle=True, random_state=0).split(X, y):
        Xtr, Xte = _standardised(X[tr], X[te])
        splits.append((Xtr, y[tr], Xte, y[te], [10, 10, 10]))
    yield "breast cancer, 3 views (binary, 4 folds)", splits
    yield "nutrimouse (genotype, binary, 6 draws)", list(_draws_nutrimouse(6, "genotype"))


def _sets():
    for case in load_cases(True, ("uwave", "digits", "unequal", "nutrimouse")):
        yield (
            case["name"],
            [(Xtr, ytr, Xte, yte, case["sizes"]) for Xtr, ytr, Xte, yte in case["splits"]],
        )
    yield from _binary_sets()
    yield "uWave, 4 classes x 10 rows (6 draws)", list(_draws_uwave(6))
    yield "digits, 4 classes x 10 rows (6 draws)", list(_draws_digits(6))
    yield "uWave, 8 classes x 10 rows (6 draws)", list(_draws_uwave(6, n_classes=8))
    yield "digits, 10 classes x 10 rows (6 draws)", list(_draws_digits(6, n_classes=10))
    yield "digits, 10 classes x 20 rows (6 draws)", list(_draws_digits(6, 20, 10))
    yield "raw uWave x, y, 4 classes x 10 rows (6 draws)", list(_draws_uwave_raw(6))
    # the gestures whose choice (of 70, with 2 of the 3 axes) was hardest for the default
    yield (
        "raw uWave x, y, gestures 3-6 x 10 rows (6 draws)",
        list(_draws_uwave_raw(6, gestures=(3, 4, 5, 6))),
    )


def _reg_sets():
    """(name, views (list of arrays), targets): the regression sets."""
    Xs, Y = load_sarcos(torque=None, return_X_y=True)
    for t in (0, 3, 6):
        yield f"SARCOS, torque {t + 1}", Xs, Y[:, t]
    for color in ("white", "red"):
        X, quality = load_winequality(color=color, return_X_y=True)
        yield f"wine quality, {color}", [X[:, c] for c in WINE_VIEWS], quality
    X, Y = load_parkinsons(return_X_y=True)
    yield "Parkinson's (motor, total UPDRS)", [X[:, c] for c in PARKINSONS_VIEWS], Y


def _reg_splits(Xs: list[np.ndarray], y: np.ndarray):
    """``N_SPLITS`` random splits: ``N_TRAIN`` training rows, the rest for testing, every
    view standardised on the training rows."""
    for seed in range(N_SPLITS):
        perm = np.random.default_rng(seed).permutation(len(y))
        tr, te = perm[:N_TRAIN], perm[N_TRAIN:]
        views = [_standardised(X[tr], X[te]) for X in Xs]
        yield [a for a, _ in views], y[tr], [b for _, b in views], y[te]


def _fit(est, X, y) -> tuple[object, float]:
    """``est`` fitted, and the CPU seconds of the fit."""
    t0 = time.process_time()
    est.fit(X, y)
    return est, time.process_time() - t0


def _table(head, scores, secs, ref, within, unit="pt"):
    """Rows: per-set scores, the mean and worst gap to ``ref``, the sets within ``within``
    of it, the total fit time over ``ref``'s."""
    base = np.array(scores[ref])
    rows = []
    for label, vals in scores.items():
        v = np.array(vals)
        rows.append(
            [
                label,
                *(f"{x:.4f}" for x in v),
                f"{100 * np.mean(v - base):+.2f} {unit}",
                f"{100 * np.min(v - base):+.2f} {unit}",
                f"{int(np.sum(v >= base - within))} / {len(v)}",
                f"{secs[label] / secs[ref]:.2f}",
            ]
        )
    return markdown_table(head, rows)


def _over_sets(labels: list[str], sets, split_scores) -> tuple[list, dict, dict]:
    """Every setting on every split of every set, side by side.

    ``sets`` yields ``(name, splits)``; ``split_scores(*split)`` yields
    ``(label, score, cpu_seconds)`` for one split. Returns the set names, each label's
    mean score per set and each label's summed CPU seconds.
    """
    names: list[str] = []
    scores: dict[str, list[float]] = {k: [] for k in labels}
    secs = dict.fromkeys(labels, 0.0)
    for name, splits in sets:
        names.append(name)
        per: dict[str, list[float]] = {k: [] for k in labels}
        for split in splits:
            for label, score, dt in split_scores(*split):
                per[label].append(score)
                secs[label] += dt
        for label in labels:
            scores[label].append(float(np.mean(per[label])))
        print(name, {k: round(v[-1], 4) for k, v in scores.items()}, flush=True)
    return names, scores, secs


def classification() -> str:
    """The classification table: every candidate against ``SVC()``."""

    def split_scores(Xtr, ytr, Xte, yte, widths):
        svc, dt = _fit(SVC(), Xtr, ytr)
        yield "SVC()", svc.score(Xte, yte), dt
        for cls, label, params in CANDIDATES:
            model, dt = _fit(cls(random_state=0, **params), _views(Xtr, widths), ytr)
            yield label, model.score(_views(Xte, widths), yte), dt

    labels = ["SVC()", *(label for _, label, _ in CANDIDATES)]
    names, acc, secs = _over_sets(labels, _sets(), split_scores)
    head = [
        "Setting",
        *names,
        "mean - SVC()",
        "worst set - SVC()",
        "sets within 0.5 pt of SVC()",
        "fit time / SVC()",
    ]
    return _table(head, acc, secs, "SVC()", 0.005)


TUNED = "tuned KernelRidge (GridSearchCV, 15 candidates)"


def regression() -> str:
    """The regression table: every candidate against the tuned kernel ridge."""
    baselines = {
        TUNED: lambda X: tuned_kernel_ridge(X),
        'KernelRidge(kernel="rbf")': lambda X: KernelRidge(kernel="rbf"),
        "SVR() (one per output)": lambda X: MultiOutputRegressor(SVR()),
    }
    labels = [*baselines, *(label for _, label in REG_CANDIDATES)]

    def split_scores(Xtr, ytr, Xte, yte):
        Ctr, Cte, Ytr = np.hstack(Xtr), np.hstack(Xte), ytr.reshape(len(ytr), -1)
        for label, make in baselines.items():
            est, dt = _fit(make(Ctr), Ctr, Ytr)
            yield label, r2_score(yte, est.predict(Cte).reshape(yte.shape)), dt
        for params, label in REG_CANDIDATES:
            est, dt = _fit(MVMLRegressor(random_state=0, **params), Xtr, ytr)
            yield label, r2_score(yte, est.predict(Xte)), dt

    names, r2, secs = _over_sets(labels, _reg_split_sets(), split_scores)
    return _table(_regression_head(names), r2, secs, TUNED, 0.01)


def _reg_split_sets():
    """``(name, splits)`` of the regression sets (:func:`_reg_sets`, :func:`_reg_splits`)."""
    return ((name, _reg_splits(Xs, y)) for name, Xs, y in _reg_sets())


def _regression_head(names: list[str]) -> list[str]:
    """The columns of the regression tables: the sets, then the summaries against the
    tuned model."""
    return [
        "Setting",
        *names,
        "mean - tuned",
        "worst set - tuned",
        "sets within 1 pt of tuned",
        "fit time / tuned",
    ]


#: (MVMLRegressorCV parameters, label): the CV's settings measured against the tuned model
CV_CANDIDATES: list[tuple[dict, str]] = [
    (
        dict(fit_intercept=value),
        f"MVMLRegressorCV(fit_intercept={value})"
        + (" (the default)" if MVMLRegressorCV().fit_intercept == value else ""),
    )
    for value in (True, False)
]
#: the label of the search over both intercept values (both CVs above on the same folds)
CV_BOTH = "both fit_intercept values searched (the better CV score of the two above)"


def regression_cv() -> str:
    """The regression table of the CV estimator: ``MVMLRegressorCV`` with and without the
    intercept, and the search over both (the two searches run on the same unshuffled
    ``KFold(5)`` folds; the one of the better ``best_score_`` is kept, ties to
    ``fit_intercept=False``; its time is the sum of both), against the tuned kernel ridge
    on the sets and splits of :func:`regression`."""
    labels = [TUNED, *(label for _, label in CV_CANDIDATES), CV_BOTH]

    def split_scores(Xtr, ytr, Xte, yte):
        Ctr, Cte, Ytr = np.hstack(Xtr), np.hstack(Xte), ytr.reshape(len(ytr), -1)
        est, dt = _fit(tuned_kernel_ridge(Ctr), Ctr, Ytr)
        yield TUNED, r2_score(yte, est.predict(Cte).reshape(yte.shape)), dt
        fitted, both = {}, 0.0
        for params, label in CV_CANDIDATES:
            est, dt = _fit(MVMLRegressorCV(random_state=0, **params), Xtr, ytr)
            both += dt
            fitted[bool(est.fit_intercept)] = est
            yield label, r2_score(yte, est.predict(Xte)), dt
        # ties to the first value searched, fit_intercept=False
        best = max((False, True), key=lambda b: (fitted[b].best_score_, b is False))
        yield CV_BOTH, r2_score(yte, fitted[best].predict(Xte)), both

    names, r2, secs = _over_sets(labels, _reg_split_sets(), split_scores)
    return _table(_regression_head(names), r2, secs, TUNED, 0.01)


CV_HEADING = "## Regression, the CV estimator: against the tuned `KernelRidge`"


def _cv_section(table: str, load: tuple[float, float]) -> str:
    return (
        f"{CV_HEADING}\n\n"
        "The sets, splits and views of the table above. `MVMLRegressorCV` at its default "
        "grid (5 unshuffled folds), with and without the intercept; the search over both "
        "values keeps the CV of the better held-out R^2 (`best_score_`, the same folds), its "
        f"fit time the sum of both (load average {load[0]:.1f} at the start of the run, "
        f"{load[1]:.1f} at the end).\n\n" + table + "\n"
    )


def _write_cv_section(path: Path, section: str) -> None:
    """Replace (or append) the CV section of an existing results file."""
    text = path.read_text() if path.exists() else ""
    head, _, _ = text.partition(CV_HEADING)
    write_report(path, head.rstrip("\n") + "\n\n" + section, say=False)


def main() -> int:
    ap = parser(__doc__)
    add_out(ap, OUT)
    ap.add_argument(
        "--part",
        choices=("classification", "regression", "cv"),
        help="run one part and print its table (the file is not written; 'cv': its "
        "section of the file is replaced)",
    )
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    load_start = load_average()
    with threadpool_limits(1):
        clf = classification() if args.part in (None, "classification") else ""
        reg = regression() if args.part in (None, "regression") else ""
        cv = regression_cv() if args.part in (None, "cv") else ""
    load_end = load_average()
    print(clf, reg, cv, sep="\n\n")
    if args.part == "cv":
        _write_cv_section(args.out, _cv_section(cv, (load_start, load_end)))
        print(f"wrote the CV section of {args.out} (load {load_start:.1f} -> {load_end:.1f})")
        return 0
    if args.part is not None:
        return 0
    text = (
        "# Defaults against scikit-learn's\n\n"
        "Generated by `benchmarks/bench_defaults.py`; every fit side by side in one run on the "
        f"same splits ({cores()} CPUs, load average {load_start:.1f} at the start, "
        f"{load_end:.1f} at the end). Fit time: CPU seconds with the BLAS and OpenMP pools on "
        "one thread, the total over all sets, over the reference's total.\n\n"
        "## Classification: against `SVC()`\n\n"
        "Test accuracy: the `bench_vs_sklearn.py --quick` classification sets, two binary "
        "sets (breast cancer in 3 standardised views of 10 columns, means / standard errors "
        "/ worst values, 4 stratified outer folds; nutrimouse genotype, 6 draws of 30 mice) "
        "and the draws of 10 or 20 training rows a class of `bench_small_data.py` (means "
        "over the draws / folds; nutrimouse diet: 4 outer folds). `SVC()` reads the "
        "concatenated views.\n\n" + clf + "\n\n"
        "## Regression: against the tuned `KernelRidge`\n\n"
        f"Test R^2 (Parkinson's: the mean over its 2 outputs), the mean over {N_SPLITS} random "
        f"splits of {N_TRAIN:,} training rows (the other rows for testing; Parkinson's: rows, "
        "not subjects, are split, so a subject's other recordings are in the training rows). "
        "Every view standardised on the training rows, the targets as given. Views: SARCOS "
        "joint positions / velocities / accelerations; wine quality acidity (fixed and "
        "volatile acidity, citric acid, pH) / sugar, density, alcohol / salts and sulphur "
        "(chlorides, free and total sulphur dioxide, sulphates); Parkinson's age, sex, test "
        "time / 5 jitter / 6 shimmer / NHR, HNR, RPDE, DFA, PPE. The baselines read the "
        'concatenated views; the tuned model is `GridSearchCV(KernelRidge(kernel="rbf"), '
        '{alpha: 1e-4 .. 1, gamma: s/4, s, 4s}, cv=5)` (`s` = `gamma="scale"`\'s value). '
        "`KernelRidge` has no intercept; `SVR` has one.\n\n"
        + reg
        + "\n\n"
        + _cv_section(cv, (load_start, load_end))
    )
    write_report(args.out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""MVML with defaults against what a scikit-learn user runs on the concatenated views.

One run, side by side, on the same splits and the same machine: test accuracy (R^2 for
regression) and fit time of

* classification: ``SVC()``, the tuned SVC ``GridSearchCV(SVC(), {"C": [0.1, 1, 10, 100],
  "gamma": [s / 4, s, 4 s]}, cv=5)`` (``s`` = scikit-learn's ``gamma="scale"`` value on the
  concatenation), ``LogisticRegression``, ``HistGradientBoostingClassifier``, a
  multiple-kernel anchor (himalaya's ``MultipleKernelRidgeCV`` on per-view RBF kernels, one
  kernel per view; skipped with a note when himalaya is not installed), ``MVMLClassifier()``,
  ``MVMLSVC()``, ``MVMLClassifierCV()``, ``MVMLSVCCV()``;
* regression (SARCOS, 3 views: positions / velocities / accelerations, torque 1, 3000
  train rows, standardised on the training rows): tuned ``KernelRidge`` (alpha x gamma,
  5-fold), tuned ``SVR`` (C x gamma, 5-fold), ``MVMLRegressor()``, ``MVMLRegressorCV()``.

Data sets: uWave (UCR split, 896 train / 3582 test, 3 views of 315), digits cut into 3
views (top half, bottom half, profiles; stratified half / half split), digits with views
of unequal quality (the demo's five views: a noisy bottom half, a pure-noise and a
shuffled view) and nutrimouse (diet, 5 classes, 40 rows: 4-fold stratified outer CV,
mean accuracy and mean fit time).

The "x tuned" column is the fit time over the tuned baseline's (tuned SVC, or tuned
KernelRidge for SARCOS) measured in the same run. ``--quick`` subsamples the training
rows (uWave 300, digits 600, SARCOS 1000) and the uWave test rows (1000);
``--skip-svm`` leaves out the (slower) hinge-loss estimators. The table is rewritten after
every data set, so an interrupted run leaves the rows done so far.

Run:  MVKERNELS_DATA=../shared/data .venv/bin/python benchmarks/bench_vs_sklearn.py [--quick]
Writes docs/results/benchmarks/vs_sklearn.md (``--out`` to change).
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from _common import (
    RESULTS,
    add_extra,
    add_out,
    add_quick,
    machine,
    markdown_table,
    parser,
    write_report,
)
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import r2_score
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split
from sklearn.svm import SVC, SVR

from mvkernels import (
    MVMLSVC,
    MVMLSVCCV,
    MVMLClassifier,
    MVMLClassifierCV,
    MVMLRegressor,
    MVMLRegressorCV,
)
from mvkernels.datasets import load_digits_views, load_nutrimouse, load_sarcos, load_uwave
from mvkernels.demo import (
    corrupted_digits_views,
    estimator_from_spec,
    tuned_kernel_ridge,
    tuned_svc,
)

OUT = RESULTS / "vs_sklearn.md"


def scale_gamma(X: np.ndarray) -> float:
    """scikit-learn's ``gamma="scale"``: ``1 / (n_features * X.var())``."""
    return 1.0 / (X.shape[1] * X.var())


class HimalayaMKR:
    """Multiple-kernel anchor: himalaya's MultipleKernelRidgeCV on one RBF kernel per view
    (``gamma="scale"`` per view); classification by +-1 one-vs-all targets and argmax."""

    def __init__(self, sizes: list[int], classify: bool):
        self.sizes, self.classify = sizes, classify

    def _split(self, X: np.ndarray) -> list[np.ndarray]:
        return np.split(X, np.cumsum(self.sizes)[:-1], axis=1)

    def fit(self, X: np.ndarray, y: np.ndarray) -> HimalayaMKR:
        from himalaya.kernel_ridge import MultipleKernelRidgeCV

        self.Xs_ = self._split(X)
        self.gammas_ = [scale_gamma(V) for V in self.Xs_]
        Ks = np.stack([rbf_kernel(V, V, gamma=g) for V, g in zip(self.Xs_, self.gammas_)])
        if self.classify:
            self.classes_, yi = np.unique(y, return_inverse=True)
            Y = -np.ones((len(y), len(self.classes_)))
            Y[np.arange(len(y)), yi] = 1.0
        else:
            Y = y[:, None]
        self.model_ = MultipleKernelRidgeCV(
            kernels="precomputed", solver_params={"progress_bar": False}, random_state=0
        ).fit(Ks, Y)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        Ks = np.stack(
            [rbf_kernel(V, W, gamma=g) for V, W, g in zip(self._split(X), self.Xs_, self.gammas_)]
        )
        D = np.asarray(self.model_.predict(Ks))
        return self.classes_[np.argmax(D, axis=1)] if self.classify else D[:, 0]

    def score(self, X: np.ndarray, y: np.ndarray) -> float:
        P = self.predict(X)
        return float(np.mean(P == y)) if self.classify else float(r2_score(y, P))


def have_himalaya() -> bool:
    try:
        import himalaya  # noqa: F401
    except ImportError:
        return False
    return True


def classifiers(
    sizes: list[int],
    X: np.ndarray,
    svm: bool = True,
    anchor: bool = True,
) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = [
        ("SVC()", SVC()),
        ("tuned SVC (GridSearchCV, 12 candidates)", tuned_svc(X)),
        ("LogisticRegression(max_iter=1000)", LogisticRegression(max_iter=1000)),
        ("HistGradientBoostingClassifier()", HistGradientBoostingClassifier(random_state=0)),
    ]
    if anchor and have_himalaya():
        out.append(("himalaya MultipleKernelRidgeCV (one RBF per view)", HimalayaMKR(sizes, True)))
    out += [
        ("MVMLClassifier()", MVMLClassifier(views=sizes, random_state=0)),
        ("MVMLClassifierCV()", MVMLClassifierCV(views=sizes, random_state=0)),
    ]
    if svm:
        out.append(
            (
                'MVMLClassifierCV(loss="auto")',
                MVMLClassifierCV(views=sizes, loss="auto", random_state=0),
            )
        )
    if svm:
        out += [
            ("MVMLSVC()", MVMLSVC(views=sizes, random_state=0)),
            ("MVMLSVCCV()", MVMLSVCCV(views=sizes, random_state=0)),
        ]
    return out


def regressors(
    sizes: list[int],
    X: np.ndarray,
    svm: bool = True,
    anchor: bool = True,
) -> list[tuple[str, Any]]:
    s = scale_gamma(X)
    grid = [s / 4, s, 4 * s]
    out: list[tuple[str, Any]] = [
        ("tuned KernelRidge (GridSearchCV, 15 candidates)", tuned_kernel_ridge(X)),
        (
            "tuned SVR (GridSearchCV, 12 candidates)",
            GridSearchCV(SVR(), {"C": [0.1, 1, 10, 100], "gamma": grid}, cv=5),
        ),
    ]
    if anchor and have_himalaya():
        out.append(("himalaya MultipleKernelRidgeCV (one RBF per view)", HimalayaMKR(sizes, False)))
    out += [
        ("MVMLRegressor()", MVMLRegressor(views=sizes, random_state=0)),
        ("MVMLRegressorCV()", MVMLRegressorCV(views=sizes, random_state=0)),
    ]
    return out


def fit_score(est: Any, Xtr, ytr, Xte, yte) -> tuple[float, float, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # baselines' convergence warnings
        t = time.perf_counter()
        est.fit(Xtr, ytr)
        secs = time.perf_counter() - t
        return float(est.score(Xte, yte)), secs, est


def note_of(est: Any) -> str:
    bp = getattr(est, "best_params_", None)
    if bp is None or not isinstance(est, (MVMLClassifierCV, MVMLRegressorCV)):
        return ""
    return ", ".join(
        f"{k}={v:g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else f"{k}={v}"
        for k, v in bp.items()
    )


#: data set keys of ``--datasets``, in the table's order
DATASETS = ("uwave", "digits", "unequal", "nutrimouse", "sarcos")


def load_cases(quick: bool, datasets: tuple[str, ...] = DATASETS) -> list[dict[str, Any]]:
    """The benchmark cases, restricted to ``datasets`` (keys of :data:`DATASETS`)."""
    rng = np.random.RandomState(0)
    cases = []
    d = load_uwave()
    Xtr, ytr = np.hstack(d["Xs_train"]), d["y_train"]
    Xte, yte = np.hstack(d["Xs_test"]), d["y_test"]
    if quick:
        i = np.sort(rng.choice(len(ytr), 300, replace=False))
        j = np.sort(rng.choice(len(yte), 1000, replace=False))
        Xtr, ytr, Xte, yte = Xtr[i], ytr[i], Xte[j], yte[j]
    cases.append(dict(name="uWave", sizes=[315] * 3, splits=[(Xtr, ytr, Xte, yte)], task="clf"))
    for name, (Xs, y) in (
        ("digits, 3 views", load_digits_views(return_X_y=True)),
        ("digits, unequal views", corrupted_digits_views()),
    ):
        X = np.hstack(Xs)
        Xtr, Xte, ytr, yte = train_test_split(X, y, train_size=0.5, stratify=y, random_state=0)
        if quick:
            Xtr, ytr = Xtr[:600], ytr[:600]
        cases.append(
            dict(
                name=name, sizes=[V.shape[1] for V in Xs], splits=[(Xtr, ytr, Xte, yte)], task="clf"
            )
        )
    nm = load_nutrimouse()
    X, y = np.hstack(nm["Xs"]), nm["diet"]
    splits = [
        (X[tr], y[tr], X[te], y[te])
        for tr, te in StratifiedKFold(4, shuffle=True, random_state=0).split(X, y)
    ]
    cases.append(
        dict(
            name="nutrimouse (diet)",
            sizes=[V.shape[1] for V in nm["Xs"]],
            splits=splits,
            task="clf",
        )
    )
    s = load_sarcos(torque=0)
    X, y = np.hstack(s["Xs"]), s["y"]
    perm = rng.permutation(len(y))
    n_tr = 1000 if quick else 3000
    tr, te = perm[:n_tr], perm[n_tr:]
    mu, sd = X[tr].mean(axis=0), X[tr].std(axis=0)
    ym, ys = y[tr].mean(), y[tr].std()
    cases.append(
        dict(
            name="SARCOS (torque 1, R^2)",
            sizes=[7, 7, 7],
            splits=[((X[tr] - mu) / sd, (y[tr] - ym) / ys, (X[te] - mu) / sd, (y[te] - ym) / ys)],
            task="reg",
        )
    )
    keys = dict(zip([c["name"] for c in cases], DATASETS))
    return [c for c in cases if keys[c["name"]] in datasets]


def run(
    quick: bool,
    svm: bool = True,
    out: Path | None = None,
    datasets: tuple[str, ...] = DATASETS,
    anchor: bool = True,
    extra: tuple[str, ...] = (),
) -> tuple[list[dict[str, Any]], list[str]]:
    """Fit everything; after each data set the table so far is written to ``out``."""
    rows: list[dict[str, Any]] = []
    notes = []
    if not anchor:
        notes.append("run with --skip-anchor: the multiple-kernel anchor was not fitted.")
    elif not have_himalaya():
        notes.append(
            "himalaya is not installed: the multiple-kernel anchor was skipped "
            "(pip install himalaya)."
        )
    if not svm:
        notes.append("run with --skip-svm: MVMLSVC() and MVMLSVCCV() were not fitted.")
    for case in load_cases(quick, datasets):
        Xtr0 = case["splits"][0][0]
        base_make = classifiers if case["task"] == "clf" else regressors

        def make(sizes, X, svm, anchor, base_make=base_make, task=case["task"]):
            # --extra: MVML estimators on the views (regressors' names say "Regressor")
            specs = [spec for spec in extra if ("Regressor" in spec) == (task != "clf")]
            return base_make(sizes, X, svm, anchor) + [
                (spec, estimator_from_spec(spec, views=sizes, random_state=0)) for spec in specs
            ]

        names = [m for m, _ in make(case["sizes"], Xtr0, svm, anchor)]
        res: dict[str, list] = {m: [] for m in names}
        for Xtr, ytr, Xte, yte in case["splits"]:
            for m, est in make(case["sizes"], Xtr, svm, anchor):
                sc, secs, fitted = fit_score(est, Xtr, ytr, Xte, yte)
                res[m].append((sc, secs, note_of(fitted)))
                print(f"  [{case['name']}] {m}: {sc:.4f} in {secs:.2f} s", flush=True)
        base = names[1] if case["task"] == "clf" else names[0]
        t_base = np.mean([r[1] for r in res[base]])
        for m in names:
            sc = float(np.mean([r[0] for r in res[m]]))
            secs = float(np.mean([r[1] for r in res[m]]))
            row = dict(
                case=case["name"],
                n_train=len(case["splits"][0][1]),
                method=m,
                score=sc,
                secs=secs,
                ratio=secs / t_base,
                note=res[m][-1][2],
            )
            rows.append(row)
            print(
                f"{row['case']:<24s} {m:<52s} {sc:7.4f} {secs:8.2f} s {row['ratio']:6.2f}x  "
                f"{row['note']}",
                flush=True,
            )
        if out is not None:
            write_report(out, markdown(rows, notes, quick), say=False)
    return rows, notes


def targets(rows: list[dict[str, Any]]) -> list[str]:
    def get(case: str, method: str) -> dict[str, Any] | None:
        return next((r for r in rows if r["case"].startswith(case) and r["method"] == method), None)

    out = []
    checks = [
        ("uWave", "MVMLClassifierCV()", "tuned SVC (GridSearchCV, 12 candidates)"),
        ("digits, 3 views", "MVMLClassifierCV()", "tuned SVC (GridSearchCV, 12 candidates)"),
        ("digits, unequal", "MVMLClassifierCV()", "tuned SVC (GridSearchCV, 12 candidates)"),
        ("SARCOS", "MVMLRegressorCV()", "tuned KernelRidge (GridSearchCV, 15 candidates)"),
    ]
    for case, ours, theirs in checks:
        a, b = get(case, ours), get(case, theirs)
        if a is None or b is None:
            continue
        acc_ok = a["score"] >= b["score"]
        time_ok = a["ratio"] <= 3.0
        verdict = "met" if acc_ok and time_ok else "NOT met"
        out.append(
            f"- {case}: {ours} {a['score']:.4f} vs {theirs} {b['score']:.4f} "
            f"({a['score'] - b['score']:+.4f}), time {a['ratio']:.2f}x the tuned baseline's: "
            f"**{verdict}**"
        )
    return out


def markdown(rows: list[dict[str, Any]], notes: list[str], quick: bool) -> str:
    head = ["Data set", "n train", "Method", "Accuracy / R^2", "Fit (s)", "x tuned", "Chosen"]
    body = [
        [
            r["case"],
            str(r["n_train"]),
            r["method"],
            f"{r['score']:.4f}",
            f"{r['secs']:.2f}",
            f"{r['ratio']:.2f}",
            r["note"],
        ]
        for r in rows
    ]
    lines = [
        "# MVML against scikit-learn on the concatenated views",
        "",
        "Generated by `benchmarks/bench_vs_sklearn.py`"
        + (" --quick (training rows subsampled)" if quick else "")
        + "; all fits side by side in one run on one machine. `x tuned`: fit time over the "
        "tuned SVC's (tuned KernelRidge's for SARCOS). Accuracy on the test rows (nutrimouse: "
        "mean over a 4-fold stratified outer CV).",
        "",
        f"Machine: {machine()}.",
        "",
        markdown_table(head, body),
        "",
        "Targets (MVMLClassifierCV / MVMLRegressorCV at least as accurate as the tuned "
        "baseline, in at most 3x its time):",
        "",
        *targets(rows),
    ]
    if notes:
        lines += ["", *[f"Note: {n}" for n in notes]]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = parser(__doc__)
    add_quick(ap, "subsample the training rows")
    ap.add_argument("--skip-svm", action="store_true", help="leave out MVMLSVC and MVMLSVCCV")
    ap.add_argument(
        "--skip-anchor", action="store_true", help="leave out the multiple-kernel anchor"
    )
    ap.add_argument(
        "--datasets",
        nargs="+",
        choices=DATASETS,
        default=list(DATASETS),
        help="data sets to run (default: all)",
    )
    add_out(ap, OUT, what="the report (Markdown; rewritten after each data set)")
    add_extra(ap, "MVMLClassifier(multi_class='ovo')")
    args = ap.parse_args()
    rows, notes = run(
        args.quick,
        svm=not args.skip_svm,
        out=args.out,
        datasets=tuple(args.datasets),
        anchor=not args.skip_anchor,
        extra=tuple(args.extra),
    )
    print()
    print(markdown(rows, notes, args.quick))


if __name__ == "__main__":
    main()

"""``mvkernels demo``: MVML against simple baselines on embedded multi-view data.

Data: scikit-learn's handwritten digits cut into three views by
:func:`mvkernels.datasets.load_digits_views` (top half, bottom half, row/column
profiles; 1797 images, 10 classes), so it runs on a fresh machine without any
download. A stratified half is used for training, the other half for testing.

Methods (hyperparameters by 3-fold cross-validation on the training half only):

* best single-view SVM (RBF), early fusion (SVM on the concatenated views), late fusion
  (mean of the per-view SVM decision functions) -- scikit-learn estimators, or
  ``mvkernels.baselines`` when that module is available;
* MVML_I, MVML_Cov, MVML (dense learned metric) and MVMLsparse, with block Nystrom
  (20 % landmarks, shared C across the one-vs-all problems).

Writes ``results.md`` / ``results.csv`` (the table) and ``mvml_metric.png`` (the learned
metrics) into the output folder. About a minute on 2 cores (``--quick``: less).
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split

from .datasets import load_digits_views
from .mvml import MVMLClassifier, group_norms

VIEW_NAMES = ["top half", "bottom half", "profiles"]


def _log(msg: str) -> None:
    print(msg, flush=True)


def _svm_baselines(Xtr, ytr, Xte, yte, cv, quick):
    """Single-view, early- and late-fusion SVMs (scikit-learn)."""
    from sklearn.svm import SVC

    grid = {"C": [1.0, 10.0] if quick else [0.1, 1.0, 10.0, 100.0]}
    rows = []
    per_view = []
    for l, (A, B) in enumerate(zip(Xtr, Xte)):
        t = time.perf_counter()
        gs = GridSearchCV(SVC(gamma="scale"), grid, cv=cv).fit(A, ytr)
        per_view.append((gs, time.perf_counter() - t, l))
    best, secs, l = max(per_view, key=lambda r: r[0].best_score_)
    rows.append((f"SVM, best single view ({VIEW_NAMES[l]})", best.score(Xte[l], yte), secs,
                 best.best_params_))
    t = time.perf_counter()
    ef = GridSearchCV(SVC(gamma="scale"), grid, cv=cv).fit(np.hstack(Xtr), ytr)
    rows.append(("SVM, early fusion (concatenated views)", ef.score(np.hstack(Xte), yte),
                 time.perf_counter() - t, ef.best_params_))
    dec = np.mean([gs.decision_function(B) for (gs, _, _), B in zip(per_view, Xte)], axis=0)
    late = per_view[0][0].classes_[dec.argmax(1)]
    rows.append(("SVM, late fusion (mean decision)", float(np.mean(late == yte)),
                 sum(s for _, s, _ in per_view), {}))
    return rows


def _baseline_rows(Xtr, ytr, Xte, yte, cv, quick):
    try:  # the project's own baselines, when that module exists
        from . import baselines  # noqa: F401
    except ImportError:
        baselines = None
    rows = _svm_baselines(Xtr, ytr, Xte, yte, cv, quick)
    if baselines is not None and hasattr(baselines, "LpMKLClassifier"):
        try:
            t = time.perf_counter()
            est = baselines.LpMKLClassifier().fit(Xtr, ytr)
            rows.append(("lpMKL (mvkernels.baselines)", est.score(Xte, yte),
                         time.perf_counter() - t, {}))
        except Exception as exc:  # a baseline must not break the demo
            _log(f"  lpMKL skipped: {exc}")
    return rows


def run_demo(output: str | Path = "results/demo", quick: bool = False,
             random_state: int = 0) -> list[tuple[str, float, float, dict]]:
    """Run the demo, print the table, write ``results.md``, ``results.csv``, ``mvml_metric.png``."""
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    Xs, y = load_digits_views()
    idx_tr, idx_te = train_test_split(np.arange(len(y)), train_size=0.5, stratify=y,
                                      random_state=random_state)
    Xtr = [X[idx_tr] for X in Xs]
    Xte = [X[idx_te] for X in Xs]
    ytr, yte = y[idx_tr], y[idx_te]
    cv = StratifiedKFold(3, shuffle=True, random_state=random_state)
    _log(f"[demo] digits as 3 views ({', '.join(VIEW_NAMES)}): {len(ytr)} train / "
         f"{len(yte)} test, {len(np.unique(y))} classes")

    _log("[demo] baselines: single-view, early- and late-fusion SVMs ...")
    rows = _baseline_rows(Xtr, ytr, Xte, yte, cv, quick)
    for name, acc, secs, _ in rows:
        _log(f"  {name:<45s} acc {acc:.4f}  ({secs:.1f} s)")

    X = np.hstack(Xtr)
    Xt = np.hstack(Xte)
    sizes = [V.shape[1] for V in Xtr]
    p = 0.2
    variants = [("MVML_I", "identity"), ("MVML_Cov", "cov"), ("MVML", "dense"),
                ("MVMLsparse", "sparse")]
    alphas = [1e-3, 1e-2] if quick else [1e-3, 1e-2, 1e-1]
    etas = [1e-2] if quick else [1e-2, 1.0]
    fitted = {}
    for name, metric in variants:
        _log(f"[demo] {name} (metric={metric!r}, {int(p * 100)} % Nystrom landmarks) ...")
        grid: dict[str, Any] = {"alpha": alphas}
        if metric in ("dense", "sparse"):
            grid = {"alpha": alphas[:2], "eta": etas}
        est = MVMLClassifier(views=sizes, metric=metric, n_landmarks=p, max_iter=5,
                             random_state=random_state)
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            gs = GridSearchCV(est, grid, cv=cv).fit(X, ytr)
        secs = time.perf_counter() - t
        acc = gs.score(Xt, yte)
        fitted[name] = gs.best_estimator_
        rows.append((f"{name} (MVMLClassifier, metric={metric!r})", acc, secs, gs.best_params_))
        _log(f"  {rows[-1][0]:<45s} acc {acc:.4f}  ({secs:.1f} s, best {gs.best_params_})")

    table = _format_table(rows)
    print()
    print(table, flush=True)
    (out / "results.md").write_text(
        "# mvkernels demo: digits as 3 views\n\n"
        f"{len(ytr)} training / {len(yte)} test images; hyperparameters by 3-fold CV on the "
        "training half; MVML with 20 % block Nystrom landmarks.\n\n" + table + "\n"
    )
    with open(out / "results.csv", "w") as fh:
        fh.write("method,test_accuracy,cv_and_fit_seconds\n")
        for name, acc, secs, _ in rows:
            fh.write(f"\"{name}\",{acc:.4f},{secs:.2f}\n")
    fig_path = _plot_metrics(fitted, out / "mvml_metric.png")
    _log(f"[demo] wrote {out / 'results.md'}, {out / 'results.csv'}"
         + (f", {fig_path}" if fig_path else " (matplotlib missing: no figure)")
         + f" in {time.perf_counter() - t0:.0f} s")
    return rows


def _format_table(rows) -> str:
    lines = ["| method | test accuracy | CV + fit time (s) |", "|---|---|---|"]
    for name, acc, secs, _ in rows:
        lines.append(f"| {name} | {acc:.4f} | {secs:.1f} |")
    return "\n".join(lines)


def _plot_metrics(fitted: dict, path: Path) -> Path | None:
    """Heat maps of the learned part of A~ (class 0 vs rest) and of its view-pair block norms.

    ``A0 = I`` shrinks geometrically during learning; subtracting ``lambda_min(A~) I``
    removes (most of) that isotropic remainder and shows what was learned.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    names = [n for n in ("MVML", "MVMLsparse") if n in fitted]
    fig, axes = plt.subplots(2, len(names), figsize=(5.2 * len(names), 9.5), squeeze=False)
    for j, name in enumerate(names):
        est = fitted[name]
        mets = est.metric_ if est.metric_.ndim == 3 else est.metric_[None]
        lmin = np.atleast_1d(est.metric_min_eigenvalue_)
        # the learned part: A0 = I shrinks to c I (c >= min eigenvalue), remove it
        learned = [M - e * np.eye(M.shape[0]) for M, e in zip(mets, lmin)]
        A = learned[0]
        v = est.n_views_
        p = A.shape[0] // v
        ax = axes[0, j]
        im = ax.imshow(np.log10(np.abs(A) + 1e-8), cmap="viridis")
        for k in range(1, v):
            ax.axhline(k * p - 0.5, color="w", lw=0.8)
            ax.axvline(k * p - 0.5, color="w", lw=0.8)
        ax.set_title(f"{name}: log10 |A~ - min_eig I| (class {est.classes_[0]} vs rest)\n"
                     f"min eigenvalue of A~ {lmin[0]:.3f}")
        fig.colorbar(im, ax=ax, fraction=0.046)
        N = np.mean([group_norms(M, v) for M in learned], axis=0)
        ax = axes[1, j]
        im = ax.imshow(N, cmap="magma")
        ax.set_xticks(range(v), VIEW_NAMES, rotation=20)
        ax.set_yticks(range(v), VIEW_NAMES)
        for a in range(v):
            for b in range(v):
                ax.text(b, a, f"{N[a, b]:.2f}", ha="center", va="center", color="c")
        ax.set_title(f"{name}: block norms of A~ - min_eig I\n(mean over one-vs-all problems)")
        fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

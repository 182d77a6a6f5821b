"""MVML solver benchmark: the dense reference path vs the structured solver, and vs SVC.

A problem shaped like UCI multiple features (600 rows, 6 views, 10 classes) built from
scikit-learn's handwritten digits (60 images per class, seeded), with six feature
families computed from the 8 x 8 images (:func:`make_mfeat_like`): pixels, row/column
profiles, 2 x 2 block means, low-frequency 2-D DCT coefficients, pixel differences
(gradients) and shape moments. The other 1197 images are the test set.

Printed side by side, in one run:

1. ``MVMLClassifier(n_landmarks=0.2, solver="dense")`` (the reference path: per class and
   per iteration an O((vp)^3) factorisation) vs ``solver="auto"`` (the structured solver:
   one eigendecomposition of ``D_w C D_w`` per fit shared by the ten one-vs-all problems,
   metric kept as ``s I + W W^T``): fit time, speed-up, max difference of the decision
   values (absolute, and relative to the largest decision value), test accuracy.
   Target (issue): >= 10x faster at the same decision values.
2. ``MVMLClassifier()`` with its defaults (landmark seed 0) vs ``sklearn.svm.SVC()`` on the
   concatenated views: fit times and their ratio. Target: within 10x of SVC's fit time.

Fast fits are timed as the best of ``--repeats`` runs, the dense path once; both the
wall-clock time and the process CPU time of ``fit`` are printed (on a loaded machine the
CPU time is the steadier of the two).

Run:  .venv/bin/python benchmarks/bench_mvml_solver.py [--repeats 3] [--max-iter 10]
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from _common import cores, load_average, markdown_table, parser
from scipy.fft import dctn
from sklearn.datasets import load_digits
from sklearn.svm import SVC

from mvkernels import MVMLClassifier

VIEW_NAMES = ["pixels", "profiles", "2x2 block means", "DCT 4x4", "gradients", "moments"]


def _views(images: np.ndarray) -> list[np.ndarray]:
    """Six feature families of 8 x 8 images scaled to [0, 1]."""
    n = len(images)
    pixels = images.reshape(n, -1)
    profiles = np.hstack([images.mean(axis=2), images.mean(axis=1)])
    blocks = images.reshape(n, 4, 2, 4, 2).mean(axis=(2, 4)).reshape(n, -1)
    dct = dctn(images, axes=(1, 2), norm="ortho")[:, :4, :4].reshape(n, -1)
    grads = np.hstack(
        [np.diff(images, axis=1).reshape(n, -1), np.diff(images, axis=2).reshape(n, -1)]
    )
    r, c = np.meshgrid(np.arange(8.0), np.arange(8.0), indexing="ij")
    mass = images.sum(axis=(1, 2)) + 1e-12
    mr = (images * r).sum(axis=(1, 2)) / mass
    mc = (images * c).sum(axis=(1, 2)) / mass
    vr = (images * r**2).sum(axis=(1, 2)) / mass - mr**2
    vc = (images * c**2).sum(axis=(1, 2)) / mass - mc**2
    crc = (images * r * c).sum(axis=(1, 2)) / mass - mr * mc
    moments = np.column_stack([mass / 64.0, mr, mc, vr, vc, crc])
    return [pixels, profiles, blocks, dct, grads, moments]


def make_mfeat_like(n_per_class: int = 60, random_state: int = 0):
    """``(Xs_train, y_train, Xs_test, y_test)``: 10 x ``n_per_class`` training rows."""
    d = load_digits()
    images = d.images.astype(np.float64) / 16.0
    y = d.target.astype(np.int64)
    rng = np.random.default_rng(random_state)
    train = np.sort(
        np.concatenate(
            [rng.choice(np.flatnonzero(y == k), n_per_class, replace=False) for k in range(10)]
        )
    )
    test = np.setdiff1d(np.arange(len(y)), train)
    Xs = _views(images)
    return [X[train] for X in Xs], y[train], [X[test] for X in Xs], y[test]


def _best_fit(make: Any, X: Any, y: np.ndarray, repeats: int) -> tuple[Any, float, float]:
    """The last fitted estimator, the best wall-clock time and the best CPU time (s)."""
    wall, cpu, est = np.inf, np.inf, None
    for _ in range(repeats):
        est = make()
        t, c = time.perf_counter(), time.process_time()
        est.fit(X, y)
        wall = min(wall, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    return est, wall, cpu


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__)
    ap.add_argument("--repeats", type=int, default=3, help="runs per fast fit (best is kept)")
    ap.add_argument("--max-iter", type=int, default=10)
    ap.add_argument("--landmarks", type=float, default=0.2)
    args = ap.parse_args(argv)

    Xtr, ytr, Xte, yte = make_mfeat_like()
    print(
        f"data: {len(ytr)} train / {len(yte)} test rows, {len(Xtr)} views "
        f"({', '.join(f'{nm} {X.shape[1]}' for nm, X in zip(VIEW_NAMES, Xtr))}), "
        f"{len(np.unique(ytr))} classes; load average {load_average():.1f} "
        f"on {cores()} CPUs",
        flush=True,
    )

    def mvml(solver: str) -> MVMLClassifier:
        return MVMLClassifier(
            n_landmarks=args.landmarks, max_iter=args.max_iter, solver=solver, random_state=0
        )

    dense, t_dense, c_dense = _best_fit(lambda: mvml("dense"), Xtr, ytr, 1)
    fast, t_fast, c_fast = _best_fit(lambda: mvml("auto"), Xtr, ytr, args.repeats)
    D_dense = dense.decision_function(Xte)
    D_fast = fast.decision_function(Xte)
    diff = float(np.max(np.abs(D_dense - D_fast)))
    scale = float(np.max(np.abs(D_dense)))
    p = dense.n_landmarks_
    print(
        f"\n## 1. dense reference path vs structured solver (n_landmarks={args.landmarks:g}: "
        f"{p} per view, {p * len(Xtr)} features; max_iter={args.max_iter}, tol=None)\n"
    )
    head = [
        "solver",
        "solver_",
        "fit wall (s)",
        "fit CPU (s)",
        "speed-up wall / CPU",
        "test accuracy",
    ]
    body = [
        [
            'solver="dense"',
            dense.solver_,
            f"{t_dense:.3f}",
            f"{c_dense:.3f}",
            "1.0x / 1.0x",
            f"{dense.score(Xte, yte):.4f}",
        ],
        [
            'solver="auto"',
            fast.solver_,
            f"{t_fast:.3f}",
            f"{c_fast:.3f}",
            f"{t_dense / t_fast:.1f}x / {c_dense / c_fast:.1f}x",
            f"{fast.score(Xte, yte):.4f}",
        ],
    ]
    print(markdown_table(head, body, aligned=False))
    print(
        f"\nmax |decision(dense) - decision(auto)| = {diff:.2e} "
        f"(relative to max |decision| {scale:.3g}: {diff / scale:.2e}); "
        f"same predictions: {bool(np.all(dense.predict(Xte) == fast.predict(Xte)))}"
    )
    print(f"target >= 10x (wall): {'met' if t_dense / t_fast >= 10 else 'NOT met'}")

    X_cat, Xte_cat = np.hstack(Xtr), np.hstack(Xte)
    default, t_default, c_default = _best_fit(
        lambda: MVMLClassifier(random_state=0), Xtr, ytr, args.repeats
    )
    svc, t_svc, c_svc = _best_fit(SVC, X_cat, ytr, args.repeats)
    print(
        f"\n## 2. default MVMLClassifier() vs SVC() on the concatenated views "
        f"(MVML: n_landmarks='auto' = {default.n_landmarks_} per view)\n"
    )
    head = ["estimator", "fit wall (s)", "fit CPU (s)", "ratio to SVC wall / CPU", "test accuracy"]
    body = [
        ["SVC()", f"{t_svc:.3f}", f"{c_svc:.3f}", "1.0x / 1.0x", f"{svc.score(Xte_cat, yte):.4f}"],
        [
            "MVMLClassifier()",
            f"{t_default:.3f}",
            f"{c_default:.3f}",
            f"{t_default / t_svc:.1f}x / {c_default / c_svc:.1f}x",
            f"{default.score(Xte, yte):.4f}",
        ],
    ]
    print(markdown_table(head, body, aligned=False))
    print(f"target <= 10x SVC (wall): {'met' if t_default / t_svc <= 10 else 'NOT met'}")
    print(
        f"\nload average after the run: {load_average():.1f} on {cores()} CPUs "
        "(wall times on a shared machine; CPU time = process_time of the fit)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

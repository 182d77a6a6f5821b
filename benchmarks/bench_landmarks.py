"""Landmark strategies at equal landmark counts: uniform, k-means++ and ridge leverage.

For each data set and landmark count ``p`` (landmarks per view, one set of rows shared
by the views), three seeds of each strategy:

* the **kernel error** of the block Nystrom map on the training rows, relative:
  ``sum_l tr(K_l - U_l U_l^T) / sum_l tr(K_l)`` (the trace norm of the error, which is
  PSD; computed from the features and the kernel diagonals, without the n x n kernels),
  with the kernels' default bandwidths;
* the **test score** of the default MVML estimator at that landmark count
  (``MVMLClassifier`` accuracy, ``MVMLRegressor`` R^2), the same seed choosing the
  landmarks;
* the **selection time** (the ``BlockNystrom`` fit: bandwidths, landmarks, ``W``
  factorisations) and the estimator's **fit time** (wall clock, mean over the seeds).

Data sets: uWave (UCR split, 896 train / 3582 test, 3 views of 315), digits cut into 3
views (stratified half / half split) and SARCOS (3 views: positions, velocities,
accelerations; torque 1; 3000 train rows, standardised on them), loaded as in
``bench_vs_sklearn.py``, and a synthetic set of uneven density (3000 train / 3000 test
rows, 90 % in a tight cluster, 10 % spread wide; 2 views). A last table times the
landmark choice alone on 50,000 rows (3 views) at p = 200 and 800, where its cost shows.

Run:  MVKERNELS_DATA=../shared/data OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_landmarks.py
Writes docs/results/benchmarks/landmarks.md (``--out`` to change). ``--quick``: one seed
and the smaller landmark count only.
"""

from __future__ import annotations

import platform
import time
from typing import Any

import numpy as np
from _common import (
    RESULTS,
    add_out,
    add_quick,
    cores,
    load_average,
    markdown_table,
    parser,
    report,
    thread_pools,
    write_report,
)
from sklearn.model_selection import train_test_split

from mvkernels import BlockNystrom, MVMLClassifier, MVMLRegressor
from mvkernels.datasets import load_digits_views, load_sarcos, load_uwave

OUT = RESULTS / "landmarks.md"
STRATEGIES = ("uniform", "kmeans++", "leverage")


def load_cases() -> list[dict[str, Any]]:
    """(name, task, train views, train targets, test views, test targets, counts)."""
    cases = []
    d = load_uwave()
    cases.append(
        dict(
            name="uWave",
            task="clf",
            train=(d["Xs_train"], d["y_train"]),
            test=(d["Xs_test"], d["y_test"]),
            counts=(30, 100),
        )
    )
    Xs, y = load_digits_views()
    sizes = np.cumsum([V.shape[1] for V in Xs])[:-1]
    Xtr, Xte, ytr, yte = train_test_split(
        np.hstack(Xs), y, train_size=0.5, stratify=y, random_state=0
    )
    cases.append(
        dict(
            name="digits, 3 views",
            task="clf",
            train=(np.split(Xtr, sizes, axis=1), ytr),
            test=(np.split(Xte, sizes, axis=1), yte),
            counts=(30, 100),
        )
    )
    s = load_sarcos(torque=0)
    X, y = np.hstack(s["Xs"]), s["y"]
    perm = np.random.RandomState(0).permutation(len(y))
    tr, te = perm[:3000], perm[3000:]
    mu, sd = X[tr].mean(axis=0), X[tr].std(axis=0)
    Xn = (X - mu) / sd
    sizes = np.cumsum([V.shape[1] for V in s["Xs"]])[:-1]
    cases.append(
        dict(
            name="SARCOS (torque 1)",
            task="reg",
            train=(np.split(Xn[tr], sizes, axis=1), y[tr]),
            test=(np.split(Xn[te], sizes, axis=1), y[te]),
            counts=(50, 200),
        )
    )
    cases.append(uneven_case())
    return cases


def uneven_draw(n: int, rng: np.random.RandomState) -> tuple[list[np.ndarray], np.ndarray]:
    """90 % of the rows in a tight cluster, 10 % spread over a wide square (2 views of the
    same points: the coordinates and a rotation); ``y = sin(2 x0) cos(x1)`` plus noise."""
    n_wide = n // 10
    X = np.vstack([rng.normal(0.0, 0.3, (n - n_wide, 2)), rng.uniform(-6.0, 6.0, (n_wide, 2))])
    X = X[rng.permutation(n)]
    c, s = np.cos(0.7), np.sin(0.7)
    y = np.sin(2 * X[:, 0]) * np.cos(X[:, 1]) + 0.05 * rng.standard_normal(n)
    return [X, X @ np.array([[c, -s], [s, c]])], y


def uneven_case() -> dict[str, Any]:
    """Uneven density (synthetic): where uniform landmarks miss the sparse region."""
    rng = np.random.RandomState(0)
    train, test = uneven_draw(3000, rng), uneven_draw(3000, rng)
    return dict(
        name="uneven density (synth.)", task="reg", train=train, test=test, counts=(30, 100)
    )


def selection_cost(n: int, p: int) -> list[dict[str, Any]]:
    """Seconds of the landmark choice alone on ``n`` rows (3 views of 10 columns)."""
    from mvkernels.kernels import make_view_kernels
    from mvkernels.nystrom import select_landmarks

    rng = np.random.RandomState(0)
    Xs = [rng.standard_normal((n, 10)) for _ in range(3)]
    kernels = [k.fit(X, random_state=0) for k, X in zip(make_view_kernels("rbf", None, 3), Xs)]
    out = []
    for strategy in STRATEGIES:
        t0 = time.perf_counter()
        select_landmarks(Xs, kernels, p, strategy, random_state=0)
        out.append(dict(n=n, p=p, strategy=strategy, secs=time.perf_counter() - t0))
        print(f"selection only, n={n} p={p} {strategy:<9s} {out[-1]['secs']:.2f} s", flush=True)
    return out


def kernel_error(nys: BlockNystrom, Xs: list[np.ndarray]) -> float:
    """``sum_l tr(K_l - U_l U_l^T) / sum_l tr(K_l)`` on the training rows."""
    U = nys.transform(Xs)
    p = nys.n_landmarks_
    err = tot = 0.0
    for l, (Xv, kern) in enumerate(zip(Xs, nys.kernels_)):
        diag = kern.diag(Xv)
        err += float(diag.sum() - (U[:, l * p : (l + 1) * p] ** 2).sum())
        tot += float(diag.sum())
    return max(err, 0.0) / tot


def run_one(case: dict[str, Any], p: int, strategy: str, seed: int) -> dict[str, float]:
    (Xtr, ytr), (Xte, yte) = case["train"], case["test"]
    t0 = time.perf_counter()
    nys = BlockNystrom(n_landmarks=p, landmarks=strategy, random_state=seed).fit(Xtr)
    t_select = time.perf_counter() - t0
    est_cls = MVMLClassifier if case["task"] == "clf" else MVMLRegressor
    est = est_cls(n_landmarks=p, landmarks=strategy, random_state=seed)
    t0 = time.perf_counter()
    est.fit(Xtr, ytr)
    t_fit = time.perf_counter() - t0
    return dict(
        error=kernel_error(nys, Xtr),
        score=float(est.score(Xte, yte)),
        select=t_select,
        fit=t_fit,
    )


def machine(load_start: float) -> str:
    return (
        f"{platform.machine()}, {cores()} cores shared with other jobs; thread pools "
        f"(library, threads): {thread_pools()}; load average "
        f"{load_start:.1f} at the start and {load_average():.1f} at the end of the run "
        "(timings are noisy under this load: compare within a row group only)"
    )


def markdown(
    rows: list[dict[str, Any]], cost: list[dict[str, Any]], header: str, seeds: int
) -> str:
    head = [
        "Data set",
        "n train",
        "p per view",
        "Landmarks",
        "Kernel error",
        "Test score",
        "Selection (s)",
        "Fit (s)",
    ]
    body = [
        [
            r["case"],
            str(r["n"]),
            str(r["p"]),
            r["strategy"],
            f"{r['error']:.4f}",
            f"{r['score']:.4f} ± {r['score_sd']:.4f}",
            f"{r['select']:.3f}",
            f"{r['fit']:.2f}",
        ]
        for r in rows
    ]
    return report(
        "Landmark strategies at equal landmark counts",
        "Generated by `benchmarks/bench_landmarks.py` (do not edit by hand).",
        f"Machine: {header}.",
        "Kernel error: relative trace-norm error of the block Nystrom approximation of the "
        "training kernels, `sum_l tr(K_l - U_l U_l^T) / sum_l tr(K_l)`. Test score: "
        "accuracy (uWave, digits; `MVMLClassifier()`) or R^2 (SARCOS, the synthetic set; "
        "`MVMLRegressor()`) "
        "with default parameters but `n_landmarks=p, landmarks=...`. Selection: the "
        "`BlockNystrom` fit (bandwidths, landmarks, W factorisations). Fit: the estimator's "
        f"fit. Means over {seeds} seed(s) (score: mean ± standard deviation).",
        markdown_table(head, body),
        "The landmark choice alone (`select_landmarks`, RBF kernels already fitted) on "
        "larger data: 3 views of 10 standard normal columns, one seed.",
        markdown_table(
            ["n", "p per view", "Landmarks", "Selection (s)"],
            [[str(c["n"]), str(c["p"]), c["strategy"], f"{c['secs']:.2f}"] for c in cost],
        ),
    )


def main() -> None:
    ap = parser(__doc__)
    add_quick(ap, "one seed, the smaller count only")
    add_out(ap, OUT)
    args = ap.parse_args()
    load_start = load_average()
    seeds = (0,) if args.quick else (0, 1, 2)
    rows = []
    for case in load_cases():
        counts = case["counts"][:1] if args.quick else case["counts"]
        for p in counts:
            for strategy in STRATEGIES:
                res = [run_one(case, p, strategy, s) for s in seeds]
                scores = [r["score"] for r in res]
                row = dict(
                    case=case["name"],
                    n=len(case["train"][1]),
                    p=p,
                    strategy=strategy,
                    error=float(np.mean([r["error"] for r in res])),
                    score=float(np.mean(scores)),
                    score_sd=float(np.std(scores)),
                    select=float(np.mean([r["select"] for r in res])),
                    fit=float(np.mean([r["fit"] for r in res])),
                )
                rows.append(row)
                print(
                    f"{row['case']:<20s} p={p:<4d} {strategy:<9s} error {row['error']:.4f}  "
                    f"score {row['score']:.4f} ± {row['score_sd']:.4f}  "
                    f"select {row['select']:.3f} s  fit {row['fit']:.2f} s",
                    flush=True,
                )
    cost = [c for p in (200, 800) for c in selection_cost(20_000 if args.quick else 50_000, p)]
    text = markdown(rows, cost, machine(load_start), len(seeds))
    print()
    print(text)
    write_report(args.out, text)


if __name__ == "__main__":
    main()

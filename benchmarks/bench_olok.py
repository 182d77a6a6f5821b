"""OLOK, truncated OLOK and vv-RLS (the OLOK paper's Table 1 and Fig. 1), and the speed of
the fast OLOK against plain per-sample Algorithm 1.

Data sets (see ``mvkernels.reproduce.olok``): the synthetic multi-task set (10000 x 50,
d = 20, Argyriou-style), white Wine Quality (outputs quality and alcohol), Parkinson
telemonitoring (motor and total UPDRS; later 20 % of each subject's visits held out), and
Parkinson over unseen subjects. Hyperparameters are selected on the first split's training
set (vv-RLS: 5-fold CV on <= 1500 rows; OLOK and T-OLOK: progressive validation), then
every method is refitted on each of ``--splits`` splits. Prints test MSE (standardised
targets) +- std over the splits and the final-fit time; plots test MSE against the number of
examples seen (Fig. 1) to ``--figure``.

Speed: one-pass OLOK fit on the whole synthetic set (n = 10000, d = 20) with the fast path
(lazy decay, block triangular solves) against ``olok_reference`` (tests/_reference_olok.py) (plain
per-sample Algorithm 1: explicit decay, full kernel row per step), timed side by side in
this run; target >= 10x. The largest difference of their online predictions is printed too.

Run:  MVKERNELS_DATA=../shared/data .venv/bin/python benchmarks/bench_olok.py [--splits 5]
      [--datasets synthetic wine] [--quick] [--figure olok_fig1.png]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import add_quick, parser

from mvkernels.olok import OLOKRegressor
from mvkernels.reproduce import olok as R

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _reference_olok import olok_reference  # noqa: E402  (the tests' per-sample reference)


def speed_vs_reference(X: np.ndarray, Y: np.ndarray, params: dict[str, Any]) -> dict[str, float]:
    """One-pass OLOK fit (fast path) against ``olok_reference`` (tests/_reference_olok.py) (plain
    per-sample Algorithm 1) on the same stream, timed in the same run; also the largest
    difference of their online predictions (both compute ``f_{t-1}(x_t)``)."""
    est = OLOKRegressor(**params)
    t = time.perf_counter()
    P_fast = est.progressive_predict(X, Y)
    fast = time.perf_counter() - t
    t = time.perf_counter()
    ref = olok_reference(est, X, Y)
    slow = time.perf_counter() - t
    return {
        "n": int(X.shape[0]),
        "d": int(Y.shape[1]),
        "fast_s": fast,
        "reference_s": slow,
        "speedup": slow / fast,
        "max_abs_diff": float(np.abs(P_fast - ref["predictions"]).max()),
    }


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--datasets", nargs="+", default=list(R.DATASETS), choices=R.DATASETS)
    add_quick(ap, "smaller hyperparameter grids")
    ap.add_argument("--data", default=None, help="data folder (default $MVKERNELS_DATA)")
    ap.add_argument("--figure", default="olok_fig1.png")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    results, curves = {}, {}
    for name in args.datasets:
        task = R.load_task(name, args.data, args.seed)
        progress = R.Progress(args.splits, prefix=f"{name} ")
        results[name] = R.table1_dataset(name, task, args.splits, args.quick, args.seed, progress)
        if name in ("synthetic", "parkinson", "wine"):
            curves[name] = R.learning_curve(
                *results[name]["first_split"], results[name]["params"], n_points=15
            )

    print(f"\nTest MSE (standardised targets) +- std over {args.splits} splits, final-fit time")
    print(
        f"{'data':17s} {'method':7s} {'MSE':>10s} {'std':>9s} {'time s':>8s} "
        f"{'paper MSE':>9s} {'paper s':>8s}  parameters"
    )
    for name, res in results.items():
        for m in R.METHODS:
            e, t = np.array(res["mse"][m]), np.array(res["time"][m])
            paper = R.PAPER.get((name, m), (np.nan, np.nan, np.nan))
            print(
                f"{name:17s} {m:7s} {e.mean():10.4g} {e.std():9.2g} {t.mean():8.3g} "
                f"{paper[0]:9.2g} {paper[2]:8.3g}  {R.describe_params(res['params'][m])}"
            )
        print(
            f"{name:17s} {'mean':7s} {np.mean(res['baseline']):10.4g}   (predicting the "
            "training mean)"
        )
    if curves:
        path = R.figure(curves, args.figure)
        print(f"\nFig. 1 written to {path}")
        for name, c in curves.items():
            print(
                f"  {name}: OLOK {c['OLOK'][0]:.3g} (t={c['t'][0]}) -> {c['OLOK'][-1]:.3g} "
                f"(t={c['t'][-1]}), T-OLOK -> {c['T-OLOK'][-1]:.3g}, vv-RLS {c['vv-RLS']:.3g}"
            )

    syn = R.load_task("synthetic", args.data, args.seed)
    X = (syn["X"] - syn["X"].mean(0)) / syn["X"].std(0)
    Y = (syn["Y"] - syn["Y"].mean(0)) / syn["Y"].std(0)
    params = (
        results["synthetic"]["params"]["OLOK"]
        if "synthetic" in results
        else dict(
            kernel_params={"gamma": 0.0006},
            output_kernel=R.OUTPUT_KERNEL,
            learning_rate="constant",
            eta0=0.3 / 2.9,
            alpha=1e-5,
        )
    )
    sp = speed_vs_reference(X, Y, params)
    print(
        f"\nOne-pass OLOK fit, synthetic n = {sp['n']}, d = {sp['d']}: fast "
        f"{sp['fast_s']:.3f} s, per-sample reference {sp['reference_s']:.3f} s, "
        f"speed-up {sp['speedup']:.1f}x (target >= 10x), max |prediction difference| "
        f"{sp['max_abs_diff']:.2g}"
    )


if __name__ == "__main__":
    main()

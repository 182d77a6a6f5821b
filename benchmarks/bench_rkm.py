"""Multi-view RKM benchmark: each solver's test MSE and training time (sum of sines, SantaFe).

    python benchmarks/bench_rkm.py [--quick] [--output DIR] [--data DIR]

Prints, side by side in one run:

1. Sum of sines: MSE, fit time, Stiefel iterations of the four solvers, and the
   time Stiefel training needs to reach the eig components to 1e-6 (after rotation), with the
   block Riemannian CG optimiser (default) and with Cayley Adam at our step size (lr 0.5) and
   at the authors' lr 2e-3 (capped at 20000 iterations).
2. SantaFe: primal eig, dual eig, exact-RBF dual eig and primal / dual Stiefel with the
   block Riemannian CG optimiser to convergence (``--quick``: no primal Stiefel).

Targets (issue 5): Stiefel on the sum of sines reaches the eig components (1e-6) in under a
minute on 2 cores; SantaFe primal eig trains in under 20 s. Figures (paper Figs. 2-4):
``sines_forecasts.png``, ``sines_components.png``, ``santafe_forecasts.png``,
``santafe_components.png`` in ``--output`` (default ``bench_rkm_out``).
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np
from _common import add_quick, parser

from mvkernels import RKMForecaster
from mvkernels.datasets import fetch_santafe, make_sum_of_sines
from mvkernels.reproduce._report import markdown_table
from mvkernels.reproduce.rkm_santafe import RFF_SEED
from mvkernels.reproduce.rkm_santafe import SETTINGS as SANTAFE
from mvkernels.reproduce.rkm_sines import (
    SETTINGS as SINES,
)
from mvkernels.reproduce.rkm_sines import (
    aligned_sign_error,
    plot_components,
    plot_forecasts,
    run_solvers,
)

SOLVERS = ["primal-eig", "dual-eig", "primal-stiefel", "dual-stiefel"]


def table(rows: list[dict]) -> str:
    return markdown_table(
        [
            "solver",
            "test MSE",
            "fit (s)",
            "forecast (s)",
            "Stiefel iterations",
            "converged",
            "max abs diff. to primal-eig forecast",
        ],
        [
            [
                r["solver"],
                r["mse"],
                r["fit_s"],
                r["forecast_s"],
                r["iterations"],
                str(r["converged"]),
                r["max_diff_eig"],
            ]
            for r in rows
        ],
        digits=4,
    )


def stiefel_to_eig(
    train: np.ndarray, eig_H: np.ndarray, lr: float | None, max_iter: int, setting: str
) -> list:
    """Time for Stiefel + rotation to match the eig components; the reached error.

    ``lr=None``: the block Riemannian CG optimiser; else Cayley Adam with that step size.
    """
    opt = (
        dict(optimizer="lobpcg") if lr is None else dict(optimizer="cayley-adam", learning_rate=lr)
    )
    est = RKMForecaster(
        solver=f"{setting}-stiefel", max_iter=max_iter, tol=1e-12, random_state=0, **opt, **SINES
    )
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(train)
    seconds = time.perf_counter() - start
    res = est.model_.stiefel_result_
    err = aligned_sign_error(est.model_.hidden_, eig_H)
    return [
        f"{setting}-stiefel",
        "lobpcg" if lr is None else f"Cayley Adam, lr {lr}",
        res.n_iter,
        str(res.converged),
        seconds,
        err,
        str(err <= 1e-6),
    ]


def main() -> None:
    ap = parser(__doc__)
    add_quick(ap, "fewer Stiefel iterations, no primal Stiefel on SantaFe")
    ap.add_argument("--output", default="bench_rkm_out")
    ap.add_argument("--data", default=None)
    args = ap.parse_args()
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)

    y = make_sum_of_sines()
    train, test = y[:400], y[400:]
    rows, fcs, models = run_solvers(train, test, SINES, SOLVERS, 0)
    print("## Sum of sines (n = 359, d = 42, s = 4)\n")
    print(table(rows))
    conv = []
    for setting in ("primal", "dual"):
        eig_H = models[f"{setting}-eig"].model_.hidden_
        conv.append(stiefel_to_eig(train, eig_H, None, 1000, setting))
        conv.append(stiefel_to_eig(train, eig_H, 0.5, 100_000, setting))
        conv.append(stiefel_to_eig(train, eig_H, 2e-3, 2000 if args.quick else 20_000, setting))
    print("\n### Stiefel training to the eig components (target: error <= 1e-6 in < 60 s)\n")
    print(
        markdown_table(
            [
                "solver",
                "optimiser",
                "iterations",
                "converged (tol 1e-12)",
                "time (s)",
                "max abs diff. of H to eig",
                "within 1e-6",
            ],
            conv,
            digits=3,
        )
    )
    plot_forecasts(out / "sines_forecasts.png", train, test, fcs, "Sum of sines", 150)
    plot_components(out / "sines_components.png", models, 4, "Sum of sines: hidden units")

    d = fetch_santafe(args.data)
    train, test = d["train"], d["test"]
    solvers = ["primal-eig", "dual-eig", "dual-stiefel"] + (
        [] if args.quick else ["primal-stiefel"]
    )
    rows, fcs, models = run_solvers(train, test, SANTAFE, solvers, RFF_SEED)
    start = time.perf_counter()
    exact = RKMForecaster(solver="dual-eig", **{**SANTAFE, "features": "kernel"}).fit(train)
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    fc = exact.forecast(100)
    rows.append(
        {
            "solver": "dual-eig, exact RBF",
            "mse": float(np.mean((fc - test) ** 2)),
            "fit_s": fit_s,
            "forecast_s": time.perf_counter() - start,
            "iterations": None,
            "converged": True,
            "max_diff_eig": None,
        }
    )
    print("\n## SantaFe (n = 929, d = 5001 RFF + 1, s = 144; target: primal eig < 20 s)\n")
    print(table(rows))
    plot_forecasts(out / "santafe_forecasts.png", train, test, fcs, "SantaFe", 200)
    plot_components(out / "santafe_components.png", models, 4, "SantaFe: hidden units")
    print(f"\nfigures in {out}/")


if __name__ == "__main__":
    main()

"""Reproduce the SantaFe laser experiment of the multi-view RKM paper (Achten et al. 2023).

``mvkernels reproduce rkm-santafe [--quick] [--output DIR] [--data DIR]``

Set A of the Santa Fe competition: train on 1000 values, recursive forecast of the next 100
(the paper's setting). Window view: 71 values (paper lag p = 70) mapped by random Fourier features
(scikit-learn ``RBFSampler``, D = 5000, sigma = 2.1856, seed 42); target view linear; s = 144;
the dual uses the Gram matrix of the same features so primal and dual are comparable.
Reference (re-derived, correct test-kernel centring): test MSE 499.79 for primal and dual eig;
exact RBF kernel in the dual: 116.8.

Stiefel training is capped: the authors' runs are estimated at 19 h (dual) to 5 days (primal)
(on this machine). Full run: dual Stiefel up to 4000 and primal Stiefel up to 150 iterations;
``--quick``: dual Stiefel 300 iterations, no primal Stiefel. The report gives their iteration
count, the remaining relative Riemannian gradient and how far their forecasts are from eig.

Figures (paper Fig. 4): ``forecasts.png`` and ``components.png`` (leading hidden units of
primal and dual eig, and of the capped dual Stiefel after rotation).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ..datasets import load_santafe
from ..rkm import RKMForecaster
from ._report import Progress, markdown_table, write_report
from .rkm_sines import plot_components, plot_forecasts, run_solvers

SETTINGS = dict(lag=71, n_components=144, kernel="rbf", kernel_params={"sigma": 2.1856},
                features="rff", n_features=5000)
RFF_SEED = 42
PAPER_MSE = {"primal-eig": 499.79, "dual-eig": 499.79, "dual-eig, exact RBF": 116.8}


def run(quick: bool = False, output: Path | str = Path("results/rkm-santafe"),
        data_dir: str | None = None, random_state: int = RFF_SEED) -> dict[str, Any]:
    """Run the experiment; write ``results.md`` and figures; return the rows.

    ``random_state`` seeds the random Fourier features; the reference numbers hold for 42,
    which is used when the CLI default 0 is passed.
    """
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    seed = RFF_SEED if random_state == 0 else random_state
    d = load_santafe(data_dir)
    train, test = d["train"], d["test"]
    solvers = ["primal-eig", "dual-eig", "dual-stiefel"] + ([] if quick else ["primal-stiefel"])
    caps = {"dual-stiefel": 300 if quick else 4000, "primal-stiefel": 150}
    progress = Progress(len(solvers) + 2, prefix="rkm-santafe ")
    rows, forecasts, models = run_solvers(train, test, SETTINGS, solvers, seed,
                                          max_iter=caps, progress=progress)
    start = time.perf_counter()
    exact = RKMForecaster(solver="dual-eig", random_state=seed,
                          **{**SETTINGS, "features": "kernel"}).fit(train)
    fit_s = time.perf_counter() - start
    fc_exact = exact.forecast(len(test))
    rows.append({"solver": "dual-eig, exact RBF", "mse": float(np.mean((fc_exact - test) ** 2)),
                 "fit_s": fit_s, "forecast_s": None, "iterations": None, "converged": True,
                 "max_diff_eig": None, "component_err": None})
    progress.step(f"exact RBF dual: MSE {rows[-1]['mse']:.4g}")
    for r in rows:
        res = models[r["solver"]].model_.stiefel_result_ if r["solver"] in models else None
        r["grad_norm"] = None if res is None else res.grad_norm
    table = markdown_table(
        ["solver", "test MSE (ours)", "reference", "difference", "fit (s)", "iterations",
         "rel. Riemannian gradient", "max abs diff. to primal-eig forecast",
         "max abs diff. of H to eig (up to sign)"],
        [[r["solver"], r["mse"], PAPER_MSE.get(r["solver"]),
          None if r["solver"] not in PAPER_MSE else r["mse"] - PAPER_MSE[r["solver"]],
          r["fit_s"], r["iterations"], r["grad_norm"], r["max_diff_eig"],
          r["component_err"]] for r in rows], digits=4)
    agree = float(np.abs(forecasts["primal-eig"] - forecasts["dual-eig"]).max())
    lam_p = models["primal-eig"].model_.eigenvalues_
    lam_d = models["dual-eig"].model_.eigenvalues_
    notes = (
        f"Primal eig and dual eig forecasts agree to {agree:.2e} (max abs difference); their "
        f"eigenvalues to {np.abs(lam_p / lam_d - 1).max():.1e} (relative). Settings: "
        "SPEC.md 4.1 (window 71, RFF D = 5000, sigma = 2.1856, RBFSampler seed "
        f"{seed}, s = 144, n = 929). The paper's primal eig works on d = 5001; we compute the "
        "same eigenpairs of C exactly through the thin QR of Phi^T (d > n), which is why it "
        "takes about a second instead of minutes.\n\n"
        "The reference MSE values are SPEC.md's (the paper shows figures, no table; the "
        "authors' released dual code centres test kernels with the already-centred K and "
        "gets 433.3, which we do not reproduce). Stiefel runs are capped (the authors' own "
        "runs take 19 h to 5 days): a capped run is not converged, so its forecast differs "
        "from eig; the table shows by how much. Data: the original lasertrain.dat / "
        "laserpred.dat, no substitute."
    )
    plot_forecasts(output / "forecasts.png", train, test,
                   {**forecasts, "dual eig, exact RBF": fc_exact},
                   "SantaFe: 100-step recursive forecasts", history=200)
    plot_components(output / "components.png",
                    {k: models[k] for k in ("primal-eig", "dual-eig", "dual-stiefel")},
                    4, "SantaFe: leading hidden units H")
    progress.step("figures")
    write_report(output, "Multi-view RKM: SantaFe laser (Achten et al. 2023, Sec. 5, Fig. 4)",
                 [("Forecasts", table), ("Notes", notes),
                  ("Figures", "![forecasts](forecasts.png)\n\n![components](components.png)")])
    return {"rows": rows, "paper": PAPER_MSE, "primal_dual_max_diff": agree}

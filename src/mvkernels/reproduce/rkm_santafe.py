"""Reproduce the SantaFe laser experiment of the multi-view RKM paper (Achten et al. 2023).

``mvkernels reproduce rkm-santafe [--quick] [--output DIR] [--data DIR]``

Set A of the Santa Fe competition: train on 1000 values, recursive forecast of the next 100.
Window view: 71 values (paper lag p = 70; the authors' code feeds p + 1 values) mapped by
random Fourier features (scikit-learn ``RBFSampler``, D = 5000, sigma = 2.1856, seed 42);
target view linear; s = 144; the dual uses the Gram matrix of the same features so primal
and dual are comparable. Reference, with the test kernel centred by the uncentred training
Gram matrix: test MSE 499.79 for every algorithm; exact RBF kernel in the dual: 116.8.

Stiefel training (Algorithms 3 and 4) uses the block Riemannian conjugate-gradient optimiser
(``optimizer="lobpcg"``) run to a relative Riemannian gradient of 1e-12. The full run also
shows the paper's Cayley Adam capped at 2000 (dual) and 100 (primal) iterations, to measure
its cost per iteration (the paper's "dual Stiefel about 5x cheaper than primal"); the
authors' own Cayley Adam runs are reported to take hours to days. ``--quick`` leaves out
the primal Stiefel and the Cayley Adam runs.

Figures (paper Fig. 4): ``forecasts.png`` and ``components.png`` (leading hidden units of
primal and dual eig and of the Stiefel solutions after rotation).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ..datasets import fetch_santafe
from ..rkm import RKMForecaster
from ._claims import Claim, claims_table, verdict, write_claims
from ._report import Progress, markdown_table, write_report
from .rkm_sines import forecast_row, plot_components, plot_forecasts, run_solvers

SETTINGS: dict[str, Any] = dict(
    lag=71,
    n_components=144,
    kernel="rbf",
    kernel_params={"sigma": 2.1856},
    features="rff",
    n_features=5000,
)
RFF_SEED = 42
REFERENCE_MSE = 499.79
PAPER_MSE = {
    "primal-eig": REFERENCE_MSE,
    "dual-eig": REFERENCE_MSE,
    "primal-stiefel": REFERENCE_MSE,
    "dual-stiefel": REFERENCE_MSE,
    "dual-eig, exact RBF": 116.8,
}
ADAM_CAPS = {"dual": 2000, "primal": 100}


#: the paper named in the claims tables
PAPER_NAME = "Achten et al. 2023 (multi-view RKM)"


def make_claims(rows: list[dict[str, Any]], cost: list[list[Any]]) -> list[Claim]:
    """The paper's statements tested on SantaFe, with our numbers and a verdict each."""
    by = {r["solver"]: r for r in rows}
    solvers = ["primal-eig", "dual-eig", "primal-stiefel", "dual-stiefel"]
    ran = [k for k in solvers if k in by]
    claims = []
    diffs = [by[k]["rel_diff_eig"] for k in ran[1:] if by[k]["rel_diff_eig"] is not None]
    worst = max(diffs) if diffs else float("nan")
    claims.append(
        Claim(
            claim="Algorithms 1-4 (primal/dual, eig/Stiefel) give identical forecasts (Sec. 5)",
            paper="identical",
            ours=f"{len(ran)} solvers run; max relative forecast difference to primal eig "
            f"{worst:.1e}",
            verdict=verdict(len(ran) == 4 and worst <= 1e-6) if len(ran) == 4 else "not run",
            test="all four solvers run; forecasts equal to 1e-6 relative",
        )
    )
    comp = [by[k]["component_err"] for k in ("primal-stiefel", "dual-stiefel") if k in by]
    comp = [c for c in comp if c is not None]
    claims.append(
        Claim(
            claim="Stiefel training + rotation recovers the eigendecomposition's components",
            paper="same components (up to sign)",
            ours=f"max abs difference {max(comp):.1e}" if comp else "not run",
            verdict=verdict(max(comp) <= 1e-6) if comp else "not run",
            test="hidden units H equal to 1e-6 up to sign",
        )
    )
    mse = [by[k]["mse"] for k in ran]
    claims.append(
        Claim(
            claim="SantaFe 100-step recursive forecast (Fig. 4), reference eig solution",
            paper=f"{PAPER_MSE['primal-eig']:g} (re-derived reference; the paper shows a figure)",
            ours=", ".join(f"{k} {m:.2f}" for k, m in zip(ran, mse)),
            verdict=verdict(all(abs(m - PAPER_MSE["primal-eig"]) <= 0.01 for m in mse)),
            test="every solver within 0.01 of 499.79",
        )
    )
    lob = [c for c in cost if c and str(c[0]).startswith("block")]
    claims.append(
        Claim(
            claim="dual Stiefel training about 5x cheaper than primal",
            paper="about 5x",
            ours=f"primal / dual CPU time {lob[0][3]:.2f}x (block Riemannian CG)"
            if lob
            else "not measured (--quick)",
            verdict=verdict(lob[0][3] > 1.0) if lob else "not run",
            test="primal / dual CPU time > 1 for the same optimiser",
        )
    )
    return claims


def run(quick: bool, output: Path, data_dir: str | None, random_state: int) -> dict[str, Any]:
    """Run the experiment; write ``results.md`` and figures; return the rows.

    ``random_state`` seeds the random Fourier features; the reference numbers hold for 42,
    which is used when the CLI default 0 is passed.
    """
    seed = RFF_SEED if random_state == 0 else random_state
    d = fetch_santafe(data_dir)
    train, test = d["train"], d["test"]
    solvers: list[Any] = ["primal-eig", "dual-eig", "dual-stiefel"]
    if not quick:
        solvers.insert(2, "primal-stiefel")
        for setting in ("dual", "primal"):
            solvers.append(
                (
                    f"{setting}-stiefel, Cayley Adam (paper's optimiser), capped",
                    {
                        "solver": f"{setting}-stiefel",
                        "optimizer": "cayley-adam",
                        "max_iter": ADAM_CAPS[setting],
                    },
                )
            )
    progress = Progress(len(solvers) + 2, prefix="rkm-santafe ")
    rows, forecasts, models = run_solvers(train, test, SETTINGS, solvers, seed, progress=progress)
    start = time.perf_counter()
    exact = RKMForecaster(
        solver="dual-eig", random_state=seed, **{**SETTINGS, "features": "kernel"}
    ).fit(train)
    fit_s = time.perf_counter() - start
    fc_exact = exact.forecast(len(test))
    rows.append(forecast_row("dual-eig, exact RBF", fc_exact, test, fit_s=fit_s))
    progress.step(f"exact RBF dual: MSE {rows[-1]['mse']:.4g}")
    scale = float(np.abs(forecasts["primal-eig"]).max())
    for r in rows:
        r["rel_diff_eig"] = None if r["max_diff_eig"] is None else r["max_diff_eig"] / scale
    table = markdown_table(
        [
            "solver",
            "test MSE",
            "reference",
            "difference",
            "fit (s)",
            "fit CPU (s)",
            "Stiefel (s)",
            "iterations",
            "converged",
            "rel. Riemannian gradient",
            "max rel. diff. to primal-eig forecast",
            "max abs diff. of H to eig (up to sign)",
        ],
        [
            [
                r["solver"],
                f"{r['mse']:.4f}",
                f"{PAPER_MSE[r['solver']]:g}" if r["solver"] in PAPER_MSE else None,
                None
                if r["solver"] not in PAPER_MSE
                else f"{r['mse'] - PAPER_MSE[r['solver']]:+.4f}",
                r["fit_s"],
                r.get("fit_cpu_s"),
                r["stiefel_s"],
                r["iterations"],
                str(r["converged"]),
                r["grad_norm"],
                r["rel_diff_eig"],
                r["component_err"],
            ]
            for r in rows
        ],
        digits=4,
    )
    by = {r["solver"]: r for r in rows}
    cost = []
    for label, p, dd in [
        ("block Riemannian CG (lobpcg), to convergence", "primal-stiefel", "dual-stiefel"),
        (
            "Cayley Adam, per iteration",
            "primal-stiefel, Cayley Adam (paper's optimiser), capped",
            "dual-stiefel, Cayley Adam (paper's optimiser), capped",
        ),
    ]:
        if p in by and dd in by:
            per = by[p]["iterations"] if label.endswith("per iteration") else 1
            per_d = by[dd]["iterations"] if label.endswith("per iteration") else 1
            wp, wd = by[p]["stiefel_s"] / per, by[dd]["stiefel_s"] / per_d
            cp, cd = by[p]["stiefel_cpu_s"] / per, by[dd]["stiefel_cpu_s"] / per_d
            cost.append([label, cp, cd, cp / cd, wp, wd, wp / wd])
    cost_table = (
        markdown_table(
            [
                "optimiser",
                "primal CPU (s)",
                "dual CPU (s)",
                "primal / dual (CPU)",
                "primal wall (s)",
                "dual wall (s)",
                "primal / dual (wall)",
            ],
            cost,
            digits=3,
        )
        if cost
        else "Not measured in --quick mode (no primal Stiefel run)."
    )
    agree = float(np.abs(forecasts["primal-eig"] - forecasts["dual-eig"]).max())
    lam_p = models["primal-eig"].model_.eigenvalues_
    lam_d = models["dual-eig"].model_.eigenvalues_
    notes = (
        f"Primal eig and dual eig forecasts agree to {agree:.2e} (max abs difference); their "
        f"eigenvalues to {np.abs(lam_p / lam_d - 1).max():.1e} (relative). Settings: window "
        f"71, RFF D = 5000, sigma = 2.1856, RBFSampler seed {seed}, s = 144, n = 929, "
        "d = 5001. Primal eig computes the eigenpairs of C exactly through the thin QR of "
        "Phi^T (d > n); primal Stiefel applies C as Phi^T (Phi Z) without forming it.\n\n"
        "Times: 'fit (s)' is wall-clock on a shared 2-core machine (other jobs running), "
        "'fit CPU (s)' the process CPU time (one BLAS thread below 2000 rows/features), "
        "closer to the wall-clock time on an idle machine. "
        "Stiefel rows: the 'Stiefel (s)' column is the optimisation alone; 'converged' "
        "means a relative Riemannian gradient <= 1e-12; the components are compared after "
        "the rotation to diagonal Sigma (Algorithms 3/4, steps 7-9). Eigenvalues 144 and "
        f"145 of K differ by {_gap(models):.2g} (relative), which makes first-order "
        "Stiefel training slow; the block method iterates "
        "a few guard columns along, so its rate depends on the gap to eigenvalue 163.\n\n"
        "The paper shows figures, no MSE table: the reference 499.79 is the eig solution "
        "with the test kernel centred by the uncentred training Gram matrix (the authors' "
        "released dual code centres it with the already-centred K and gets 433.3, which we "
        "do not reproduce). Data: the original "
        "lasertrain.dat / laserpred.dat, no substitute."
    )
    plot_forecasts(
        output / "forecasts.png",
        train,
        test,
        {
            **{k: forecasts[k] for k in forecasts if "Cayley" not in k},
            "dual eig, exact RBF": fc_exact,
        },
        "SantaFe: 100-step recursive forecasts",
        history=200,
    )
    plot_components(
        output / "components.png",
        {
            k: models[k]
            for k in ("primal-eig", "dual-eig", "primal-stiefel", "dual-stiefel")
            if k in models
        },
        4,
        "SantaFe: leading hidden units H",
    )
    progress.step("figures")
    claims = make_claims(rows, cost)
    write_claims(output, PAPER_NAME, claims)
    write_report(
        output,
        "Multi-view RKM: SantaFe laser (Achten et al. 2023, Sec. 5, Fig. 4)",
        [
            ("Paper claims", claims_table(claims)),
            ("Forecasts", table),
            ("Cost of Stiefel training, primal vs dual (paper: dual about 5x cheaper)", cost_table),
            ("Notes", notes),
            ("Figures", "![forecasts](forecasts.png)\n\n![components](components.png)"),
        ],
    )
    return {
        "rows": rows,
        "paper": PAPER_MSE,
        "primal_dual_max_diff": agree,
        "cost": cost,
        "claims": claims,
    }


def _gap(models: dict) -> float:
    """``lambda_s / lambda_{s+1} - 1`` of the dual kernel matrix K."""
    m = models["dual-eig"].model_
    lam = np.linalg.eigvalsh(sum(m._Kc))[::-1]
    s = m.n_components
    return float(lam[s - 1] / lam[s] - 1.0)

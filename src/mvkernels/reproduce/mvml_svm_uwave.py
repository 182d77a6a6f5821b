"""Reproduce the uWave rows of Table 1 of the MVML-SVM paper (Huusari et al., JdS 2018).

``mvkernels reproduce mvml-svm-uwave [--quick] [--output DIR] [--data DIR]``

For each Nystrom level (6 % and 24 % of the 896 training series) and each metric
variant (MVMLSVM = learned dense metric, MVMLSVMsp = learned block-sparse, MVMLSVM_Cov,
MVMLSVM_I), hyperparameters are chosen by 3-fold stratified cross-validation on the
training set only (lambda = ``alpha``, ``eta``, Gaussian bandwidth as a multiple
``f in {1, 4, 8}`` of the paper's mean-distance default; ``f = 1`` is the paper's own
setting), C = 1/n as in the paper, w = 1/v, 5 outer iterations, ``tol=1e-4``. The selected
model is then refitted with ``n_draws`` independent landmark draws (the paper reports mean
and standard deviation over draws) and scored on the 3582 test series.

MUMBO (Koco & Capponi 2011), the paper's boosting baseline, is run with
scikit-multimodallearn's ``MumboClassifier`` (optional ``bench`` extra) on the same split:
multi-class natively (as in the paper), decision trees as the per-view weak learners, tree
depth (3 or 5; 100 rounds) chosen by the same 3-fold CV, refitted with 2 tree seeds
(:data:`MUMBO_SEEDS`).
It uses no Nystrom approximation, so one result serves both levels. When the package is not
installed its rows say so. scikit-multimodallearn 0.1.0 imports ``DTYPE`` from
``sklearn.tree._tree``, which scikit-learn >= 1.8 no longer defines: :func:`import_mumbo`
sets it to ``numpy.float32`` (its value in earlier scikit-learn) before importing.

``--quick``: the two learned variants, a 4-candidate grid (``f in {1, 8}``), one landmark
draw, MUMBO with fixed depth 3 and 100 rounds (a few minutes on 2 cores). Writes
``results.md`` (ours beside the paper's numbers, the difference, the CV-selected
parameters, the paper's claims with verdicts), ``claims.json`` and, when matplotlib is
installed, ``accuracy.png`` (embedded in the report).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ..mvml import MVMLSVC
from ._claims import Claim, claims_table, verdict, versus, write_claims
from ._report import Progress, fmt, markdown_table, pyplot, save_figure, write_report
from ._uwave import VIEW_SIZES, cv_search, load_split, score_draws

#: Table 1 of the paper, uWaveGesture rows (accuracy in %, mean over 4 draws)
PAPER = {
    ("MVMLSVM", 0.06): 93.13,
    ("MVMLSVM", 0.24): 93.32,
    ("MVMLSVMsp", 0.06): 93.29,
    ("MVMLSVMsp", 0.24): 92.03,
    ("MVMLSVM_Cov", 0.06): 92.37,
    ("MVMLSVM_Cov", 0.24): 91.15,
    ("MVMLSVM_I", 0.06): 91.63,
    ("MVMLSVM_I", 0.24): 92.30,
    ("MUMBO", 0.06): 90.08,
    ("MUMBO", 0.24): 90.68,
}
VARIANTS = {
    "MVMLSVM": "dense",
    "MVMLSVMsp": "sparse",
    "MVMLSVM_Cov": "cov",
    "MVMLSVM_I": "identity",
}
LEVELS = (0.06, 0.24)
#: the paper's settings, passed explicitly (not left to the estimator's defaults)
MAX_ITER, TOL = 5, 1e-4
#: how far below the paper's accuracy still counts as "reaches the paper" (points)
MARGIN = 0.5
#: MUMBO refits (tree seeds): at most this many (it uses no landmarks, its seed only breaks
#: ties between equally good splits, and one fit costs 30-60 s on 2 shared cores)
MUMBO_SEEDS = 2
PAPER_NAME = "MVML-SVM (Huusari, Kadri & Capponi, JdS 2018), Table 1, uWave"


def _grid(metric: str, quick: bool) -> dict[str, list]:
    """Candidate hyperparameters (bandwidth = multiple f of the mean-distance default;
    ``f = 1`` is the paper's setting)."""
    if quick:
        return {
            "alpha": [1e-4, 1e-5],
            "eta": [1e-2 if metric == "dense" else 1e-3],
            "bandwidth": [1, 8],
        }
    eta = {"dense": [1e-2, 1.0], "sparse": [1e-4, 1e-3, 1e-2]}.get(metric, [1.0])
    return {"alpha": [1e-4, 1e-5], "eta": eta, "bandwidth": [1, 4, 8]}


def _estimator(metric: str, level: float, random_state: int) -> MVMLSVC:
    """The MVMLSVC of one row of the table, with the paper's settings (``C = 1/n``)."""
    return MVMLSVC(
        views=VIEW_SIZES,
        metric=metric,
        n_landmarks=level,
        max_iter=MAX_ITER,
        tol=TOL,
        C=None,
        multi_class="ovr",  # the paper's one-vs-all, additive model
        joint_view=False,
        random_state=random_state,
    )


def import_mumbo() -> Any:
    """scikit-multimodallearn's ``MumboClassifier`` class; ``ImportError`` when absent.

    Its 0.1.0 release imports ``sklearn.tree._tree.DTYPE`` (removed in scikit-learn 1.8);
    that name is restored as ``numpy.float32``, its value in earlier releases, first.
    """
    import sklearn.tree._tree as tree_mod

    if not hasattr(tree_mod, "DTYPE"):
        tree_mod.DTYPE = np.float32
    return importlib.import_module("multimodal.boosting.mumbo").MumboClassifier


class MumboOnViews(ClassifierMixin, BaseEstimator):
    """``MumboClassifier`` with decision-tree weak learners on stacked views.

    A thin adapter so that ``GridSearchCV`` can tune ``max_depth`` and ``n_estimators``:
    the view boundaries are a constructor parameter instead of a ``fit`` argument.
    """

    def __init__(
        self,
        views_ind: Any = None,
        max_depth: int = 3,
        n_estimators: int = 100,
        random_state: Any = None,
    ):
        self.views_ind = views_ind
        self.max_depth = max_depth
        self.n_estimators = n_estimators
        self.random_state = random_state

    def fit(self, X: np.ndarray, y: np.ndarray) -> MumboOnViews:
        from sklearn.tree import DecisionTreeClassifier

        cls = import_mumbo()
        self.model_ = cls(
            DecisionTreeClassifier(max_depth=self.max_depth),
            n_estimators=self.n_estimators,
            random_state=self.random_state,
        )
        self.model_.fit(X, y, views_ind=np.asarray(self.views_ind))
        self.classes_ = self.model_.classes_
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.model_.predict(X)


def _mumbo_rows(data: Any, quick: bool, n_draws: int, random_state: int) -> dict[str, Any]:
    """MUMBO's accuracy (mean, std over seeds), fit time and CV choice; or why it did not run."""
    try:
        import_mumbo()
    except (ImportError, AttributeError) as exc:  # optional dependency
        return {
            "ran": False,
            "why": f"not run: scikit-multimodallearn unavailable ({type(exc).__name__}: {exc})",
        }
    est = MumboOnViews(views_ind=np.cumsum([0, *VIEW_SIZES]), random_state=random_state)
    grid = (
        {"max_depth": [3], "n_estimators": [100]}
        if quick
        else {"max_depth": [3, 5], "n_estimators": [100]}
    )
    chosen, best, cv_time = cv_search(est, grid, data.X, data.y, None, random_state)
    accs, fits = score_draws(chosen, data, min(n_draws, MUMBO_SEEDS), random_state)
    return {
        "ran": True,
        "accuracy": float(np.mean(accs)),
        "std": float(np.std(accs)),
        "fit_time_s": float(np.mean(fits)),
        "cv_time_s": cv_time,
        "best": best,
    }


def run(quick: bool, output: Path, data_dir: str | None, random_state: int) -> dict[str, Any]:
    """Run the experiment; return the rows, MUMBO's result and the claims; write the report.

    Returns ``{"rows": [...], "mumbo": {...}, "claims": [...], "paper": PAPER}``. Each row:
    ``method``, ``level``, ``accuracy`` (mean over draws, in %), ``std``, ``paper``, ``diff``
    (ours - paper), ``best`` (CV-selected parameters, with ``bandwidth_factor``),
    ``cv_time_s``, ``fit_time_s`` (mean refit time of one draw). ``mumbo``: ``ran`` and,
    when it ran, ``accuracy``, ``std``, ``fit_time_s``, ``cv_time_s``, ``best``; else ``why``.
    """
    data = load_split(data_dir)
    variants = ["MVMLSVM", "MVMLSVMsp"] if quick else list(VARIANTS)
    n_draws = 1 if quick else 4
    progress = Progress(len(variants) * len(LEVELS) + 1, prefix="mvml-svm-uwave ")
    rows: list[dict[str, Any]] = []
    for name in variants:
        metric = VARIANTS[name]
        for level in LEVELS:
            chosen, best, cv_time = cv_search(
                _estimator(metric, level, random_state),
                _grid(metric, quick),
                data.X,
                data.y,
                data.view_gammas,
                random_state,
            )
            accs, fits = score_draws(chosen, data, n_draws, random_state)
            acc = float(np.mean(accs))
            paper = PAPER[(name, level)]
            best["bandwidth_factor"] = best.pop("bandwidth")
            rows.append(
                {
                    "method": name,
                    "level": level,
                    "accuracy": acc,
                    "std": float(np.std(accs)),
                    "paper": paper,
                    "diff": acc - paper,
                    "best": best,
                    "cv_time_s": cv_time,
                    "fit_time_s": float(np.mean(fits)),
                }
            )
            progress.step(
                f"{name} at {level:.0%}: {acc:.2f} % (paper {paper:.2f}), "
                f"bandwidth factor {best['bandwidth_factor']}, CV {cv_time:.0f} s"
            )
    mumbo = _mumbo_rows(data, quick, n_draws, random_state)
    progress.step("MUMBO: " + (f"{mumbo['accuracy']:.2f} %" if mumbo["ran"] else mumbo["why"]))
    claims = make_claims(rows, mumbo)
    write_claims(output, PAPER_NAME, claims)
    has_fig = _figure(rows, mumbo, output)
    table = markdown_table(
        [
            "method",
            "Nystrom",
            "ours (%)",
            "std",
            "paper (%)",
            "ours - paper",
            "fit (s)",
            "CV-selected (alpha, eta, bandwidth factor)",
        ],
        [
            [
                r["method"],
                f"{r['level']:.0%}",
                f"{r['accuracy']:.2f}",
                f"{r['std']:.2f}",
                f"{r['paper']:.2f}",
                f"{r['diff']:+.2f}",
                fmt(r["fit_time_s"], 3),
                f"{r['best']['alpha']:g}, {r['best']['eta']:g}, {r['best']['bandwidth_factor']}",
            ]
            for r in rows
        ]
        + [_mumbo_table_row(mumbo, lv) for lv in LEVELS],
    )
    factors = markdown_table(
        ["method", *[f"factor picked at {lv:.0%}" for lv in LEVELS]],
        [
            [
                name,
                *[
                    str(r["best"]["bandwidth_factor"])
                    for lv in LEVELS
                    for r in rows
                    if r["method"] == name and r["level"] == lv
                ],
            ]
            for name in variants
        ],
    )
    grid_text = ", ".join(f"{k} in {v}" for k, v in _grid("dense", quick).items())
    setup = (
        f"uWaveGesture, 896 train / 3582 test, 3 views (x, y, z). One-vs-all MVMLSVC, C = 1/n, "
        f"w = 1/v, {MAX_ITER} outer iterations (tol {TOL:g}), Gaussian kernels "
        f"gamma = f / (2 sigma^2) with sigma the mean pairwise training distance of the view "
        f"(f = 1 is the paper's setting). Hyperparameters by 3-fold stratified CV on the "
        f"training set only (dense metric: {grid_text}; the other metrics: their own eta "
        f"candidates, see the module docstring); the selected model refitted with {n_draws} "
        f"landmark draw(s) (seeds {random_state}..{random_state + n_draws - 1}); mean and std "
        f"over draws. MUMBO: scikit-multimodallearn's MumboClassifier, decision-tree weak "
        f"learners, depth by the same CV, {min(n_draws, MUMBO_SEEDS)} tree seed(s); no Nystrom "
        f"approximation, so the same result at both levels. "
        f"{'Quick mode: reduced grid and variants.' if quick else ''}\n\n"
        f"Command: `mvkernels reproduce mvml-svm-uwave{' --quick' if quick else ''}`"
    )
    sections = [
        ("Setup", setup),
        ("Results", table),
        ("Bandwidth factor chosen by CV (1 = the paper's)", factors),
        ("Paper claims", claims_table(claims)),
    ]
    if has_fig:
        sections.append(("Figure", "![accuracy](accuracy.png)"))
    write_report(output, "MVML-SVM on uWave (Huusari et al., JdS 2018, Table 1)", sections)
    return {"rows": rows, "mumbo": mumbo, "claims": claims, "paper": PAPER}


def _mumbo_table_row(mumbo: dict[str, Any], level: float) -> list[str]:
    paper = f"{PAPER[('MUMBO', level)]:.2f}"
    if not mumbo["ran"]:
        return ["MUMBO", f"{level:.0%} (paper)", mumbo["why"], "-", paper, "-", "-", "-"]
    b = mumbo["best"]
    return [
        "MUMBO (scikit-multimodallearn, no Nystrom)",
        f"{level:.0%}",
        f"{mumbo['accuracy']:.2f}",
        f"{mumbo['std']:.2f}",
        paper,
        f"{mumbo['accuracy'] - PAPER[('MUMBO', level)]:+.2f}",
        fmt(mumbo["fit_time_s"], 3),
        f"tree depth {b['max_depth']}, {b['n_estimators']} rounds",
    ]


def make_claims(rows: list[dict], mumbo: dict[str, Any]) -> list[Claim]:
    """The paper's uWave statements, each with our numbers and a verdict."""
    acc = {(r["method"], r["level"]): r["accuracy"] for r in rows}
    methods = list(dict.fromkeys(r["method"] for r in rows))
    claims = []
    for name in methods:
        ours = [acc[(name, lv)] for lv in LEVELS]
        paper = [PAPER[(name, lv)] for lv in LEVELS]
        claims.append(
            Claim(
                claim=f"{name} accuracy at 6 % / 24 % landmarks (Table 1)",
                paper=" / ".join(f"{p:.2f}" for p in paper),
                ours=" / ".join(f"{o:.2f} ({o - p:+.2f})" for o, p in zip(ours, paper)),
                verdict=verdict(all(o >= p - MARGIN for o, p in zip(ours, paper))),
                test=f"ours >= paper - {MARGIN} at both levels",
            )
        )
    if {"MVMLSVM_Cov", "MVMLSVM_I"} <= set(methods):
        learned = [max(acc[(m, lv)] for m in ("MVMLSVM", "MVMLSVMsp")) for lv in LEVELS]
        fixed = [max(acc[(m, lv)] for m in ("MVMLSVM_Cov", "MVMLSVM_I")) for lv in LEVELS]
        p_l = [max(PAPER[(m, lv)] for m in ("MVMLSVM", "MVMLSVMsp")) for lv in LEVELS]
        p_f = [max(PAPER[(m, lv)] for m in ("MVMLSVM_Cov", "MVMLSVM_I")) for lv in LEVELS]
        claims.append(
            Claim(
                claim="a learned metric (MVMLSVM / MVMLSVMsp) beats the fixed ones (Cov / I)",
                paper=versus(zip(p_l, p_f)),
                ours=versus(zip(learned, fixed)),
                verdict=verdict(all(a > b for a, b in zip(learned, fixed))),
                test="best learned > best fixed at 6 % and at 24 %",
            )
        )
    p_m = [PAPER[("MUMBO", lv)] for lv in LEVELS]
    if not mumbo["ran"]:
        claims.append(
            Claim.not_run(
                "MVMLSVM beats MUMBO",
                versus((PAPER[("MVMLSVM", lv)], p) for lv, p in zip(LEVELS, p_m)),
                mumbo["why"],
            )
        )
    else:
        m = mumbo["accuracy"]
        claims.append(
            Claim(
                claim="MVMLSVM beats MUMBO (Table 1)",
                paper=versus((PAPER[("MVMLSVM", lv)], p) for lv, p in zip(LEVELS, p_m)),
                ours=versus((acc[("MVMLSVM", lv)], m) for lv in LEVELS),
                verdict=verdict(all(acc[("MVMLSVM", lv)] > m for lv in LEVELS)),
                test="MVMLSVM > MUMBO at 6 % and at 24 %",
            )
        )
        claims.append(
            Claim(
                claim="MUMBO accuracy (Table 1)",
                paper=" / ".join(f"{p:.2f}" for p in p_m),
                ours=f"{m:.2f} +- {mumbo['std']:.2f} (both levels)",
                verdict=verdict(all(m >= p - MARGIN for p in p_m)),
                test=f"ours >= paper - {MARGIN}",
            )
        )
    return claims


def _figure(rows: list[dict], mumbo: dict[str, Any], output: Path) -> bool:
    """Bar chart of ours against the paper (``accuracy.png``); False without matplotlib."""
    plt = pyplot()
    if plt is None:
        return False
    rows = list(rows)
    if mumbo["ran"]:
        rows += [
            {
                "method": "MUMBO",
                "level": lv,
                "accuracy": mumbo["accuracy"],
                "std": mumbo["std"],
                "paper": PAPER[("MUMBO", lv)],
            }
            for lv in LEVELS
        ]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    labels = [f"{r['method']}\n{r['level']:.0%}" for r in rows]
    x = np.arange(len(rows))
    ax.bar(x - 0.2, [r["accuracy"] for r in rows], 0.4, yerr=[r["std"] for r in rows], label="ours")
    ax.bar(x + 0.2, [r["paper"] for r in rows], 0.4, label="paper")
    ax.set_xticks(x, labels, fontsize=7)
    ax.set_ylim(85, 100)
    ax.set_ylabel("test accuracy (%)")
    ax.legend()
    fig.tight_layout()
    save_figure(fig, output / "accuracy.png")
    return True

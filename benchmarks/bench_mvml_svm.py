"""MVML-SVM benchmark: the compiled g-step (liblinear) vs the reference solver, and vs SVC.

Two data sets, each measured side by side in one run:

* **digits, 2 views**: scikit-learn's handwritten digits (8 x 8 images), view 0 = the top
  four pixel rows, view 1 = the bottom four; 1347 train / 450 test rows by a seeded
  stratified split (``random_state=0``); 10 classes;
* **uWave, 12 %**: the uWave gesture library (896 train / 3582 test series, 3 views of
  315 accelerations, 8 classes), ``n_landmarks=0.12`` (108 landmarks per view).

Estimators (all with their defaults, ``random_state=0``):

1. ``SVC()`` on the concatenated views;
2. ``MVMLSVC()``: the exact g-step (the first by an active set grown from scratch for
   all one-vs-all targets at once, the later ones warm-started from the previous active
   set; scikit-learn's liblinear where these give up) and the low-rank dense A-step;
3. the reference (``tests/_reference_svm.py``: ``ReferenceMVMLSVC``): today's solver before
   this change, i.e. the Python dual coordinate descent warm-started across outer
   iterations with the factored dense A-step, at its former solver defaults
   (``svm_tol=1e-3``, ``svm_max_epochs=1000``), with the same model settings as 2.;
3b. the same reference at the former model defaults too (``max_iter=10`` and the
   square-loss landmark budget of 600 features), on today's shared code (bandwidth
   heuristic, landmarks, features, which got faster with this work too);
3c. ``MVMLSVC`` at those former model defaults (liblinear at the old settings);
3d. the default fit a user had before: ``MVMLSVC`` of the package at the commit where the
   issue was filed (:data:`FILING_COMMIT`, its source exported by ``git archive`` into a
   temporary folder and fitted in a subprocess on the same data; skipped with the reason
   when the history is not available), at its defaults of that day and at the settings
   of today's default fit, with the share of its predictions equal to 3b's and to 2.'s;
4. ``MVMLSVCCV()``: the default cross-validated grid, refit included (the default
   ``search="screen"``: the bandwidth factor by the ridge's leave-one-out screen, then the
   cross-validation of that factor only; fast fits, best of ``--repeats``);
4b. ``MVMLSVCCV(search="exhaustive")``: every candidate cross-validated (once);
5. ``MVMLSVC()`` and ``MVMLSVCCV()`` with the warm start of the g-step switched off (every
   g-step solved cold: liblinear, then the active set), to show what the warm start saves.

Reported: fit times (wall and process CPU; fast fits best of ``--repeats``), test
accuracy, the share of equal test predictions (new vs reference), the dual objective of
the final g-step (eq. 7 with constant 1/(4 lambda), at ``dual_coef_``; summed over the
one-vs-all problems) and the ratios. Targets: ``MVMLSVC()`` within 10x of ``SVC()``;
>= 20x faster than today's solver (the default fit of 3d, whose predictions the reference
3b reproduces), the reference giving the same predictions at the same settings;
``MVMLSVCCV()`` within 10x of one ``MVMLSVC()`` fit and >= 0.94 test accuracy on uWave at
12 %. The header names the BLAS library and kernel that ran (threadpoolctl).

Where the time goes: the CPU time of one default fit by phase (bandwidth heuristic,
landmarks, features, g-step, A-step, the multipliers ``dual_coef_``, other), new vs the
reference at the same settings, measured by wrapping the functions of each phase (the
outermost phase counts when they nest); and the g-step alone, new vs reference: every
one-vs-all problem of the first g-step (metric ``A = I``) on the same features, at the
same ``svm_tol``, with the objective each reaches. What bounds the ratio to the former
default fit: the CPU time a fit may take for 20x, against the phases that do not depend on
the g-step solver (bandwidth heuristic, landmarks, features, other) plus the first g-step
(nothing to warm-start from).

Run:  MVKERNELS_DATA=../shared/data .venv/bin/python benchmarks/bench_mvml_svm.py
      [--repeats 3] [--output docs/results/benchmarks/mvml_svm.md]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from _common import RESULTS, ROOT, add_out, cores, generated_by, load_average, parser, write_report
from _trees import export
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

from mvkernels import MVMLSVC, MVMLSVCCV
from mvkernels._threads import serial_blas
from mvkernels.datasets import load_uwave
from mvkernels.mvml import _base, _metric, auto_n_landmarks
from mvkernels.mvml._hinge import (
    active_set_svm,
    linear_svm_polished,
    svm_c_prime,
)
from mvkernels.mvml._hinge_loss import HingeLoss
from mvkernels.mvml._lowrank import LowRankMetrics
from mvkernels.nystrom import BlockNystrom

sys.path.insert(0, str(ROOT / "tests"))
from _reference_svm import (  # noqa: E402
    ReferenceHingeLoss,
    ReferenceMVMLSVC,
    final_dual_objectives,
    hinge_primal,
    reference_hinge_gstep,
)

#: the commit at which the issue asking for the compiled g-step was filed: the package as a
#: user had it then (the Python dual coordinate descent in ``mvml/_hinge.py``, the dense
#: A-step, and the bandwidth, landmark and feature code of that day), fitted from its own
#: source (``git archive``) in a subprocess, side by side with the rest of the run
FILING_COMMIT = "bda992b8232f5a6cfeaa72329cb38ef6222277a5"

#: run in the subprocess: fit ``MVMLSVC`` of the exported package on the saved data
#: (best wall / CPU time of ``repeats`` fits) and save its test predictions
_FILING_CHILD = """
import json, sys, time
import numpy as np
from mvkernels import MVMLSVC  # the exported package: PYTHONPATH names only its src
data, kw, repeats, out = sys.argv[1:5]
d = np.load(data)
n_views = int(d["n_views"])
Xtr = [d[f"train{l}"] for l in range(n_views)]
Xte = [d[f"test{l}"] for l in range(n_views)]
wall = cpu = float("inf")
for _ in range(int(repeats)):
    est = MVMLSVC(random_state=0, **json.loads(kw))
    t, c = time.perf_counter(), time.process_time()
    est.fit(Xtr, d["y"])
    wall, cpu = min(wall, time.perf_counter() - t), min(cpu, time.process_time() - c)
np.save(out, est.predict(Xte))
print(json.dumps({"wall": wall, "cpu": cpu}))
"""

#: the reference's tolerance at which its g-step reaches the new solver's objective to
#: about 1e-6 relative (the new one returns the exact minimiser)
REFERENCE_TIGHT_TOL = 1e-6

#: phases of a fit, each timed by wrapping these functions (outermost phase counts)
PHASES = {
    "bandwidth heuristic": [(_base, "resolve_bandwidths")],
    "landmarks (selection, p x p eigh)": [(BlockNystrom, "_fit_views")],
    "features (and missing-view moments)": [(HingeLoss, "nystrom_problem")],
    "g-step": [
        (HingeLoss, "svm_g"),
        (HingeLoss, "first_g_steps"),
        (HingeLoss, "warm_g_steps"),
        (ReferenceHingeLoss, "g_step"),
    ],
    "A-step": [
        (LowRankMetrics, "a_step"),
        (LowRankMetrics, "solve"),
        (_metric, "metric_step"),
    ],
    "multipliers (dual_coef_)": [(HingeLoss, "final_dual")],
}


@contextmanager
def phase_timer() -> Iterator[dict[str, float]]:
    """CPU seconds spent in each of :data:`PHASES` while the context is open."""
    acc = dict.fromkeys(PHASES, 0.0)
    depth = [0]

    def timed(phase: str, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if depth[0]:  # nested in a timed phase: counted there
                return fn(*args, **kwargs)
            depth[0] += 1
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                acc[phase] += time.process_time() - start
                depth[0] -= 1

        return wrapper

    saved = [
        (obj, name, obj.__dict__[name]) for targets in PHASES.values() for obj, name in targets
    ]
    try:
        for phase, targets in PHASES.items():
            for obj, name in targets:
                setattr(obj, name, timed(phase, obj.__dict__[name]))
        yield acc
    finally:
        for obj, name, fn in saved:
            setattr(obj, name, fn)


def phase_breakdown(make: Any, X: Any, y: np.ndarray, repeats: int) -> dict[str, float]:
    """CPU seconds per phase (and ``"other"``, ``"total"``) of the fastest of ``repeats``
    fits."""
    best: dict[str, float] = {"total": np.inf}
    for _ in range(repeats):
        est = make()
        with phase_timer() as acc:
            start = time.process_time()
            est.fit(X, y)
            total = time.process_time() - start
        if total < best["total"]:
            best = {**acc, "other": total - sum(acc.values()), "total": total}
    return best


def first_gstep(est: Any, X: Any, y: np.ndarray, repeats: int) -> list[tuple[float, float]]:
    """The first g-step (``A = I``) of a fitted default ``MVMLSVC`` alone: every one-vs-all
    problem on the same features. Returns ``(CPU seconds, largest relative difference of
    the primal objective from the new solver's)`` for the new solver as the fit runs it
    (the active set from scratch for every target at once, liblinear + active set for a
    target where it gives up; best of ``repeats``), then the reference (Python dual CD) at
    ``svm_tol`` and at :data:`REFERENCE_TIGHT_TOL` (once each)."""
    U = est.nystrom_.transform(X) / est.n_views_  # z_i = D_w u(x_i), w = 1/v
    Y = MVMLSVC._encode_targets(np.searchsorted(est.classes_, y), len(est.classes_))
    C, lam = 1.0 / len(y), est.alpha
    Cp = svm_c_prime(C, lam)
    eye = np.eye(U.shape[1])

    def new(tol: float) -> list[np.ndarray]:
        rng = np.random.RandomState(0)
        exact = active_set_svm(U, Y, Cp)
        return [
            ex[0]
            if ex is not None
            else linear_svm_polished(U, Y[:, t], Cp, None, tol=tol, random_state=rng)[0].coef
            for t, ex in enumerate(exact)
        ]

    def ref(tol: float) -> list[np.ndarray]:
        rng = np.random.RandomState(0)
        return [
            reference_hinge_gstep(
                U,
                Y[:, t],
                None,
                lam,
                C,
                factors=[eye],
                tol=tol,
                max_epochs=100000,
                random_state=rng,
            ).coef[0]
            for t in range(Y.shape[1])
        ]

    def primal(t: int, g: np.ndarray) -> float:
        return hinge_primal(Y[:, t] * (U @ g), lam * float(g @ g), C)

    out: list[tuple[float, float]] = []
    g_new: list[np.ndarray] = []
    with serial_blas(U.shape[1]):  # as in fit
        for fn, tol, runs in [
            (new, est.svm_tol, repeats),
            (ref, est.svm_tol, 1),
            (ref, REFERENCE_TIGHT_TOL, 1),
        ]:
            best = np.inf
            for _ in range(runs):
                start = time.process_time()
                G = fn(tol)
                best = min(best, time.process_time() - start)
            g_new = g_new or G
            rel = max(
                abs(primal(t, a) - primal(t, b)) / primal(t, b)
                for t, (a, b) in enumerate(zip(G, g_new))
            )
            out.append((best, rel))
    return out


def filing_commit_fits(
    Xtr: list, ytr: np.ndarray, Xte: list, settings: list[dict], repeats: int = 1
) -> tuple[list[dict], str | None]:
    """``MVMLSVC`` of the package at :data:`FILING_COMMIT`, fitted in a subprocess at each of
    ``settings``: per setting ``{"wall", "cpu", "pred"}`` (best fit times, test
    predictions). The source comes from this repository's history (``git archive``, into a
    temporary folder that is removed afterwards); returns ``([], reason)`` when git or the
    commit is not available (e.g. a shallow clone)."""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            src = export(FILING_COMMIT, Path(tmp))
        except (OSError, subprocess.CalledProcessError) as err:
            return [], f"the package at {FILING_COMMIT[:7]} is not available ({err})"
        data = Path(tmp) / "data.npz"
        arrays = {f"train{l}": V for l, V in enumerate(Xtr)}
        arrays.update({f"test{l}": V for l, V in enumerate(Xte)})
        np.savez(data, y=ytr, n_views=len(Xtr), **arrays)
        env = {**os.environ, "PYTHONPATH": str(src)}
        out: list[dict] = []
        for kw in settings:
            pred = Path(tmp) / "pred.npy"
            done = subprocess.run(
                [sys.executable, "-c", _FILING_CHILD, str(data), json.dumps(kw)]
                + [str(repeats), str(pred)],
                capture_output=True,
                text=True,
                env=env,
                cwd=tmp,
            )
            if done.returncode != 0:
                return [], f"the package at {FILING_COMMIT[:7]} failed: {done.stderr[-500:]}"
            times = json.loads(done.stdout.strip().splitlines()[-1])
            out.append({**times, "pred": np.load(pred)})
        return out, None


@contextmanager
def cold_g_steps() -> Iterator[None]:
    """Every g-step solved cold (the warm start from the previous active set off)."""
    saved = HingeLoss.warm_start
    HingeLoss.warm_start = False
    try:
        yield
    finally:
        HingeLoss.warm_start = saved


def warm_started(est: Any) -> tuple[int, int]:
    """``(g-steps warm-started, g-steps after the first)`` of a fitted ``MVMLSVC``, summed
    over the one-vs-all problems."""
    warm = sum(s.warm_starts for s in est._fit_states)
    return warm, int(np.sum(est.n_iter_))


def digits_two_views() -> tuple[list, np.ndarray, list, np.ndarray]:
    X, y = load_digits(return_X_y=True)
    tr, te = train_test_split(np.arange(len(y)), train_size=1347, random_state=0, stratify=y)
    views = [X[:, :32], X[:, 32:]]  # top and bottom halves of the 8 x 8 images
    return [V[tr] for V in views], y[tr], [V[te] for V in views], y[te]


def uwave() -> tuple[list, np.ndarray, list, np.ndarray]:
    d = load_uwave()
    return d["Xs_train"], d["y_train"], d["Xs_test"], d["y_test"]


def _fit(make: Any, X: Any, y: np.ndarray, repeats: int) -> tuple[Any, float, float, int]:
    """Last fitted estimator, best wall and CPU time (s), ConvergenceWarnings of one fit."""
    wall, cpu, est, n_warn = np.inf, np.inf, None, 0
    for _ in range(repeats):
        est = make()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            t, c = time.perf_counter(), time.process_time()
            est.fit(X, y)
            wall = min(wall, time.perf_counter() - t)
            cpu = min(cpu, time.process_time() - c)
        n_warn = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    return est, wall, cpu, n_warn


def _verdict(ratio_wall: float, ratio_cpu: float, ok: Any) -> str:
    """Verdict on the wall-clock and on the CPU-time ratio (the steadier one under load)."""
    return (
        f"wall {ratio_wall:.1f}x {'met' if ok(ratio_wall) else 'NOT met'}, "
        f"CPU {ratio_cpu:.1f}x {'met' if ok(ratio_cpu) else 'NOT met'}"
    )


def run_dataset(name: str, data: tuple, kw: dict, repeats: int, out: list[str]) -> None:
    Xtr, ytr, Xte, yte = data
    Xcat, Xte_cat = np.hstack(Xtr), np.hstack(Xte)
    svc, t_svc, c_svc, _ = _fit(SVC, Xcat, ytr, repeats)
    new, t_new, c_new, w_new = _fit(lambda: MVMLSVC(random_state=0, **kw), Xtr, ytr, repeats)
    old, t_old, c_old, w_old = _fit(
        lambda: ReferenceMVMLSVC(random_state=0, svm_max_epochs=1000, **kw), Xtr, ytr, 1
    )
    # today's default fit as a user had it before the speed defaults: the reference solver
    # with max_iter=10 and the square-loss landmark budget (600 features)
    former = {"max_iter": 10, "n_landmarks": auto_n_landmarks(len(ytr), len(Xtr)), **kw}
    old10, t_old10, c_old10, w_old10 = _fit(
        lambda: ReferenceMVMLSVC(random_state=0, svm_max_epochs=1000, **former), Xtr, ytr, 1
    )
    new10, t_new10, c_new10, w_new10 = _fit(lambda: MVMLSVC(random_state=0, **former), Xtr, ytr, 1)
    # the package as it was when the issue was filed: at its defaults of that day, and at
    # the settings of today's default fit
    same = {"max_iter": MVMLSVC().max_iter, "n_landmarks": kw.get("n_landmarks", new.n_landmarks_)}
    # best of 2 in its own process: the first fit there also pays the imports' warm-up
    filing, filing_note = filing_commit_fits(Xtr, ytr, Xte, [former, same], repeats=2)
    cv, t_cv, c_cv, w_cv = _fit(lambda: MVMLSVCCV(random_state=0, **kw), Xtr, ytr, repeats)
    cvx, t_cvx, c_cvx, w_cvx = _fit(
        lambda: MVMLSVCCV(random_state=0, search="exhaustive", **kw), Xtr, ytr, 1
    )
    with cold_g_steps():
        cold, t_cold, c_cold, w_cold = _fit(
            lambda: MVMLSVC(random_state=0, **kw), Xtr, ytr, repeats
        )
        cvc, t_cvc, c_cvc, w_cvc = _fit(lambda: MVMLSVCCV(random_state=0, **kw), Xtr, ytr, 1)
    n_warm, n_later = warm_started(new)
    coef_diff = float(np.max(np.abs(new.coef_ - cold.coef_)))
    p_new, p_old = new.predict(Xte), old.predict(Xte)
    agree = float(np.mean(p_new == p_old))
    d_new = float(final_dual_objectives(new, Xtr, ytr).sum())
    d_old = float(final_dual_objectives(old, Xtr, ytr).sum())
    rel = abs(d_new - d_old) / abs(d_old)
    acc = {
        k: float(np.mean(e.predict(X) == yte))
        for k, e, X in [
            ("svc", svc, Xte_cat),
            ("new", new, Xte),
            ("old", old, Xte),
            ("old10", old10, Xte),
            ("new10", new10, Xte),
            ("cv", cv, Xte),
            ("cvx", cvx, Xte),
            ("cold", cold, Xte),
            ("cvc", cvc, Xte),
        ]
    }
    if filing:
        acc["filing"] = float(np.mean(filing[0]["pred"] == yte))
        acc["filing_same"] = float(np.mean(filing[1]["pred"] == yte))
        agree_filing = float(np.mean(filing[0]["pred"] == old10.predict(Xte)))
        agree_same = float(np.mean(filing[1]["pred"] == p_new))
    n_cand = len(cv.cv_results_["params"])
    n_scored = int(np.isfinite(cv.cv_results_["mean_test_score"]).sum())
    ph_new = phase_breakdown(lambda: MVMLSVC(random_state=0, **kw), Xtr, ytr, repeats)
    ph_old = phase_breakdown(
        lambda: ReferenceMVMLSVC(random_state=0, svm_max_epochs=1000, **kw), Xtr, ytr, 1
    )
    (g1_new, _), (g1_old, g1_rel), (g1_tight, g1_tight_rel) = first_gstep(new, Xtr, ytr, repeats)
    lines = [
        f"\n## {name}: {len(ytr)} train / {len(yte)} test rows, {len(Xtr)} views "
        f"({', '.join(str(X.shape[1]) for X in Xtr)} features), {len(np.unique(ytr))} classes; "
        f"MVML-SVM landmarks per view: {new.n_landmarks_}\n",
        "| estimator | fit wall (s) | fit CPU (s) | wall / CPU ratio | test accuracy | "
        "ConvergenceWarnings |",
        "|---|---|---|---|---|---|",
        f"| SVC() | {t_svc:.3f} | {c_svc:.3f} | 1.0x / 1.0x (of SVC) | {acc['svc']:.4f} | 0 |",
        f"| MVMLSVC() (active set / liblinear, low-rank A-step) | {t_new:.3f} | {c_new:.3f} | "
        f"{t_new / t_svc:.1f}x / {c_new / c_svc:.1f}x (of SVC) | {acc['new']:.4f} | {w_new} |",
        f"| reference (Python dual CD, dense A-step) | {t_old:.3f} | {c_old:.3f} | "
        f"{t_old / t_new:.1f}x / {c_old / c_new:.1f}x (of MVMLSVC) | {acc['old']:.4f} | "
        f"{w_old} |",
        f"| MVMLSVC() at the former defaults (max_iter=10, {former['n_landmarks']} "
        f"landmarks) | {t_new10:.3f} | {c_new10:.3f} | {t_new10 / t_svc:.1f}x / "
        f"{c_new10 / c_svc:.1f}x (of SVC) | {acc['new10']:.4f} | {w_new10} |",
        f"| reference at the former defaults (max_iter=10, {former['n_landmarks']} "
        f"landmarks) | {t_old10:.3f} | {c_old10:.3f} | {t_old10 / t_new:.1f}x / "
        f"{c_old10 / c_new:.1f}x (of MVMLSVC) | {acc['old10']:.4f} | {w_old10} |",
        *(
            [
                f"| MVMLSVC() as at the filing commit ({FILING_COMMIT[:7]}: Python dual CD), "
                f"its defaults then (max_iter=10, {former['n_landmarks']} landmarks) | "
                f"{filing[0]['wall']:.3f} | {filing[0]['cpu']:.3f} | "
                f"{filing[0]['wall'] / t_new:.1f}x / {filing[0]['cpu'] / c_new:.1f}x (of MVMLSVC) "
                f"| {acc['filing']:.4f} | - |",
                f"| the same, at the default fit's settings (max_iter={same['max_iter']}, "
                f"{same['n_landmarks']} landmarks) | {filing[1]['wall']:.3f} | "
                f"{filing[1]['cpu']:.3f} | {filing[1]['wall'] / t_new:.1f}x / "
                f"{filing[1]['cpu'] / c_new:.1f}x (of MVMLSVC) | {acc['filing_same']:.4f} | - |",
            ]
            if filing
            else []
        ),
        f"| MVMLSVCCV() ({n_cand} candidates, {n_scored} cross-validated after the screen, "
        f"{cv.n_splits_} folds, refit) | {t_cv:.3f} | "
        f"{c_cv:.3f} | {t_cv / t_new:.1f}x / {c_cv / c_new:.1f}x (of MVMLSVC) | "
        f"{acc['cv']:.4f} | {w_cv} |",
        f'| MVMLSVCCV(search="exhaustive") ({n_cand} candidates, {cvx.n_splits_} folds, '
        f"refit) | {t_cvx:.3f} | {c_cvx:.3f} | {t_cvx / t_new:.1f}x / {c_cvx / c_new:.1f}x "
        f"(of MVMLSVC) | {acc['cvx']:.4f} | {w_cvx} |",
        f"| MVMLSVC() without the warm start (every g-step cold) | {t_cold:.3f} | "
        f"{c_cold:.3f} | {t_cold / t_new:.1f}x / {c_cold / c_new:.1f}x (of MVMLSVC) | "
        f"{acc['cold']:.4f} | {w_cold} |",
        f"| MVMLSVCCV() without the warm start | {t_cvc:.3f} | {c_cvc:.3f} | "
        f"{t_cvc / t_cv:.1f}x / {c_cvc / c_cv:.1f}x (of MVMLSVCCV) | {acc['cvc']:.4f} | "
        f"{w_cvc} |",
        "",
        f"- warm start: {n_warm} of the {n_later} g-steps after the first (over the "
        f"one-vs-all problems) solved from the previous g-step's active set without "
        f"liblinear; the default fit with every g-step cold takes {c_cold / c_new:.2f}x "
        f"the CPU time, the default CV {c_cvc / c_cv:.2f}x; largest coefficient difference "
        f"warm vs cold {coef_diff:.1e}",
        f"- new vs reference: same test predictions for {100 * agree:.2f} % of rows; dual "
        f"objective of the final g-step (sum over the one-vs-all problems) {d_new:.6g} vs "
        f"{d_old:.6g} (relative difference {rel:.1e}; both solvers stop at svm_tol=1e-3, the "
        "tests check 1e-6 at a tight tolerance)",
        f"- MVMLSVCCV best parameters: {cv.best_params_}; exhaustive search: "
        f"{cvx.best_params_} ("
        + ("the same" if cv.best_params_ == cvx.best_params_ else "NOT the same")
        + ")",
        "- target MVMLSVC() within 10x of SVC(): "
        + _verdict(t_new / t_svc, c_new / c_svc, lambda r: r <= 10),
        *(
            [
                "- target >= 20x faster than today's solver, i.e. the default fit of the "
                f"package when the issue was filed (commit {FILING_COMMIT[:7]}, fitted from "
                "its own source in a subprocess of this run), vs the default MVMLSVC(): "
                + _verdict(filing[0]["wall"] / t_new, filing[0]["cpu"] / c_new, lambda r: r >= 20)
                + f"; its test predictions equal the in-tree reference's at the same "
                f"settings for {100 * agree_filing:.2f} % of rows; at the settings of "
                f"today's default fit it takes {filing[1]['cpu'] / c_new:.1f}x the CPU time "
                f"of MVMLSVC() with the same predictions for {100 * agree_same:.2f} % of rows"
            ]
            if filing
            else [f"- the package at the filing commit was not run: {filing_note}"]
        ),
        "- the in-tree reference at the former defaults (the same Python descent and dense "
        "A-step, on today's shared bandwidth, landmark and feature code, which got faster "
        "too) vs the default MVMLSVC(): "
        + _verdict(t_old10 / t_new, c_old10 / c_new, lambda r: r >= 20)
        + f"; at the same settings: {t_old / t_new:.1f}x wall, {c_old / c_new:.1f}x CPU, "
        f"same predictions: {'met' if agree == 1.0 else 'NOT met'}",
        "- target MVMLSVCCV() within 10x of MVMLSVC(): "
        + _verdict(t_cv / t_new, c_cv / c_new, lambda r: r <= 10),
    ]
    g_ratio = ph_old["g-step"] / ph_new["g-step"]
    budget = c_old10 / 20
    fixed = sum(ph_new[k] for k in list(PHASES)[:3]) + ph_new["other"]
    lines += [
        "",
        "Where the time goes: CPU seconds of one default fit by phase (new: best of "
        f"{repeats}; the reference at the same settings: once)",
        "",
        "| phase | MVMLSVC() | reference, same settings | reference / new |",
        "|---|---|---|---|",
    ]
    for phase in [*PHASES, "other", "total"]:
        a, b = ph_new[phase], ph_old[phase]
        ratio = f"{b / a:.1f}x" if a > 1e-4 else "-"
        lines.append(f"| {phase} | {a:.4f} | {b:.4f} | {ratio} |")
    lines += [
        "",
        f"- g-step alone, new vs reference at the same settings: {g_ratio:.1f}x over the "
        f"fit's g-steps ({ph_new['g-step']:.4f} vs {ph_old['g-step']:.4f} s CPU; the "
        "reference stops at svm_tol; a measurement, the issue's ratio is the fit's)",
        f"- the first g-step alone (A = I, {len(np.unique(ytr))} one-vs-all problems on the "
        f"same features): new {g1_new:.4f} s CPU (exact minimiser); reference at svm_tol="
        f"{new.svm_tol:g} {g1_old:.4f} s ({g1_old / g1_new:.1f}x; primal objective "
        f"{g1_rel:.1e} above), at svm_tol={REFERENCE_TIGHT_TOL:g} {g1_tight:.4f} s "
        f"({g1_tight / g1_new:.1f}x; {g1_tight_rel:.1e} above)",
        f"- what bounds the ratio to the in-tree reference's former default fit: 20x needs "
        f"a fit of at most "
        f"{budget:.4f} s CPU; the phases that do not depend on the g-step solver (bandwidth "
        f"heuristic, landmarks, features, other) take {fixed:.4f} s and the first g-step "
        f"alone (from scratch: nothing to warm-start from) {g1_new:.4f} s, together "
        f"{fixed + g1_new:.4f} s, i.e. at most {c_old10 / (fixed + g1_new):.1f}x with the "
        f"later g-steps and A-steps free (and at most {c_old10 / fixed:.1f}x with every "
        "g-step free)",
    ]
    if name.startswith("uWave"):
        verdict = "met" if acc["cv"] >= 0.94 else "NOT met"
        lines.append(f"- target MVMLSVCCV() test accuracy >= 0.94: {verdict}")
    for line in lines:
        print(line, flush=True)
    out.extend(lines)


def _blas() -> str:
    """The BLAS libraries loaded, with their kernel (architecture) and thread count."""
    from threadpoolctl import threadpool_info

    seen = {
        f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}, "
        f"{i.get('num_threads')} thread(s)"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    }
    return "; ".join(sorted(seen)) or "unknown"


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__)
    ap.add_argument("--repeats", type=int, default=3, help="runs per fast fit (best is kept)")
    add_out(ap, RESULTS / "mvml_svm.md", flag="--output")
    args = ap.parse_args(argv)
    out = [
        "# MVML-SVM benchmark",
        "",
        generated_by("python benchmarks/bench_mvml_svm.py") + f" ({cores()} cores; load average "
        f"{load_average():.1f} before the run; BLAS: {_blas()}). Wall and process CPU "
        "times of `fit`; "
        f"fast fits (and the default CV) best of {args.repeats}; the package at the filing "
        "commit best of 2 (in its own process); the reference and the exhaustive CV once.",
    ]
    for line in out:
        print(line)
    run_dataset("digits, 2 views", digits_two_views(), {}, args.repeats, out)
    run_dataset("uWave, 12 % landmarks", uwave(), {"n_landmarks": 0.12}, args.repeats, out)
    tail = (
        f"\nload average after the run: {load_average():.1f} on {cores()} CPUs "
        "(wall times on a shared machine)"
    )
    print(tail)
    out.append(tail)
    if args.output:
        write_report(args.output, "\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

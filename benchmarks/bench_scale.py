"""Large multi-view data with irrelevant features: MVML against gradient boosting and the
Nystroem + ridge pipeline a scikit-learn user would try, as the number of rows grows.

The problem of issue 31, of the kind sensor and omics data produce: three views (a, b, c)
of 20 standard normal features each, four classes from

    digitize(sin(1.5 a0) + b1 c2 + 0.5 tanh(a3 + b4) + 0.3 e, [-0.8, 0, 0.8])

so 5 of the 60 columns are relevant. The variant ``dense`` makes every column relevant
(``a0``, ``b1``, ``c2``, ``a3``, ``b4`` replaced by normalised sums of all the columns of
their view), where isotropic kernels should beat trees. Test set: 20,000 rows of the same
distribution. Side by side in one run, each fit in its own process (its peak resident
memory is reported; it includes the data): ``HistGradientBoostingClassifier()``,
``make_pipeline(Nystroem(n_components=2000), RidgeClassifier())``, ``MVMLClassifier()``,
``MVMLClassifier(joint_view=True)`` and ``MVMLClassifierCV()`` (the CV estimator at the
smaller sizes only, ``--cv-max``), the same three MVML estimators with the learned
per-column relevance ``feature_relevance="ard"`` (:mod:`mvkernels.mvml._relevance`), and
``MVMLClassifierCV(feature_relevance="auto")``, which searches "none" and "ard" on the same
folds (the notes say which it chose). A
figure of the relevance learned on each variant's training rows (one panel per view) is
written beside the table (unless ``--no-figure``). With ``--capacity``, the landmarks that
grow with ``n`` (``n_landmarks="grow"``: ``sqrt(n)`` per view above 40,000 rows) with the
direct structured solver and the conjugate-gradient one (``solver="cg"``), for the learned
dense metric and the identity metric (the Falkon setting: ridge on the features); the CG
fits report their CG iterations and products with the data (``cg``, ``passes``).

Run:  .venv/bin/python benchmarks/bench_scale.py                # 20,000 rows (about 2 min)
      .venv/bin/python benchmarks/bench_scale.py --n 20000 200000 1000000
      .venv/bin/python benchmarks/bench_scale.py --n 20000 200000 --capacity --variants \
          sparse --only Hist "joint_view=True" --out docs/results/benchmarks/scale_capacity.md
      OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_scale.py \
          --n 200000 --variants sparse --cv-max 200000 --only Hist "MVMLClassifierCV()" \
          "'auto'" --no-figure --out /tmp/scale_200k.md   # a section of scale_cv.md
Writes docs/results/benchmarks/scale.md (``--out`` to change) and scale_relevance.png;
``--only TEXT...`` keeps the estimators whose name contains one of the TEXTs; ``--extra
SPEC...`` adds MVML configurations written as calls (``mvkernels.demo.estimator_from_spec``).
"""

from __future__ import annotations

import multiprocessing as mp
import resource
import time
import warnings
from pathlib import Path

import numpy as np
from _common import (
    RESULTS,
    add_extra,
    add_out,
    beside,
    command_line,
    cores,
    generated_by,
    load_average,
    markdown_table,
    parser,
    write_report,
)

OUT = RESULTS / "scale.md"
N_TEST = 20_000
THRESHOLDS = (-0.8, 0.0, 0.8)


def make_problem(n: int, variant: str, seed: int) -> tuple[list[np.ndarray], np.ndarray]:
    """The three views and the labels (see the module docstring)."""
    rng = np.random.default_rng(seed)
    a, b, c = (rng.standard_normal((n, 20)) for _ in range(3))
    if variant == "sparse":
        a0, b1, c2, a3, b4 = a[:, 0], b[:, 1], c[:, 2], a[:, 3], b[:, 4]
    else:  # every column relevant: normalised sums over each view's columns
        a0, a3 = a[:, :10].sum(1) / np.sqrt(10), a[:, 10:].sum(1) / np.sqrt(10)
        b1, b4 = b[:, :10].sum(1) / np.sqrt(10), b[:, 10:].sum(1) / np.sqrt(10)
        c2 = c.sum(1) / np.sqrt(20)
    f = np.sin(1.5 * a0) + b1 * c2 + 0.5 * np.tanh(a3 + b4) + 0.3 * rng.standard_normal(n)
    return [a, b, c], np.digitize(f, THRESHOLDS)


def _estimator(name: str):
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import RidgeClassifier
    from sklearn.pipeline import make_pipeline

    from mvkernels import MVMLClassifier, MVMLClassifierCV
    from mvkernels.demo import estimator_from_spec

    make = {
        "HistGradientBoostingClassifier()": lambda: HistGradientBoostingClassifier(random_state=0),
        "Nystroem(2000) + RidgeClassifier()": lambda: make_pipeline(
            Nystroem(n_components=2000, random_state=0), RidgeClassifier()
        ),
        "MVMLClassifier()": lambda: MVMLClassifier(views=[20, 20, 20], random_state=0),
        "MVMLClassifier(joint_view=True)": lambda: MVMLClassifier(
            views=[20, 20, 20], joint_view=True, random_state=0
        ),
        "MVMLClassifierCV()": lambda: MVMLClassifierCV(views=[20, 20, 20], random_state=0),
        "MVMLClassifier(feature_relevance='ard')": lambda: MVMLClassifier(
            views=[20, 20, 20], feature_relevance="ard", random_state=0
        ),
        "MVMLClassifier(joint_view=True, feature_relevance='ard')": lambda: MVMLClassifier(
            views=[20, 20, 20], joint_view=True, feature_relevance="ard", random_state=0
        ),
        "MVMLClassifierCV(feature_relevance='ard')": lambda: MVMLClassifierCV(
            views=[20, 20, 20], feature_relevance="ard", random_state=0
        ),
        "MVMLClassifierCV(feature_relevance='auto')": lambda: MVMLClassifierCV(
            views=[20, 20, 20], feature_relevance="auto", random_state=0
        ),
    }.get(name) or (lambda: estimator_from_spec(name, views=[20, 20, 20], random_state=0))
    return make()


CAPACITY = [
    f"MVMLClassifier(joint_view=True, n_landmarks='grow'{m}{s})"
    for m in ("", ", metric='identity'")
    for s in ("", ", solver='cg'")
]


def _count_cg() -> dict:
    """Counts of the CG iterations and products of a fit (solver='cg')."""
    from mvkernels.mvml import _iterative

    counts = {"cg": 0, "passes": 0}
    solve = _iterative.CGStep.solve

    def counted(self, *args, **kwargs):
        before = self.operator.n_products
        out = solve(self, *args, **kwargs)
        counts["cg"] += self.n_iter[-1]
        counts["passes"] += self.operator.n_products - before
        return out

    _iterative.CGStep.solve = counted
    return counts


def _fit_one(name: str, n: int, variant: str, queue: mp.Queue) -> None:
    warnings.simplefilter("ignore")
    Xs, y = make_problem(n, variant, seed=1)
    Xt, yt = make_problem(N_TEST, variant, seed=2)
    X, T = np.hstack(Xs), np.hstack(Xt)
    est = _estimator(name)
    counts = _count_cg()
    t, cpu = time.perf_counter(), time.process_time()
    est.fit(X, y)
    fit_s, cpu_s = time.perf_counter() - t, time.process_time() - cpu
    acc = float(np.mean(est.predict(T) == yt))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    refit = getattr(est, "best_estimator_", est)  # a CV: its refitted model's landmarks
    extra = getattr(refit, "n_landmarks_", None)
    info = f"cpu={cpu_s:.1f} s" + ("" if extra is None else f", p={extra}")
    searched = getattr(est, "n_search_rows_", n)
    if searched < n:
        info += f", searched {searched:,} rows"
    chosen = getattr(est, "best_params_", {}).get("feature_relevance")
    if chosen is not None:
        info += f", chose {chosen}"
    if counts["passes"]:
        info += f", cg={counts['cg']}, passes={counts['passes']}"
    queue.put((acc, fit_s, peak_mb, info))


def run(name: str, n: int, variant: str) -> tuple[float, float, float, str]:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_fit_one, args=(name, n, variant, queue))
    proc.start()
    out = queue.get()
    proc.join()
    return out


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--n", type=int, nargs="+", default=[20_000], help="training rows")
    ap.add_argument("--cv-max", type=int, default=20_000, help="largest n for the CV")
    add_out(ap, OUT, what="the report (Markdown; rewritten after every fit; the figure beside it)")
    ap.add_argument("--capacity", action="store_true", help="add n_landmarks='grow' fits")
    ap.add_argument("--no-figure", action="store_true", help="no figure of the learned relevance")
    ap.add_argument(
        "--only", nargs="+", default=[""], help="estimators whose name contains one of these"
    )
    ap.add_argument("--variants", nargs="+", default=["sparse", "dense"])
    add_extra(ap, "MVMLClassifier(n_landmarks=800)")
    args = ap.parse_args()
    names = [
        "HistGradientBoostingClassifier()",
        "Nystroem(2000) + RidgeClassifier()",
        "MVMLClassifier()",
        "MVMLClassifier(joint_view=True)",
        "MVMLClassifierCV()",
        "MVMLClassifier(feature_relevance='ard')",
        "MVMLClassifier(joint_view=True, feature_relevance='ard')",
        "MVMLClassifierCV(feature_relevance='ard')",
        "MVMLClassifierCV(feature_relevance='auto')",
    ] + (CAPACITY if args.capacity else [])
    names = [name for name in names if any(part in name for part in args.only)] + args.extra
    rows = []
    for variant in args.variants:
        for n in args.n:
            for name in names:
                if name.startswith("MVMLClassifierCV(") and n > args.cv_max:
                    continue
                acc, fit_s, peak, info = run(name, n, variant)
                rows.append((variant, n, name, acc, fit_s, peak, info))
                print(
                    f"{variant:6s} {n:>8d} {name:36s} {acc:.3f} {fit_s:8.1f} s {peak:7.0f} MB "
                    f"{info}",
                    flush=True,
                )
                _write(args.out, rows, None)  # after every fit: a stopped run keeps its rows
    figure = None
    if not args.no_figure:
        figure = (beside(args.out, args.out.stem + "_relevance.png"), max(args.n))
        relevance_figure(figure[1], figure[0])
        print(f"wrote {figure[0]}")
    _write(args.out, rows, figure)
    print(f"wrote {args.out}")


def _write(out: Path, rows: list, figure: tuple[Path, int] | None) -> None:
    head = ["variant", "rows", "estimator", "test accuracy", "fit (s)", "peak memory (MB)", "notes"]
    body = [
        [variant, f"{n:,}", f"`{name}`", f"{acc:.3f}", f"{fit_s:.1f}", f"{peak:.0f}", info]
        for variant, n, name, acc, fit_s, peak, info in rows
    ]
    lines = [
        "# Large multi-view data with irrelevant features",
        "",
        generated_by(command_line("bench_scale.py"))
        + f" ({cores()} cores, load {load_average():.1f} at the last fit). "
        f"`sparse`: 5 of the 60 columns relevant; `dense`: every column relevant. Test set: "
        f"{N_TEST:,} rows. Fit time in wall seconds; peak resident memory of the fitting "
        "process (data included). Notes: `cpu` the fit's processor time (the wall "
        "time on a loaded machine is mostly waiting), `p` landmarks per view (a CV: of "
        "its refitted model); with "
        "`solver='cg'`, the CG iterations (`cg`, all g-steps) and the products with the "
        "data (`passes`); `chose`: the relevance `feature_relevance='auto'` chose; "
        "`searched`: the rows of a CV's search (`max_search_rows`).",
        "",
        markdown_table(head, body, aligned=False),
    ]
    if figure is not None:
        lines += [
            "",
            f"The relevance `feature_relevance='ard'` learns on the {figure[1]:,} training "
            "rows of each variant (as `MVMLClassifier(feature_relevance='ard', "
            "random_state=0)`; root mean square 1 in each view; the relevant columns of "
            f"`sparse` are a0, a3, b1, b4, c2): ![learned relevance]({figure[0].name})",
        ]
    write_report(out, "\n".join(lines) + "\n", say=False)


def relevance_figure(n: int, path: Path) -> None:
    """Bar charts of the relevance learned on ``n`` training rows, one row per variant."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mvkernels._targets import one_vs_all_targets
    from mvkernels.mvml._relevance import learn_feature_relevance

    fig, axes = plt.subplots(2, 3, figsize=(11, 4.5), sharey=True)
    for row, variant in enumerate(("sparse", "dense")):
        Xs, y = make_problem(n, variant, seed=1)
        rel = learn_feature_relevance(Xs, one_vs_all_targets(y, 4), random_state=0)
        for l, (ax, r) in enumerate(zip(axes[row], rel)):
            ax.bar(np.arange(r.size), r, color="C0" if variant == "sparse" else "C1")
            ax.set_title(f"{variant}: view {'abc'[l]}", fontsize=9)
            ax.set_xticks(range(0, r.size, 2))
            ax.tick_params(labelsize=7)
    for ax in axes[:, 0]:
        ax.set_ylabel("relevance")
    for ax in axes[1]:
        ax.set_xlabel("column")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()

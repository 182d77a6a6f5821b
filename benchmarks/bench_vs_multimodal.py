"""mvkernels beside scikit-multimodallearn (its MVML and lpMKL) on uWave.

Same train / test split (UCR, 896 / 3582), same Gaussian kernels, same hyperparameters and
the *same landmark samples*: scikit-multimodallearn takes the first ``p`` training samples
as Nystrom landmarks, so its training rows are reordered to put the landmarks mvkernels
draws (seed ``draw``) first. Multi-class: scikit-multimodallearn's estimators are binary,
so both libraries are run one-vs-all (ours natively, theirs by a loop over classes here).
Prints test accuracy of each and the fit-time ratio (theirs / ours), measured side by
side in one run.

The optional package is installed by this script into the running interpreter when the
import fails (``python -m pip install scikit-multimodallearn``). Failures of that package
are reported in the table instead of stopping the run.

Run:  MVKERNELS_DATA=../shared/data .venv/bin/python benchmarks/bench_vs_multimodal.py \
          [--levels 0.06,0.12,0.24] [--draws 1] [--data DIR] [--output FILE.md]
"""

from __future__ import annotations

import functools
import importlib
import subprocess
import sys
import time
import traceback
import warnings

import numpy as np
from _common import add_out, command_line, cores, generated_by, markdown_table, parser, write_report
from sklearn.exceptions import ConvergenceWarning

from mvkernels import MVMLClassifier
from mvkernels.baselines import LpMKLClassifier
from mvkernels.nystrom import resolve_n_landmarks, uniform_indices
from mvkernels.reproduce._uwave import VIEW_SIZES, load_split

#: hyperparameters shared by both libraries (what 3-fold CV on the training set picks
#: for MVML in ``mvkernels reproduce mvml-uwave``): lambda, eta, bandwidth factor 8
ALPHA, ETA, FACTOR, N_ITER = 0.1, 0.01, 8, 5
TOL = 1e-4  # passed explicitly: the paper's settings, not the estimator's default


def ensure_multimodal():
    """Import ``multimodal``; pip-install scikit-multimodallearn first if needed."""
    try:
        return importlib.import_module("multimodal")
    except ImportError:
        print("installing scikit-multimodallearn ...", file=sys.stderr, flush=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "scikit-multimodallearn"], check=True
        )
        importlib.invalidate_caches()
        return importlib.import_module("multimodal")


def _their_ova(make, X, y, Xt, views_ind):
    """One-vs-all around a binary scikit-multimodallearn estimator; (predictions, fit s)."""
    classes = np.unique(y)
    D = np.empty((Xt.shape[0], classes.size))
    t = time.perf_counter()
    models = []
    for c in classes:
        models.append(make().fit(X, (y == c).astype(int), views_ind=views_ind))
    seconds = time.perf_counter() - t
    for k, m in enumerate(models):
        D[:, k] = np.ravel(m.decision_function(Xt))
    return classes[D.argmax(axis=1)], seconds


def main(argv=None) -> int:
    ap = parser(__doc__)
    ap.add_argument("--data", default=None)
    ap.add_argument("--levels", default="0.06,0.12,0.24")
    ap.add_argument("--draws", type=int, default=1)
    add_out(ap, None, flag="--output", what="the table (Markdown, with the command and date)")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", ConvergenceWarning)
    d = load_split(args.data)
    n = d.X.shape[0]
    gammas = d.view_gammas(FACTOR)
    views_ind = np.cumsum([0] + VIEW_SIZES)
    try:
        mm = ensure_multimodal()
        from multimodal.kernels.lpMKL import MKL
        from multimodal.kernels.mvml import MVML

        their_version = getattr(mm, "__version__", "?")
    except Exception as exc:  # report, keep our side
        MVML = MKL = None
        their_version = f"unavailable ({type(exc).__name__}: {exc})"
    print(
        f"uWave {n} train / {len(d.yt)} test; alpha=lambda={ALPHA}, eta={ETA}, bandwidth "
        f"factor {FACTOR}, {N_ITER} iterations; scikit-multimodallearn {their_version}",
        flush=True,
    )
    methods = {
        "MVML (dense A)": (
            lambda p, s: MVMLClassifier(
                alpha=ALPHA,
                eta=ETA,
                metric="dense",
                max_iter=N_ITER,
                tol=TOL,
                n_landmarks=p,
                kernel_params=gammas,
                views=VIEW_SIZES,
                random_state=s,
            ),
            lambda frac: MVML(
                lmbda=ALPHA,
                eta=ETA,
                nystrom_param=frac,
                kernel="rbf",
                kernel_params=gammas,
                learn_A=1,
                n_loops=N_ITER,
            ),
        ),
        "MVML_I": (
            lambda p, s: MVMLClassifier(
                alpha=ALPHA,
                metric="identity",
                max_iter=N_ITER,
                tol=TOL,
                n_landmarks=p,
                kernel_params=gammas,
                views=VIEW_SIZES,
                random_state=s,
            ),
            lambda frac: MVML(
                lmbda=ALPHA,
                eta=ETA,
                nystrom_param=frac,
                kernel="rbf",
                kernel_params=gammas,
                learn_A=4,
                n_loops=N_ITER,
            ),
        ),
        "lpMKL (p=2, kernel ridge)": (
            lambda p, s: LpMKLClassifier(
                alpha=ALPHA,
                loss="squared",
                p=2.0,
                n_landmarks=p,
                kernel_params=gammas,
                views=VIEW_SIZES,
                random_state=s,
            ),
            lambda frac: MKL(lmbda=ALPHA, nystrom_param=frac, kernel="rbf", kernel_params=gammas),
        ),
    }
    rows = []
    for level in [float(x) for x in args.levels.split(",")]:
        p = resolve_n_landmarks(level, n)
        for name, (ours_make, theirs_make) in methods.items():
            for draw in range(args.draws):
                idx = uniform_indices(n, p, np.random.RandomState(draw))
                order = np.concatenate([idx, np.setdiff1d(np.arange(n), idx)])
                ours = ours_make(p, np.random.RandomState(draw))
                t = time.perf_counter()
                ours.fit(d.X, d.y)
                t_ours = time.perf_counter() - t
                acc_ours = 100 * ours.score(d.Xt, d.yt)
                grams = getattr(ours, "nystrom_", None) or ours.grams_.nystrom
                same = bool(np.array_equal(np.sort(grams.landmark_indices_), idx))
                if theirs_make is None or MVML is None:
                    acc_theirs, t_theirs, note = None, None, "package unavailable"
                else:
                    try:
                        frac = (p + 0.5) / n  # their p = floor(frac * n)
                        pred, t_theirs = _their_ova(
                            functools.partial(theirs_make, frac),
                            d.X[order],
                            d.y[order],
                            d.Xt,
                            views_ind,
                        )
                        acc_theirs, note = 100 * float(np.mean(pred == d.yt)), ""
                    except Exception as exc:
                        acc_theirs, t_theirs = None, None
                        note = f"{type(exc).__name__}: {str(exc)[:80]}"
                        traceback.print_exc(limit=2)
                rows.append((name, level, draw, acc_ours, acc_theirs, t_ours, t_theirs, same, note))
                print(
                    f"  {name:<26s} {level:>5.0%} draw {draw}: ours {acc_ours:.2f} % "
                    f"{t_ours:.2f} s | theirs "
                    + (f"{acc_theirs:.2f} % {t_theirs:.2f} s" if acc_theirs is not None else note),
                    flush=True,
                )
    head = [
        "method",
        "landmarks",
        "draw",
        "ours acc (%)",
        "scikit-multimodallearn acc (%)",
        "ours fit (s)",
        "theirs fit (s)",
        "fit-time ratio theirs/ours",
        "same landmarks",
        "note",
    ]
    body = [
        [
            name,
            f"{level:.0%}",
            draw,
            f"{ao:.2f}",
            f"{at:.2f}" if at is not None else "-",
            f"{to:.2f}",
            f"{tt:.2f}" if tt is not None else "-",
            f"{tt / to:.1f}" if tt is not None else "-",
            "yes" if same else "no",
            note,
        ]
        for name, level, draw, ao, at, to, tt, same, note in rows
    ]
    table = markdown_table(head, body, aligned=False)
    print()
    print(table)
    if args.output:
        intro = (
            generated_by(command_line("bench_vs_multimodal.py", argv))
            + f" (scikit-multimodallearn {their_version}, {cores()} CPUs; fit times "
            "are wall clock under whatever load the machine had).\n\n"
        )
        write_report(args.output, intro + table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

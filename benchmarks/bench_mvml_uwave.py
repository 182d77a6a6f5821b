"""MVML on uWave (896 train / 3582 test, 3 views): accuracy and fit time for
6 / 12 / 24 % Nystrom landmarks and the four metric variants (paper Table 1).

Hyperparameters (default): the ones 3-fold cross-validation on the *training set*
picks at 12 % in ``tests/mvml/test_mvml_realdata.py`` (Gaussian bandwidth factor 8 over the
paper's mean-distance default, alpha = 0.1, eta = 0.01), used for every cell; accuracy
averaged over ``--draws`` Nystrom draws (the paper: 4). ``--cv`` re-runs that CV for each
cell instead (slower). Fit time = one fit on the 896 training series (mean over draws).

Run:  MVKERNELS_DATA=../shared/data .venv/bin/python benchmarks/bench_mvml_uwave.py \
      [--draws 4] [--cv]
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
from _common import markdown_table, parser
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from mvkernels import MVMLClassifier
from mvkernels.datasets import fetch_uwave
from mvkernels.kernels import mean_pairwise_distance

PAPER = {  # Table 1, uWave, Nystrom 6 / 12 / 24 %
    "dense": (92.67, 93.03, 92.59),
    "sparse": (92.68, 92.86, 93.26),
    "cov": (92.34, 92.53, 92.66),
    "identity": (92.34, 92.59, 93.10),
}
NAMES = {"dense": "MVML", "sparse": "MVMLsparse", "cov": "MVML_Cov", "identity": "MVML_I"}


def main(argv=None) -> int:
    ap = parser(__doc__)
    ap.add_argument("--data", default=None)
    ap.add_argument("--draws", type=int, default=2)
    ap.add_argument("--cv", action="store_true")
    ap.add_argument("--levels", default="0.06,0.12,0.24")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", ConvergenceWarning)
    d = fetch_uwave(args.data)
    Xtr, ytr, Xte, yte = d["Xs_train"], d["y_train"], d["Xs_test"], d["y_test"]
    sig = [mean_pairwise_distance(V) for V in Xtr]
    kp = {f: [{"gamma": f / (2 * s**2)} for s in sig] for f in (1, 8)}
    levels = [float(x) for x in args.levels.split(",")]
    print(
        f"uWave: {len(ytr)} train / {len(yte)} test, 3 views x 315; draws={args.draws}, "
        f"{'CV per cell' if args.cv else 'fixed hyperparameters (CV at 12 %)'}",
        flush=True,
    )
    rows = []
    for metric in ("dense", "sparse", "cov", "identity"):
        for j, lev in enumerate(levels):
            accs, times = [], []
            params = dict(alpha=0.1, eta=0.01, kernel_params=kp[8])
            if args.cv:
                grid = {"alpha": [1e-2, 1e-1], "kernel_params": [kp[1], kp[8]]}
                if metric in ("dense", "sparse"):
                    grid["eta"] = [1e-2, 1.0]
                gs = GridSearchCV(
                    MVMLClassifier(
                        views=[315] * 3, metric=metric, n_landmarks=lev, max_iter=5, random_state=0
                    ),
                    grid,
                    cv=StratifiedKFold(3, shuffle=True, random_state=0),
                )
                gs.fit(np.hstack(Xtr), ytr)
                params = {k: gs.best_params_[k] for k in grid}
            for draw in range(args.draws):
                est = MVMLClassifier(
                    metric=metric, n_landmarks=lev, max_iter=5, random_state=draw, **params
                )
                t = time.perf_counter()
                est.fit(Xtr, ytr)
                times.append(time.perf_counter() - t)
                accs.append(est.score(Xte, yte))
            paper = PAPER[metric][j] if j < 3 else float("nan")
            rows.append(
                (
                    NAMES[metric],
                    lev,
                    100 * np.mean(accs),
                    100 * np.std(accs),
                    paper,
                    np.mean(times),
                    float(np.min(est.metric_min_eigenvalue_)),
                )
            )
            r = rows[-1]
            print(
                f"  {r[0]:<11s} {int(round(100 * lev)):>3d} %  acc {r[2]:.2f} +- {r[3]:.2f} "
                f"(paper {r[4]:.2f})  fit {r[5]:.2f} s",
                flush=True,
            )
    print()
    head = ["method", "landmarks", "test accuracy (%)", "paper (%)", "fit time (s)", "min eig(A~)"]
    body = [
        [
            name,
            f"{int(round(100 * lev))} %",
            f"{acc:.2f} +- {sd:.2f}",
            f"{paper:.2f}",
            f"{secs:.2f}",
            f"{lmin:.3g}",
        ]
        for name, lev, acc, sd, paper, secs, lmin in rows
    ]
    print(markdown_table(head, body, aligned=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

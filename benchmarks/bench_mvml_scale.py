"""MVML scale benchmark: 1,000,000 synthetic samples, 3 views, 200 landmarks per view.

Fits ``MVMLRegressor(n_landmarks=200)`` (block Nystrom, sufficient statistics: one
chunked pass builds C = sum u u^T (600 x 600) and c = sum u y, then every iteration is
O((vp)^3) = O(600^3) whatever n is) and prints the fit time, the predict time, the
peak memory, and the training R^2. Target (issue 2): fit < 60 s and < 2 GB on 2 cores.

Run:  .venv/bin/python benchmarks/bench_mvml_scale.py [--n 1000000] [--metric dense]

Peak memory: ``ru_maxrss`` of the process (everything, interpreter and the 120 MB of
input data included) and the tracemalloc peak of the fit call alone (NumPy allocations
made during fit, i.e. the algorithm's working memory on top of the input).
"""

from __future__ import annotations

import resource
import sys
import time
import tracemalloc
import warnings

import numpy as np
from _common import markdown_table, parser

from mvkernels import MVMLRegressor


def make_data(n: int, random_state: int = 0):
    rng = np.random.default_rng(random_state)
    dims = (5, 5, 5)
    Xs = [rng.standard_normal((n, d)) for d in dims]
    y = (
        np.sin(Xs[0][:, 0])
        + 0.5 * np.cos(Xs[1][:, 1] * Xs[2][:, 2])
        + 0.3 * Xs[2][:, 0] * Xs[0][:, 1]
        + 0.1 * rng.standard_normal(n)
    )
    return Xs, y


def main(argv=None) -> int:
    ap = parser(__doc__)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--landmarks", type=int, default=200)
    ap.add_argument("--metric", default="dense", choices=["dense", "sparse", "identity", "cov"])
    ap.add_argument("--max-iter", type=int, default=10)
    args = ap.parse_args(argv)

    t = time.perf_counter()
    Xs, y = make_data(args.n)
    print(
        f"data: n={args.n:,}, 3 views x 5 features ({sum(X.nbytes for X in Xs) / 2**20:.0f} MiB)"
        f", generated in {time.perf_counter() - t:.1f} s",
        flush=True,
    )
    est = MVMLRegressor(
        alpha=1e-2,
        eta=1e-2,
        metric=args.metric,
        n_landmarks=args.landmarks,
        max_iter=args.max_iter,
        random_state=0,
    )
    tracemalloc.start()
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(Xs, y)
    fit_s = time.perf_counter() - t
    _, fit_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    t = time.perf_counter()
    pred = est.predict(Xs)
    pred_s = time.perf_counter() - t
    r2 = 1 - np.mean((y - pred) ** 2) / np.var(y)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10  # KiB -> MiB (Linux)
    print(
        f"MVMLRegressor(metric={args.metric!r}, n_landmarks={args.landmarks}): "
        f"A~ {est.metric_.shape}, {est.n_iter_} iterations",
        flush=True,
    )
    head = [
        "n",
        "views x landmarks",
        "fit (s)",
        "predict (s)",
        "fit working memory (MiB, tracemalloc)",
        "peak RSS (MiB)",
        "train R^2",
        "min eig(A~)",
    ]
    row = [
        f"{args.n:,}",
        f"3 x {args.landmarks}",
        f"{fit_s:.1f}",
        f"{pred_s:.1f}",
        f"{fit_peak / 2**20:.0f}",
        f"{rss:.0f}",
        f"{r2:.3f}",
        f"{est.metric_min_eigenvalue_:.3g}",
    ]
    print(markdown_table(head, [row], aligned=False))
    ok = fit_s < 60 and rss < 2048
    print(f"target fit < 60 s and < 2 GB: {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

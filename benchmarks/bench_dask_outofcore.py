"""Out-of-core benchmark: MVMLRegressor (block Nystrom) on 20M samples x 3 views with Dask.

The data are synthetic and generated block by block on the workers (a seeded generator per
row block; the full data never exist in memory anywhere): a 2-D latent z per sample, three
noisy nonlinear views of it (6, 4 and 3 columns) and a target y. With 200 landmarks per view
(600 features) the script runs, for ``--estimator mvml`` (default):

* ``dask``: a ``LocalCluster`` (processes, 1 thread each), ``MVMLRegressor(n_landmarks=200,
  learn_weights=True).fit(Xs, y)`` on the Dask views and the Dask target, end to end:
  bandwidths from 2000 sampled rows and the 200 landmark rows gathered (one pass), the
  sufficient statistics ``C = sum u u^T``, ``c = sum u y``, ``y^T y`` (eq. 15-17 of the
  MVML paper) as one Dask reduction, then the (600 x 600) MVML iterations on the client;
  then a lazy ``predict`` on a held-out block (another seed), computed, and its R^2;
* ``memory``: the same on ``--memory-n`` (1M) samples generated into NumPy arrays.

``--estimator nystrom`` measures ``BlockNystrom.fit`` + ``moments(Xs, y)`` only (the
phase-1 benchmark).

Each mode runs in a fresh subprocess so that peak memory figures are its own. Printed:
wall time per phase, peak client memory (process peak RSS from ``getrusage``; for the
Dask mode it includes the scheduler, which runs in the client process, and tracemalloc's
peak of the allocations made during the fit) and, for Dask, the peak RSS of every worker.

Usage::

    .venv/bin/python benchmarks/bench_dask_outofcore.py                      # 20M + 1M
    .venv/bin/python benchmarks/bench_dask_outofcore.py --n-samples 2000000  # smaller
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc

import numpy as np
from _common import parser

DIMS = (6, 4, 3)


# ----------------------------------------------------------------------------- data
def make_block(block: int, rows: int, seed: int = 0) -> tuple[list[np.ndarray], np.ndarray]:
    """Views and target of one row block, from a generator seeded by (seed, block)."""
    rng = np.random.default_rng([seed, block])
    z = rng.standard_normal((rows, 2))
    feats = [
        np.column_stack(
            [
                np.sin(z[:, 0]),
                np.cos(z[:, 1]),
                z[:, 0] * z[:, 1],
                z[:, 0],
                z[:, 1] ** 2,
                np.tanh(z.sum(1)),
            ]
        ),
        np.column_stack(
            [z[:, 0] ** 3 / 3, np.exp(-(z[:, 1] ** 2)), z[:, 1], np.sin(z[:, 0] + z[:, 1])]
        ),
        np.column_stack([np.abs(z[:, 0]), z[:, 1] - z[:, 0], np.cos(2 * z[:, 0])]),
    ]
    views = [f + 0.1 * rng.standard_normal(f.shape) for f in feats]
    y = np.sin(z[:, 0]) + 0.5 * z[:, 1] ** 2 + 0.1 * rng.standard_normal(rows)
    return views, y


def _view_block(block_id=None, view=0, rows=0, seed=0):
    views, y = make_block(block_id[0], rows, seed)
    return y if view < 0 else views[view]


def dask_data(n: int, chunk: int, seed: int = 0):
    """Lazy Dask views (and y), each block made by ``make_block`` on a worker."""
    import dask.array as da

    if n % chunk:
        raise SystemExit(f"--n-samples ({n}) must be a multiple of --chunk ({chunk})")
    nb = n // chunk
    Xs = [
        da.map_blocks(
            _view_block,
            view=l,
            rows=chunk,
            seed=seed,
            dtype=float,
            chunks=((chunk,) * nb, (d,)),
            meta=np.empty((0, 0)),
        )
        for l, d in enumerate(DIMS)
    ]
    y = da.map_blocks(
        _view_block,
        view=-1,
        rows=chunk,
        seed=seed,
        dtype=float,
        chunks=((chunk,) * nb,),
        meta=np.empty((0,)),
    )
    return Xs, y


def memory_data(n: int, chunk: int, seed: int = 0):
    parts = [make_block(b, min(chunk, n - b * chunk), seed) for b in range(-(-n // chunk))]
    Xs = [np.concatenate([p[0][l] for p in parts]) for l in range(len(DIMS))]
    return Xs, np.concatenate([p[1] for p in parts])


# ---------------------------------------------------------------------------- modes
def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _fit_mvml(Xs, y, args, out: dict) -> None:
    """MVMLRegressor end to end; predictions on a held-out block (seed + 1)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from mvkernels import MVMLRegressor

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = MVMLRegressor(
            n_landmarks=args.landmarks,
            alpha=1.0,
            eta=1.0,
            learn_weights=True,
            max_iter=10,
            random_state=args.seed,
        ).fit(Xs, y)
    t1 = time.perf_counter()
    out.update(
        fit_s=t1 - t0,
        total_s=t1 - t0,
        n_iter=int(est.n_iter_),
        weights=[round(float(w), 4) for w in est.weights_],
        client_tracemalloc_peak_mb=tracemalloc.get_traced_memory()[1] / 2**20,
        client_peak_rss_mb=peak_rss_mb(),
    )
    Xt, yt = make_block(0, 100_000, args.seed + 1)
    if args.mode == "dask":
        import dask.array as da

        lazy = est.predict([da.from_array(X, chunks=(25_000, -1)) for X in Xt])
        out["predict_is_lazy"] = type(lazy).__module__.startswith("dask")
        pred = lazy.compute()
    else:
        pred = est.predict(Xt)
    out["heldout_r2"] = float(1 - np.mean((pred - yt) ** 2) / np.var(yt))
    out["predict_s"] = time.perf_counter() - t1


def run_mode(args) -> dict:
    from mvkernels import BlockNystrom

    out: dict = {
        "mode": args.mode,
        "estimator": args.estimator,
        "n": args.n_samples if args.mode == "dask" else args.memory_n,
    }
    tracemalloc.start()
    if args.mode == "dask":
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            memory_limit=args.worker_memory,
        )
        client = Client(cluster)
        Xs, y = dask_data(args.n_samples, args.chunk, args.seed)
    else:
        t = time.perf_counter()
        Xs, y = memory_data(args.memory_n, args.chunk, args.seed)
        out["generate_s"] = time.perf_counter() - t
    tracemalloc.reset_peak()
    out["client_rss_before_fit_mb"] = peak_rss_mb()
    if args.estimator == "mvml":
        _fit_mvml(Xs, y, args, out)
    else:
        t0 = time.perf_counter()
        ny = BlockNystrom(n_landmarks=args.landmarks, random_state=args.seed).fit(Xs)
        t1 = time.perf_counter()
        m = ny.moments(Xs, y)
        t2 = time.perf_counter()
        out.update(
            fit_landmarks_s=t1 - t0,
            moments_s=t2 - t1,
            total_s=t2 - t0,
            n_samples_seen=int(m.n_samples),
            gram_shape=list(m.gram.shape),
            gram_trace=float(np.trace(m.gram)),
            client_tracemalloc_peak_mb=tracemalloc.get_traced_memory()[1] / 2**20,
            client_peak_rss_mb=peak_rss_mb(),
        )
    if args.mode == "dask":

        def worker_peak():
            import resource as r

            return r.getrusage(r.RUSAGE_SELF).ru_maxrss / 1024

        out["worker_peak_rss_mb"] = sorted(client.run(worker_peak).values())
        client.close()
        cluster.close()
    return out


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--n-samples", type=int, default=20_000_000)
    ap.add_argument(
        "--memory-n",
        type=int,
        default=1_000_000,
        help="samples of the in-memory comparison run (0: skip)",
    )
    ap.add_argument("--chunk", type=int, default=250_000, help="rows per Dask block")
    ap.add_argument("--landmarks", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--worker-memory", default="2GiB")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--estimator",
        choices=["mvml", "nystrom"],
        default="mvml",
        help="mvml: MVMLRegressor.fit end to end; nystrom: BlockNystrom fit + moments",
    )
    ap.add_argument("--mode", choices=["all", "dask", "memory"], default="all")
    args = ap.parse_args()
    if args.mode != "all":
        print(json.dumps(run_mode(args)))
        return
    results = []
    modes = ["dask"] + (["memory"] if args.memory_n else [])
    for mode in modes:
        n = args.n_samples if mode == "dask" else args.memory_n
        print(f"[{mode}] {n:,} samples x 3 views, {args.landmarks} landmarks/view ...", flush=True)
        cmd = [sys.executable, os.path.abspath(__file__), "--mode", mode]
        for k in (
            "n_samples",
            "memory_n",
            "chunk",
            "landmarks",
            "workers",
            "worker_memory",
            "seed",
            "estimator",
        ):
            cmd += [f"--{k.replace('_', '-')}", str(getattr(args, k))]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode:
            sys.stderr.write(proc.stderr)
            raise SystemExit(f"{mode} run failed")
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        results.append(res)
        print(json.dumps(res, indent=1), flush=True)
    print()
    if args.estimator == "mvml":
        print(
            "| mode | n | MVMLRegressor.fit (s) | n_iter | client peak RSS (MB) | client "
            "tracemalloc peak (MB) | worker peak RSS (MB) | held-out R^2 |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for r in results:
            workers = ", ".join(f"{w:.0f}" for w in r.get("worker_peak_rss_mb", [])) or "-"
            print(
                f"| {r['mode']} | {r['n']:,} | {r['fit_s']:.1f} | {r['n_iter']} | "
                f"{r['client_peak_rss_mb']:.0f} | {r['client_tracemalloc_peak_mb']:.1f} | "
                f"{workers} | {r['heldout_r2']:.4f} |"
            )
        return
    print(
        "| mode | n | fit + landmarks (s) | moments pass (s) | total (s) | client peak RSS (MB) "
        "| client tracemalloc peak (MB) | worker peak RSS (MB) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        workers = ", ".join(f"{w:.0f}" for w in r.get("worker_peak_rss_mb", [])) or "-"
        print(
            f"| {r['mode']} | {r['n']:,} | {r['fit_landmarks_s']:.1f} | {r['moments_s']:.1f} | "
            f"{r['total_s']:.1f} | {r['client_peak_rss_mb']:.0f} | "
            f"{r['client_tracemalloc_peak_mb']:.1f} | {workers} |"
        )


if __name__ == "__main__":
    main()

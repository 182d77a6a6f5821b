"""Out-of-core benchmark: block Nystrom sufficient statistics of 20M samples x 3 views on Dask.

The data are synthetic and generated block by block on the workers (a seeded generator per
row block; the full data never exist in memory anywhere): a 2-D latent z per sample, three
noisy nonlinear views of it (6, 4 and 3 columns) and a target y. With 200 landmarks per view
(600 features) the script runs

* ``dask``: a ``LocalCluster`` (processes, 1 thread each), ``BlockNystrom.fit`` on the Dask
  views (bandwidths from 2000 sampled rows, 200 landmark rows gathered), then
  ``BlockNystrom.moments(Xs, y)`` = the one pass of SPEC 1.1 as a Dask reduction; then, if
  ``MVMLRegressor`` exists and accepts Dask input, a full MVML fit;
* ``memory``: the same on ``--memory-n`` (1M) samples generated into NumPy arrays.

Each mode runs in a fresh subprocess so that peak memory figures are its own. Printed:
wall time per phase, peak client memory (process peak RSS from ``getrusage``; for the
Dask mode it includes the scheduler, which runs in the client process, and tracemalloc's
peak of the allocations made during the fit) and, for Dask, the peak RSS of every worker.

Usage::

    .venv/bin/python benchmarks/bench_dask_outofcore.py                      # 20M + 1M
    .venv/bin/python benchmarks/bench_dask_outofcore.py --n-samples 2000000  # smaller
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc

import numpy as np

DIMS = (6, 4, 3)


# ----------------------------------------------------------------------------- data
def make_block(block: int, rows: int, seed: int = 0) -> tuple[list[np.ndarray], np.ndarray]:
    """Views and target of one row block, from a generator seeded by (seed, block)."""
    rng = np.random.default_rng([seed, block])
    z = rng.standard_normal((rows, 2))
    feats = [
        np.column_stack([np.sin(z[:, 0]), np.cos(z[:, 1]), z[:, 0] * z[:, 1], z[:, 0], z[:, 1] ** 2, np.tanh(z.sum(1))]),
        np.column_stack([z[:, 0] ** 3 / 3, np.exp(-z[:, 1] ** 2), z[:, 1], np.sin(z[:, 0] + z[:, 1])]),
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
        da.map_blocks(_view_block, view=l, rows=chunk, seed=seed, dtype=float,
                      chunks=((chunk,) * nb, (d,)), meta=np.empty((0, 0)))
        for l, d in enumerate(DIMS)
    ]
    y = da.map_blocks(_view_block, view=-1, rows=chunk, seed=seed, dtype=float,
                      chunks=((chunk,) * nb,), meta=np.empty((0,)))
    return Xs, y


def memory_data(n: int, chunk: int, seed: int = 0):
    parts = [make_block(b, min(chunk, n - b * chunk), seed) for b in range(-(-n // chunk))]
    Xs = [np.concatenate([p[0][l] for p in parts]) for l in range(len(DIMS))]
    return Xs, np.concatenate([p[1] for p in parts])


# ---------------------------------------------------------------------------- modes
def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _try_mvml(Xs, y, p, seed) -> dict:
    try:
        from mvkernels import MVMLRegressor

        t = time.perf_counter()
        MVMLRegressor(n_landmarks=p, random_state=seed).fit(Xs, y)
        return {"mvml_fit_s": time.perf_counter() - t}
    except Exception as exc:  # MVML is written elsewhere (issue 2); phase 2 wires Dask in
        return {"mvml_fit_s": None, "mvml_skipped": f"{type(exc).__name__}: {exc}"[:160]}


def run_mode(args) -> dict:
    from mvkernels import BlockNystrom

    out: dict = {"mode": args.mode, "n": args.n_samples if args.mode == "dask" else args.memory_n}
    tracemalloc.start()
    if args.mode == "dask":
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, memory_limit=args.worker_memory)
        client = Client(cluster)
        Xs, y = dask_data(args.n_samples, args.chunk, args.seed)
    else:
        t = time.perf_counter()
        Xs, y = memory_data(args.memory_n, args.chunk, args.seed)
        out["generate_s"] = time.perf_counter() - t
    tracemalloc.reset_peak()
    rss0 = peak_rss_mb()
    t0 = time.perf_counter()
    ny = BlockNystrom(n_landmarks=args.landmarks, random_state=args.seed).fit(Xs)
    t1 = time.perf_counter()
    m = ny.moments(Xs, y)
    t2 = time.perf_counter()
    out.update(
        fit_landmarks_s=t1 - t0, moments_s=t2 - t1, total_s=t2 - t0,
        n_samples_seen=int(m.n_samples), gram_shape=list(m.gram.shape),
        gram_trace=float(np.trace(m.gram)),
        client_tracemalloc_peak_mb=tracemalloc.get_traced_memory()[1] / 2**20,
        client_peak_rss_mb=peak_rss_mb(), client_rss_before_fit_mb=rss0,
    )
    if args.mvml:
        out.update(_try_mvml(Xs, y, args.landmarks, args.seed))
    if args.mode == "dask":
        def worker_peak():
            import resource as r

            return r.getrusage(r.RUSAGE_SELF).ru_maxrss / 1024

        out["worker_peak_rss_mb"] = sorted(client.run(worker_peak).values())
        client.close()
        cluster.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-samples", type=int, default=20_000_000)
    ap.add_argument("--memory-n", type=int, default=1_000_000,
                    help="samples of the in-memory comparison run (0: skip)")
    ap.add_argument("--chunk", type=int, default=250_000, help="rows per Dask block")
    ap.add_argument("--landmarks", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--worker-memory", default="2GiB")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-mvml", dest="mvml", action="store_false")
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
        for k in ("n_samples", "memory_n", "chunk", "landmarks", "workers", "worker_memory", "seed"):
            cmd += [f"--{k.replace('_', '-')}", str(getattr(args, k))]
        if not args.mvml:
            cmd.append("--no-mvml")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode:
            sys.stderr.write(proc.stderr)
            raise SystemExit(f"{mode} run failed")
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        results.append(res)
        print(json.dumps(res, indent=1), flush=True)
    print()
    print(f"{'mode':8s} {'n':>12s} {'fit+landmarks s':>16s} {'moments s':>10s} {'total s':>8s} "
          f"{'client peak RSS MB':>19s} {'client tracemalloc MB':>22s}  worker peak RSS MB")
    for r in results:
        workers = ", ".join(f"{w:.0f}" for w in r.get("worker_peak_rss_mb", [])) or "-"
        print(f"{r['mode']:8s} {r['n']:12,d} {r['fit_landmarks_s']:16.1f} {r['moments_s']:10.1f} "
              f"{r['total_s']:8.1f} {r['client_peak_rss_mb']:19.0f} "
              f"{r['client_tracemalloc_peak_mb']:22.1f}  {workers}")
    for r in results:
        if "mvml_skipped" in r:
            print(f"MVML fit ({r['mode']}) skipped: {r['mvml_skipped']}")
        elif r.get("mvml_fit_s") is not None:
            print(f"MVML fit ({r['mode']}): {r['mvml_fit_s']:.1f} s")


if __name__ == "__main__":
    main()

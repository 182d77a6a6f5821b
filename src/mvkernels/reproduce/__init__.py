"""Reproduction of the papers' tables and figures.

Each experiment is a module of this package exposing
``run(quick: bool, output: pathlib.Path, data_dir: str | None, random_state: int) -> dict``
that writes ``results.md`` (our numbers beside the paper's, and the difference) and PNG
figures into ``output``. ``EXPERIMENTS`` maps the command-line name to the module.

Run one with ``mvkernels reproduce NAME [--quick] [--output DIR] [--data DIR]`` or
:func:`run_experiment`; run them all with ``mvkernels reproduce all --output docs/results``.
Every run also records ``run.json`` (command, date, wall time, versions) beside its report.
Nothing is written outside the folder the user names: ``reproduce all --output ROOT`` writes
each experiment into ``ROOT/<name>`` and the index page ``ROOT/README.md``
(:func:`write_results_index`), so the results page linked from the project README is
generated, never hand-written; a single experiment updates an index only when asked
explicitly (``--index ROOT`` / ``index=ROOT``).
"""

from __future__ import annotations

import datetime as _dt
import importlib
import json
import platform
import time
from pathlib import Path
from typing import Any

from ._claims import claims_index

EXPERIMENTS: dict[str, str] = {
    "mvml-uwave": "mvml_uwave",
    "mvml-sarcos": "mvml_sarcos",
    "mvml-svm-uwave": "mvml_svm_uwave",
    "olok": "olok",
    "rkm-sines": "rkm_sines",
    "rkm-santafe": "rkm_santafe",
}

TITLES: dict[str, str] = {
    "mvml-uwave": "MVML, Table 1 (uWave part): accuracy against the landmark fraction",
    "mvml-sarcos": "MVML, Fig. 2 on SARCOS-4449: nMSE, R^2 and time against the landmark fraction",
    "mvml-svm-uwave": "MVML-SVM on uWave: accuracy at 6 % and 24 % landmarks",
    "olok": "OLOK, Table 1 and Fig. 1: test MSE and time, MSE against examples seen",
    "rkm-sines": "Multi-view RKM, sum of sines: recursive forecasts of the four solvers",
    "rkm-santafe": "Multi-view RKM, SantaFe laser: forecasts, components, primal/dual agreement",
}


def _versions() -> dict[str, str]:
    import numpy
    import scipy
    import sklearn

    from .. import __version__

    return {
        "mvkernels": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
    }


def run_experiment(
    name: str,
    quick: bool = False,
    output: str | Path | None = None,
    data_dir: str | None = None,
    random_state: int = 0,
    index: str | Path | None = None,
) -> dict[str, Any]:
    """Run experiment ``name``; write its report and ``run.json`` into ``output`` only.

    Parameters
    ----------
    name : str
        A key of :data:`EXPERIMENTS`.
    quick : bool
        Reduced run of a few minutes (smaller grids, fewer repetitions).
    output : str or Path, optional
        Folder for ``results.md`` and figures (default ``results/<name>``).
    data_dir : str, optional
        Data home (default ``$MVKERNELS_DATA``, else ``~/mvkernels_data``); missing
        files are downloaded there.
    random_state : int
        Seed of every random choice of the experiment.
    index : str or Path, optional
        Folder whose ``README.md`` index (:func:`write_results_index`) is rewritten after the
        run. Default None: no index is written, so nothing outside ``output`` changes.

    Returns
    -------
    dict
        The experiment's results.
    """
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; choose from {sorted(EXPERIMENTS)}")
    try:
        module = importlib.import_module(f".{EXPERIMENTS[name]}", __name__)
    except ModuleNotFoundError as exc:  # experiment not written yet
        raise NotImplementedError(f"experiment {name!r} is not available yet: {exc}") from exc
    out = Path(output) if output is not None else Path("results") / name
    made = [folder for folder in (out, *out.parents) if not folder.exists()]  # deepest first
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    try:
        result = module.run(quick=quick, output=out, data_dir=data_dir, random_state=random_state)
    except BaseException:
        for folder in made:  # a failed run leaves no empty folder of its own behind
            try:
                folder.rmdir()
            except OSError:  # it holds something: keep it (and its parents)
                break
        raise
    seconds = time.perf_counter() - start
    command = f"mvkernels reproduce {name}" + (" --quick" if quick else "")
    if random_state != 0:
        command += f" --random-state {random_state}"
    meta = {
        "name": name,
        "title": TITLES.get(name, name),
        "command": command,
        "quick": bool(quick),
        "random_state": int(random_state),
        "seconds": round(seconds, 1),
        "date": _dt.datetime.now().isoformat(timespec="seconds"),
        "versions": _versions(),
    }
    (out / "run.json").write_text(json.dumps(meta, indent=2) + "\n")
    if index is not None:
        write_results_index(index)
    return result


def write_results_index(root: str | Path) -> Path:
    """Write ``root/README.md`` listing every experiment report found under ``root``.

    A sub-folder counts when it holds ``run.json`` (written by :func:`run_experiment`); the
    index gives its title, the command that produced it, the wall time, links to its
    ``results.md`` and shows its PNG figures.
    """
    root = Path(root)
    order = {n: i for i, n in enumerate(EXPERIMENTS)}
    runs = []
    for meta_path in root.glob("*/run.json"):
        meta = json.loads(meta_path.read_text())
        runs.append((order.get(meta.get("name"), len(order)), meta_path.parent, meta))
    runs.sort(key=lambda r: (r[0], r[1].name))
    lines = [
        "# Reproduced results",
        "",
        "Generated by `mvkernels reproduce` (do not edit by hand): each section links the",
        "experiment's full report, with the papers' numbers beside ours, and shows its figures.",
        "Regenerate everything with `mvkernels reproduce all --output docs/results`.",
        "",
    ]
    if not runs:
        lines.append("No experiment has been run into this folder yet.")
    lines += ["| experiment | mode | command | wall time | date |", "|---|---|---|---|---|"]
    for _, folder, meta in runs:
        mode = "quick" if meta.get("quick") else "full"
        lines.append(
            f"| [{meta['name']}]({folder.name}/results.md) | {mode} | "
            f"`{meta['command']}` | {meta['seconds']:.0f} s | {meta['date'][:10]} |"
        )
    lines += claims_index(folder for _, folder, _ in runs)
    for _, folder, meta in runs:
        lines += [
            "",
            f"## {meta['name']}: {meta.get('title', '')}",
            "",
            f"Report: [{folder.name}/results.md]({folder.name}/results.md). "
            f"Command: `{meta['command']}`; {meta['seconds']:.0f} s on "
            f"{meta['date'][:10]} (mvkernels {meta['versions'].get('mvkernels', '?')}, "
            f"numpy {meta['versions'].get('numpy', '?')}, "
            f"scikit-learn {meta['versions'].get('scikit-learn', '?')}).",
        ]
        for png in sorted(folder.glob("*.png")):
            lines += ["", f"![{png.stem}]({folder.name}/{png.name})"]
    bench = sorted((root / "benchmarks").glob("*.md"))
    if bench:
        lines += [
            "",
            "## Benchmarks",
            "",
            "Tables printed by the scripts of `benchmarks/` (command and date in each file):",
            "",
        ]
        lines += [f"- [{b.stem}](benchmarks/{b.name})" for b in bench]
    path = root / "README.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def run_all(
    quick: bool = False,
    output: str | Path = "results",
    data_dir: str | None = None,
    random_state: int = 0,
    names: list[str] | None = None,
    tracebacks: bool = True,
) -> dict[str, Any]:
    """Run every experiment (or ``names``) into ``output/<name>`` and write ``output/README.md``.

    Everything is written inside ``output``.

    An experiment that fails is reported on stderr (its traceback, or with
    ``tracebacks=False`` one line) and in the returned dict (as the exception) and does not
    stop the others; the exit status of the CLI is then 1.
    """
    import sys
    import traceback

    root = Path(output)
    results: dict[str, Any] = {}
    for name in names or list(EXPERIMENTS):
        print(f"[reproduce all] {name} ...", file=sys.stderr, flush=True)
        try:
            results[name] = run_experiment(
                name, quick=quick, output=root / name, data_dir=data_dir, random_state=random_state
            )
        except Exception as exc:  # keep going; report at the end
            if tracebacks:
                traceback.print_exc()
            else:
                message = " ".join(f"{type(exc).__name__}: {exc}".split())
                print(f"[reproduce all] {name} failed: {message}", file=sys.stderr, flush=True)
            results[name] = exc
    root.mkdir(parents=True, exist_ok=True)
    write_results_index(root)
    return results

"""The same timed cases on this tree and on an earlier commit's package, side by side.

``bench_engine.py`` and ``bench_reference_path.py`` (and the filing-commit fits of
``bench_mvml_svm.py``) compare the package of this working tree with the package of an
earlier commit: the earlier ``src/mvkernels`` is exported with ``git archive`` into a
temporary folder, and a script of cases (a string of Python that prints a JSON dict, case
name -> result, on its last line) runs in a subprocess per tree with that tree's ``src`` on
``PYTHONPATH`` and one BLAS thread, the trees alternating, ``repeat`` times; per tree and
case the least disturbed run (smallest CPU time) is kept. :data:`PINNED` is a preamble for
the case scripts: ``pinned(cls)``, the estimator class with the parameters whose defaults
changed since the earlier commit held at that commit's values (where ``cls`` has them), so
that both trees fit the same problems. :func:`compare_main` is the command line and the
report of such a benchmark (``--against``, ``--repeat``, ``--out``; a table of the cases,
``before`` and ``now`` side by side).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import (
    ROOT,
    add_out,
    command_line,
    cores,
    generated_by,
    load_average,
    markdown_table,
    parser,
    report,
    write_report,
)

#: a preamble for the case scripts: ``pinned(cls)``, ``cls`` with the defaults of 9946e0c
#: (``main`` before the engine refactoring, issue 33) where they changed later (no joint
#: view, no intercept, one-vs-rest), among the parameters ``cls`` has
PINNED = r"""
import functools
PINNED = dict(joint_view=False, fit_intercept=False, multi_class="ovr")
def pinned(cls):
    return functools.partial(cls, **{k: v for k, v in PINNED.items() if k in cls().get_params()})
"""


def short_rev(rev: str = "HEAD") -> str:
    """The abbreviated commit hash of ``rev`` in this repository ("" where git cannot say)."""
    return subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()


def export(rev: str, into: Path) -> Path:
    """``src/mvkernels`` of ``rev`` (``git archive``) extracted under ``into``; returns the
    folder to put on ``PYTHONPATH``. Raises ``subprocess.CalledProcessError`` or ``OSError``
    where git or the commit is not available (e.g. a shallow clone)."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev, "src/mvkernels"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:  # pragma: no cover - Python < 3.12 without the backported filters
            tar.extractall(into)  # noqa: S202 (our own history)
    return into / "src"


def run(src: Path, cases: str) -> Any:
    """Run the script ``cases`` on the package tree ``src`` (one BLAS thread, a subprocess)
    and return the JSON its last line prints."""
    env = dict(os.environ, PYTHONPATH=str(src), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", cases], env=env, capture_output=True, text=True)
    if done.returncode:  # the case's own traceback, not only the exit status
        sys.exit(f"the timed cases failed on {src} (exit {done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def alternate(
    cases: str,
    against: str,
    repeat: int,
    cpu: Callable[[Any], float] = float,
) -> dict[str, dict[str, Any]]:
    """The cases on the package of ``against`` (``"before"``) and on this tree (``"now"``),
    the trees alternating, ``repeat`` times: per tree and case the result of the run with
    the smallest ``cpu(result)`` (the first such run on ties). Exits with a message when
    the commit cannot be exported."""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            old_src = export(against, Path(tmp))
        except (subprocess.CalledProcessError, OSError) as exc:
            sys.exit(f"cannot export {against} from this repository's history: {exc}")
        trees = {"before": old_src, "now": ROOT / "src"}
        best: dict[str, dict[str, Any]] = {k: {} for k in trees}
        for _ in range(repeat):
            for key, src in trees.items():
                for name, result in run(src, cases).items():
                    if name not in best[key] or cpu(result) < cpu(best[key][name]):
                        best[key][name] = result
    return best


def conditions(before: str, repeat: int) -> str:
    """How the times of :func:`alternate` were taken, for the report's header: the machine
    and load, the runs, and the two trees (``before``: as the report names the earlier
    commit; ``now``: this tree's commit)."""
    return (
        f"({cores()} cores, load {load_average():.1f}; one BLAS thread; minimum CPU seconds "
        f"of {repeat} runs per tree, trees alternating). `before`: {before}; `now`: "
        f"{short_rev()}."
    )


def compare_main(
    doc: str | None,
    *,
    script: str,
    cases: str,
    against: str,
    title: str,
    head: Sequence[str],
    row: Callable[[str, Any, Any], list[str]],
    cpu: Callable[[Any], float] = float,
    note: str = "",
) -> None:
    """The command line of a two-tree benchmark: parse ``--against`` (default ``against``),
    ``--repeat`` and ``--out``, time ``cases`` on both trees (:func:`alternate`) and print
    (and write) the report ``title``: the header (command, date, :func:`conditions`, then
    ``note``) and a table of ``head`` with one ``row(name, before, now)`` per case (``before``
    is None for a case the earlier tree does not have)."""
    ap = parser(doc)
    ap.add_argument("--against", default=against, help="commit to compare with")
    ap.add_argument("--repeat", type=int, default=3, help="runs per tree (minimum kept)")
    add_out(ap, None)
    args = ap.parse_args()
    best = alternate(cases, args.against, args.repeat, cpu)
    rows = [row(name, best["before"].get(name), now) for name, now in best["now"].items()]
    text = report(
        title,
        generated_by(command_line(script, ["--against", args.against]))
        + " "
        + conditions(short_rev(args.against), args.repeat)
        + (f" {note}" if note else ""),
        markdown_table(head, rows, aligned=False),
    )
    print(text)
    if args.out:
        write_report(args.out, text)

"""Reproduction of the papers' tables and figures.

Each experiment is a module of this package exposing
``run(quick: bool, output: pathlib.Path, data_dir: str | None, random_state: int) -> dict``
that writes ``results.md`` (our numbers beside the paper's, and the difference) and PNG
figures into ``output``. ``EXPERIMENTS`` maps the command-line name to the module.
Run one with ``mvkernels reproduce NAME [--quick] [--output DIR] [--data DIR]`` or
:func:`run_experiment`.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

EXPERIMENTS: dict[str, str] = {
    "mvml-uwave": "mvml_uwave",
    "mvml-sarcos": "mvml_sarcos",
    "mvml-svm-uwave": "mvml_svm_uwave",
    "olok": "olok",
    "rkm-sines": "rkm_sines",
    "rkm-santafe": "rkm_santafe",
}


def run_experiment(
    name: str, quick: bool = False, output: str | Path | None = None,
    data_dir: str | None = None, random_state: int = 0,
) -> dict[str, Any]:
    """Run experiment ``name`` and return its results dict."""
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; choose from {sorted(EXPERIMENTS)}")
    try:
        module = importlib.import_module(f".{EXPERIMENTS[name]}", __name__)
    except ModuleNotFoundError as exc:  # experiment not written yet
        raise NotImplementedError(f"experiment {name!r} is not available yet: {exc}") from exc
    out = Path(output) if output is not None else Path("results") / name
    out.mkdir(parents=True, exist_ok=True)
    return module.run(quick=quick, output=out, data_dir=data_dir, random_state=random_state)

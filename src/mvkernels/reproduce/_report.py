"""Shared helpers for reproduction scripts: progress lines, markdown tables, figures."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


class Progress:
    """Prints ``[i/n] label ... (elapsed)`` lines to stderr so long runs show progress."""

    def __init__(self, total: int, prefix: str = ""):
        self.total, self.prefix, self.count = total, prefix, 0
        self.start = time.perf_counter()

    def step(self, label: str) -> None:
        self.count += 1
        elapsed = time.perf_counter() - self.start
        print(
            f"{self.prefix}[{self.count}/{self.total}] {label} ({elapsed:.1f} s)",
            file=sys.stderr,
            flush=True,
        )


def fmt(x: Any, digits: int = 4) -> str:
    """Format a number for a table ("-" for None)."""
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    if isinstance(x, int):
        return str(x)
    return f"{x:.{digits}g}"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 4) -> str:
    """A GitHub markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        lines.append("| " + " | ".join(fmt(c, digits) for c in row) + " |")
    return "\n".join(lines)


def write_report(output: Path, title: str, sections: Sequence[tuple[str, str]]) -> Path:
    """Write ``results.md`` with a title and (heading, body) sections; print it too."""
    text = f"# {title}\n\n" + "\n\n".join(f"## {h}\n\n{b}" for h, b in sections) + "\n"
    path = Path(output) / "results.md"
    path.write_text(text)
    print(text)
    return path


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg back end, or None when matplotlib
    (an optional extra) is not installed: the reports then go without their figures."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - plotting is optional
        return None
    return plt


def save_figure(fig: Any, path: Path) -> Path:
    """Write ``fig`` to ``path`` (PNG, 120 dpi), close it and return ``path``."""
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path

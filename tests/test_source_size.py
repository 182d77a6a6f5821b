"""No source file over 1,000 lines (issue 33, item 6): a module that grows past it is split
by concern (e.g. ``mvml/_hinge_active.py`` out of ``mvml/_hinge.py``)."""

from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "mvkernels"
MAX_LINES = 1000


def test_no_source_file_over_the_limit():
    sizes = {str(p.relative_to(SRC)): len(p.read_text().splitlines()) for p in SRC.rglob("*.py")}
    assert len(sizes) > 50  # the package was found
    over = sorted(f"{name}: {n} lines" for name, n in sizes.items() if n > MAX_LINES)
    assert not over, f"split these modules (over {MAX_LINES} lines): {over}"

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


TESTS = Path(__file__).resolve().parent


def test_test_folders_mirror_the_packages():
    """Issue 33, item 6: the tests of subpackage ``mvkernels.P`` live in ``tests/P/`` (its
    subpackages in ``tests/P/Q/``), the tests of top-level modules in ``tests/``; no test
    folder without its package."""
    packages = {str(p.parent.relative_to(SRC)) for p in SRC.rglob("__init__.py") if p.parent != SRC}
    assert {"mvml", "nystrom", "rkm", "mvml/cv"} <= packages  # the package was found
    folders = {
        str(p.parent.relative_to(TESTS)) for p in TESTS.rglob("test_*.py") if p.parent != TESTS
    }
    stray = sorted(folders - packages)
    assert not stray, f"test folders with no package of that name: {stray}"
    top_modules = {p.stem for p in SRC.glob("*.py")}
    in_packages = {
        p.stem[len("test_") :]
        for folder in folders
        for p in (TESTS / folder).glob("test_*.py")
        if p.stem[len("test_") :] in top_modules
    }
    assert not in_packages, f"tests of top-level modules inside a package folder: {in_packages}"

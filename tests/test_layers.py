"""The package's import structure: floors, no circle, no arrow back up.

Every import between modules of ``mvkernels`` is read from the source (function-level
imports too, which Python resolves lazily but which are dependencies all the same). The
modules stand on floors; a module imports only from its own floor or below, and the
graph has no cycle. A new module needs a floor here (the test names it otherwise).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "mvkernels"

#: top-level module or subpackage -> floor (0 = bottom). Within a floor, imports may go
#: either way as long as they make no cycle.
FLOORS = {
    "_sparse": 0,
    "_linalg": 0,
    "_threads": 0,
    "_docstrings": 0,
    "_targets": 0,
    "_weights": 0,  # sample and class weights: their validation (NumPy only)
    "_pairwise": 0,  # squared distances, Laplacian form (MLKR, feature relevance)
    "_packing": 0,  # lossless compact storage of arrays in a pickle
    "_arrays": 1,  # the NumPy / sparse / Dask seam and whole-row checks
    "_kernel_families": 1,  # the named kernels' registry
    "_validation": 2,
    "kernels": 3,
    "stiefel": 3,
    "operator_kernels": 4,
    "nystrom": 4,
    "mvml": 5,
    "olok": 5,
    "rkm": 5,
    "baselines": 5,
    "datasets": 5,
    "mvkernels": 6,  # the package's __init__: re-exports
    "demo": 7,
    "reproduce": 7,
    "cli": 8,
}


def _modules() -> dict[str, Path]:
    mods = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


def import_graph() -> dict[str, set[str]]:
    """module -> the package modules it imports (at module level or inside functions)."""
    mods = _modules()
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    name = ".".join(base + ([node.module] if node.module else []))
                else:
                    name = node.module or ""
                targets = [name] + [f"{name}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            edges[mod].update(t for t in targets if t in mods and t != mod)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _top(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_every_module_has_a_floor():
    missing = sorted({_top(m) for m in import_graph()} - set(FLOORS))
    assert not missing, f"give these modules a floor in FLOORS: {missing}"


def test_no_import_circle():
    assert cycles(import_graph()) == []


def test_no_import_runs_back_up_a_floor():
    up = sorted(
        f"{m} -> {w}"
        for m, ws in import_graph().items()
        for w in ws
        if FLOORS[_top(w)] > FLOORS[_top(m)]
    )
    assert not up, "imports from a higher floor:\n" + "\n".join(up)


@pytest.mark.parametrize(
    "edges, expected",
    [
        ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": set()}, []),
    ],
)
def test_cycle_finder_sees_circles(edges, expected):
    assert cycles(edges) == expected


def test_graph_reads_lazy_imports():
    """The Dask back end's function-level imports are edges (the old circle was one)."""
    graph = import_graph()
    assert "mvkernels._arrays" in graph["mvkernels.nystrom._dask"]
    assert "mvkernels.nystrom._dask" in graph["mvkernels.nystrom._map"]  # imported lazily

"""``import mvkernels`` stays light: no plotting library, no reproduction or demo code."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

FORBIDDEN = ("matplotlib", "mvkernels.reproduce", "mvkernels.demo", "mvkernels.cli")


def _loaded_after(statement: str) -> list[str]:
    code = f"import json, sys; {statement}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "module",
    ["mvkernels", "mvkernels.baselines", "mvkernels.datasets"],
)
def test_import_loads_no_plotting_reproduction_or_demo(module):
    loaded = _loaded_after(f"import {module}")
    assert module in loaded
    heavy = [m for m in loaded if m.startswith(FORBIDDEN)]
    assert not heavy, f"import {module} loads {heavy}"


def test_check_sees_forbidden_modules():
    """The probe does see these modules when they are imported."""
    loaded = _loaded_after("import mvkernels.reproduce")
    assert any(m.startswith("mvkernels.reproduce") for m in loaded)

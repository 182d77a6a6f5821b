"""Shared test fixtures: the real-data folder and seeded random generators."""

import os
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _data_dir() -> Path:
    return Path(os.environ.get("MVKERNELS_DATA", ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared real-data folder; skips the test with the reason when it is absent."""
    path = _data_dir()
    if not path.is_dir():
        pytest.skip(f"real data folder {path} absent (set MVKERNELS_DATA)")
    return path


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)

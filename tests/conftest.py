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


@pytest.fixture(scope="module")
def client(request):
    """A ``dask.distributed`` client on a 2-worker LocalCluster (processes), per test module.

    The workers are separate processes that cannot import the test module, so the module's
    own helper functions are shipped by value (cloudpickle) while the cluster lives.
    """
    import sys

    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (pip install 'mvkernels[dask]')"
    )
    import cloudpickle

    module = sys.modules[request.module.__name__]
    cloudpickle.register_pickle_by_value(module)
    cluster = distributed.LocalCluster(
        n_workers=2,
        processes=True,
        threads_per_worker=1,
        dashboard_address=None,
        memory_limit="2GiB",
    )
    cl = distributed.Client(cluster)
    yield cl
    cl.close()
    cluster.close()
    cloudpickle.unregister_pickle_by_value(module)

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


# ---------------------------------------------------------------------------- progress
# ``bash scripts/test`` sets MVKERNELS_TEST_PROGRESS=1: tests over SLOW_SECONDS are named as
# they finish, and every HEARTBEAT_SECONDS a line names the tests still running, so a slow
# tail is never silent. Runs in the main (controller) process only.
SLOW_SECONDS = 5.0
HEARTBEAT_SECONDS = 30.0


class _Progress:
    def __init__(self) -> None:
        import threading
        import time

        self.time = time.monotonic
        self.lock = threading.Lock()
        self.running: dict[str, float] = {}
        self.done = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True)
        self.thread.start()

    def _say(self, text: str) -> None:
        import sys

        print(f"\n[tests] {text}", file=sys.stderr, flush=True)

    def _beat(self) -> None:
        while not self.stop.wait(HEARTBEAT_SECONDS):
            now = self.time()
            with self.lock:
                running = sorted(self.running.items(), key=lambda kv: kv[1])
                done = self.done
            names = ", ".join(f"{name} ({now - t0:.0f} s)" for name, t0 in running[:4])
            self._say(f"{done} finished; running: {names or '(none)'}")

    def pytest_runtest_logstart(self, nodeid: str, location: object) -> None:
        with self.lock:
            self.running[nodeid] = self.time()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            return
        with self.lock:
            t0 = self.running.pop(report.nodeid, None)
            self.done += 1
        if t0 is not None and self.time() - t0 > SLOW_SECONDS:
            self._say(f"slow: {report.nodeid} took {self.time() - t0:.1f} s")

    def pytest_sessionfinish(self) -> None:
        self.stop.set()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``scripts/test``, start the tests marked slow first: the two workers then fill
    in with quick tests while the long ones run, instead of ending on a long silent tail.
    The order is deterministic (a stable sort), so pytest-xdist's workers agree on it."""
    if os.environ.get("MVKERNELS_TEST_PROGRESS") == "1":
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_configure(config: pytest.Config) -> None:
    worker = hasattr(config, "workerinput")  # pytest-xdist worker process
    if os.environ.get("MVKERNELS_TEST_PROGRESS") == "1" and not worker:
        config.pluginmanager.register(_Progress(), "mvkernels-progress")

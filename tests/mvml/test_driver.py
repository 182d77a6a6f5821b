"""Algorithm 1's one outer loop (``mvml._driver.alternate``) and its bookkeeping."""

from __future__ import annotations

import numpy as np

from mvkernels.mvml._driver import PathState, alternate


def test_alternate_stops_each_problem_on_its_own_and_records_the_path():
    run = PathState.start(3, 2, max_iter=5, record_path=True)
    seen = []

    def iteration(it, idx):
        rows = np.arange(3)[idx]
        seen.append(rows.tolist())
        # problem 0: objective constant from the start (stops after 2 iterations),
        # problem 1: halves (never within tol), problem 2: constant from iteration 2 on
        obj = np.array([[1.0, 0.5**it, 1.0 if it >= 1 else 3.0][r] for r in rows])
        g = np.column_stack([rows + 10.0 * it, -rows.astype(float)])
        return g, obj

    alternate(run, 5, 1e-9, iteration)
    assert seen == [[0, 1, 2], [0, 1, 2], [1, 2], [1], [1]]
    np.testing.assert_array_equal(run.n_iter, [2, 5, 3])
    np.testing.assert_array_equal(run.converged, [True, False, True])
    assert run.histories[2] == [3.0, 1.0, 1.0]
    # path[:, k] is iteration k + 1's g-step; the final g-step fills the last slot
    np.testing.assert_array_equal(run.path[1, :4, 0], [11.0, 21.0, 31.0, 41.0])
    run.finish(0, np.array([7.0, 7.0]), 0.25)
    np.testing.assert_array_equal(run.path[0, 1], [7.0, 7.0])
    assert run.histories[0][-1] == 0.25


def test_alternate_without_tol_runs_every_iteration():
    run = PathState.start(2, 1, max_iter=3, record_path=False)
    alternate(run, 3, None, lambda it, idx: (np.zeros((2, 1)), np.ones(2)))
    np.testing.assert_array_equal(run.n_iter, [3, 3])
    assert not run.converged.any() and run.path is None

"""Typed problem parts and decisions made once per fit (issue 33): the Nystrom problem's
two parts (:class:`NystromStatistics`, :class:`FeatureRows`) and the clear error of a
missing one, the frozen full problem's kept design, the ``solver`` parameter resolved
into a :class:`SolverPlan`, and the data part chosen once per fit (with one rule for the
BLAS threads)."""

from __future__ import annotations

import sys
from contextlib import nullcontext
from dataclasses import FrozenInstanceError, fields, replace

import numpy as np
import pytest

from mvkernels import MVMLSVC, MVMLClassifier, MVMLClassifierCV, MVMLRegressor
from mvkernels.mvml import FeatureRows, MVMLProblem, NystromProblem, NystromStatistics, _base
from mvkernels.mvml._data_part import IN_MEMORY, DaskData, DataPart
from mvkernels.mvml._fit_context import SOLVER_PLANS, GStepMethod, SolverPlan, solver_plan
from mvkernels.mvml._problem import MissingPartError
from mvkernels.nystrom import BlockNystrom, FeatureMoments

N, P = 24, 4


def _data(seed=0, n=N):
    rng = np.random.default_rng(seed)
    Xs = [rng.normal(size=(n, 3)), rng.normal(size=(n, 2))]
    y = np.where(Xs[0][:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return Xs, y


def _statistics_problem(weighted=False):
    Xs, y = _data()
    Y = np.column_stack([y, 2.0 * y + 1.0])
    nys = BlockNystrom(n_landmarks=P, random_state=0).fit(Xs)
    sw = np.linspace(0.5, 2.0, N) if weighted else None
    mom = nys.moments(Xs, Y) if sw is None else nys.moments(Xs, Y, sample_weight=sw)
    return MVMLProblem.from_moments(mom, nys, Y, Xs=Xs, sample_weight=sw), nys, Xs, Y


# ---------------------------------------------------------------- the Nystrom problem's parts
def test_the_statistics_part_holds_the_moments():
    problem, nys, Xs, Y = _statistics_problem()
    U = nys.transform(Xs)
    st = problem.stats
    assert isinstance(st, NystromStatistics) and st is problem.statistics
    np.testing.assert_allclose(st.gram, U.T @ U, atol=1e-10)
    np.testing.assert_allclose(st.cross, U.T @ Y, atol=1e-10)
    np.testing.assert_allclose(st.feature_sum, U.sum(axis=0), atol=1e-10)
    np.testing.assert_allclose(st.target_sq, (Y**2).sum(axis=0), atol=1e-10)
    np.testing.assert_allclose(st.target_sum, Y.sum(axis=0), atol=1e-12)
    Uc = U - U.mean(axis=0)
    np.testing.assert_allclose(st.feature_scatter, Uc.T @ Uc, atol=1e-10)
    assert problem.row_data == FeatureRows(nys, Xs=Xs)
    assert problem.row_data.feature_map is nys and problem.row_data.Xs is Xs
    # the parts are the problem's one surface: no field of theirs forwarded
    for name in {f.name for f in fields(NystromStatistics)} | {"feature_map", "Xs", "U"}:
        assert not hasattr(problem, name), name
    assert problem.data is IN_MEMORY


def test_a_missing_part_is_a_clear_error():
    """The hinge loss's problem has no statistics, a fold problem of the square loss no
    rows: asking for the missing part names it (not a None deep inside a product)."""
    Xs, y = _data()
    hinge = MVMLSVC(n_landmarks=P, random_state=0, joint_view=False)._build_problem(Xs, y[:, None])
    assert hinge.statistics is None and hinge.row_data.U.shape == (N, 2 * P)
    for read in (
        lambda p: p.stats,
        lambda p: p.stats.cross,
        lambda p: p.squared_residual(0, np.zeros(p.dim), np.full(2, 0.5)),
        lambda p: p.weighted_statistics(np.full(2, 0.5)),
        lambda p: p.cov_metric(),
        lambda p: p.centred(),
    ):
        with pytest.raises(MissingPartError, match="no sufficient statistics"):
            read(hinge)
    problem, nys, Xs, Y = _statistics_problem()
    stats_only = replace(problem, feature_rows=None)  # e.g. the CV's fold problems
    assert stats_only.squared_residual(0, np.zeros(problem.dim), np.full(2, 0.5)) > 0
    for read in (
        lambda p: p.row_data,
        lambda p: p.row_data.U,
        lambda p: p.features(),
        lambda p: p.view_outputs(np.zeros(p.dim)),
        lambda p: p.subset(np.arange(5), Y[:5]),
    ):
        with pytest.raises(MissingPartError, match="no feature rows"):
            read(stats_only)
    assert issubclass(MissingPartError, RuntimeError)


def test_parts_are_frozen_and_keep_to_their_data():
    problem, nys, Xs, Y = _statistics_problem()
    for obj, name in ((problem, "statistics"), (problem.stats, "gram"), (problem.row_data, "U")):
        with pytest.raises(FrozenInstanceError):
            setattr(obj, name, None)
    assert {f.name for f in fields(NystromStatistics)} == {
        "cross",
        "feature_sum",
        "target_sq",
        "target_sum",
        "gram",
        "feature_scatter",
    }
    assert {f.name for f in fields(FeatureRows)} == {"feature_map", "Xs", "U"}


@pytest.mark.parametrize("weighted", [False, True])
def test_subset_and_centring_act_on_the_parts(weighted):
    """A subset's statistics are its rows' moments (its rows: the same map); the centred
    problem changes the statistics only and keeps the rows."""
    problem, nys, Xs, Y = _statistics_problem(weighted)
    rows = np.arange(3, 17)
    sub = problem.subset(rows, Y[rows])
    U = nys.transform(Xs)[rows]
    s = np.ones(rows.size) if problem.sample_weight is None else problem.sample_weight[rows]
    np.testing.assert_allclose(sub.stats.gram, U.T @ (s[:, None] * U), atol=1e-10)
    np.testing.assert_allclose(sub.stats.cross, U.T @ (s[:, None] * Y[rows]), atol=1e-10)
    assert sub.row_data.feature_map is nys and sub.data is problem.data
    np.testing.assert_array_equal(sub.row_data.Xs[1], Xs[1][rows])
    c = problem.centred()
    assert c.feature_rows is problem.feature_rows and c.statistics is not problem.statistics
    np.testing.assert_allclose(c.stats.gram, problem.stats.feature_scatter, atol=1e-12)
    np.testing.assert_array_equal(c.stats.feature_sum, 0.0)
    # the rows-only problem of a loss that reads the rows: its subset reads the rows only
    hinge = NystromProblem(N, 2, P, Y, feature_rows=FeatureRows(nys, U=nys.transform(Xs)))
    sub = hinge.subset(rows, Y[rows])
    assert sub.statistics is None and np.array_equal(sub.row_data.U, nys.transform(Xs)[rows])


def test_from_rows_statistics_have_no_gram():
    problem, nys, Xs, Y = _statistics_problem()
    U = nys.transform(Xs)
    rows = NystromProblem.from_rows(U, Y, nys)
    assert rows.stats.gram is None and rows.row_data.U is U
    np.testing.assert_allclose(rows.stats.cross, problem.stats.cross, atol=1e-10)
    ref = FeatureMoments.from_features(U, Y)
    np.testing.assert_allclose(rows.stats.feature_sum, ref.sum, atol=1e-10)


# ---------------------------------------------------------------- the frozen full problem
def test_full_design_is_kept_without_mutating_the_problem():
    rng = np.random.default_rng(1)
    Ks = [np.cov(rng.normal(size=(N, 2 * N))) for _ in range(3)]
    sw = rng.uniform(0.5, 2.0, N)
    problem = MVMLProblem.full(Ks, np.ones((N, 1)), sw)
    assert "_design_cache" not in {f.name for f in fields(problem)}
    w = np.full(3, 1.0 / 3)
    P_ = problem.design(w)
    assert problem.design(w.copy()) is P_  # the fixed weights' design: built once
    direct = np.sqrt(sw)[:, None] * np.hstack([K / 3 for K in Ks])
    np.testing.assert_allclose(P_, direct, atol=1e-14)
    w2 = np.array([0.2, 0.3, 0.5])
    np.testing.assert_allclose(
        problem.design(w2), np.sqrt(sw)[:, None] * np.hstack([a * K for a, K in zip(w2, Ks)])
    )
    assert problem.design(w) is P_  # other weights do not replace it
    c = problem.centred()  # a new problem: its own design, of the centred kernels
    assert c.design(w) is not P_
    np.testing.assert_allclose(
        c.design(w), np.sqrt(sw)[:, None] * np.hstack([K / 3 for K in c.Ks]), atol=1e-14
    )


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("scale_rows", [True, False])
def test_full_squared_residual_builds_no_design_at_learned_weights(
    monkeypatch, weighted, scale_rows
):
    """``||y - W H g||^2``: at the fixed weights from the kept design (exactly its
    product), at other weights from ``sum_l w_l K_l g_l`` without building the design
    again, equal to the direct formula to rounding."""
    rng = np.random.default_rng(2)
    Ks = [np.cov(rng.normal(size=(N, 2 * N))) for _ in range(3)]
    Y = rng.normal(size=(N, 2))
    sw = rng.uniform(0.5, 2.0, N) if weighted else None
    problem = MVMLProblem.full(Ks, Y, sw, scale_rows=scale_rows)
    g = rng.normal(size=problem.dim)
    w = np.full(3, 1.0 / 3)
    r = problem.Y[:, 1] - problem.design(w) @ g
    assert problem.squared_residual(1, g, w) == float(r @ r)  # the kept design, exactly
    w2 = np.array([0.2, 0.3, 0.5])
    s = np.sqrt(sw) if weighted and scale_rows else np.ones(N)
    f = s * sum(a * K @ gl for a, K, gl in zip(w2, Ks, g.reshape(3, N)))
    direct = float(np.sum((problem.Y[:, 0] - f) ** 2))

    def no_design(*args):
        raise AssertionError("the design was built")

    monkeypatch.setattr(type(problem), "_design_of", no_design)
    assert problem.squared_residual(0, g, w2) == pytest.approx(direct, rel=1e-12)


# ---------------------------------------------------------------- the solver decision
def test_solver_plan_of_each_value():
    assert solver_plan("auto") == SolverPlan(structured=True, g_step=GStepMethod.DIRECT)
    assert solver_plan("dense") == SolverPlan(structured=False)
    cg = solver_plan("cg")
    assert cg.structured and cg.conjugate_gradient and not cg.direct_structured
    assert solver_plan("auto").direct_structured and not solver_plan("dense").direct_structured
    assert set(SOLVER_PLANS) == {"auto", "dense", "cg"}
    with pytest.raises(ValueError, match="solver must be one of"):
        solver_plan("lbfgs")


def _problem_of(est, nystrom):
    Xs, y = _data()
    est.set_params(n_landmarks=P if nystrom else None, random_state=0, joint_view=False)
    return est._make_loss(), est._build_problem(Xs, y[:, None])


@pytest.mark.parametrize("solver", ["auto", "dense", "cg"])
@pytest.mark.parametrize("nystrom", [True, False])
@pytest.mark.parametrize("metric", ["dense", "sparse", "identity"])
@pytest.mark.parametrize("learn_weights", [False, True])
def test_square_loss_path_for_each_parameter_combination(solver, nystrom, metric, learn_weights):
    """The structured path runs where the plan allows it and it applies (Nystrom mode,
    fixed weights, a structured metric); ``"cg"`` raises where it does not apply."""
    est = MVMLClassifier(solver=solver, metric=metric, learn_weights=learn_weights)
    loss, problem = _problem_of(est, nystrom)
    assert loss.solver_plan is solver_plan(solver)
    applies = nystrom and not learn_weights and metric != "sparse"
    if solver == "cg" and not applies:
        with pytest.raises(ValueError, match="solver='cg' needs the Nystrom mode"):
            loss.structured_applies(problem)
        return
    assert loss.structured_applies(problem) == (solver != "dense" and applies)


@pytest.mark.parametrize("solver", ["auto", "dense"])
@pytest.mark.parametrize("nystrom", [True, False])
@pytest.mark.parametrize("metric", ["dense", "sparse"])
@pytest.mark.parametrize("learn_weights", [False, True])
def test_hinge_loss_path_for_each_parameter_combination(solver, nystrom, metric, learn_weights):
    """The hinge loss's structured path: direct g-steps, fixed weights, a structured
    metric, in both modes."""
    est = MVMLSVC(solver=solver, metric=metric, learn_weights=learn_weights)
    loss, problem = _problem_of(est, nystrom)
    expected = solver == "auto" and not learn_weights and metric == "dense"
    assert loss.structured_applies(problem) == expected


@pytest.mark.parametrize(("solver", "fitted"), [("auto", "structured"), ("dense", "dense")])
def test_the_fit_reports_the_path_of_its_plan(solver, fitted):
    Xs, y = _data()
    est = MVMLRegressor(n_landmarks=P, solver=solver, random_state=0, max_iter=3)
    assert est.fit(Xs, y).solver_ == fitted


# ---------------------------------------------------------------- the data part, once per fit
def _count_data_parts(monkeypatch):
    """Every call of :func:`data_part`, from any module of the package that imported it."""
    from mvkernels.mvml import _data_part

    original = _data_part.data_part
    made = []

    def counted(*args, **kwargs):
        made.append(original(*args, **kwargs))
        return made[-1]

    for name, module in list(sys.modules.items()):
        if name.startswith("mvkernels") and getattr(module, "data_part", None) is original:
            monkeypatch.setattr(module, "data_part", counted)
    return made


@pytest.mark.parametrize("cls", [MVMLClassifier, MVMLSVC])
@pytest.mark.parametrize("solver", ["auto", "cg"])
def test_the_problem_chain_chooses_the_data_part_once(monkeypatch, cls, solver):
    if cls is MVMLSVC and solver == "cg":
        pytest.skip("solver='cg' is the square loss's")
    made = _count_data_parts(monkeypatch)
    Xs, y = _data()
    est = cls(n_landmarks=P, random_state=0, joint_view=False, solver=solver, metric="identity")
    problem = est._build_problem(Xs, y[:, None])
    assert len(made) == 1 and problem.data is made[0]


def _record_validated_parts(monkeypatch):
    """The views, targets and data part where the views are validated."""
    seen = []
    original = _base._BaseMVML._validated_problem_data

    def recorded(self, Xs, Y, mask, part, loss, context):
        seen.append((Xs, Y, part))
        return original(self, Xs, Y, mask, part, loss, context)

    monkeypatch.setattr(_base._BaseMVML, "_validated_problem_data", recorded)
    return seen


@pytest.mark.parametrize("cls", [MVMLClassifier, MVMLRegressor, MVMLSVC])
@pytest.mark.parametrize("data", ["numpy", "dask views", "dask targets", "full missing"])
@pytest.mark.parametrize("weighted", [False, True])
def test_a_fit_chooses_the_data_part_once(monkeypatch, cls, data, weighted):
    """A whole fit (the joint view, weighted rows and labels, one-vs-one included) calls
    ``data_part`` once, at its entry, and that part is the one of the validated views and
    the targets that the problem is built from (after ``with_client_targets`` where a
    weighted fit brings the targets to the client)."""
    from mvkernels.mvml._data_part import data_part

    Xs, y = _data()
    if cls is MVMLRegressor:
        y = y + np.linspace(0.0, 1.0, N)
    kw = dict(n_landmarks=P, random_state=0, max_iter=3)  # joint_view="auto": on
    if data in ("dask views", "dask targets"):
        da = pytest.importorskip("dask.array")
        if data == "dask views":
            Xs = [da.from_array(X, chunks=(10, -1)) for X in Xs]
        else:
            y = da.from_array(y, chunks=10)
    elif data == "full missing":  # full-kernel mode with a missing view: the completion
        Xs[1] = Xs[1].copy()
        Xs[1][:3] = np.nan
        kw["n_landmarks"] = None
    w = np.linspace(0.5, 2.0, N) if weighted else None
    made = _count_data_parts(monkeypatch)
    seen = _record_validated_parts(monkeypatch)
    est = cls(**kw).fit(Xs, y, sample_weight=w)
    assert len(made) == 1
    assert est.n_views_ == 3  # the joint view was built on the fit's part
    monkeypatch.undo()
    [(Xv, Y, part)] = seen
    assert part == data_part(Xv, Y)
    assert part.lazy_views == (data == "dask views")
    assert part.lazy_targets == (data == "dask targets" and not weighted)


def test_dask_problem_keeps_the_fits_part():
    da = pytest.importorskip("dask.array")
    Xs, y = _data()
    lazy = [da.from_array(X, chunks=(10, -1)) for X in Xs]
    kw = dict(n_landmarks=P, random_state=0, joint_view=False)
    square = MVMLClassifier(**kw)._build_problem(lazy, y[:, None])
    assert square.data == DaskData(lazy_views=True, lazy_targets=False)
    hinge = MVMLSVC(**kw)._build_problem(lazy, da.from_array(y[:, None], chunks=10))
    # the rows and targets gathered to the client: the views stay lazy
    assert hinge.data == DaskData(lazy_views=True, lazy_targets=False)
    assert isinstance(hinge.Y, np.ndarray) and hinge.row_data.U.shape == (N, 2 * P)
    assert DaskData(lazy_views=False, lazy_targets=True).with_client_targets() is IN_MEMORY
    assert IN_MEMORY.with_client_targets() is IN_MEMORY


def _record_threads(monkeypatch):
    seen = []

    def recorded(self, n):
        seen.append((type(self).__name__, self.lazy_views, self.lazy_targets, n))
        return original(self, n)

    original = DataPart.fit_threads
    dask_original = DaskData.fit_threads

    def dask_recorded(self, n):
        seen.append((type(self).__name__, self.lazy_views, self.lazy_targets, n))
        return dask_original(self, n)

    monkeypatch.setattr(DataPart, "fit_threads", recorded)
    monkeypatch.setattr(DaskData, "fit_threads", dask_recorded)
    return seen


def test_one_threads_rule_for_the_hinge_fit_and_the_cv_on_dask_views(monkeypatch):
    """Dask views with targets in memory: the hinge loss's problem data and the CV's
    bandwidths both ask the data part's ``fit_threads`` (one BLAS thread up to
    SERIAL_BLAS_MAX_SIZE rows); only lazy targets leave the threads as they are."""
    da = pytest.importorskip("dask.array")
    Xs, y = _data()
    lazy = [da.from_array(X, chunks=(10, -1)) for X in Xs]
    seen = _record_threads(monkeypatch)
    MVMLSVC(n_landmarks=P, random_state=0, joint_view=False)._build_problem(lazy, y[:, None])
    assert seen == [("DaskData", True, False, N)]
    assert not isinstance(DaskData(lazy_views=True).fit_threads(N), nullcontext)
    assert isinstance(DaskData(lazy_targets=True).fit_threads(N), nullcontext)
    seen.clear()
    cv = MVMLClassifierCV(
        n_landmarks=P, alphas=[0.1, 1.0], etas=[1.0], max_iter=2, cv=2, random_state=0
    )
    cv.fit(lazy, y)
    assert ("DaskData", True, False, N) in seen
    seen.clear()
    MVMLClassifier(n_landmarks=P, random_state=0)._build_problem(Xs, y[:, None])
    assert seen == []  # the square loss's statistics: as the threads are

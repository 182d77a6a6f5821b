"""``cv_results_`` (``SearchGrid.results``, ``union_results``) equal the per-candidate
definitions: the product of the reported axes' parameter values in C order (the
candidates of ``SearchGrid.candidates``, the rows of ``SearchGrid.results``) and, in a
union built column by column, each candidate's merged dict read key by key (values,
types, dtypes and masks)."""

from __future__ import annotations

import itertools

import numpy as np

from mvkernels.mvml.cv._grid import Axis, SearchGrid, union_results


def _grid() -> SearchGrid:
    return SearchGrid(
        (
            Axis("joint_view", (False, True, "only"), as_param=lambda v: v),
            Axis("bandwidth_factor", (1.0, 2.0)),
            Axis("alpha", (0.1, 1.0, 10.0)),
            Axis("eta", (np.nan,), reported=False),
            Axis("max_iter", (0, 1, 2), as_param=lambda i: i + 1),
        )
    )


def _same_column(a: np.ma.MaskedArray, b: np.ma.MaskedArray) -> None:
    assert type(a) is type(b) and a.dtype == b.dtype
    assert np.array_equal(np.ma.getmaskarray(a), np.ma.getmaskarray(b))
    for u, v in zip(a.data.tolist(), b.data.tolist()):
        assert type(u) is type(v) and (u == v or (u != u and v != v))


def test_results_columns_are_the_candidates_dicts():
    """The rows are the product of the reported axes' parameter values, the last axis
    fastest (the index of ``candidates`` is the position in that product), and the
    ``param_<name>`` columns read the rows' dicts."""
    g = _grid()
    scores = np.random.default_rng(0).uniform(size=(*g.shape, 2))
    res, _ = g.results(scores)
    shown = [[a.as_param(v) for v in a.values] for a in g.axes]
    product = list(itertools.product(*(range(a.size) for a in g.axes)))
    params = [
        {a.name: shown[k][i] for k, (a, i) in enumerate(zip(g.axes, at)) if a.reported}
        for at in product
    ]
    assert [index for index, _ in g.candidates()] == product
    assert [p for _, p in g.candidates()] == params
    assert res["params"] == params
    assert all(list(p) == list(q) for p, q in zip(res["params"], params))
    np.testing.assert_array_equal(res["mean_test_score"], scores.reshape(g.size, 2).mean(1))
    assert len({id(p) for p in res["params"]}) == g.size  # a dict per candidate
    for name in ("joint_view", "bandwidth_factor", "alpha", "max_iter"):
        _same_column(res[f"param_{name}"], np.ma.MaskedArray([p[name] for p in params], mask=False))
    assert "param_eta" not in res


def test_results_without_a_reported_axis():
    g = SearchGrid((Axis("eta", (1.0, 2.0), reported=False),))
    res, _ = g.results(np.zeros((2, 3)))
    assert res["params"] == [{}, {}] and res["params"][0] is not res["params"][1]


def _part(params: list[dict], seed: int) -> dict:
    rng = np.random.default_rng(seed)
    n = len(params)
    out: dict = {"params": params}
    for key in dict.fromkeys(k for p in params for k in p):
        out[f"param_{key}"] = np.ma.MaskedArray([p.get(key) for p in params], dtype=object)
    for k in range(2):
        out[f"split{k}_test_score"] = rng.uniform(size=n)
    out["mean_test_score"] = (out["split0_test_score"] + out["split1_test_score"]) / 2
    out["std_test_score"] = np.zeros(n)
    out["rank_test_score"] = np.ones(n, dtype=np.int32)
    return out


def test_union_columns_are_the_merged_dicts_key_by_key():
    g = _grid()
    grid_part = g.results(np.random.default_rng(1).uniform(size=(*g.shape, 2)))[0]
    parts = [
        grid_part,
        # another grid: other keys, one of them absent from the first part
        _part([{"alpha": a, "loss": "hinge"} for a in (1e-5, 1e-4)], 2),
        # candidates with different keys, one of them an axis name of the union
        _part([{"alpha": 1.0}, {"alpha": 2.0, "multi_class": "ovo"}, {"eta": 0.5}], 3),
    ]
    values = [("ovr", "squared"), ("ovr", "hinge"), ("ovo", "squared")]
    names = ("multi_class", "loss")
    res, best, which = union_results(parts, names, values)
    merged = [
        {**dict(zip(names, v)), **p} for v, part in zip(values, parts) for p in part["params"]
    ]
    assert res["params"] == merged
    assert all(list(p) == list(q) for p, q in zip(res["params"], merged))
    keys = list(names) + list(dict.fromkeys(k for p in merged for k in p if k not in names))
    assert [k for k in res if k.startswith("param_")] == [f"param_{k}" for k in keys]
    for key in keys:
        expected = np.ma.MaskedArray(
            [p.get(key) for p in merged], mask=[key not in p for p in merged], dtype=object
        )
        _same_column(res[f"param_{key}"], expected)
    mean = np.concatenate([p["mean_test_score"] for p in parts])
    assert best == int(np.argmax(mean))
    assert which == int(
        np.searchsorted(np.cumsum([len(p["params"]) for p in parts]), best, "right")
    )

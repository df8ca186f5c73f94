"""Paired bootstrap per item: shared groups, one set of draws, missing items, and the headline path."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kinegraph.report.bootstrap import paired_bootstrap, paired_bootstrap_items
from kinegraph.suites import GroupStats, mean_columns


def _items(groups: list[str], values: dict[str, list[float | None]]) -> dict[str, GroupStats]:
    """One [value, 1] column pair per item and group (None: the group lacks the item)."""
    columns = []
    for per_group in values.values():
        columns.append([0.0 if v is None else v for v in per_group])
        columns.append([0.0 if v is None else 1.0 for v in per_group])
    matrix = np.array(columns, float).T.reshape(len(groups), 2 * len(values))
    return mean_columns(groups, matrix, list(values))


def test_a_clear_gain_excludes_zero_and_a_wash_does_not():
    groups = [f"g{i:02d}" for i in range(40)]
    # item "gain": 4/40 right before, 36/40 after (the other groups): +0.8; "wash": halves swap: 0.
    a = _items(
        groups, {"gain": [float(i < 4) for i in range(40)], "wash": [float(i < 20) for i in range(40)]}
    )
    b = _items(
        groups, {"gain": [float(i >= 4) for i in range(40)], "wash": [float(i >= 20) for i in range(40)]}
    )
    deltas = paired_bootstrap_items(a, b, n_boot=2000, seed=0)
    gain, wash = deltas["gain"], deltas["wash"]
    assert gain.delta == pytest.approx(0.8) and gain.significant and 0.5 < gain.low < 0.8 < gain.high <= 1.0
    assert wash.delta == pytest.approx(0.0) and not wash.significant and wash.low < -0.1 and wash.high > 0.1
    assert gain.n_groups == wash.n_groups == 40


def test_only_groups_both_runs_have_are_paired():
    a = _items([f"g{i}" for i in range(10)], {"x": [1.0] * 10})
    b = _items([f"g{i}" for i in range(5, 15)], {"x": [0.0] * 5 + [1.0] * 5})
    d = paired_bootstrap_items(a, b, n_boot=200)["x"]
    # on g5..g9 the score falls from 1 to 0; b's own mean (0.5) would wrongly say -0.5
    assert d.delta == -1.0 and d.low == d.high == -1.0 and d.n_groups == 5


def test_an_item_counts_the_shared_groups_that_hold_it():
    groups = [f"g{i}" for i in range(6)]
    a = _items(groups, {"x": [1.0] * 6, "y": [1.0, 1.0, None, None, None, None]})
    b = _items(groups, {"x": [1.0] * 6, "y": [0.0, 0.0, 0.0, None, None, None]})
    d = paired_bootstrap_items(a, b, n_boot=200)
    assert d["x"].n_groups == 6 and d["x"].delta == 0.0
    assert d["y"].n_groups == 3 and d["y"].delta == -1.0


def test_an_item_missing_from_one_run_has_no_delta():
    groups = ["g0", "g1"]
    a = _items(groups, {"x": [1.0, 0.0]})
    b = _items(groups, {"x": [1.0, 1.0], "new": [1.0, 1.0]})
    d = paired_bootstrap_items(a, b, n_boot=100)
    assert list(d) == ["x", "new"]
    assert math.isnan(d["new"].delta) and d["new"].n_groups == 0 and not d["new"].significant
    assert d["x"].delta == 0.5


def test_no_shared_groups_and_no_items():
    a = _items(["g0"], {"x": [1.0]})
    b = _items(["h0"], {"x": [1.0]})
    assert math.isnan(paired_bootstrap_items(a, b)["x"].delta)
    assert paired_bootstrap_items({}, {}) == {}


def test_one_item_uses_the_headline_draws():
    groups = [f"g{i}" for i in range(25)]
    rng = np.random.default_rng(3)
    a = _items(groups, {"x": list(rng.random(25))})["x"]
    b = _items(groups, {"x": list(rng.random(25))})["x"]
    assert paired_bootstrap_items({"x": a}, {"x": b}, n_boot=500, seed=4)["x"] == paired_bootstrap(
        a, b, n_boot=500, seed=4
    )


def test_identical_runs_have_a_zero_interval():
    a = _items(["g0", "g1", "g2"], {"x": [1.0, 0.0, 1.0]})["x"]
    assert tuple(paired_bootstrap(a, a, n_boot=100)) == (0.0, 0.0, 0.0, 3)


def test_weights_are_one_shared_read_only_draw():
    from kinegraph.report.bootstrap import bootstrap_weights

    w = bootstrap_weights(7, 50, 1)
    assert w is bootstrap_weights(7, 50, 1) and w.shape == (50, 7)
    assert (w.sum(axis=1) == 7).all()  # each resample draws as many groups as there are
    with pytest.raises(ValueError):
        w[0, 0] = 3.0

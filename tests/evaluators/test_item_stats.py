"""`Suite.item_stats` reproduces every per-question / per-task breakdown entry of the official scorers.

Each suite runs twice (two noise seeds) on its synthetic world with a noisy loopback VLM; the runner
stores the official metrics (scored from the loaded data), and the item statistics are rebuilt from
predictions alone, as `kinegraph compare` does.
"""

from __future__ import annotations

import json
import math

import pytest

from kinegraph.benchmarks.egodyn.questions import load_question_bank
from kinegraph.evaluators.egodyn import read_prediction_records
from kinegraph.evaluators.egodyn_suite import question_stats
from kinegraph.report import compare
from kinegraph.report.runs import RunData
from kinegraph.suites import samples_from_predictions, suites
from tests.support.suite_runs import SUITES, suite_run

# EgoDyn reports balanced accuracy rounded to 4 decimals (upstream); the item statistic is exact.
DIGITS = {"egodyn": 4}


@pytest.fixture(
    scope="module",
    # DSI's runs measure dense flow on every video (the slowest world to run): marked slow
    params=[pytest.param(s, marks=pytest.mark.slow) if s == "dsi" else s for s in SUITES],
)
def noisy_runs(request, tmp_path_factory) -> list[RunData]:
    run_dirs = suite_run(request.param, tmp_path_factory.mktemp(request.param), seeds=(0, 1))
    return [RunData.load(d) for d in run_dirs]


def test_item_stats_equal_the_official_breakdown(noisy_runs):
    for run in noisy_runs:
        suite = run.suite
        stored = json.loads((run.path / "metrics.json").read_text())
        breakdown = suite.breakdown(stored)
        items = suite.item_stats(samples_from_predictions(run.predictions), run.predictions)
        assert list(items) == list(breakdown) and len(items) >= 4
        values = [v for v in breakdown.values() if v is not None]
        assert len(set(values)) >= 3, "the noisy run gives the items different scores"
        digits = DIGITS.get(suite.name)
        for name, stats in items.items():
            metric = stats.metric()
            if breakdown[name] is None:
                assert math.isnan(metric), name
            elif digits is None:
                assert metric == pytest.approx(breakdown[name], abs=1e-9), name
            else:
                assert round(metric, digits) == breakdown[name], name
                assert metric == pytest.approx(breakdown[name], abs=0.5 * 10**-digits), name


def test_items_are_resampled_over_the_headline_groups(noisy_runs):
    """Every item row belongs to a group of the headline statistics (clips, videos, scenes, rows)."""
    for run in noisy_runs:
        headline_groups = set(run.group_stats.groups)
        for name, stats in run.item_stats.items():
            assert set(stats.groups) <= headline_groups, name
            assert stats.matrix.shape[0] == len(stats.groups)


def test_compare_item_deltas_are_the_official_differences(noisy_runs):
    """Both runs cover the same groups, so each item delta is the difference of the official values."""
    a, b = noisy_runs
    comparison = compare([a.path, b.path], n_boot=300)
    assert comparison.item_deltas[0] == {}
    deltas = comparison.item_deltas[1]
    assert list(deltas) == comparison.item_names == list(a.suite.breakdown(a.metrics))
    tolerance = 1e-4 if a.suite.name in DIGITS else 1e-9  # rounded official values
    changed = 0
    for name, d in deltas.items():
        before, after = comparison.breakdowns[0][name], comparison.breakdowns[1][name]
        if before is None or after is None:
            assert math.isnan(d.delta), name
            continue
        assert d.delta == pytest.approx(after - before, abs=tolerance), name
        assert d.n_groups >= 1
        changed += abs(after - before) > 1e-9
    assert changed >= 2, "the two noise seeds move several items"


def test_egodyn_question_stats_on_upstream_predictions(golden):
    """The upstream flow_heuristic predictions: per_question balanced_acc of the expected metrics file."""
    records = read_prediction_records(golden / "egodyn" / "flow_heuristic.jsonl")
    expected = json.loads((golden / "egodyn" / "expected_metrics__flow_heuristic.json").read_text())
    stats = question_stats(records, load_question_bank())
    per_question = expected["per_question"]
    assert sorted(stats) == sorted(per_question) and len(stats) == 6  # the questions the file answers
    for qid, s in stats.items():
        assert round(s.metric(), 4) == per_question[qid]["balanced_acc"], qid
    assert {len(s.groups) for s in stats.values()} == {1000}  # one row per clip


def test_quantiphy_category_stats_on_the_published_results(golden):
    """gpt-5.1's parsed values: each category's item equals `mra_<cat>` of the official results CSV."""
    import pandas as pd

    from kinegraph.benchmarks.quantiphy.loader import load
    from kinegraph.types import Prediction

    q = golden / "quantiphy"
    samples = load(q / "quantiphy_validation.csv")
    outputs = pd.read_csv(q / "gpt-5.1.csv")
    parsed = dict(zip(outputs["Unnamed: 0"].astype(str), outputs["parsed_value"], strict=True))
    predictions = [
        Prediction(
            sample_id=s.id,
            benchmark="quantiphy",
            group=s.group,
            answer=None if pd.isna(parsed[str(s.question_id)]) else float(parsed[str(s.question_id)]),
        )
        for s in samples
    ]
    official = pd.read_csv(q / "all_model_results.csv").iloc[0]
    items = suites.get("quantiphy").item_stats(samples, predictions)
    assert list(items) == ["S2", "D2", "S3", "D3"]
    for category, stats in items.items():
        assert stats.metric() == pytest.approx(official[f"mra_{category}"], abs=1e-12), category


def test_suites_without_items_default_to_none():
    from kinegraph.suites import Suite

    suite = Suite(
        name="x",
        load=lambda path: [],
        score=lambda s, p: {},
        export=lambda s, p, d: [],
        headline=lambda m: {},
        group_stats=suites.get("egodyn").group_stats,
        primary="x",
    )
    assert suite.item_stats([], []) == {}

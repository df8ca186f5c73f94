"""Ablation statistics: Holm on known p-values, a 2x2 design with known effects, every pair, repeats."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from kinegraph.cli import app
from kinegraph.report.factorial import factorial_2x2
from kinegraph.report.holm import holm
from kinegraph.report.repeats import format_mean_sd, run_seed
from kinegraph.report.runs import RunData
from kinegraph.suites import GroupStats

GROUPS = [f"g{i:02d}" for i in range(40)]


def _accuracy(n_right: int) -> GroupStats:
    """One question per group, right on the first `n_right` groups: accuracy n_right / 40."""
    matrix = np.array([[1.0 if i < n_right else 0.0, 1.0] for i in range(len(GROUPS))])
    return GroupStats(list(GROUPS), matrix, lambda sums: sums[:, 0] / sums[:, 1])


def test_holm_on_textbook_p_values():
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 -> 0.02, 0.03, 0.06, 0.04 -> monotone 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    adjusted = holm([0.2, math.nan, 0.9])  # NaN is no test: m = 2
    assert adjusted[0] == pytest.approx(0.4) and math.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.9)
    assert holm([0.6, 0.7]) == [1.0, 1.0]


def test_a_2x2_design_recovers_known_main_effects_and_interaction():
    # accuracies: neither 0.1, A 0.5, B 0.3, both 0.9
    effects = factorial_2x2([_accuracy(4), _accuracy(20), _accuracy(12), _accuracy(36)], n_boot=1000, seed=1)
    a, b, ab = effects["main effect A"], effects["main effect B"], effects["interaction A x B"]
    assert a.delta == pytest.approx(0.5) and b.delta == pytest.approx(0.3) and ab.delta == pytest.approx(0.2)
    assert a.low > 0 and a.p < 0.01 and a.n_groups == 40
    no_effect = factorial_2x2([_accuracy(10)] * 4, n_boot=200)["main effect A"]
    assert (no_effect.delta, no_effect.low, no_effect.high) == (0.0, 0.0, 0.0) and no_effect.p == 1.0


def test_mean_sd_of_repeats():
    assert format_mean_sd([0.5, 0.7]) == "0.600 ± 0.141 (n=2)"
    assert format_mean_sd([None, 0.25]) == "0.250 (n=1)"


def test_repeats_show_the_seed_a_run_sent():
    def seed_of(info: dict) -> str:
        return run_seed(RunData(Path("run"), info, []))

    assert seed_of({"config": {"seed": 1}, "seed_sent": {"backend": True}}) == "1"
    assert seed_of({"config": {"seed": None}, "seed_sent": {"backend": False}}) == "none"
    assert seed_of({"config": {"seed": 0}}) == "none"  # run.json from before seeds were sent anywhere


def test_compare_all_pairs_and_repeats(tad_pair, tmp_path):
    base, tools = tad_pair
    again = tmp_path / "tools-again"
    shutil.copytree(tools, again)  # a second run of the same arm: a repeat
    out = tmp_path / "r.md"
    result = CliRunner().invoke(
        app, ["compare", str(base), str(tools), str(again), "--pairs", "all", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    text = out.read_text()
    pairs = text.split("Every pair of runs", 1)[1].split("\n\n", 2)[1]
    rows = [line for line in pairs.splitlines() if line.startswith("| 1.") or line.startswith("| 2.")]
    assert len(rows) == 3  # 1-2, 1-3, 2-3
    assert "| 2. tad.tcogmap | 3. tad.tcogmap | +0.000 [0.000, 0.000] |" in text  # identical runs
    assert "Repeats of the same arm" in text and "| tad.tcogmap | 2 | none,none |" in text
    assert "Holm-adjusted over each run's items" in text


def test_compare_2x2_needs_four_runs(tad_pair):
    result = CliRunner().invoke(app, ["compare", *map(str, tad_pair), "--pairs", "2x2"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: --pairs 2x2 needs 4 runs (neither, A, B, both), got 2"

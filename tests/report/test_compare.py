"""`compare` on hand-built TAD runs: per-task deltas whose sign and size follow from the answers."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kinegraph.cli import app
from kinegraph.report import compare


def test_item_deltas_follow_the_answers(tad_pair):
    comparison = compare(list(tad_pair), n_boot=2000)
    assert comparison.item_names == ["mc_action", "temp_ordering"]
    assert comparison.breakdowns == [
        {"mc_action": pytest.approx(0.1), "temp_ordering": 0.5},
        {"mc_action": pytest.approx(0.9), "temp_ordering": 0.5},
    ]
    assert comparison.item_deltas[0] == {}
    gain, wash = comparison.item_deltas[1]["mc_action"], comparison.item_deltas[1]["temp_ordering"]
    assert gain.delta == pytest.approx(0.8) and gain.significant and gain.low > 0.5 and gain.n_groups == 30
    assert wash.delta == 0.0 and not wash.significant and wash.low < -0.1 < 0.1 < wash.high
    headline = comparison.deltas[1]  # task average: (0.1 + 0.5) / 2 -> (0.9 + 0.5) / 2
    assert headline.delta == pytest.approx(0.4) and headline.significant


def test_cli_json_report_has_every_number(tad_pair, tmp_path):
    out = tmp_path / "report.json"
    result = CliRunner().invoke(app, ["compare", *map(str, tad_pair), "--out", str(out), "--n-boot", "500"])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert (
        report["benchmark"] == "tad"
        and report["n_boot"] == 500
        and report["items"]
        == [
            "mc_action",
            "temp_ordering",
        ]
    )
    base, tools = report["runs"]
    assert base["delta"] is None and base["item_deltas"] == {}
    assert tools["breakdown"]["mc_action"] == pytest.approx(0.9)
    assert tools["headline"]["task_average"] == pytest.approx(0.7)
    gain = tools["item_deltas"]["mc_action"]
    assert gain["delta"] == pytest.approx(0.8) and gain["significant"] is True and gain["n_groups"] == 30
    assert gain["low"] > 0.5 and gain["high"] <= 1.0
    assert tools["item_deltas"]["temp_ordering"]["significant"] is False
    assert tools["delta"]["delta"] == pytest.approx(0.4)
    # the terminal shows the item table too
    assert "per question / task" in result.output and "mc_action" in result.output

"""The four suite adapters on hand-made runs: official layouts, failures, per-group statistics."""

from __future__ import annotations

import json

import pytest

from kinegraph.suites import suites
from kinegraph.types import Prediction, Sample, Status


def _tad(idx, task, scene, answer, kind="letter", ego=True):
    return Sample(
        id=f"tad/{task}/{idx}",
        benchmark="tad",
        group=scene,
        question_id=task,
        question="What is the ego vehicle doing?" if ego else "What is the bus doing?",
        options=["A. x", "B. y"] if kind == "letter" else None,
        answer=[str(a) for a in answer] if isinstance(answer, list) else answer,
        metadata={"task": task, "idx": idx, "answer_value": answer, "answer_kind": kind, "ego": ego},
    )


def _pred(sample, answer=None, raw=None, status=Status.ok):
    return Prediction(
        sample_id=sample.id,
        benchmark=sample.benchmark,
        group=sample.group,
        answer=answer,
        raw=raw,
        status=status,
        ground_truth=sample.answer,
        metadata=sample.metadata,
    )


def test_tad_scores_missing_and_failed_as_zero_and_averages_present_tasks(tmp_path):
    suite = suites.get("tad")
    s = [
        _tad(0, "mc_action", "s1", "A"),
        _tad(1, "mc_action", "s2", "B"),
        _tad(0, "temp_action_localize", "s1", [3, 9], "localization"),
        _tad(1, "temp_action_localize", "s2", [15], "localization"),
    ]
    p = [
        _pred(s[0], "A"),  # right
        _pred(s[1], None, status=Status.api_error),  # failed call: upstream writes "ERROR" -> 0
        _pred(s[2], ["3", "15"]),  # IoU {3,15} vs {3,9} = 1/3
    ]  # s[3] has no prediction: 0, the denominator is the ground truth
    metrics = suite.score(s, p)
    assert metrics["all"]["mc_action"] == 0.5
    assert metrics["all"]["temp_action_localize"] == pytest.approx(1 / 6)
    assert metrics["all"]["average"] is None  # 2 of 7 tasks
    assert suite.headline(metrics)["task_average"] == pytest.approx((0.5 + 1 / 6) / 2)
    stats = suite.group_stats(s, p)
    assert stats.groups == ["s1", "s2"] and stats.metric() == pytest.approx((0.5 + 1 / 6) / 2)
    paths = suite.export(s, p, tmp_path)
    records = [json.loads(line) for line in (tmp_path / "mc_action.jsonl").read_text().splitlines()]
    assert [r["pred"] for r in records] == ["A", "ERROR"] and len(paths) == 2
    loc = json.loads((tmp_path / "temp_action_localize.jsonl").read_text())
    assert loc["pred"] == [3, 15]  # ints again, as the data stores keysegments


def _sts(man_id, group, scenario, letter):
    return Sample(
        id=f"stsbench/{man_id}",
        benchmark="stsbench",
        group=str(man_id),
        question_id=group,
        question="q",
        options=["A. a", "B. b"],
        answer=letter,
        metadata={"man_id": man_id, "scenario_group": group, "scenario": scenario, "answer_text": scenario},
    )


def test_stsbench_first_character_macro_means_and_empty_output():
    suite = suites.get("stsbench")
    s = [
        _sts(0, "ego", "turn", "A"),
        _sts(1, "ego", "turn", "B"),
        _sts(2, "ego", "stop", "A"),
        _sts(3, "agent", "walk", "B"),
    ]
    p = [
        _pred(s[0], raw="A"),
        _pred(s[1], raw="The answer is B"),
        _pred(s[2], raw=None, status=Status.api_error),
        _pred(s[3], raw="b"),
    ]
    metrics = suite.score(s, p)
    # ego: turn 1/2, stop 0/1 -> 0.25; agent: walk 1/1 -> 1.0; ego_agent, agent_agent absent
    assert metrics["ego"] == 0.25 and metrics["agent"] == 1.0 and metrics["average"] is None
    assert metrics["group_average"] == 0.625 and metrics["n_empty"] == 1
    assert suite.group_stats(s, p).metric() == pytest.approx(0.625)


def _dsi(variant, row, gt, cate=2):
    return Sample(
        id=f"dsi/{variant}/{row}",
        benchmark="dsi",
        group=str(row),
        question_id="c",
        question="q",
        answer=gt,
        metadata={"variant": variant, "row": row, "cate": cate},
    )


def test_dsi_rows_need_every_variant_and_failures_are_E():
    suite = suites.get("dsi")
    variants = ("std", "hflip", "reverse", "reverse_hflip")
    s = [_dsi(v, r, "A") for r in (0, 1) for v in variants] + [_dsi("std", 2, "A")]
    p = [_pred(x, "A") for x in s[:6]] + [_pred(s[6], None, raw="no tags", status=Status.parse_failure)]
    # row 2 has only std: left out; row 1: std, hflip right, reverse unparsed ("E"), reverse_hflip missing
    metrics = suite.score(s, p)
    assert metrics["n_rows"] == 2
    assert metrics["sample_wise"]["overall"] == pytest.approx(6 / 8)
    assert metrics["group_wise"]["overall"] == 0.5  # row 0: 4 of 4, row 1: 2 of 4 (< 3)
    assert suite.group_stats(s, p).metric() == pytest.approx(6 / 8)


def test_autodridm_failed_call_scores_zero_and_image_groups():
    from kinegraph.benchmarks.autodridm.loader import TASKS

    suite = suites.get("autodridm")
    s = [
        Sample(
            id=f"a/{t}/{i}",
            benchmark="autodridm",
            group=f"img{i}",
            question_id=t,
            question="q",
            answer="A",
            metadata={"task": t, "multi_select": False, "danger_score": 4.0, "high_risk": True},
        )
        for t in TASKS
        for i in (0, 1)
    ]
    p = [_pred(x, raw="<answer>A</answer>" if x.group == "img0" else None) for x in s]
    metrics = suite.score(s, p)
    assert metrics["all"]["average"] == 0.5 and suite.headline(metrics)["high_risk_average"] == 0.5
    assert suite.group_stats(s, p).metric() == 0.5

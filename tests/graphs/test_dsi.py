"""DSI-Bench graphs end to end over the synthetic clips (four variants) with a text-only loopback VLM."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.report import compare
from tests.support.suite_readers import dsi_reader


def _run(kinegraph, world, out, graph, server, *extra):
    return kinegraph(
        "run", "dsi", "--graph", graph, "--model", "vllm:loopback-vlm", "--base-url", server.base_url,
        "--data", world, "--out", out, "--no-cache", "--no-progress", *extra,
    )  # fmt: skip


@pytest.mark.slow
def test_baseline_vs_camera_motion_compare(dsi_world, kinegraph, tmp_path):
    with OpenAILoopback(responder=dsi_reader) as server:
        _run(kinegraph, dsi_world, tmp_path / "base", "dsi.baseline", server)
        _run(kinegraph, dsi_world, tmp_path / "tools", "dsi.tools", server)
        requests = list(server.requests)
    assert len(requests) == 2 * 72  # 18 rows x 4 variants, one attempt each (every answer parses)
    parts = requests[-1].body["messages"][0]["content"]
    assert sum(p["type"] == "image_url" for p in parts) == 15 and parts[-1]["type"] == "text"
    assert "Camera self-motion measured" in parts[-1]["text"]
    assert parts[-1]["text"].startswith("You are a vision-language expert.")

    tools = json.loads((tmp_path / "tools" / "metrics.json").read_text())
    base = json.loads((tmp_path / "base" / "metrics.json").read_text())
    per_category = tools["sample_wise"]["per_category"]
    # Camera questions are answered in every variant: mirror and reversal flip the measured flow too.
    assert per_category["Cam:static scene"] == per_category["Cam:dynamic scene"] == 1.0
    assert tools["group_wise"]["per_category"]["Cam:dynamic scene"] == 1.0
    assert per_category["Obj:static cam"] == base["sample_wise"]["per_category"]["Obj:static cam"]

    # the official per-variant CSVs re-score to the same numbers through `kinegraph evaluate dsi`
    rescored = json.loads(
        kinegraph("evaluate", "dsi", tmp_path / "tools" / "official", "--data", dsi_world).output
    )
    assert rescored["sample_wise"]["overall"] == pytest.approx(tools["sample_wise"]["overall"])
    assert rescored["group_wise"]["overall"] == pytest.approx(tools["group_wise"]["overall"])

    comparison = compare([tmp_path / "base", tmp_path / "tools"], n_boot=500)
    delta = comparison.deltas[1]
    assert delta.n_groups == 18 and delta.low > 0
    assert delta.delta == pytest.approx(tools["sample_wise"]["overall"] - base["sample_wise"]["overall"])
    assert comparison.breakdowns[1]["Cam:static scene"] == 1.0
    out = kinegraph("compare", tmp_path / "base", tmp_path / "tools").output
    assert "dsi.tools" in out and "sample_wise" in out


def test_unparsable_answers_are_asked_again_then_E(dsi_world, kinegraph, tmp_path):
    replies = iter(["I think it moves left.", "<answer>B</answer>"] + ["no tags"] * 100)
    with OpenAILoopback(responder=lambda body: next(replies)) as server:
        extra = ("--limit", "2", "--concurrency", "1", "-O", "max_attempts=3")
        _run(kinegraph, dsi_world, tmp_path / "r", "dsi.baseline", server, *extra)
        temperatures = [r.body.get("temperature") for r in server.requests]
    predictions = [
        json.loads(line) for line in (tmp_path / "r" / "predictions.jsonl").read_text().splitlines()
    ]
    assert [p["answer"] for p in predictions] == ["B", "E"]
    assert [p["status"] for p in predictions] == ["ok", "parse_failure"]
    assert len(temperatures) == 2 + 3 and temperatures[:2] == [0.0, 1.0]


def test_a_limited_runs_export_scores_against_its_own_metadata(dsi_world, kinegraph, tmp_path):
    # 18 rows x 4 variants, variant-major: 59 samples hold rows 0-4 in all four variants
    with OpenAILoopback(responder=dsi_reader) as server:
        _run(kinegraph, dsi_world, tmp_path / "r", "dsi.baseline", server, "--limit", "59")
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    official = tmp_path / "r" / "official"
    assert metrics["n_rows"] == 5
    for variant in ("std", "hflip", "reverse", "reverse_hflip"):
        meta = pd.read_csv(official / "metadatas" / f"{variant}.csv")
        source = pd.read_csv(dsi_world / "metadatas" / f"{variant}.csv")
        assert meta["row"].tolist() == [0, 1, 2, 3, 4]
        assert meta["GT"].tolist() == source["GT"].tolist()[:5]
        assert meta["cate"].tolist() == source["cate"].tolist()[:5]
        assert len(pd.read_csv(official / variant / "kinegraph.csv")) == 5

    rescored = json.loads(kinegraph("evaluate", "dsi", official, "--data", official).output)
    for method in ("sample_wise", "group_wise"):
        assert rescored[method] == metrics[method]
    assert rescored["single_variant"] == metrics["single_variant"]
    # against the full dataset, as upstream: every metadata row needs an answer (one line, exit 2)
    refused = kinegraph("evaluate", "dsi", official, "--data", dsi_world, expect=2)
    assert refused.output.startswith("error:") and "5 rows for 18 questions" in refused.output

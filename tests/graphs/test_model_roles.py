"""Graphs with several model roles, end to end: each role on its own loopback server.

Scene-CoT's captioner (the VLM) and answerer (the paper's Qwen2.5-14B-Instruct-1M) are two servers; each
must see only its own role's requests, and run.json, the trace and the comparison report must say which
model did what and what each cost.
"""

from __future__ import annotations

import json

import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.evaluators.stsbench import score_file
from tests.support.suite_readers import autodridm_reader, stsbench_reader, tad_reader

ANSWERER = "vllm:qwen2.5-14b-instruct-1m"


def _scene_cot(kinegraph, world, out, vlm, llm, prices, *extra, expect=0):
    tad, nus = world
    return kinegraph(
        "run", "tad", "--graph", "tad.scene_cot", "--model", "vllm:captioner-vl", "--base-url", vlm.base_url,
        "--role", f"answerer={ANSWERER}", "--role-option", f"answerer.base_url={llm.base_url}",
        "--role-option", f"answerer.prices={prices}",
        "--data", tad, "--data-option", f"nuscenes_root={nus}", "--out", out, "--no-cache", "--no-progress",
        "--limit", "14", *extra, expect=expect,
    )  # fmt: skip


def test_scene_cot_captions_on_one_server_and_answers_on_another(tad_world, kinegraph, tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("vllm:\n  qwen2.5-14b-instruct-1m: {input: 1.0, output: 2.0}\n")
    out = tmp_path / "cot"
    with (
        OpenAILoopback(responder=tad_reader, usage=(100, 10)) as vlm,
        OpenAILoopback(responder=tad_reader, usage=(7, 3)) as llm,
    ):
        _scene_cot(kinegraph, tad_world, out, vlm, llm, prices)
        captioning, answering = list(vlm.requests), list(llm.requests)

    # the VLM server saw only the chained captioning turns, the LLM server only the 14 answers
    assert captioning and len(captioning) % 4 == 0
    assert all(r.body["messages"][0]["role"] == "user" for r in captioning)
    assert {r.body["model"] for r in captioning} == {"captioner-vl"}
    assert len(answering) == 14 and all(r.body["messages"][0]["role"] == "system" for r in answering)
    assert {r.body["model"] for r in answering} == {"qwen2.5-14b-instruct-1m"}
    assert all("description of video keysegment" in r.body["messages"][1]["content"] for r in answering)

    info = json.loads((out / "run.json").read_text())
    assert info["role_models"] == {"captioner": "vllm:captioner-vl", "answerer": ANSWERER}
    by_role = info["totals"]["usage_by_role"]
    assert by_role["captioner"]["requests"] == len(captioning)
    assert by_role["captioner"]["input_tokens"] == 100 * len(captioning)
    assert by_role["captioner"]["cost_usd"] == 0.0
    assert by_role["answerer"]["requests"] == 14 and by_role["answerer"]["output_tokens"] == 3 * 14
    assert by_role["answerer"]["cost_usd"] == pytest.approx(14 * (7 * 1.0 + 3 * 2.0) / 1e6)
    assert info["totals"]["usage"]["requests"] == len(captioning) + 14

    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    answered_by = {s.get("model") for p in predictions for s in p["trace"] if s.get("role") == "answerer"}
    captioned_by = {m for p in predictions for s in p["trace"] for m in s.get("captioner", [])}
    assert answered_by == {ANSWERER} and captioned_by == {"vllm:captioner-vl"}

    report = kinegraph("compare", out, "--out", tmp_path / "report.json")
    assert "cost by model role" in report.output
    runs = json.loads((tmp_path / "report.json").read_text())["runs"]
    assert runs[0]["usage_by_role"]["answerer"]["model"] == ANSWERER
    assert runs[0]["usage_by_role"]["answerer"]["cost_usd"] == pytest.approx(by_role["answerer"]["cost_usd"])


def test_resuming_with_another_answerer_is_refused(tad_world, kinegraph, tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("vllm: {}\n")
    out = tmp_path / "cot"
    with OpenAILoopback(responder=tad_reader) as vlm, OpenAILoopback(responder=tad_reader) as llm:
        _scene_cot(kinegraph, tad_world, out, vlm, llm, prices, "--limit", "2")
        tad, nus = tad_world
        refused = kinegraph(
            "run", "tad", "--graph", "tad.scene_cot", "--model", "vllm:captioner-vl",
            "--base-url", vlm.base_url, "--data", tad, "--data-option", f"nuscenes_root={nus}", "--out", out,
            "--no-cache", "--no-progress", "--limit", "2", expect=2,
        )  # fmt: skip
    assert "holds another run (roles" in refused.stderr and "pass another --out" in refused.stderr


def test_stsbench_scene_cot_end_to_end(sts_world, kinegraph, tmp_path):
    out = tmp_path / "sts_cot"
    with OpenAILoopback(responder=stsbench_reader) as vlm, OpenAILoopback(responder=answer_in_tags) as llm:
        kinegraph(
            "run", "stsbench", "--graph", "stsbench.scene_cot", "--model", "vllm:vl",
            "--base-url", vlm.base_url, "--role", "answerer=vllm:llm",
            "--role-option", f"answerer.base_url={llm.base_url}",
            "--data", sts_world, "--data-option", f"data_root={sts_world.parent}", "--out", out, "--no-cache",
            "--no-progress",
        )  # fmt: skip
        captioning, answering = list(vlm.requests), list(llm.requests)
    # one keysegment per scenario: 4 chained turns on 4 of its 6 frames, then one answer
    assert len(captioning) == 4 * 24 and len(answering) == 24
    first_turns = [r for r in captioning if len(r.body["messages"]) == 1]
    assert len(first_turns) == 24
    assert all(
        sum(p["type"] == "image_url" for p in r.body["messages"][0]["content"]) == 4 for r in first_turns
    )
    prompt = answering[0].body["messages"][1]["content"]
    assert "a short, 3-second snippet" in prompt and "five-second" not in prompt
    assert "Options:" not in prompt and "\nA. Ego is" in prompt
    assert prompt.count("description of video keysegment 1") == 1

    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert all(p["status"] == "ok" and p["raw"].startswith("The captions") for p in predictions)
    assert all(p["metadata"]["official_prediction"] == p["answer"] == "A" for p in predictions)
    metrics = json.loads((out / "metrics.json").read_text())
    by_type: dict[str, list[bool]] = {}
    for p in predictions:
        by_type.setdefault(p["metadata"]["scenario"], []).append(p["ground_truth"] == "A")
    truth_a = sum(sum(v) / len(v) for v in by_type.values()) / len(by_type)  # upstream: mean over types
    assert 0 < truth_a < 1
    assert metrics["ego"] == pytest.approx(truth_a)  # the official scorer read the extracted letter
    official = json.loads((out / "official" / "stsbench_predictions.json").read_text())
    assert {r["prediction"] for r in official} == {"A"}
    assert score_file(out / "official" / "stsbench_predictions.json", sts_world)["ego"] == pytest.approx(
        truth_a
    )


def answer_in_tags(body: dict) -> str:
    """An answering LLM that reasons first, then answers A in tags (the official scorer must not see "T")."""
    return "The captions show the ego vehicle's motion. <answer>A</answer>"


def tagging_analyzer(body: dict) -> str:
    """An analyzer that says "0" (correct) when the final answer is the answer, else E1 and E3; on
    Scene-1 questions it answers in words, which is no label list."""
    text = body["messages"][1]["content"][-1]["text"]
    fields = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    if "weather" in fields["QUESTION"]:
        return "logical reasoning error"
    return "0" if fields["MODEL FINAL ANSWER"] == fields["ANSWER"] else "1, 3"


def _explained(kinegraph, world, out, vlm, *roles, expect=0):
    return kinegraph(
        "run", "autodridm", "--graph", "autodridm.explained", "--model", "vllm:tested",
        "--base-url", vlm.base_url, "--data", world, "--out", out, "--no-cache", "--no-progress",
        *roles, expect=expect,
    )  # fmt: skip


def test_the_analyzer_tags_reasoning_on_its_own_server(autodridm_world, kinegraph, tmp_path):
    out = tmp_path / "explained"
    with (
        OpenAILoopback(responder=autodridm_reader) as vlm,
        OpenAILoopback(responder=tagging_analyzer) as judge,
    ):
        roles = ("--role", "analyzer=vllm:judge", "--role-option", f"analyzer.base_url={judge.base_url}")
        _explained(kinegraph, autodridm_world, out, vlm, *roles)
        answering, analyzing = list(vlm.requests), list(judge.requests)
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(answering) == len(analyzing) == len(predictions)
    assert all(r.body["messages"][0]["content"].startswith("You are an AI assistant") for r in answering)
    first = analyzing[0].body["messages"]
    assert first[0]["content"].startswith("You are an autonomous-driving evaluation assistant")
    assert [p["type"] for p in first[1]["content"]] == ["image_url", "text"]
    assert "MODEL REASONING: From the measurements." in first[1]["content"][1]["text"]

    weather = [p for p in predictions if "weather" in p["trace"][0]["prompt"]]
    tagged = [p for p in predictions if "weather" not in p["trace"][0]["prompt"]]
    assert weather and all(p["metadata"]["analyzer_error"].startswith("parse_failure") for p in weather)
    right = [p for p in tagged if p["answer"] == p["ground_truth"]]
    assert 0 < len(right) < len(tagged)
    assert all(p["metadata"]["error_tags"] == ["correct"] for p in right)
    assert all(p["metadata"]["error_tags"] == ["E1", "E3"] for p in tagged if p not in right)
    assert all(p["status"] == "ok" for p in predictions)  # a failed analysis never touches the answer

    tags = json.loads((out / "metrics.json").read_text())["error_tags"]
    assert tags["note"].startswith("non-official")
    assert (tags["n_analyzed"], tags["n_tagged"], tags["n_failed"]) == (
        len(predictions),
        len(tagged),
        len(weather),
    )
    assert tags["counts"]["correct"] == len(right) and tags["counts"]["E1"] == tags["counts"]["E3"]
    assert tags["counts"]["E1"] == len(tagged) - len(right) and tags["counts"]["E2"] == 0
    by_role = json.loads((out / "run.json").read_text())["totals"]["usage_by_role"]
    assert by_role["backend"]["requests"] == by_role["analyzer"]["requests"] == len(predictions)


def test_the_analyzer_has_no_default_model(autodridm_world, kinegraph, tmp_path):
    with OpenAILoopback(responder=autodridm_reader) as vlm:
        refused = _explained(kinegraph, autodridm_world, tmp_path / "x", vlm, expect=2)
        assert not vlm.requests
    assert refused.stderr.strip() == (
        "error: graph autodridm.explained needs --role analyzer=PROVIDER:MODEL "
        "(the analyzer has no default model)"
    )
    assert not (tmp_path / "x").exists()


def test_each_role_gets_the_runs_seed_where_its_provider_takes_one(tad_world, kinegraph, tmp_path):
    from kinegraph.agents.loopback import AnthropicLoopback

    tad, nus = tad_world
    out = tmp_path / "seeded"
    with OpenAILoopback(responder=tad_reader) as vlm, AnthropicLoopback(responder=lambda body: "A") as llm:
        result = kinegraph(
            "run", "tad", "--graph", "tad.scene_cot", "--model", "vllm:captioner-vl",
            "--base-url", vlm.base_url, "--role", "answerer=anthropic:claude-sonnet-4-6",
            "--role-option", f"answerer.base_url={llm.base_url}",
            "--role-option", "answerer.api_key=sk-ant-test", "--seed", "5",
            "--data", tad, "--data-option", f"nuscenes_root={nus}", "--out", out,
            "--no-cache", "--no-progress", "--limit", "2",
        )  # fmt: skip
        captioning, answering = list(vlm.requests), list(llm.requests)
    assert captioning and {r.body["seed"] for r in captioning} == {5}
    assert len(answering) == 2 and all("seed" not in r.body for r in answering)
    info = json.loads((out / "run.json").read_text())
    assert info["seed_sent"] == {"captioner": True, "answerer": False}
    assert "warning: seed 5 is not sent to anthropic:claude-sonnet-4-6" in result.stderr

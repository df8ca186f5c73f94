"""DSI-Bench's free-form reasoning setting (`dsi.ffr`) through the runner with a loopback VLM."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.suites import suites
from tests.support.text_reader_model import prompt_text

# The paper's Appendix A.2 FFR prompt, typed here from the paper (quotes as ASCII), not from the code.
PAPER_FFR_LINES = [
    "You are a vision-language expert.",
    "You are given a clip of video and your task is to answer a question about the video.",
    "please provide your reasons step by step in details, then provide *ONE* correct answer selecting from "
    "the options.",
    "You only need to provide *ONE* correct answer selecting from the options listed below. For example, if "
    "you think the correct answer is 'A' from 'A. Above B. Under C. Front D. Behind', your response should "
    "only be '<answer>A</answer>'.",
    "Please answer the question in this format strictly:",
    "<think>[replace your reasoning here]</think>",
    "<answer>[replace your answer here, A, B, C, or D]</answer>",
]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three clips, every question in all four variants."""
    return suites.get("dsi").generate(tmp_path_factory.mktemp("dsi_ffr"), n=3, seed=4)


def _run(kinegraph, world, out, graph, server, *extra):
    return kinegraph(
        "run", "dsi", "--graph", graph, "--model", "vllm:loopback-vlm", "--base-url", server.base_url,
        "--data", world, "--out", out, "--no-cache", "--no-progress", "--concurrency", "1", *extra,
    )  # fmt: skip


def _predictions(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]


def _share_of_gt(world: Path, letter: str) -> float:
    """Sample-wise accuracy of always answering `letter`, from the metadata CSVs themselves."""
    gts = [pd.read_csv(p)["GT"].str.strip() for p in sorted((world / "metadatas").glob("*.csv"))]
    return float(pd.concat(gts).eq(letter).mean())


def test_ffr_asks_with_the_papers_prompt_and_scores_like_rawqa(world, kinegraph, tmp_path):
    reply = "<think>The background slides to the left, so the camera pans right.</think>\n<answer>b</answer>"
    with OpenAILoopback(responder=lambda body: reply) as server:
        _run(kinegraph, world, tmp_path / "ffr", "dsi.ffr", server)
        texts = [prompt_text(r.body) for r in server.requests]
    rows = pd.read_csv(world / "metadatas" / "std.csv")
    assert len(texts) == 4 * len(rows)  # one request per variant question: every reply parses
    first = texts[0]
    head, _, question = first.partition("\n\nQuestion:\n")
    assert head.split("\n") == PAPER_FFR_LINES
    assert question == f"{rows['question'][0]} {rows['options'][0]}"

    predictions = _predictions(tmp_path / "ffr")
    assert {p["answer"] for p in predictions} == {"B"} and {p["status"] for p in predictions} == {"ok"}
    assert predictions[0]["raw"] == reply  # the reasoning is kept with the answer

    metrics = json.loads((tmp_path / "ffr" / "metrics.json").read_text())
    assert metrics["sample_wise"]["overall"] == pytest.approx(_share_of_gt(world, "B"))
    assert set(metrics) >= {"sample_wise", "group_wise", "single_variant"}
    run = json.loads((tmp_path / "ffr" / "run.json").read_text())
    assert run["config"]["graph"] == "dsi.ffr"


def test_ffr_keeps_upstreams_first_answer_tag_and_asks_again_without_one(world, kinegraph, tmp_path):
    replies = iter(
        [
            # upstream's re.search takes the first tag, even the prompt's example quoted in the reasoning
            "<think>The format says '<answer>A</answer>'; the car moves away.</think><answer>C</answer>",
            "<think>Step 1: the camera" + " and then" * 50,  # reasoning cut off at the token limit
            "<think>short</think><answer>D</answer>",
        ]
        + ["<think>never finishes"] * 10
    )
    with OpenAILoopback(responder=lambda body: next(replies)) as server:
        extra = ("--limit", "2", "-O", "max_attempts=3")
        _run(kinegraph, world, tmp_path / "r", "dsi.ffr", server, *extra)
        bodies = [r.body for r in server.requests]
    predictions = _predictions(tmp_path / "r")
    assert [p["answer"] for p in predictions] == ["A", "D"]
    assert [p["status"] for p in predictions] == ["ok", "ok"]
    assert len(bodies) == 3 and [b["max_tokens"] for b in bodies] == [2048] * 3  # the paper's output cap
    attempts = [t.get("attempt") for t in predictions[1]["trace"] if "raw" in t]
    assert attempts == [0, 1]


def test_ffr_without_any_answer_is_E(world, kinegraph, tmp_path):
    with OpenAILoopback(responder=lambda body: "<think>I keep thinking") as server:
        _run(kinegraph, world, tmp_path / "r", "dsi.ffr", server, "--limit", "1", "-O", "max_attempts=2")
        assert len(server.requests) == 2
    (prediction,) = _predictions(tmp_path / "r")
    assert prediction["answer"] == "E" and prediction["status"] == "parse_failure"

"""QuantiPhy graphs through a real OpenAI-compatible loopback server: official prompts, retries, tools."""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pandas as pd
import pytest

from kinegraph.agents import encode_image
from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.graphs.quantiphy.prompts import SYSTEM_PROMPT
from kinegraph.media import read_video
from kinegraph.report import compare
from kinegraph.run import execute as run
from kinegraph.suites import suites
from kinegraph.types import RunConfig


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return suites.get("quantiphy").generate(tmp_path_factory.mktemp("qp"), n=6, seed=2)


def _config(data, out, graph, server, **kw):
    return RunConfig(
        benchmark="quantiphy",
        graph=graph,
        model="vllm:loopback",
        base_url=server.base_url,
        data=str(data / "quantiphy_validation.csv"),
        out_dir=str(out),
        use_cache=False,
        **kw,
    )


def _user(body):
    return body["messages"][-1]["content"]


def test_zero_shot_sends_the_official_prompt_with_every_frame(world, tmp_path):
    with OpenAILoopback(responder=lambda body: "1.0 m") as server:
        summary = run(_config(world, tmp_path / "z", "quantiphy.zero_shot", server), show_progress=False)
        bodies = [r.body for r in server.requests]
    rows = pd.read_csv(world / "quantiphy_validation.csv", keep_default_na=False)
    assert summary.n_predictions == len(rows) and summary.status_counts == {"ok": len(rows)}
    first = rows.iloc[0]
    n_frames = len(read_video(world / "validation_videos" / f"{first['video_id']}.mp4")[0])
    body = next(
        b
        for b in bodies
        if _user(b)[-1]["text"].startswith(f"Given that {first['ground_truth_prior']}.")
        and first["question"] in _user(b)[-1]["text"]
    )
    assert body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    parts = _user(body)
    assert [p["type"] for p in parts] == ["image_url"] * n_frames + ["text"]  # every frame, then the text
    text = parts[-1]["text"]
    assert text.endswith(
        f"{first['question']}\n\nPlease answer the question with numbers and units ONLY. "
        "No explanation needed."
    )
    three_d = rows[rows["video_type"].str[1] == "3"].iloc[0]
    body3 = next(b for b in bodies if three_d["question"] in _user(b)[-1]["text"])
    assert "Additionally, you have the following information about the distance" in _user(body3)[-1]["text"]


def test_validity_retry_and_prior_only(world, tmp_path):
    calls: dict[str, int] = {}

    def stubborn(body):
        text = _user(body)[-1]["text"]
        calls[text] = calls.get(text, 0) + 1
        return "I am not sure." if calls[text] < 3 else "2.5 m"  # numbers only from the third ask

    with OpenAILoopback(responder=stubborn) as server:
        summary = run(
            _config(world, tmp_path / "p", "quantiphy.prior_only", server, limit=3), show_progress=False
        )
        bodies = [r.body for r in server.requests]
    assert summary.status_counts == {"ok": 3} and len(bodies) == 9  # 3 asks per question, as upstream retries
    assert all(all(p["type"] == "text" for p in _user(b)) for b in bodies)  # v1: no frames
    per_question: dict[str, list[float]] = {}
    for b in bodies:
        per_question.setdefault(_user(b)[-1]["text"], []).append(b["temperature"])
    assert all(temps == [0.0, 1.0, 1.0] for temps in per_question.values())  # re-asks sample


def test_counterfactual_and_cot(tmp_path, world):
    rows = pd.read_csv(world / "quantiphy_validation.csv", keep_default_na=False).iloc[:2].copy()
    rows["alt_prior"] = "ruler calibre = 100 cm"
    rows["alt_posterior"] = rows["ground_truth_posterior"].astype(float) * 100
    rows["cot_q1"], rows["cot_q2"], rows["cot_q3"] = "How many pixels?", "Scale?", "Target in pixels?"
    data = tmp_path / "data"
    (data / "validation_videos").mkdir(parents=True)
    for vid in rows["video_id"].unique():
        (data / "validation_videos" / f"{vid}.mp4").write_bytes(
            (world / "validation_videos" / f"{vid}.mp4").read_bytes()
        )
    rows.to_csv(data / "quantiphy_validation.csv", index=False)
    with OpenAILoopback(responder=lambda body: "3 m") as server:
        run(_config(data, tmp_path / "cf", "quantiphy.counterfactual", server), show_progress=False)
        assert all("Given that ruler calibre = 100 cm." in _user(r.body)[-1]["text"] for r in server.requests)
        scored_on = [
            json.loads(line)["ground_truth"] for line in (tmp_path / "cf" / "predictions.jsonl").open()
        ]
        assert sorted(scored_on) == sorted(rows["alt_posterior"])  # alpha * y, not the true posterior
        n = len(server.requests)
        summary = run(_config(data, tmp_path / "cot", "quantiphy.cot", server), show_progress=False)
        cot = [r.body for r in server.requests[n:]]
    assert summary.status_counts == {"ok": 2} and len(cot) == 8  # three sub-questions + the main one, twice
    finals = [
        _user(b)[-1]["text"]
        for b in cot
        if "Based on the following previous questions" in _user(b)[-1]["text"]
    ]
    assert len(finals) == 2 and "Question 3: Target in pixels?\nAnswer 3: 3.0" in finals[0]


def test_cot_builds_the_paper_sub_questions_when_the_data_has_none(world, tmp_path):
    # the synthetic world, like the released validation CSV, has no cot_q1..3 columns
    with OpenAILoopback(responder=lambda body: "7 m") as server:
        summary = run(_config(world, tmp_path / "cot", "quantiphy.cot", server, limit=1), show_progress=False)
        texts = [_user(r.body)[-1]["text"] for r in server.requests]
    assert summary.status_counts == {"ok": 1} and len(texts) == 4  # three sub-questions, then the question
    # row 0: "width of the cyan box = 1.2 m" / "What is the total distance traveled by the cyan box in m?"
    assert texts[0].startswith("What is the width of the cyan box in pixels?\n\n")
    assert (
        "Now answer this question: What is the proportional relationship between pixel and meter?" in texts[1]
    )
    assert (
        "Now answer this question: What is the total distance traveled by the cyan box by pixels?" in texts[2]
    )
    assert (
        "Question 3: What is the total distance traveled by the cyan box by pixels?\nAnswer 3: 7.0"
        in texts[3]
    )
    assert texts[3].startswith("Given that width of the cyan box = 1.2 m.")
    trace = json.loads((tmp_path / "cot" / "predictions.jsonl").read_text().splitlines()[0])["trace"]
    assert trace[0] == {"node": "answer_with_cot", "step": "sub_questions", "built_from": "paper templates"}


def _grounder(world):
    """A model that boxes objects perfectly: it recognises each video by its first frame's bytes."""
    truth = json.loads((world / "quantiphy_truth.json").read_text())
    by_frame = {}
    for vid, video in truth["videos"].items():
        frames, _ = read_video(world / "validation_videos" / f"{vid}.mp4", [0])
        by_frame[hashlib.sha256(encode_image(frames[0]).data).hexdigest()] = video["objects"]

    def respond(body):
        parts = _user(body)
        text = parts[-1]["text"]
        if "bounding box" not in text:
            return "1 m"  # the zero-shot guess of a model that cannot measure
        data = base64.b64decode(parts[0]["image_url"]["url"].split(",", 1)[1])
        objects = by_frame[hashlib.sha256(data).hexdigest()]
        names = re.findall(r"^\d+\. (.+)$", text, re.M)
        boxes = [objects[name]["seed_box_px"] for name in names]
        return "\n".join(f"{i}. [{', '.join(str(v) for v in box)}]" for i, box in enumerate(boxes, 1))

    return respond


@pytest.mark.slow
def test_tool_graph_beats_zero_shot_in_compare(world, tmp_path):
    with OpenAILoopback(responder=_grounder(world)) as server:
        zero = run(_config(world, tmp_path / "zero", "quantiphy.zero_shot", server), show_progress=False)
        tools = run(_config(world, tmp_path / "tools", "quantiphy.tools", server), show_progress=False)
    assert tools.headline["mra_average"] > 0.8 > zero.headline["mra_average"]
    comparison = compare([tmp_path / "zero", tmp_path / "tools"], n_boot=300)
    assert comparison.deltas[1].delta > 0.5 and comparison.deltas[1].low > 0


def test_the_templates_rebuild_the_starter_kits_sub_questions(golden):
    from kinegraph.graphs.quantiphy.cot import template_sub_questions

    kit = pd.read_csv(golden / "quantiphy" / "starter_kit_CIB_Ready_test4.csv")
    for _, row in kit.iterrows():
        built = template_sub_questions(row["ground_truth_prior"], row["question"])
        assert built == (row["cot_q1"], row["cot_q2"], row["cot_q3"])

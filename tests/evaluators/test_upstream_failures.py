"""One failed question ends the way upstream's inference loop ends it: no more, no less."""

from __future__ import annotations

import json
from pathlib import Path

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.run import execute as run
from kinegraph.suites import suites
from kinegraph.types import RunConfig

BAD_LINE = "1\n²\n3"  # "²".isdigit() is True but int("²") raises: upstream writes pred "ERROR" for it


def _predictions(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]


def test_tad_unreadable_digit_line_fails_one_question_not_its_scene(tmp_path):
    data = suites.get("tad").generate(tmp_path / "tad", n=1, seed=0)
    first_localisation: list[str] = []

    def respond(body: dict) -> str:
        text = body["messages"][0]["content"]
        text = text if isinstance(text, str) else "\n".join(p.get("text", "") for p in text)
        if "frame numbers" in text and (not first_localisation or first_localisation[0] == text):
            first_localisation[:] = [text]
            return BAD_LINE
        return "A."

    with OpenAILoopback(responder=respond) as server:
        config = RunConfig(
            benchmark="tad",
            graph="tad.blind",
            model="vllm:loopback-vlm",
            base_url=server.base_url,
            data=str(data),
            out_dir=str(tmp_path / "run"),
            concurrency=1,
            use_cache=False,
        )
        run(config, show_progress=False)
    predictions = _predictions(tmp_path / "run")
    failed = [p for p in predictions if p["status"] not in ("ok", "parse_failure")]
    assert len(predictions) > 10 and len(failed) == 1
    assert failed[0]["question_id"] == "temp_action_localize" and "'²'" in failed[0]["error"]
    scene = failed[0]["group"]
    assert sum(p["group"] == scene and p["status"] == "ok" for p in predictions) >= 5
    # the official file holds upstream's record for it: pred "ERROR"
    records = (tmp_path / "run" / "official" / "temp_action_localize.jsonl").read_text().splitlines()
    assert sum(json.loads(r)["pred"] == "ERROR" for r in records) == 1


def test_dsi_asks_once_and_retries_ten_times_as_upstream(tmp_path):
    data = suites.get("dsi").generate(tmp_path / "dsi", n=1, seed=0)
    with OpenAILoopback(responder=lambda body: "no tags here") as server:
        config = RunConfig(
            benchmark="dsi",
            graph="dsi.baseline",
            model="vllm:loopback-vlm",
            base_url=server.base_url,
            data=str(data),
            out_dir=str(tmp_path / "run"),
            limit=1,
            concurrency=1,
            use_cache=False,
        )
        run(config, show_progress=False)
        n_requests = len(server.requests)
    (prediction,) = _predictions(tmp_path / "run")
    assert n_requests == 11  # upstream: an initial run, then MAX_RETRIES = 10 retry rounds
    assert prediction["answer"] == "E" and prediction["status"] == "parse_failure"

"""AutoDriDM k-shot prompting (`autodridm.few_shot`) through the runner with a loopback VLM."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.benchmarks.autodridm.loader import TASKS
from kinegraph.suites import suites
from tests.support.suite_readers import autodridm_reader

IMAGE = re.compile(r"^IMAGE: (.+)$", re.M)
QUESTION = re.compile(r"^QUESTION: (.+)$", re.M)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return suites.get("autodridm").generate(tmp_path_factory.mktemp("adm_shots"), n=6, seed=3)


def _run(kinegraph, world, out, server, *extra, expect=0):
    return kinegraph(
        "run", "autodridm", "--graph", "autodridm.few_shot", "--model", "vllm:loopback-vlm",
        "--base-url", server.base_url, "--data", world, "--out", out, "--no-cache", "--no-progress",
        *extra, expect=expect,
    )  # fmt: skip


def _truth(world: Path) -> dict[tuple[str, str], str]:
    """(question text, image) -> the answer written in the task files, as the files spell it."""
    out = {}
    for task in TASKS:
        for record in json.loads((world / f"{task}.json").read_text()):
            (key,) = {k[: -len("_q")] for k in record if k.endswith("_q")}
            out[(record[f"{key}_q"], record["image_name"])] = record[f"{key}_a"].replace(" ", "")
    return out


def _text(message: dict) -> str:
    content = message["content"]
    return content if isinstance(content, str) else next(p["text"] for p in content if p["type"] == "text")


def _predictions(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]


def _exemplars(run: Path) -> dict[str, list[str]]:
    return {p["sample_id"]: [e["sample_id"] for e in p["trace"][0]["exemplars"]] for p in _predictions(run)}


def test_two_shots_of_the_same_task_on_other_images_with_their_answers(world, kinegraph, tmp_path):
    with OpenAILoopback(responder=autodridm_reader) as server:
        _run(kinegraph, world, tmp_path / "r", server, "-O", "shots=2", "-O", "seed=7")
        bodies = [r.body for r in server.requests]
    assert len(bodies) == 6 * 6
    truth = _truth(world)
    for body in bodies:
        messages = body["messages"]
        assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
        asked = _text(messages[-1])
        image, question = IMAGE.search(asked).group(1), QUESTION.search(asked).group(1)
        for user, assistant in ((messages[1], messages[2]), (messages[3], messages[4])):
            shown = _text(user)
            assert user["content"][0]["type"] == "image_url"
            assert QUESTION.search(shown).group(1) == question  # same task (one template per task)
            shot_image = IMAGE.search(shown).group(1)
            assert shot_image != image  # never the question itself, nor its image
            assert assistant["content"] == f"<answer>{truth[(question, shot_image)]}</answer>"

    predictions = _predictions(tmp_path / "r")
    assert {p["status"] for p in predictions} == {"ok"}
    first = predictions[0]["trace"][0]
    assert first["node"] == "draw_shots" and first["shots"] == 2 and first["seed"] == 7
    assert len(first["exemplars"]) == 2 and {"sample_id", "image_name", "answer"} <= set(
        first["exemplars"][0]
    )
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert set(metrics["all"]["tasks"]) == set(TASKS)


def test_the_draw_is_fixed_by_the_seed_and_independent_of_limit(world, kinegraph, tmp_path):
    with OpenAILoopback(responder=autodridm_reader) as server:
        _run(kinegraph, world, tmp_path / "a", server, "-O", "shots=2", "-O", "seed=1")
        _run(kinegraph, world, tmp_path / "b", server, "-O", "shots=2", "-O", "seed=1", "--limit", "6")
        _run(kinegraph, world, tmp_path / "c", server, "-O", "shots=2", "-O", "seed=2")
    a, b, c = (_exemplars(tmp_path / name) for name in "abc")
    assert {k: a[k] for k in b} == b  # the pool is the whole task file, not the run's first rows
    assert a != c
    # one order per task: the 4 images not among its first two all see those two; the two see others
    object_1 = [tuple(v) for k, v in a.items() if k.startswith("autodridm/Object-1/")]
    assert sorted(object_1.count(v) for v in set(object_1)) == [1, 1, 4]


def test_a_task_file_too_small_for_the_shots_is_an_input_error_naming_it(tmp_path, kinegraph):
    world = suites.get("autodridm").generate(tmp_path / "tiny", n=2, seed=0)
    with OpenAILoopback(responder=autodridm_reader) as server:
        # the run's one sample failed: it ends failed (exit 1), the failure recorded, nothing sent
        _run(kinegraph, world, tmp_path / "r", server, "-O", "shots=2", "--limit", "1", expect=1)
        assert server.requests == []
    (prediction,) = _predictions(tmp_path / "r")
    assert prediction["status"] == "input_error"
    assert prediction["error"] == (
        f"{world / 'Object-1.json'}: field 'image_name': 2-shot needs 2 Object-1 questions on other "
        "images than 'images/synthetic/0000.png'; the file has 1"
    )


def test_zero_shots_is_refused_in_one_line(world, kinegraph, tmp_path):
    with OpenAILoopback(responder=autodridm_reader) as server:
        result = _run(kinegraph, world, tmp_path / "r", server, "-O", "shots=0", expect=2)
    assert result.stderr.strip().splitlines() == [
        "error: shots must be at least 1 (0-shot is autodridm.baseline), got 0"
    ]

"""Synthetic AutoDriDM: official JSON layout, answers that match the drawn scene, oracle scores 1."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kinegraph.benchmarks.autodridm import loader as autodridm
from kinegraph.benchmarks.autodridm import world as autodridm_world
from kinegraph.cli import app
from kinegraph.media import read_image
from kinegraph.suites import suites


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return suites.get("autodridm").generate(tmp_path_factory.mktemp("autodridm"), n=24, seed=3)


def test_loads_in_official_layout_with_both_danger_encodings(world):
    samples = autodridm.load(world)
    assert len(samples) == 24 * 6
    raw = json.loads((world / "Object-1.json").read_text())
    assert {type(r["danger_score"]) for r in raw} == {int, str}
    assert "task1_q" in raw[0] and "task6_a" in json.loads((world / "Decision-2.json").read_text())[0]
    multi = [s for s in samples if s.metadata["multi_select"]]
    assert multi and all(isinstance(s.answer, list) for s in multi)
    assert all(s.metadata["high_risk"] == (s.metadata["danger_score"] >= 4) for s in samples)


def test_answers_follow_the_pixels(world):
    truth = [json.loads(line) for line in (world / "synthetic_truth.jsonl").read_text().splitlines()]
    light_px = {"red": (156, 15), "yellow": (156, 25), "green": (156, 35)}
    samples = {s.id: s for s in autodridm.load(world)}
    for i, scene in enumerate(truth):
        image = read_image(world / scene["image_name"]).astype(int)
        sky = image[:20, 40:140].mean()
        assert (sky < 60) == scene["night"]
        state = samples[f"autodridm/Object-2/{i}"].answer
        assert state == {"green": "A", "yellow": "B", "red": "C", "none": "D"}[scene["light"]]
        if scene["light"] != "none":
            r, g, _ = image[light_px[scene["light"]][1], light_px[scene["light"]][0]]
            assert (r > 200) == (scene["light"] in ("red", "yellow")) and (g > 150) == (
                scene["light"] != "red"
            )
        weather = samples[f"autodridm/Scene-1/{i}"].answer
        assert ("B" in weather) == scene["night"] and ("C" in weather) == scene["rain"]


def test_oracle_predictions_score_one(world, tmp_path):
    lines = [
        json.dumps({"sample_id": s.id, "raw": f"<think>drawn</think><answer>{','.join(s.answer)}</answer>"})
        for s in autodridm.load(world)
    ]
    preds = tmp_path / "predictions.jsonl"
    preds.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(app, ["evaluate", "autodridm", str(preds), "--data", str(world)])
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)
    assert metrics["all"]["average"] == 1.0 and metrics["n_missing"] == 0


def test_scene_rules():
    scene = autodridm_world.Scene(night=True, rain=True, light="red", n_cars=3, pedestrian=False, cones=True)
    assert scene.answers() == {
        "Object-1": "C",
        "Object-2": "C",
        "Scene-1": "B,C",
        "Scene-2": "A,C,F",
        "Decision-1": "B",
        "Decision-2": "B",
    }
    assert scene.danger() == 4

"""A dashcam video is enough in Studio: TAD and STSBench graphs get the video's keyframes at their
benchmark's rate, TCogMap its ego poses measured from the video, and each prediction names what was made."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.benchmarks.egodyn.world import write_carla_clips
from kinegraph.studio import graphs as studio
from kinegraph.studio.inputs import MEDIA_ROOT_ENV, StudioInputError
from tests.support.text_reader_model import prompt_text

OPTIONS = ["Turn left.", "Go straight.", "Turn right."]
FRAMES = "keyframes at 2 Hz from the video"


@pytest.fixture(scope="module")
def model() -> Iterator[OpenAILoopback]:
    def answer(body: dict) -> str:  # in the format each prompt asks for
        return "<answer>A</answer>" if "<answer>" in prompt_text(body) else "A"

    with OpenAILoopback(responder=answer) as server:
        yield server


@pytest.fixture(scope="module")
def media_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("studio-dashcam")
    write_carla_clips(root, 1, seed=21, width_px=480, height_px=270)
    (video,) = root.rglob("*.mp4")
    video.rename(root / "dashcam.mp4")
    return root


def ask(name: str, sample: dict, model: OpenAILoopback) -> dict:
    graph = getattr(studio, name.replace(".", "_"))
    value = {"samples": [{"id": "q1", **sample}], "media": {"video_path": "dashcam.mp4"}}
    configurable = {"model": "vllm:loopback-vlm", "base_url": model.base_url}
    (prediction,) = asyncio.run(graph.ainvoke(value, config={"configurable": configurable}))["predictions"]
    return prediction


@pytest.mark.parametrize(
    ("name", "metadata", "inputs"),
    [
        ("tad.tcogmap", {"task": "mc_action"}, {"frames": FRAMES, "ego_poses": "measured"}),
        ("tad.scene_cot", {"keysegments": "derive"}, {"frames": FRAMES, "keysegments": "derived"}),
        ("tad.baseline", {}, {"frames": FRAMES}),
        ("stsbench.baseline", {}, {"frames": FRAMES}),
    ],
)
def test_a_video_question_is_answered_from_its_keyframes(
    name: str, metadata: dict, inputs: dict, model: OpenAILoopback, media_root: Path, monkeypatch
) -> None:
    monkeypatch.setenv(MEDIA_ROOT_ENV, str(media_root))
    question = {"question": "What is the ego vehicle doing?", "options": OPTIONS, "metadata": metadata}
    prediction = ask(name, question, model)
    assert (prediction["status"], prediction["answer"]) == ("ok", "A"), prediction
    assert prediction["metadata"]["inputs"] == inputs
    assert prediction["frames"]["timestamps_s"] == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]


def test_a_scene_question_without_keysegments_is_refused_naming_them(
    model: OpenAILoopback, media_root: Path, monkeypatch
) -> None:
    monkeypatch.setenv(MEDIA_ROOT_ENV, str(media_root))
    question = {"question": "When does the ego vehicle stop?", "metadata": {"task": "action_duration"}}
    with pytest.raises(StudioInputError, match=r"^samples\.0: keysegments: a scene-level TAD question"):
        ask("tad.baseline", question, model)

"""One small world per benchmark family under a server's data root, the minimal request each family's
graphs need, and a loopback VLM that answers every family's prompts in its own format."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kinegraph.benchmarks.egodyn.world import write_carla_clips
from kinegraph.benchmarks.stsbench.world import write_stsbench_world
from kinegraph.benchmarks.tad.world import write_tad_world
from kinegraph.media import video_info
from kinegraph.suites import suites
from tests.support.suite_readers import autodridm_reader, dsi_reader, stsbench_reader, tad_reader
from tests.support.text_reader_model import QUESTION, prompt_text, text_reader

NUMBERED = re.compile(r"^\d+\. (.+)$", re.M)
PRIOR = re.compile(r"^(?:t=(?P<t>[\d.]+)s?, )?(?P<quantity>.+?) = (?P<value>[\d.]+) ?(?P<unit>\S+)$")


def write_worlds(root: Path) -> dict[str, Any]:
    """Each family's world under `root`, and the first question of each (paths relative to `root`)."""
    worlds: dict[str, Any] = {}
    (video,) = {
        r["clip_id"]: r for r in write_carla_clips(root / "egodyn", 1, seed=21, width_px=480, height_px=270)
    }
    worlds["egodyn"] = next((root / "egodyn").rglob("*.mp4")).relative_to(root)
    path = suites.get("quantiphy").generate(root / "quantiphy", n=2, seed=0)
    worlds["quantiphy"] = suites.get("quantiphy").load(str(path / "quantiphy_validation.csv"))[0]
    worlds["quantiphy_truth"] = json.loads((path / "quantiphy_truth.json").read_text())
    for family, n in (("dsi", 4), ("autodridm", 6)):
        worlds[family] = suites.get(family).load(
            str(suites.get(family).generate(root / family, n=n, seed=0))
        )[0]
    sts = write_stsbench_world(root / "stsbench", n_records=2, seed=0)
    worlds["stsbench"] = suites.get("stsbench").load(str(sts), data_root=str(sts.parent))[0]
    tad, _ = write_tad_world(root, n_scenes=1, seed=0)
    worlds["tad"] = suites.get("tad").load(str(tad))
    return worlds


def _relative(paths: list[str], root: Path) -> list[str]:
    return [str(Path(p).relative_to(root)) for p in paths]


def minimal_request(family: str | None, worlds: dict[str, Any], root: Path) -> dict[str, Any]:
    """The fewest fields a graph of `family` needs, from that family's world."""
    if family == "egodyn":
        _, fps = video_info(root / worlds["egodyn"])
        return {
            "question": "Is the vehicle turning left, right, or going straight?",
            "video_path": str(worlds["egodyn"]),
            "fps": fps,
        }
    if family == "quantiphy":
        sample = worlds["quantiphy"]
        prior = PRIOR.match(sample.context["ground_truth_prior"]).groupdict()  # type: ignore[union-attr]
        return {
            "question": sample.question,
            "video_path": _relative([sample.media.video_path], root)[0],
            "fps": sample.media.fps,
            "prior": {
                "quantity": prior["quantity"],
                "value": float(prior["value"]),
                "unit": prior["unit"],
                **({"at_time_s": float(prior["t"])} if prior["t"] else {}),
            },
        }
    if family == "tad":
        sample = next(s for s in worlds["tad"] if s.metadata["task"] == "action_duration")
        indices = [s["indices"] for s in sample.context["keyframes_index_formatted"]]
        return {
            "question": sample.question,
            "options": sample.options,
            "task": "action_duration",
            "nuscenes_scene": sample.group,
            "keysegments": indices,
        }
    if family in ("stsbench", "autodridm"):
        sample = worlds[family]
        request = {"question": sample.question, "options": sample.options}
        request["frame_paths"] = _relative(sample.media.frame_paths, root)
        if family == "stsbench":
            request["ego_poses"] = {
                "timestamps_s": [0.5 * i for i in range(len(sample.context["ego"]["xyz"]))],
                "translation_m": sample.context["ego"]["xyz"],
                "rotation_wxyz": [[1.0, 0.0, 0.0, 0.0]] * len(sample.context["ego"]["xyz"]),
            }
        else:
            request["task"] = sample.metadata["task"]
        return request
    if family == "dsi":
        sample = worlds["dsi"]
        return {
            "question": sample.question,
            "options": sample.options,
            "video_path": _relative([sample.media.video_path], root)[0],
        }
    return {"question": "Which option?", "options": ["a", "b"], "video_path": str(worlds["egodyn"])}


def suite_responder(worlds: dict[str, Any]) -> Any:
    """A loopback VLM reading only prompt text: each family's reader, QuantiPhy boxes from the sidecar."""
    objects = next(iter(worlds["quantiphy_truth"]["videos"].values()))["objects"]

    def respond(body: dict[str, Any]) -> str:
        text = prompt_text(body)
        if "bounding box in pixels" in text:
            names = NUMBERED.findall(text)
            boxes = [objects[n]["seed_box_px"] if n in objects else [0, 0, 4, 4] for n in names]
            return "\n".join(f"{i}. {list(b)}" for i, b in enumerate(boxes, 1))
        if "[unit]" in text:
            return "3.5 m"
        if "OPTIONS:" in text:
            return autodridm_reader(body)
        if "<answer>[replace your answer here" in text:
            return dsi_reader(body)
        if "captured at 2 frames per second" in text:
            return stsbench_reader(body)
        if QUESTION.search(text):
            return text_reader(body)
        if "ego" in text.lower() and re.search(r"^[A-D]\. ", text, re.M):
            return tad_reader(body)
        return "The answer is 3.5 m."

    return respond

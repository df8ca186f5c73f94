"""A small EgoDyn HF-layout dataset with real mp4 clips, and a VLM-free user graph, for runner tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from kinegraph.benchmarks.egodyn.questions import QUESTION_BANK, load_question_bank
from kinegraph.media import write_video

GRAPH_SOURCE = '''
"""A user graph: decode the clip once, then answer every question with its first option."""
import asyncio
import os

from langgraph.graph import END, START, StateGraph

from kinegraph.graphs.nodes import decode_frames, prediction, record_group_error, route_on_error
from kinegraph.graphs.state import GraphContext, GroupState


async def answer_all(state: GroupState) -> dict:
    await asyncio.sleep(float(os.environ.get("SLOW_GROUP_S", "0")))
    return {"results": [prediction(s, raw=s.options[0], answer=s.options[0]) for s in state["samples"]]}


def build(num_frames: int = 4):
    graph = StateGraph(GroupState, context_schema=GraphContext)
    graph.add_node("decode_frames", decode_frames(num_frames))
    graph.add_node("answer_all", answer_all)
    graph.add_node("record_group_error", record_group_error)
    graph.add_edge(START, "decode_frames")
    targets = ["answer_all", "record_group_error"]
    graph.add_conditional_edges("decode_frames", route_on_error("answer_all"), targets)
    graph.add_edge("answer_all", END)
    graph.add_edge("record_group_error", END)
    return graph.compile()


build.needs_model = False
'''


def write_graph_module(directory: Path, name: str = "first_option_graph") -> str:
    (directory / f"{name}.py").write_text(GRAPH_SOURCE)
    return f"{name}:build"


def write_egodyn_hf(root: Path, n_clips: int = 6, corrupt: tuple[int, ...] = ()) -> Path:
    """CARLA-style clips (mp4) with 14 questions each; clips in `corrupt` get an unreadable video."""
    clip_dir = root / "carla_clips"
    (clip_dir / "arrays").mkdir(parents=True, exist_ok=True)
    videos = root / "carla_videos_transferred"
    videos.mkdir(parents=True, exist_ok=True)
    index, qa = [], []
    rng = np.random.default_rng(0)
    for c in range(n_clips):
        clip_id = f"TST_Town-{c}_1_T-1__Comfort__w0"
        frames = rng.integers(0, 255, size=(12, 48, 64, 3), dtype=np.uint8)
        if c in corrupt:
            (videos / f"{clip_id}.mp4").write_bytes(b"\x00not a video")
        else:
            write_video(videos / f"{clip_id}.mp4", frames, fps=4.0)
        np.savez(clip_dir / "arrays" / f"{clip_id}.npz", speed=np.full(31, 5.0))
        index.append({"clip_id": clip_id, "t_start": 0.0, "t_end": 3.0, "array_ref": f"arrays/{clip_id}.npz"})
        for q in QUESTION_BANK:
            qa.append(
                {
                    "qa_id": f"qa_{c}_{q.question_id}",
                    "clip_id": clip_id,
                    "question_id": q.question_id,
                    "question": q.text,
                    "answer": q.choices[c % len(q.choices)],
                    "choices": q.choices,
                }
            )
    (clip_dir / "clips_index.jsonl").write_text("".join(json.dumps(r) + "\n" for r in index))
    (clip_dir / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in qa))
    return root


def write_egodyn_world(root: Path, n_clips: int = 20, seed: int = 0) -> Path:
    """CARLA-layout clips whose arrays, features and answers come from scripted maneuvers.

    Kinematics and labels go through the project's own path (script_maneuver -> clip_kinematics ->
    label_clip); the videos are noise, since the loopback model under test cannot see images anyway.
    """
    from kinegraph.benchmarks.synthetic.maneuvers import MANEUVERS, script_maneuver
    from kinegraph.tools.kinematics import clip_kinematics
    from kinegraph.tools.oracle import label_clip

    clip_dir = root / "carla_clips"
    (clip_dir / "arrays").mkdir(parents=True, exist_ok=True)
    videos = root / "carla_videos_transferred"
    rng = np.random.default_rng(seed)
    index, qa = [], []
    for c in range(n_clips):
        maneuver = MANEUVERS[c % len(MANEUVERS)]
        track = script_maneuver(maneuver, seed + c, duration_s=3.2)
        kin = clip_kinematics(track.timestamps_s, track.xy_m, track.yaw_rad)
        clip_id = f"SYN_{maneuver}-{c}_1_T-1__Comfort__w0"
        np.savez(clip_dir / "arrays" / f"{clip_id}.npz", **kin.arrays())
        write_video(
            videos / f"{clip_id}.mp4", rng.integers(0, 255, (10, 36, 48, 3), dtype=np.uint8), fps=10.0
        )
        index.append(
            {
                "clip_id": clip_id,
                "t_start": 0.0,
                "t_end": 3.0,
                "array_ref": f"arrays/{clip_id}.npz",
                "features": kin.features,
            }
        )
        for q in QUESTION_BANK:
            answer = label_clip(kin, load_question_bank())[q.question_id]
            qa.append(
                {
                    "qa_id": f"qa_{c:03d}_{q.question_id}",
                    "clip_id": clip_id,
                    "question_id": q.question_id,
                    "question": q.text,
                    "answer": answer,
                    "choices": q.choices,
                }
            )
    (clip_dir / "clips_index.jsonl").write_text("".join(json.dumps(r) + "\n" for r in index))
    (clip_dir / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in qa))
    return root

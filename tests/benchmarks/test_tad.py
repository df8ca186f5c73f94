"""TAD loader: HF config layouts, segment vs scene frames, nuScenes keyframe paths, bad rows."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kinegraph.benchmarks.tad import loader as tad
from kinegraph.errors import DataError


def keysegments_row(tokens: list[str]) -> dict:
    # Two overlapping windows of 8 frames anchored at frames 3 and 8 (0-based).
    windows = {"3": list(range(0, 8)), "8": list(range(4, 12))}
    return {
        "scene_token": "scene-a",
        "sample_tokens": tokens[::2],
        "keysegments": [3, 8],
        "keyframes_token_formatted": [
            {"segment_key": tokens[int(k)], "frames": [tokens[i] for i in idx]} for k, idx in windows.items()
        ],
        "keyframes_index_formatted": [{"segment_index_key": k, "indices": idx} for k, idx in windows.items()],
    }


def write_dir(root: Path, tokens: list[str]) -> Path:
    root.mkdir(parents=True)
    mc = [
        {
            "idx": 7,
            "scene_token": "scene-a",
            "sample_token": tokens[8],
            "question": "What is the motion of the ego vehicle in this video segment?",
            "options": ["A. Stopped.", "B. Starting."],
            "answer": "B",
        }
    ]
    (root / "mc_action.jsonl").write_text("".join(json.dumps(r) + "\n" for r in mc))
    # temp_action_localize as Parquet, keysegments as a `save_to_disk` Arrow stream folder.
    pq.write_table(
        pa.Table.from_pylist(
            [
                {
                    "idx": 1,
                    "scene_token": "scene-a",
                    "question": "In which frames is the car stopped?",
                    "options": [],
                    "answer": [3, 8],
                }
            ]
        ),
        root / "temp_action_localize.parquet",
    )
    split = root / "keysegments"
    split.mkdir()
    table = pa.Table.from_pylist([keysegments_row(tokens)])
    with (
        pa.OSFile(str(split / "data-00000-of-00001.arrow"), "wb") as sink,
        pa.ipc.new_stream(sink, table.schema) as w,
    ):
        w.write_table(table)
    (split / "state.json").write_text(
        json.dumps({"_data_files": [{"filename": "data-00000-of-00001.arrow"}]})
    )
    (split / "dataset_info.json").write_text("{}")
    return root


def test_load_resolves_segment_and_scene_frames(tmp_path, nuscenes_scene):
    nuroot, tokens = nuscenes_scene
    samples = tad.load(write_dir(tmp_path / "TAD", tokens), nuscenes_root=nuroot)
    by_task = {s.metadata["task"]: s for s in samples}
    assert set(by_task) == {"mc_action", "temp_action_localize"}

    segment = by_task["mc_action"]
    assert segment.id == "tad/mc_action/7" and segment.group == "scene-a"
    assert segment.answer == "B" and segment.options == ["A. Stopped.", "B. Starting."]
    assert segment.metadata["ego"] is True and segment.metadata["level"] == "segment"
    # keysegment anchored at frame 8 covers frames 4..11
    assert segment.context["frame_tokens"] == tokens[4:12]
    assert segment.media.frame_paths[0] == str(nuroot / "samples/CAM_FRONT" / f"{tokens[4]}-CAM_FRONT.jpg")
    assert segment.media.timestamps_s == [0.5 * i for i in range(8)]

    scene = by_task["temp_action_localize"]
    assert scene.answer == ["3", "8"] and scene.metadata["answer_value"] == [3, 8]
    assert scene.options is None and scene.metadata["answer_kind"] == "localization"
    assert len(scene.media.frame_paths) == 12  # every sample of the scene, as upstream's full-frames mode
    assert scene.context["keyframes_index_formatted"][1] == {
        "segment_index_key": "8",
        "indices": list(range(4, 12)),
    }


def test_without_nuscenes_scene_frames_come_from_keysegment_windows(tmp_path, nuscenes_scene):
    _, tokens = nuscenes_scene
    samples = tad.load(write_dir(tmp_path / "TAD", tokens))
    scene = next(s for s in samples if s.metadata["task"] == "temp_action_localize")
    assert scene.media.kind == "none"
    assert scene.context["frame_tokens"] == tokens  # windows 0..7 and 4..11 cover all 12, in index order


def test_missing_field_names_file_row_and_field(tmp_path, nuscenes_scene):
    _, tokens = nuscenes_scene
    root = write_dir(tmp_path / "TAD", tokens)
    (root / "temp_ordering.jsonl").write_text(
        json.dumps({"idx": 1, "scene_token": "scene-a", "question": "q", "answer": "A"})
        + "\n"
        + json.dumps({"idx": 2, "scene_token": "scene-a", "question": "q"})
        + "\n"
    )
    with pytest.raises(DataError, match=r"temp_ordering.jsonl:2: field 'answer': missing"):
        tad.load(root)


def test_directory_without_keysegments_is_an_error(tmp_path):
    (tmp_path / "mc_action.jsonl").write_text("")
    with pytest.raises(DataError, match="keysegments"):
        tad.load(tmp_path)

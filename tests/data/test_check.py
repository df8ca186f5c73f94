"""`kinegraph data check` on broken layouts: one line per problem naming it, exit 2; clean folders exit 0."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.cli import app
from kinegraph.data.fetch import RECORD_NAME
from tests.data.hub_repos import generated

runner = CliRunner()
OLD, NEW = "a" * 40, "b" * 40


def _copy(suite: str, tmp_path: Path) -> Path:
    folder = tmp_path / suite
    shutil.copytree(generated(suite, tmp_path), folder)
    return folder


def _check(suite: str, folder: Path) -> tuple[int, list[str], str]:
    result = runner.invoke(app, ["data", "check", suite, str(folder)])
    return result.exit_code, result.stdout.splitlines(), result.stderr.strip()


def _one_error(suite: str, folder: Path) -> str:
    code, lines, err = _check(suite, folder)
    assert code == 2
    assert len(lines) == 1, lines
    assert err == f"error: {folder}: 1 problem(s) in the {suite} layout (see the table above)"
    assert lines[0].startswith("error ")
    return lines[0]


def _tad_cache(tmp_path: Path, pin: str | None = None) -> Path:
    """The TAD configs as the `datasets` cache keeps them, in two versions (the newer lacks a question)."""
    world, root = generated("tad", tmp_path), tmp_path / "vbdai___tad"
    for stamp, fingerprint in ((1_000_000, OLD), (2_000_000, NEW)):
        for config in world.glob("*.jsonl"):
            rows = config.read_text().splitlines()
            if fingerprint == NEW and config.stem == "mc_action":
                rows = rows[:-1]
            target = root / config.stem / "0.0.0" / fingerprint / f"tad-train.{config.suffix[1:]}"
            target.parent.mkdir(parents=True)
            target.write_text("\n".join(rows) + "\n")
            os.utime(target, (stamp, stamp))
    if pin:
        (root / RECORD_NAME).write_text(json.dumps({"commit": pin}))
    return root


@pytest.mark.parametrize("suite", ["egodyn", "quantiphy", "tad", "dsi", "autodridm"])
def test_a_generated_folder_is_clean(suite: str, tmp_path: Path) -> None:
    code, lines, _ = _check(suite, generated(suite, tmp_path))
    assert (code, lines) == (0, [f"ok: {generated(suite, tmp_path)} is a complete {suite} folder"])


def test_no_such_folder(tmp_path: Path) -> None:
    line = _one_error("dsi", tmp_path / "nowhere")
    assert (
        "no such file or directory" in line
        and f"kinegraph data fetch dsi --to {tmp_path / 'nowhere'}" in line
    )


def test_a_hub_cache_root_is_not_a_dataset_folder(tmp_path: Path) -> None:
    root = tmp_path / "datasets--Viglong--DSI-Bench"
    for commit in (OLD, NEW):
        shutil.copytree(generated("dsi", tmp_path), root / "snapshots" / commit)
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text(OLD)  # main points at the older commit: that one is named
    line = _one_error("dsi", root)
    assert "a Hugging Face cache folder, not a dataset folder" in line
    assert f"use --data {root / 'snapshots' / OLD}" in line


def test_a_missing_variant_csv(tmp_path: Path) -> None:
    folder = _copy("dsi", tmp_path)
    (folder / "metadatas" / "hflip.csv").unlink()
    line = _one_error("dsi", folder)
    assert f"{folder / 'metadatas' / 'hflip.csv'}  missing" in line


def test_two_missing_csvs_are_two_lines(tmp_path: Path) -> None:
    folder = _copy("dsi", tmp_path)
    (folder / "metadatas" / "hflip.csv").unlink()
    (folder / "metadatas" / "reverse.csv").unlink()
    code, lines, _ = _check("dsi", folder)
    assert code == 2
    assert [line.split()[1] for line in lines] == [
        str(folder / "metadatas" / "hflip.csv"),
        str(folder / "metadatas" / "reverse.csv"),
    ]


def test_quantiphy_without_its_videos(tmp_path: Path) -> None:
    folder = _copy("quantiphy", tmp_path)
    shutil.rmtree(folder / "validation_videos")
    assert f"{folder / 'validation_videos'}  missing" in _one_error("quantiphy", folder)


def test_autodridm_without_any_task_file(tmp_path: Path) -> None:
    folder = _copy("autodridm", tmp_path)
    for task in folder.glob("*.json"):
        task.unlink()
    line = _one_error("autodridm", folder)
    assert f"{folder / 'Object-1.json'}  missing (or Object-2.json, Scene-1.json" in line


def test_stsbench_without_stsnu_json(tmp_path: Path) -> None:
    folder = _copy("stsbench", tmp_path)
    (folder / "STSnu.json").unlink()
    assert f"{folder / 'STSnu' / 'STSnu.json'}  missing (or STSnu.json)" in _one_error("stsbench", folder)


def test_tad_without_keysegments(tmp_path: Path) -> None:
    folder = _copy("tad", tmp_path)
    (folder / "keysegments.jsonl").unlink()
    assert f"{folder / 'keysegments'}  missing" in _one_error("tad", folder)


def test_a_row_without_its_question_names_file_line_and_field(tmp_path: Path) -> None:
    folder = _copy("tad", tmp_path)
    path = folder / "mc_action.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    del rows[1]["question"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    line = _one_error("tad", folder)
    assert f"{path}:2  field 'question': missing" in line


@pytest.mark.slow
def test_egodyn_frames_missing_from_the_nuscenes_root(tmp_path: Path) -> None:
    folder = _copy("egodyn", tmp_path)
    index = folder / "nuscenes_clips" / "clips_index.jsonl"
    first = json.loads(index.read_text().splitlines()[0])
    (folder / "nuscenes" / first["frame_paths"][0]).unlink()
    line = _one_error("egodyn", folder)
    assert f"{index}:1  field 'frame_paths': 1 of {len(first['frame_paths'])} frames missing" in line
    assert f"(first: {first['frame_paths'][0]})" in line


@pytest.mark.slow
def test_egodyn_without_a_nuscenes_root(tmp_path: Path) -> None:
    folder = _copy("egodyn", tmp_path)
    shutil.rmtree(folder / "nuscenes")
    line = _one_error("egodyn", folder)
    assert f"{folder / 'nuscenes'}  no nuScenes root" in line
    assert "kinegraph data fetch nuscenes says what to download" in line


def test_a_video_that_does_not_decode(tmp_path: Path) -> None:
    folder = _copy("dsi", tmp_path)
    video = sorted((folder / "videos" / "std").rglob("*.mp4"))[0]
    video.write_bytes(b"not a video" * 100)
    line = _one_error("dsi", folder)
    assert f"{video}  missing or unreadable video" in line


def test_two_cache_snapshots_warn_and_the_newest_is_read(tmp_path: Path) -> None:
    from kinegraph.benchmarks.tad.loader import load

    root = _tad_cache(tmp_path)
    code, lines, _ = _check("tad", root)
    assert code == 0
    warnings = [line for line in lines if line.startswith("warning")]
    world = generated("tad", tmp_path)
    assert len(warnings) == len(list(world.glob("*.jsonl")))  # one per config folder
    (mc_action,) = [w for w in warnings if w.split()[1] == str(root / "mc_action" / "0.0.0")]
    assert "2 snapshots of the same files (aaaaaaaaaaaa, bbbbbbbbbbbb); questions would repeat" in mc_action
    assert all("kinegraph reads bbbbbbbbbbbb (the newest)" in w for w in warnings)
    questions = sum(
        len((world / f"{t}.jsonl").read_text().splitlines()) for t in ("mc_action", "temp_ordering")
    )
    loaded = load(root, tasks=("mc_action", "temp_ordering"))
    assert len(loaded) == questions - 1  # each question once, from the newer snapshot
    assert len({s.id for s in loaded}) == len(loaded)


def test_the_snapshot_pinned_by_the_fetch_record_is_read(tmp_path: Path) -> None:
    from kinegraph.benchmarks.tad.loader import load

    root = _tad_cache(tmp_path, pin=OLD)
    _, lines, _ = _check("tad", root)
    assert all(f"kinegraph reads aaaaaaaaaaaa (pinned by {RECORD_NAME})" in line for line in lines[:-1])
    world = generated("tad", tmp_path)
    assert len(load(root, tasks=("mc_action",))) == len((world / "mc_action.jsonl").read_text().splitlines())


def test_run_refuses_a_fetched_folder_with_missing_files_before_any_request(tmp_path: Path) -> None:
    folder = _copy("dsi", tmp_path)
    (folder / RECORD_NAME).write_text(json.dumps({"commit": NEW}))
    (folder / "metadatas" / "reverse.csv").unlink()
    with OpenAILoopback(responder=lambda body: "<answer>A</answer>") as model:
        args = ["run", "dsi", "--graph", "dsi.tools", "--model", "vllm:m", "--base-url", model.base_url]
        result = runner.invoke(app, [*args, "--data", str(folder), "--out", str(tmp_path / "run")])
        received = model.received
    assert result.exit_code == 2
    assert received == 0
    assert result.stderr.strip().splitlines() == [
        f"error: {folder / 'metadatas' / 'reverse.csv'}: missing; fix: kinegraph data fetch dsi --to {folder}"
    ]


def test_unknown_benchmark_is_refused_in_one_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["data", "check", "kitti", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: unknown benchmark 'kitti' for data fetch/check; known: egodyn, quantiphy, tad, stsbench, "
        "dsi, autodridm, nuscenes"
    ]

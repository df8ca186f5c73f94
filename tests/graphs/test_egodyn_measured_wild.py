"""`egodyn.measured` end to end on clips as real dashcams record them: frames at uneven times, and no
camera written down. The clips are rendered videos with known poses (`write_carla_clips` under
`synthetic.conditions`); the graph sees only the videos and their rows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kinegraph.benchmarks.egodyn.extract import write_qa
from kinegraph.benchmarks.egodyn.world import write_carla_clips
from kinegraph.benchmarks.synthetic.conditions import Conditions
from kinegraph.report import compare, markdown
from kinegraph.run import execute as run
from kinegraph.types import RunConfig

SMALL = {"resolution": (480, 270), "noise_std": 1.0, "jpeg_quality": 90, "motion_blur_s": 0.0}


def _run(data: Path, out: Path, **options: object) -> None:
    config = RunConfig(
        benchmark="egodyn", graph="egodyn.measured", data=str(data), out_dir=str(out), options=options
    )
    run(config, show_progress=False)


def _predictions(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines() if line]


@pytest.mark.slow
def test_uneven_frame_times_from_the_row_are_the_times_measured_at(tmp_path: Path) -> None:
    """Each inner frame captured up to 30 % of a gap early or late; the clip's row lists the times. The
    trajectory is measured at those times (before: at index / fps, every speed off by the jitter)."""
    conditions = Conditions(frame_jitter=0.3, **SMALL)  # type: ignore[arg-type]
    rows = write_carla_clips(tmp_path / "data", 2, seed=31, conditions=conditions)
    write_qa(rows, tmp_path / "data" / "carla_clips")
    _run(tmp_path / "data", tmp_path / "run")
    by_clip = {p["sample_id"].split(":")[0]: p for p in _predictions(tmp_path / "run")}
    for row in rows:
        prediction = by_clip[row["clip_id"]]
        assert prediction["status"] == "ok", prediction["error"]
        times = np.asarray(row["frame_times_s"])
        assert np.ptp(np.diff(times)) > 0.02  # really uneven
        assert prediction["frames"]["timestamps_s"] == pytest.approx(list(times))
        trajectory = prediction["trace"][0]["output"]["trajectory"]
        with np.load(tmp_path / "data" / "carla_clips" / "arrays" / f"{row['clip_id']}.npz") as truth:
            position, yaw = truth["position"], truth["yaw"]  # EgoDyn's 31 poses at 10 Hz
        c, s = np.cos(yaw[0]), np.sin(yaw[0])
        relative = (position - position[0]) @ np.array([[c, -s], [s, c]])
        truth_t = np.arange(len(position)) / 10.0
        true_x = np.interp(trajectory["timestamps_s"], truth_t, relative[:, 0])
        assert np.max(np.abs(np.asarray(trajectory["x_m"]) - true_x)) < 0.25


@pytest.mark.slow
def test_no_camera_is_said_in_every_prediction_a_warning_line_and_the_report(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Rows without a camera object, and no scene-mates asked (`scene_camera=false`): every prediction
    records which camera values were given, assumed or estimated; predictions resting on assumed values
    carry a warning, the run ends with one line per warning and the report lists it."""
    conditions = Conditions(camera_given=False, **SMALL)  # type: ignore[arg-type]
    rows = write_carla_clips(tmp_path / "data", 3, seed=32, conditions=conditions)
    write_qa(rows, tmp_path / "data" / "carla_clips")
    assert all("camera" not in row for row in rows)
    capfd.readouterr()
    _run(tmp_path / "data", tmp_path / "run", scene_camera=False)
    err = capfd.readouterr().err
    predictions = _predictions(tmp_path / "run")
    assumed = set()
    for p in predictions:
        camera = p["trace"][0]["output"]["trajectory"]["camera"]
        assert set(camera["values"]) == {"focal", "height", "pitch", "roll"}
        assert set(camera["values"].values()) <= {"given", "assumed", "estimated"}
        assert camera["values"]["focal"] != "given" and camera["values"]["pitch"] == "estimated"
        assert camera["values"]["roll"] != "given"
        if "assumed" in (camera["values"]["focal"], camera["values"]["height"]):
            assumed.add(p["sample_id"].split(":")[0])
            assert any(w.startswith("camera assumed") for w in p["warnings"])
        else:
            assert not any(w.startswith("camera assumed") for w in p["warnings"])
        rolled_level = camera["values"]["roll"] == "assumed"
        assert rolled_level == any(w.startswith("camera roll assumed level") for w in p["warnings"])
    assert assumed  # straight clips show no lens: at least one clip had to assume
    lines = [line for line in err.splitlines() if line.startswith("warning:") and "camera assumed" in line]
    assert len(lines) >= 1 and f"{len(assumed)} of 3 groups" in lines[0]
    totals = json.loads((tmp_path / "run" / "run.json").read_text())["totals"]
    assert sum(totals["warnings"].values()) >= len(assumed)
    text = markdown(compare([tmp_path / "run"], n_boot=100))
    assert "Warnings:" in text and f"{len(assumed)} of 3 groups: camera assumed" in text


@pytest.mark.slow
def test_a_lens_lent_by_a_scene_mate_is_recorded_and_not_warned_about(tmp_path: Path) -> None:
    """The same three windows of one recording as above, run with the graph's defaults (the scene-mates
    asked): the clips that cannot show the lens take the one their scene-mate measured, recorded as
    estimated and `from_scene`; a warning stays exactly where a value is still assumed."""
    conditions = Conditions(camera_given=False, **SMALL)  # type: ignore[arg-type]
    rows = write_carla_clips(tmp_path / "data", 3, seed=32, conditions=conditions)
    write_qa(rows, tmp_path / "data" / "carla_clips")
    assert len({row["scene"] for row in rows}) == 1
    _run(tmp_path / "data", tmp_path / "run")
    lent = 0
    for p in _predictions(tmp_path / "run"):
        camera = p["trace"][0]["output"]["trajectory"]["camera"]
        assert camera["values"]["focal"] == "estimated"
        lent += "focal" in camera.get("from_scene", [])
        still_assumed = "assumed" in (camera["values"]["focal"], camera["values"]["height"])
        assert still_assumed == any(w.startswith("camera assumed") for w in p["warnings"])
    assert lent >= 14  # at least one clip's 14 questions rest on a lent lens


def test_each_kind_of_assumed_camera_value_has_its_warning() -> None:
    """A scale assumed (lens, mount height) and a roll assumed level each get one line of their own;
    nothing assumed, no line."""
    from dataclasses import replace

    from kinegraph.benchmarks.egodyn.measured_clip import camera_warnings
    from kinegraph.tools.camera_model import carla_default

    default = carla_default(1280, 720)
    assert camera_warnings(replace(default, assumed=frozenset())) == []
    (scale,) = camera_warnings(default)
    assert scale.startswith("camera assumed") and "90 deg field of view and a 1.6 m mount" in scale
    (roll,) = camera_warnings(replace(default, roll_rad=0.0, assumed=frozenset({"roll"})))
    assert roll.startswith("camera roll assumed level")
    both = camera_warnings(replace(default, roll_rad=0.0, assumed=frozenset({"focal", "roll"})))
    assert [w.split(",")[0] for w in both] == ["camera assumed", "camera roll assumed level"]

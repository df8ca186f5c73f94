"""`--subset`: runs on part of a benchmark, by the suite's keys or an id file, recorded in run.json."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kinegraph.cli import app
from kinegraph.errors import DataError, UsageError
from kinegraph.run.sweep_spec import expand, load_sweep
from kinegraph.rundir import PREDICTIONS, read_predictions
from kinegraph.subsets import parse_subset, select
from kinegraph.suites import suites
from kinegraph.types import Sample

TWO_QUESTIONS = ["yaw_rate_turn_direction", "speed_trend"]


@pytest.fixture(scope="module")
def egodyn_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """6 nuScenes-named clips (`clip_NNNNN`) and 6 CARLA ones, 14 questions each."""
    return suites.get("egodyn").generate(tmp_path_factory.mktemp("egodyn"), n=6, seed=0)


@pytest.fixture(scope="module")
def egodyn_samples(egodyn_world: Path):
    return suites.get("egodyn").load(egodyn_world)


def kinegraph(*args: str, expect: int = 0):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == expect, (result.output, result.exception)
    return result


def _oracle_run(world: Path, out: Path, *extra: str) -> list:
    args = ["run", "egodyn", "--graph", "egodyn.oracle", "--data", world, "--out", out, "--no-progress"]
    kinegraph(*args, *extra)
    return read_predictions(out / PREDICTIONS)


def test_keys_are_anded_values_ored_and_the_subset_is_in_run_json(egodyn_world, egodyn_samples, tmp_path):
    out = tmp_path / "run"
    subset = ["--subset", "source=carla", "--subset", "question=" + ",".join(TWO_QUESTIONS)]
    predictions = _oracle_run(egodyn_world, out, *subset)
    expected = {
        s.id
        for s in egodyn_samples
        if not s.group.startswith("clip_") and s.question_id in TWO_QUESTIONS  # CARLA clips, two questions
    }
    assert len(expected) == 12 and {p.sample_id for p in predictions} == expected
    config = json.loads((out / "run.json").read_text())["config"]
    assert config["subset"] == {"source": ["carla"], "question": TWO_QUESTIONS}


def test_limit_counts_within_the_subset(egodyn_world, tmp_path):
    predictions = _oracle_run(egodyn_world, tmp_path / "run", "--subset", "source=nuscenes", "--limit", "3")
    assert len(predictions) == 3 and all(p.group.startswith("clip_") for p in predictions)


def test_an_id_file_names_samples_or_whole_clips(egodyn_world, tmp_path, monkeypatch):
    carla = next(s.group for s in suites.get("egodyn").load(egodyn_world) if not s.group.startswith("clip_"))
    (tmp_path / "ids.txt").write_text(f"# the artifact clips\n{carla}\n\nclip_00001:speed_trend\n")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    predictions = _oracle_run(egodyn_world, out, "--subset", "ids=ids.txt")
    assert sorted(p.sample_id for p in predictions if p.group != carla) == ["clip_00001:speed_trend"]
    assert sum(p.group == carla for p in predictions) == 14
    config = json.loads((out / "run.json").read_text())["config"]
    assert config["subset"] == {"ids": [str(tmp_path / "ids.txt")]}  # absolute: a resume elsewhere finds it


def test_quantiphy_dimension_keeps_the_2d_rows(tmp_path):
    data = suites.get("quantiphy").generate(tmp_path / "q", n=6, seed=0)
    out = tmp_path / "run"
    kinegraph(
        "run", "quantiphy", "--graph", "quantiphy.oracle_tracks", "--data", data, "--out", out,
        "--no-progress", "--subset", "dimension=2D",
    )  # fmt: skip
    predictions = read_predictions(out / PREDICTIONS)
    rows = suites.get("quantiphy").load(data)
    two_d = {s.id for s in rows if s.metadata["video_type"][1] == "2"}  # [prior][dim][objects][background]
    assert 0 < len(two_d) < len(rows) and {p.sample_id for p in predictions} == two_d


def test_parse_subset_merges_a_repeated_key_and_refuses_a_malformed_one():
    assert parse_subset(["source=carla", "category=a,b", "source=nuscenes,carla"]) == {
        "source": ["carla", "nuscenes"],
        "category": ["a", "b"],
    }
    for bad in ("source", "=carla", "source=", "source=a,,b"):
        with pytest.raises(UsageError, match="expects key=value"):
            parse_subset([bad])


def _select(samples, subset):
    return select(samples, subset, suites.get("egodyn").subset_keys, "egodyn")


def test_refusals_name_what_is_valid(egodyn_samples, tmp_path):
    with pytest.raises(UsageError) as info:
        _select(egodyn_samples, {"colour": ["red"]})
    keys = "category, clip, ids, question, source"
    assert str(info.value) == f"--subset: egodyn has no key 'colour' (keys: {keys})"
    with pytest.raises(UsageError) as info:
        _select(egodyn_samples, {"source": ["carla", "waymo"]})
    assert str(info.value) == (
        "--subset source=waymo matches no egodyn sample (source values: carla, nuscenes)"
    )
    many = [Sample(id=f"s{i}", benchmark="egodyn", group=f"clip_{i:05d}", question="?") for i in range(25)]
    with pytest.raises(UsageError) as info:
        _select(many, {"clip": ["clip_99999"]})
    assert str(info.value).endswith("clip_00018, clip_00019, ... (25 in all))")  # the first 20, sorted
    with pytest.raises(UsageError, match="no egodyn sample matches every key at once"):
        carla = next(s.group for s in egodyn_samples if not s.group.startswith("clip_"))
        _select(egodyn_samples, {"source": ["nuscenes"], "clip": [carla]})
    ids = tmp_path / "ids.txt"
    ids.write_text("clip_00000\n# comment\nclip_0000\n")
    with pytest.raises(DataError) as info:
        _select(egodyn_samples, {"ids": [str(ids)]})
    assert str(info.value) == f"{ids}:3: id 'clip_0000' matches no egodyn sample or group"
    with pytest.raises(DataError, match="id list not found"):
        _select(egodyn_samples, {"ids": [str(tmp_path / "missing.txt")]})
    ids.write_text("# nothing\n\n")
    with pytest.raises(DataError, match="names no id"):
        _select(egodyn_samples, {"ids": [str(ids)]})


def test_every_suite_declares_keys_its_samples_have():
    for name in suites.names():
        keys = suites.get(name).subset_keys
        assert keys and "ids" not in keys, name


def test_a_sweep_benchmark_takes_a_subset(tmp_path):
    path = tmp_path / "sweep.yaml"
    path.write_text(
        textwrap.dedent(
            """
            benchmarks:
              quantiphy: {data: q, subset: {dimension: 2D, ids: lists/ids.txt}}
              egodyn: {data: e, subset: {question: [speed_trend, stop_and_go], clip: clip_00001}}
            graphs: [quantiphy.oracle_tracks, egodyn.oracle]
            """
        )
    )
    runs = {r.benchmark: r.config for r in expand(load_sweep(path), tmp_path / "out", path)}
    assert runs["quantiphy"].subset == {"dimension": ["2D"], "ids": [str(tmp_path / "lists" / "ids.txt")]}
    assert runs["egodyn"].subset == {"question": ["speed_trend", "stop_and_go"], "clip": ["clip_00001"]}
    path.write_text("benchmarks: {egodyn: {data: e, subset: {colour: red}}}\ngraphs: [egodyn.oracle]\n")
    with pytest.raises(DataError) as info:
        expand(load_sweep(path), tmp_path / "out", path)
    where = f"{path}: field 'benchmarks.egodyn.subset'"
    assert str(info.value).startswith(f"{where}: --subset: egodyn has no key 'colour'")

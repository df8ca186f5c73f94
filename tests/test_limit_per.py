"""`--limit N --limit-per KEY`: N groups of each task or category, so a small limit scores every one."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kinegraph.cli import app
from kinegraph.errors import UsageError
from kinegraph.rundir import PREDICTIONS, read_predictions
from kinegraph.subsets import first_groups_per
from kinegraph.suites import suites


@pytest.fixture(scope="module")
def tad_world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from kinegraph.benchmarks.tad.world import write_tad_world

    return write_tad_world(tmp_path_factory.mktemp("tad"), n_scenes=3, seed=0)


def test_a_task_ordered_file_keeps_every_task(tad_world):
    tad, nuscenes = tad_world
    suite = suites.get("tad")
    samples = suite.load(str(tad), nuscenes_root=str(nuscenes))
    tasks = {suite.subset_keys["task"](s) for s in samples}
    first = samples[: len(tasks)]
    assert len({suite.subset_keys["task"](s) for s in first}) < len(tasks)  # the file is ordered by task
    kept = first_groups_per(samples, 1, "task", suite.subset_keys, "tad")
    assert {suite.subset_keys["task"](s) for s in kept} == tasks
    for task in tasks:
        scenes = {s.group for s in kept if suite.subset_keys["task"](s) == task}
        first_scene = next(s.group for s in samples if suite.subset_keys["task"](s) == task)
        assert scenes == {first_scene}


def test_run_takes_n_groups_per_key_and_refuses_a_bad_key(tmp_path: Path):
    world = suites.get("quantiphy").generate(tmp_path / "qp", n=4, seed=0) / "quantiphy_validation.csv"
    base = ["run", "quantiphy", "--graph", "quantiphy.prior_only", "--data", str(world)]
    base += ["--model", "scripted:x", "--model-option", "responses=5 m", "--no-progress"]
    result = CliRunner().invoke(
        app, [*base, "--out", str(tmp_path / "run"), "--limit", "1", "--limit-per", "dimension"]
    )
    assert result.exit_code == 0, result.output
    predictions = read_predictions(tmp_path / "run" / PREDICTIONS)
    assert {p.metadata["dim"] for p in predictions} == {"2", "3"}
    assert len({p.group for p in predictions}) == 2
    wrong = CliRunner().invoke(
        app, [*base, "--out", str(tmp_path / "x"), "--limit", "1", "--limit-per", "nosuch"]
    )
    assert wrong.exit_code == 2 and "--limit-per: quantiphy has no key 'nosuch'" in wrong.output
    alone = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "y"), "--limit-per", "category"])
    assert alone.exit_code == 2 and "--limit-per category needs --limit N" in alone.output


def test_an_unknown_key_is_a_usage_error():
    with pytest.raises(UsageError, match="has no key 'ids'"):
        first_groups_per([], 1, "ids", suites.get("tad").subset_keys, "tad")

"""`reproduce` runs a table as the paper did: its subset, a relative --data, the counterfactual folder, the
scripted model through --model-option, and an arm that never answered is not shown as a measured 0."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from kinegraph.cli import app
from kinegraph.reproduce import find_table
from kinegraph.reproduce.runner import SWEEP_YAML, Request, sweep_spec
from kinegraph.run.sweep_spec import load_sweep
from kinegraph.suites import suites


@pytest.fixture(scope="module")
def quantiphy_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A QuantiPhy table with all four categories (2D and 3D rows), 19 questions."""
    root = tmp_path_factory.mktemp("quantiphy")
    return suites.get("quantiphy").generate(root, n=4, seed=0) / "quantiphy_validation.csv"


def mra(pred: float, truth: float) -> float:
    """QuantiPhy's mean relative accuracy, written out here from the paper's formula."""
    thresholds = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95]
    return sum(abs(pred - truth) / abs(truth) < 1 - t for t in thresholds) / len(thresholds)


def measured_cell(report: str, label: str) -> tuple[str, str, str, str]:
    """(published, measured, error rate, coverage) of the report row of arm `label`."""
    row = next(line for line in report.splitlines() if line.startswith(f"| {label} |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    return cells[3], cells[4], cells[6], cells[7]


def reproduce_args(key: str, data: str, out: Path, *more: str) -> list[str]:
    return ["reproduce", key, "--data", data, "--out", str(out), "--model", "scripted:fixed", *more]


def test_table2_runs_on_the_2d_subset_and_measures_its_mra(quantiphy_world: Path, tmp_path: Path):
    rows = pd.read_csv(quantiphy_world)
    two_d = rows[rows["video_type"].str[1] == "2"]
    assert len(two_d) < len(rows)  # the world has 3D rows the paper's subset leaves out
    per_category: dict[str, list[float]] = {}
    for _, row in two_d.iterrows():
        category = row["inference_type"][0] + "2"  # (S|D)2: a static or dynamic prior, in 2D
        per_category.setdefault(category, []).append(mra(5.0, float(row["ground_truth_posterior"])))
    expected = sum(sum(v) / len(v) for v in per_category.values()) / len(per_category)

    out = tmp_path / "out"
    args = reproduce_args("quantiphy:table2", str(quantiphy_world), out, "--model-option", "responses=5 m")
    result = CliRunner().invoke(app, [*args, "--skip", "quantiphy.prior_only", "--skip", "quantiphy.cot"])
    assert result.exit_code == 0, result.output
    report = (out / "reproduce.md").read_text()
    published, measured, errors, coverage = measured_cell(report, "ChatGPT-5.1 · video + prior")
    assert (published, errors, coverage) == ("0.561", "0.000", "1.000")
    assert measured == f"{expected:.3f}"
    assert "subset: dimension=2D (the paper's)" in report


def test_a_relative_data_path_is_read_where_the_command_runs(
    quantiphy_world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(quantiphy_world.parent.parent)
    relative = str(quantiphy_world.relative_to(quantiphy_world.parent.parent))
    out = tmp_path / "out"
    spec = sweep_spec(find_table("quantiphy:table1"), Request(out=out, data=relative, model="x:y"), None)
    out.mkdir()
    (out / SWEEP_YAML).write_text(__import__("yaml").safe_dump(spec.model_dump(exclude_defaults=True)))
    assert load_sweep(out / SWEEP_YAML).benchmarks["quantiphy"].data == str(quantiphy_world.resolve())


def test_the_counterfactual_folder_the_data_command_writes_is_the_data(quantiphy_world: Path, tmp_path: Path):
    folder = tmp_path / "cf"
    made = CliRunner().invoke(
        app, ["data", "quantiphy-counterfactual", "--from", str(quantiphy_world), "--out", str(folder)]
    )
    assert made.exit_code == 0, made.output
    written = pd.read_csv(next(folder.glob("*.csv")))
    out = tmp_path / "out"
    args = reproduce_args(
        "quantiphy:table2-counterfactual", str(folder), out, "--model-option", "responses=5"
    )
    result = CliRunner().invoke(app, [*args, "--limit", "1"])
    assert result.exit_code == 0, result.output
    report = (out / "reproduce.md").read_text()
    published, measured, errors, coverage = measured_cell(report, "Fuyu-8B · counterfactual prior")
    assert (published, errors, coverage) == ("0.090", "0.000", "1.000")
    assert measured != "—"
    assert len(written) > 0


def test_an_arm_that_never_answers_is_not_measured_and_says_why(quantiphy_world: Path, tmp_path: Path):
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(quantiphy_world.parent, broken)
    for video in (broken / "validation_videos").glob("*.mp4"):
        video.write_bytes(b"not a video")  # every clip fails to decode: no question is ever asked
    out = tmp_path / "out"
    args = reproduce_args("quantiphy:table1", str(broken / quantiphy_world.name), out)
    result = CliRunner().invoke(app, [*args, "--model-option", "responses=5 m"])
    # the arm's run failed (every answer an error, past --max-error-rate): the report is still written
    assert result.exit_code == 1 and "error: 1 run(s) failed" in result.output, result.output
    report = (out / "reproduce.md").read_text()
    assert "## Published vs measured" not in report, report
    not_measured = report.split("## Not measured", 1)[1]
    row = next(line for line in not_measured.splitlines() if line.startswith("| ChatGPT-5.1 |"))
    assert "no valid answer: input_error 19/19 (first: " in row, row


def test_a_small_limit_spreads_over_the_tasks_so_every_average_is_defined(
    quantiphy_world: Path, tmp_path: Path
):
    out = tmp_path / "out"
    args = reproduce_args("quantiphy:table1", str(quantiphy_world), out, "--model-option", "responses=5 m")
    result = CliRunner().invoke(app, [*args, "--limit", "1"])
    assert result.exit_code == 0, result.output
    report = (out / "reproduce.md").read_text()
    row = next(line for line in report.splitlines() if line.startswith("| Fuyu-8B | Avg |"))
    assert measured_cell(report, "Fuyu-8B | Avg")[1] != "—", row
    assert "limit: the first 1 groups of each category" in report


def test_printed_columns_the_suite_computes_are_compared(tmp_path: Path):
    from kinegraph.agents.loopback import OpenAILoopback
    from tests.support.run_data import write_egodyn_world
    from tests.support.text_reader_model import text_reader

    data = str(write_egodyn_world(tmp_path / "egodyn", n_clips=2))
    out = tmp_path / "out"
    with OpenAILoopback(responder=text_reader) as server:
        args = [
            "reproduce",
            "egodyn:table9",
            "--data",
            data,
            "--out",
            str(out),
            "--base-url",
            server.base_url,
        ]
        result = CliRunner().invoke(app, [*args, "--model", "vllm:loopback-vlm", "--limit", "1"])
    assert result.exit_code == 0, result.output
    report = (out / "reproduce.md").read_text()
    metrics = __import__("json").loads(next(out.glob("egodyn/*num_frames=10*/metrics.json")).read_text())
    expected = {
        "Temp F1": metrics["temporal"]["macro_f1"],
        "PCov": metrics["consistency"]["consistency_coverage"],
    }
    for column, value in expected.items():
        cells = measured_cell(report, f"Qwen3-VL-8B · 10 frames (3.3 FPS) | {column}")
        assert cells[1] == f"{value:.3f}", (column, cells)
    assert "no metric in the suite" not in report


@pytest.fixture(scope="module")
def tad_world(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    from kinegraph.benchmarks.tad.world import write_tad_world

    tad, nus = write_tad_world(tmp_path_factory.mktemp("tad"), n_scenes=1, seed=0)
    return str(tad), str(nus)


def test_scene_cot_asks_for_its_answerer_and_says_which_model_answered(tad_world, tmp_path: Path):
    import json

    tad, nus = tad_world
    args = ["--data-option", f"nuscenes_root={nus}", "--model-option", "responses=<answer>A</answer>"]
    without = CliRunner().invoke(app, [*reproduce_args("tad:table11", tad, tmp_path / "a"), *args])
    assert without.exit_code == 0, without.output
    said = (
        "Model role answerer (tad.scene_cot): scripted:fixed (--model, no --role answerer); the paper's is "
        "Qwen2.5-14B-Instruct-1M: pass --role answerer=PROVIDER:MODEL to run it as the paper did"
    )
    assert f"tad:table11: {said}" in without.stderr and said in (tmp_path / "a" / "reproduce.md").read_text()
    run_json = next((tmp_path / "a").rglob("run.json"))
    assert json.loads(run_json.read_text())["role_models"]["answerer"] == "scripted:fixed"

    named = ["--role", "answerer=scripted:qa", "--role-option", "answerer.responses=<answer>B</answer>"]
    with_role = CliRunner().invoke(app, [*reproduce_args("tad:table11", tad, tmp_path / "b"), *args, *named])
    assert with_role.exit_code == 0, with_role.output
    assert "Model role answerer" not in with_role.stderr
    report = (tmp_path / "b" / "reproduce.md").read_text()
    assert (
        "Model role answerer (tad.scene_cot): scripted:qa (--role answerer); "
        "the paper's: Qwen2.5-14B-Instruct-1M"
    ) in report
    run_json = next((tmp_path / "b").rglob("run.json"))
    assert json.loads(run_json.read_text())["role_models"]["answerer"] == "scripted:qa"

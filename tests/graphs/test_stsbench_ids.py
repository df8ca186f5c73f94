"""STSBench's upstream `man_id` (the scenario's nuScenes.db id) in prediction files, loader and export."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.benchmarks.stsbench.loader import load
from kinegraph.suites import suites
from tests.support.text_reader_model import prompt_text

# Upstream's ids are the `maneuver` table's ids of the labeled, in-use scenarios: sparse, ascending in
# the order STSnu.json lists the scenarios.
DB_IDS = [3, 4, 9, 17, 18, 25, 31, 40]


def _write_db(path: Path) -> Path:
    """A nuScenes.db with upstream's two tables: DB_IDS qualify; other rows are unlabeled, out of use or
    without a positive maneuver."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE maneuver (id INTEGER PRIMARY KEY, manually_labeled BOOLEAN, in_use BOOLEAN)")
        db.execute(
            "CREATE TABLE positive_maneuver (id INTEGER PRIMARY KEY, type INTEGER, maneuver_id INTEGER)"
        )
        rows = [(i, 1, 1) for i in DB_IDS] + [(5, 0, 1), (10, 1, 0), (20, 1, 1)]
        db.executemany("INSERT INTO maneuver VALUES (?, ?, ?)", rows)
        db.executemany(
            "INSERT INTO positive_maneuver (type, maneuver_id) VALUES (0, ?)", [(i,) for i in DB_IDS]
        )
    db.close()
    return path


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """8 ego scenarios: accelerate, brake, emergency stop, 2 lane changes, left, right, stop-and-go."""
    return suites.get("stsbench").generate(tmp_path / "world", n=8, seed=0)


def test_an_upstream_prediction_file_scores_through_evaluate(world, kinegraph, tmp_path):
    samples = load(world)
    right = {0, 1, 2, 3, 5}  # records 4 (a lane change), 6 (right turn), 7 (accelerating) answered wrong
    predictions = [
        {
            "prediction": s.answer if i in right else f"The answer is {s.answer}",  # "t": wrong upstream
            "gt_letter": s.answer,
            "gt_text": s.metadata["scenario"],
            "man_id": DB_IDS[i],
        }
        for i, s in enumerate(samples)
    ][::-1]  # the file's order does not matter: upstream looks each id up
    path = tmp_path / "STSnu_model.json"
    path.write_text(json.dumps(predictions))

    # accelerating (1 + 0)/2, decelerating 1, stopping 1, changing lanes (1 + 0)/2, left 1, right 0
    expected = pytest.approx((0.5 + 1 + 1 + 0.5 + 1 + 0) / 6)
    inferred = kinegraph("evaluate", "stsbench", path, "--data", world)
    assert "joined in ascending id order; pass --db" in inferred.stderr
    joined_in_order = json.loads(inferred.stdout)
    assert joined_in_order["ego"] == expected and joined_in_order["table"]["Ego"] == "66.67"
    with_db = kinegraph("evaluate", "stsbench", path, "--data", world, "--db", _write_db(tmp_path / "n.db"))
    assert json.loads(with_db.stdout)["ego"] == expected and not with_db.stderr

    # one scenario left out: upstream asserts, and so does evaluate (one line, exit 2)
    path.write_text(json.dumps(predictions[1:]))
    failed = kinegraph("evaluate", "stsbench", path, "--data", world, expect=2)
    assert failed.output.startswith("error:") and "man_id=0 has no prediction" in failed.output


def test_loader_ids_come_from_the_records_or_the_database(world, tmp_path):
    assert [s.metadata["man_id"] for s in load(world)] == list(range(8))  # neither: the index
    db = _write_db(tmp_path / "nuScenes.db")
    assert [s.metadata["man_id"] for s in load(world, db=db)] == DB_IDS
    records = json.loads(world.read_text())
    own = tmp_path / "own.json"
    own.write_text(json.dumps([{**r, "man_id": 100 + i} for i, r in enumerate(records)]))
    assert [s.metadata["man_id"] for s in load(own, db=db)] == [100 + i for i in range(8)]


def _says_accelerating(body: dict) -> str:
    """The letter of the option "Ego is accelerating"."""
    return re.search(r"([A-E])\. Ego is accelerating", prompt_text(body)).group(1)


def test_a_runs_export_carries_the_database_ids_and_rescored_equals_the_run(world, kinegraph, tmp_path):
    db = _write_db(tmp_path / "nuScenes.db")
    with OpenAILoopback(responder=_says_accelerating) as server:
        kinegraph(
            "run", "stsbench", "--graph", "stsbench.baseline", "--model", "vllm:loopback-vlm",
            "--base-url", server.base_url, "--data", world, "--data-option", f"data_root={world.parent}",
            "--data-option", f"db={db}", "--out", tmp_path / "run", "--no-cache", "--no-progress",
        )  # fmt: skip
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    export = tmp_path / "run" / "official" / "stsbench_predictions.json"
    assert sorted(p["man_id"] for p in json.loads(export.read_text())) == DB_IDS
    assert metrics["ego"] == pytest.approx(1 / 6)  # the 2 accelerating records right: 1 of 6 types
    for extra in ((), ("--db", db)):
        rescored = json.loads(kinegraph("evaluate", "stsbench", export, "--data", world, *extra).stdout)
        assert rescored["ego"] == pytest.approx(metrics["ego"])
        assert rescored["per_scenario"] == metrics["per_scenario"]


def test_a_database_that_is_missing_or_not_upstreams_is_refused_in_one_line(world, kinegraph, tmp_path):
    path = tmp_path / "preds.json"
    path.write_text(json.dumps([{"prediction": "A", "gt_letter": "A", "man_id": i} for i in range(8)]))
    missing = kinegraph("evaluate", "stsbench", path, "--data", world, "--db", tmp_path / "no.db", expect=2)
    assert missing.output.startswith("error:") and "no.db: nuScenes.db not found" in missing.output
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE scene (id INTEGER PRIMARY KEY)")
    db.close()
    wrong = kinegraph("evaluate", "stsbench", path, "--data", world, "--db", other, expect=2)
    assert "other.db: not upstream's scenario database: no such table: maneuver" in wrong.output
    assert len(wrong.output.strip().splitlines()) == 1
    small = _write_db(tmp_path / "small.db")
    with sqlite3.connect(small) as db:
        db.execute("UPDATE maneuver SET in_use = 0 WHERE id = 40")
    db.close()
    short = kinegraph("evaluate", "stsbench", path, "--data", world, "--db", small, expect=2)
    assert "7 scenarios in" in short.output and "8 in the file" in short.output

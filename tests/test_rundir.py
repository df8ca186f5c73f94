"""The run directory contract on its own: the append-only log, torn tails, duplicates, atomic JSON."""

from __future__ import annotations

import json

import pytest

from kinegraph.errors import DataError
from kinegraph.rundir import PredictionLog, read_json, read_predictions, write_json
from kinegraph.types import Prediction, Status


def prediction(sample_id: str, status: Status = Status.ok, answer: str = "A") -> Prediction:
    return Prediction(sample_id=sample_id, benchmark="egodyn", answer=answer, status=status)


def test_the_log_appends_one_line_per_new_sample_and_ignores_repeats(tmp_path):
    log = PredictionLog(tmp_path / "p.jsonl").open()
    assert log.append([prediction("a"), prediction("b")]) == 2
    assert log.append([prediction("b", answer="B"), prediction("c")]) == 1
    log.close()
    lines = (tmp_path / "p.jsonl").read_text().splitlines()
    assert [json.loads(line)["sample_id"] for line in lines] == ["a", "b", "c"]
    assert json.loads(lines[1])["answer"] == "A"  # the first answer of a sample stays


def test_a_torn_last_line_is_cut_off_on_open_and_the_rest_resumes(tmp_path):
    path = tmp_path / "p.jsonl"
    whole = prediction("a").model_dump_json() + "\n"
    path.write_text(whole + prediction("b").model_dump_json()[:25])
    assert [p.sample_id for p in read_predictions(path)] == ["a"]
    log = PredictionLog(path).open()
    assert set(log.done) == {"a"} and path.read_text() == whole
    assert log.append([prediction("b")]) == 1
    log.close()
    assert [p.sample_id for p in read_predictions(path)] == ["a", "b"]


def test_a_corrupt_line_in_the_middle_names_file_and_line(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(
        prediction("a").model_dump_json() + "\n{broken\n" + prediction("c").model_dump_json() + "\n"
    )
    with pytest.raises(DataError) as err:
        read_predictions(path)
    assert str(err.value).startswith(f"{path}:2: corrupt prediction line")


def test_duplicates_from_an_older_log_are_rewritten_keeping_the_first(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(
        "".join(p.model_dump_json() + "\n" for p in [prediction("a"), prediction("a", answer="Z")])
    )
    log = PredictionLog(path).open()
    log.close()
    assert [(p.sample_id, p.answer) for p in read_predictions(path)] == [("a", "A")]


def test_retrying_errors_drops_failed_samples_but_keeps_parse_failures(tmp_path):
    path = tmp_path / "p.jsonl"
    kept = [prediction("ok"), prediction("unparsed", Status.parse_failure)]
    path.write_text("".join(p.model_dump_json() + "\n" for p in [*kept, prediction("api", Status.api_error)]))
    log = PredictionLog(path).open(drop_errors=True)
    log.close()
    assert set(log.done) == {"ok", "unparsed"}
    assert [p.sample_id for p in read_predictions(path)] == ["ok", "unparsed"]


def test_append_before_open_is_refused(tmp_path):
    with pytest.raises(RuntimeError, match="before open"):
        PredictionLog(tmp_path / "p.jsonl").append([prediction("a")])


def test_json_files_are_written_whole_and_bad_json_names_the_file(tmp_path):
    path = tmp_path / "run.json"
    write_json(path, {"status": "running", "n": 3})
    assert read_json(path) == {"status": "running", "n": 3}
    assert not list(tmp_path.glob("*.tmp"))
    assert read_json(tmp_path / "absent.json") is None
    path.write_text('{"status": ')
    with pytest.raises(DataError, match=r"run\.json:1: not valid JSON"):
        read_json(path)

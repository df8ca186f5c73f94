"""The run directory contract on its own: the append-only log, torn tails, duplicates, atomic JSON, the
lock, which run a directory resumes, and which file a run's scorer reads."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys

import pytest

from kinegraph.errors import DataError
from kinegraph.rundir import (
    OFFICIAL,
    PREDICTIONS,
    RUN_JSON,
    PredictionLog,
    RunDirBusy,
    RunDirTaken,
    check_resumable,
    lock_run_dir,
    official_instead,
    read_json,
    read_predictions,
    write_json,
)
from kinegraph.types import Prediction, RunConfig, Status


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


HOLD_THE_LOCK = """
import sys
from pathlib import Path
from kinegraph.rundir import lock_run_dir
with lock_run_dir(Path(sys.argv[1])):
    print("locked", flush=True)
    sys.stdin.read()
"""


def test_one_process_at_a_time_holds_a_run_directory_and_a_killed_holder_frees_it(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK, str(tmp_path / "run")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert holder.stdout.readline() == "locked\n"
        with pytest.raises(RunDirBusy) as busy, lock_run_dir(tmp_path / "run"):
            pass
        assert str(busy.value).startswith(
            f"{tmp_path / 'run'}: another kinegraph run is writing here (pid {holder.pid})"
        )
    finally:
        holder.kill()  # SIGKILL: no clean-up runs, the OS drops the lock
        holder.wait()
    with lock_run_dir(tmp_path / "run"):
        with pytest.raises(RunDirBusy, match=f"pid {os.getpid()}"), lock_run_dir(tmp_path / "run"):
            pass  # a second writer in the same process is refused too


def config(tmp_path, **changes) -> RunConfig:
    base = RunConfig(
        benchmark="egodyn", graph="egodyn.oracle", data=str(tmp_path / "data"), out_dir=str(tmp_path)
    )
    return base.model_copy(update=changes)


def test_a_directory_resumes_only_the_run_it_holds(tmp_path):
    check_resumable(config(tmp_path))  # no run.json yet: anything goes
    write_json(tmp_path / RUN_JSON, {"config": config(tmp_path, options={"a": 1}).model_dump()})
    check_resumable(config(tmp_path, options={"a": 1}, limit=5, concurrency=2, use_cache=False))
    with pytest.raises(RunDirTaken) as taken:
        check_resumable(config(tmp_path, graph="egodyn.flow", options={"a": 2}))
    assert str(taken.value) == (
        f"{tmp_path}: holds another run (graph 'egodyn.oracle' there, 'egodyn.flow' asked; "
        "options {'a': 1} there, {'a': 2} asked); "
        "pass another --out, or rerun with the same settings to resume"
    )
    for field, value in [
        ("benchmark", "quantiphy"),
        ("model", "vllm:m"),
        ("data", str(tmp_path / "other")),
        ("loader_options", {"split": "val"}),
    ]:
        with pytest.raises(RunDirTaken, match=f"{field} "):
            check_resumable(config(tmp_path, options={"a": 1}, **{field: value}))


def test_the_same_data_by_another_spelling_of_its_path_resumes(tmp_path, monkeypatch):
    write_json(tmp_path / RUN_JSON, {"config": config(tmp_path).model_dump()})
    monkeypatch.chdir(tmp_path)
    check_resumable(config(tmp_path, data="./data"))


def test_a_write_that_fails_names_its_file(tmp_path):
    log = PredictionLog(tmp_path / "p.jsonl").open()
    log._handle = open("/dev/full", "w")  # noqa: SIM115 - every write to /dev/full fails with ENOSPC
    with pytest.raises(OSError) as full:
        log.append([prediction("a")])
    assert (full.value.errno, full.value.filename) == (errno.ENOSPC, str(tmp_path / "p.jsonl"))
    assert "a" not in log.done  # not on disk, so not done
    blocked = tmp_path / "p.jsonl" / "run.json"  # its directory is a file: the write cannot start
    with pytest.raises(OSError) as failed:
        write_json(blocked, {"status": "running"})
    assert failed.value.errno in (errno.EEXIST, errno.ENOTDIR) and failed.value.filename == str(blocked)


def test_a_runs_own_log_points_to_its_official_export_when_that_is_another_format(tmp_path):
    log = tmp_path / PREDICTIONS
    log.write_text(prediction("a").model_dump_json() + "\n")
    assert official_instead(log) == []  # no official/ beside it
    official = tmp_path / OFFICIAL
    official.mkdir()
    upstream = official / "egodyn_predictions.jsonl"
    upstream.write_text(json.dumps({"qa_id": "a", "clip_id": "c", "model_answer": "A"}) + "\n")
    assert official_instead(log) == [upstream]
    assert official_instead(upstream) == []  # the upstream file itself is fine
    upstream.unlink()
    (official / "autodridm_predictions.jsonl").write_text(json.dumps({"sample_id": "a", "raw": "A"}) + "\n")
    assert official_instead(log) == []  # an export of kinegraph's own fields reads the log the same way

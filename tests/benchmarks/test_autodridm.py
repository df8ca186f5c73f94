"""AutoDriDM loader: task-key discovery, danger_score as int or string, single/multi answers, bad rows."""

from __future__ import annotations

import json

import pytest

from kinegraph.benchmarks.autodridm import loader as autodridm
from kinegraph.errors import DataError

RECORD = {
    "image_name": "images/bdd100k/0001.jpg",
    "task3_q": "What is the weather condition in the image? Please select one or more options.",
    "task3_o": "A.Daytime; B.Nighttime; C.Rain; D.Snow; E.Heavy fog",
    "task3_a": "C,A",
    "danger_score": "4",
}


def write(tmp_path, task, records):
    (tmp_path / f"{task}.json").write_text(json.dumps(records))
    return tmp_path


def test_multi_select_record(tmp_path):
    (sample,) = autodridm.load(write(tmp_path, "Scene-1", [RECORD]))
    assert sample.id == "autodridm/Scene-1/0" and sample.group == "images/bdd100k/0001.jpg"
    assert sample.answer == ["A", "C"]
    assert sample.options[:2] == ["A. Daytime", "B. Nighttime"]
    assert sample.metadata == {
        "task": "Scene-1",
        "level": "Scene",
        "multi_select": True,
        "danger_score": 4.0,
        "high_risk": True,
        "source_dataset": "bdd100k",
        "task_key": "task3",
    }
    assert autodridm.user_prompt(sample).startswith("IMAGE: images/bdd100k/0001.jpg\n\nQUESTION: What is")
    assert sample.media.frame_paths == [str(tmp_path / "images/bdd100k/0001.jpg")]


def test_single_choice_with_int_danger_and_two_task_keys(tmp_path):
    record = {
        "image_name": "kitti/000123.png",
        "task1_q": "Most important object?",
        "task1_o": "A.Building; B.Vehicle",
        "task1_a": "B",
        "task7_q": "Second question?",
        "task7_o": "A.Yes; B.No",
        "task7_a": "A",
        "danger_score": 2,
    }
    samples = autodridm.load(write(tmp_path, "Object-1", [record]))
    assert [s.id for s in samples] == ["autodridm/Object-1/0/task1", "autodridm/Object-1/0/task7"]
    assert samples[0].answer == "B" and samples[0].metadata["high_risk"] is False
    assert samples[0].metadata["source_dataset"] == "kitti"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"task3_a": "A,H"}, r"field 'task3_a': record 0: answer letter\(s\) \['H'\] not among the options"),
        ({"task3_a": ""}, "field 'task3_a': record 0: missing or empty"),
        ({"task3_o": None}, "field 'task3_o': record 0: missing or empty"),
        ({"task3_o": "Daytime or night"}, "field 'task3_o': record 0: no 'A.text; B.text' options"),
        ({"danger_score": "high"}, "field 'danger_score': record 0: not a number"),
        ({"danger_score": 9}, "field 'danger_score': record 0: outside 1-5"),
    ],
)
def test_malformed_rows_get_a_clear_error(tmp_path, change, message):
    with pytest.raises(DataError, match=message):
        autodridm.load(write(tmp_path, "Scene-1", [{**RECORD, **change}]))


def test_single_choice_task_rejects_several_letters(tmp_path):
    record = {k.replace("task3", "task1"): v for k, v in RECORD.items()}
    with pytest.raises(DataError, match="is not a valid letter"):
        autodridm.load(write(tmp_path, "Decision-1", [record]))

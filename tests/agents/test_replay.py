"""The replay provider: recorded EgoDyn JSONL and QuantiPhy CSV answers, keyed by sample."""

from __future__ import annotations

import json

import pytest

from kinegraph.agents import BackendError, GenerateRequest, UnknownModelError, get_backend, user_message
from kinegraph.errors import DataError
from tests.support.event_loop import run


def _ask(backend, **metadata):
    return run(backend.generate(GenerateRequest(messages=[user_message("q")], metadata=metadata)))


def test_egodyn_answers_by_qa_id_or_clip_and_question(tmp_path):
    path = tmp_path / "generated" / "qwen_answers.jsonl"
    path.parent.mkdir()
    rows = [
        {
            "qa_id": "qa_1",
            "clip_id": "clip_00072",
            "question_id": "speed_trend",
            "model_answer": "accelerating",
        },
        {"clip_id": "clip_00073", "question_id": "stop_and_go", "model_answer": "The answer is: no"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    backend = get_backend(f"replay:{path}")
    assert backend.model == "qwen"
    assert _ask(backend, sample_id="qa_1").text == "accelerating"
    assert (
        _ask(backend, sample_id="x", clip_id="clip_00073", question_id="stop_and_go").text
        == "The answer is: no"
    )
    with pytest.raises(BackendError, match="no recorded answer"):
        _ask(backend, sample_id="qa_404")


def test_quantiphy_csv_prefers_raw_response_and_matches_trailing_ids(tmp_path):
    path = tmp_path / "gpt-5.csv"
    path.write_text(
        ",video_id,question,raw_response,parsed_value\n"
        '2161,internet_0004,"What is the length, in cm?",about 9.5 cm,9.5\n'
        "2162,internet_0004,thickness?,,\n"
    )
    backend = get_backend(f"replay:{path}")
    assert _ask(backend, sample_id="2161").text == "about 9.5 cm"
    assert _ask(backend, sample_id="quantiphy:2162").text == ""
    parsed = get_backend("replay:gpt-5", path=path, field="parsed_value")
    assert parsed.model == "gpt-5" and _ask(parsed, sample_id="2161").text == "9.5"


def test_bad_files_name_file_line_and_field(tmp_path):
    with pytest.raises(UnknownModelError, match="no recorded-answers file"):
        get_backend(f"replay:{tmp_path / 'absent.jsonl'}")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qa_id": "a", "model_answer": "x"}\n{"qa_id": "b"}\n')
    with pytest.raises(DataError, match=r"bad.jsonl:2: field 'model_answer'"):
        get_backend(f"replay:{bad}")
    no_id = tmp_path / "noid.csv"
    no_id.write_text("video_id,parsed_value\nsim_1,3.0\n")
    with pytest.raises(
        DataError, match=r"noid.csv:2: field 'video_id': the first column must be the integer"
    ):
        get_backend(f"replay:{no_id}")


def test_published_outputs_replay_through_the_backend(golden):
    """The upstream EgoDyn flow-heuristic answers and QuantiPhy gpt-5.1 outputs, row by row."""
    ego_path = golden / "egodyn" / "flow_heuristic.jsonl"
    ego = get_backend(f"replay:{ego_path}")
    rows = [json.loads(line) for line in ego_path.read_text().splitlines() if line.strip()]
    for row in rows[:50]:
        answer = _ask(ego, sample_id=row["qa_id"]).text
        assert answer == row["model_answer"]
    quanti = get_backend(f"replay:{golden / 'quantiphy' / 'gpt-5.1.csv'}")
    assert quanti.model == "gpt-5.1"
    assert _ask(quanti, sample_id="2161").text == "89.0" and _ask(quanti, sample_id="2162").text == "2.0"
    assert len(quanti.inner.answers) == 159  # one answer per row of the shipped file

"""STSBench loader: groups from actor blocks, seeded option sets, frames, malformed records."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from kinegraph.benchmarks.stsbench import loader as stsbench
from kinegraph.errors import DataError

NEGATIVES = "Ego is decelerating,Ego is stopping,Ego is turning left,Ego is turning right,Ego is reversing"


def actor(cam: str = "CAM_FRONT_LEFT") -> dict:
    return {
        "global": {"xyz": [[0, 0, 0]] * 6, "yaw": [0.0] * 6},
        "camera": {"bb2d": [[160.0, 90.0, 320.0, 180.0]] * 6, "cam": [cam] * 6},
        "agent_token": ["t"] * 6,
    }


def record(**blocks) -> dict:
    sensors = {c: [f"samples/{c}/f{i}.jpg" for i in range(6)] for c in ("CAM_FRONT", "CAM_FRONT_LEFT")}
    return {"scenario": "Ego is accelerating", "negative_scenarios": NEGATIVES, "sensors": sensors, **blocks}


def test_groups_questions_and_frames(tmp_path):
    ego = {"xyz": [[i, 0, 0] for i in range(6)], "yaw": [0.0] * 6, "velocity": [1.0] * 6}
    records = [
        record(ego=ego),
        record(ego=ego, other_agent=actor()),
        record(agent=actor()),
        record(agent=actor(), other_agent=actor("CAM_FRONT")),
    ]
    path = tmp_path / "STSnu.json"
    path.write_text(json.dumps(records))
    samples = stsbench.load(path, seed=3, data_root=tmp_path)
    assert [s.metadata["scenario_group"] for s in samples] == ["ego", "ego_agent", "agent", "agent_agent"]
    first = samples[0]
    assert first.question == stsbench.EGO_QUESTION
    assert len(first.options) == 5 and [o[:3] for o in first.options] == ["A. ", "B. ", "C. ", "D. ", "E. "]
    assert first.options[ord(first.answer) - ord("A")] == f"{first.answer}. Ego is accelerating"
    assert first.metadata["question_seed"] == 3 and first.context["ego"]["velocity"] == [1.0] * 6
    assert first.media.frame_paths[0] == str(tmp_path / "samples/CAM_FRONT/f0.jpg")
    # agent scenarios look through the camera that sees the agent; 1600x900 box (160,90)-(320,180)
    # -> normalised (100,100)-(200,200) per mille -> 800x450 prompt frame (80,45)-(160,90)
    assert samples[2].media.frame_paths[0].endswith("samples/CAM_FRONT_LEFT/f0.jpg")
    assert "[80, 45, 160, 90]" in samples[2].question


def test_choices_are_seeded_and_favour_early_negatives():
    a = stsbench.build_choices("pos", ["n1", "n2", "n3"], seed=1, index=5, n_negatives=2)
    assert a == stsbench.build_choices("pos", ["n1", "n2", "n3"], seed=1, index=5, n_negatives=2)
    # weights 5,4,3,2,1 over 5 negatives: the first is drawn more often than the last
    counts = Counter()
    negatives = ["n1", "n2", "n3", "n4", "n5"]
    for i in range(400):
        counts.update(stsbench.linear_weighted_sample(negatives, 1, np.random.default_rng(i)))
    assert counts["n1"] > counts["n5"] * 2
    # letters land uniformly enough that the answer is not always A
    letters = {stsbench.build_choices("pos", negatives, seed=0, index=i)[1] for i in range(30)}
    assert len(letters) >= 4


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"negative_scenarios": "Ego is stopping,Ego is reversing"}, "record 0: 2 negatives, need 4"),
        ({"scenario": ""}, "field 'scenario': record 0: missing or empty"),
        ({"ego": None}, "record 0: record has neither an 'ego' nor an 'agent' block"),
    ],
)
def test_malformed_records_name_the_record(tmp_path, change, message):
    rec = {k: v for k, v in {**record(ego={}), **change}.items() if v is not None}
    path = tmp_path / "STSnu.json"
    path.write_text(json.dumps([rec]))
    with pytest.raises(DataError, match=message):
        stsbench.load(path)

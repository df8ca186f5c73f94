"""AutoDriDM (non-official) scorer and `kinegraph evaluate autodridm`; every expected value worked by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kinegraph.benchmarks.autodridm import loader as bench
from kinegraph.cli import app
from kinegraph.evaluators import autodridm

OBJ = "A.Building; B.Vehicle; C.Traffic light; D.Pedestrian; E.Street lamp"
LIGHT = "A.Green; B.Yellow; C.Red"
WEATHER = "A.Daytime; B.Nighttime; C.Rain; D.Snow; E.Heavy fog"
SPECIAL = "A.Heavy Traffic; B.Accident Scene; C.Construction Zone; D.Vehicle breakdown; G.None of the above"
ACTION = "A.Drive straight; B.Slow down; C.Turn left; D.Turn right; E.Change lanes; F.Stay still"
RISK = "A.Absolutely safe; B.Moderate risk; C.Extreme risk"
DANGER = {"img1.jpg": "4", "img2.jpg": 2, "img3.jpg": 5}  # high risk: img1 and img3

# task -> (task key number, options, [(image, answer), ...]); the key number differs per file.
TASK_DATA = {
    "Object-1": (1, OBJ, [("img1.jpg", "C"), ("img2.jpg", "B"), ("img3.jpg", "A")]),
    "Object-2": (2, LIGHT, [("img1.jpg", "C"), ("img2.jpg", "A"), ("img3.jpg", "B")]),
    "Scene-1": (3, WEATHER, [("img1.jpg", "A,C"), ("img2.jpg", "B")]),
    "Scene-2": (4, SPECIAL, [("img1.jpg", "A,B,C")]),
    "Decision-1": (5, ACTION, [("img1.jpg", "B"), ("img2.jpg", "A"), ("img3.jpg", "F")]),
    "Decision-2": (6, RISK, [("img1.jpg", "C"), ("img2.jpg", "A")]),
}
RAW = {
    "Object-1/0": "<think>the light is red</think><answer>C</answer>",  # 1
    "Object-1/1": "B",  # 1 (no tags: first stand-alone capital)
    "Object-1/2": "<answer>B</answer>",  # 0          -> Object-1 = 2/3
    "Object-2/0": "<answer> C </answer>",  # 1
    # Object-2/1 missing -> 0
    "Object-2/2": "I choose B.",  # "I" is the first stand-alone capital -> 0   -> Object-2 = 1/3
    "Scene-1/0": "<answer>A, C</answer>",  # exact set -> 1
    "Scene-1/1": "<answer>B,D</answer>",  # D is wrong -> 0    -> Scene-1 = 1/2
    "Scene-2/0": "<answer>A,B</answer>",  # proper subset of {A,B,C}: none 0 | half 0.5 | fraction 2/3
    "Decision-1/0": "<answer>B</answer>",  # 1
    "Decision-1/1": "<answer>A</answer>",  # 1
    "Decision-1/2": "<answer>E</answer>",  # 0                 -> Decision-1 = 2/3
    "Decision-2/0": "<answer>c</answer>",  # lower case is not a letter choice -> 0
    "Decision-2/1": "<answer>A</answer>",  # 1                 -> Decision-2 = 1/2
}


def write_dataset(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for task, (x, options, rows) in TASK_DATA.items():
        records = [
            {
                "image_name": image,
                f"task{x}_q": f"{task} question?",
                f"task{x}_o": options,
                f"task{x}_a": answer,
                "danger_score": DANGER[image],
            }
            for image, answer in rows
        ]
        (root / f"{task}.json").write_text(json.dumps(records))
    return root


def predictions(raw: dict[str, str]) -> dict[str, str]:
    return {f"autodridm/{k}": v for k, v in raw.items()}


@pytest.fixture
def samples(tmp_path):
    return bench.load(write_dataset(tmp_path / "AutoDriDM"))


def test_parse_letters():
    assert autodridm.parse_letters("<answer>C, A</answer>", multi_select=True) == ["A", "C"]
    assert autodridm.parse_letters("x <answer>B and C</answer>", multi_select=False) == ["B"]
    assert autodridm.parse_letters("A.", multi_select=False) == ["A"]
    assert autodridm.parse_letters("", multi_select=True) == []


@pytest.mark.parametrize(
    ("chosen", "answer", "mode", "expected"),
    [
        (["A", "C"], ["A", "C"], "none", 1.0),
        (["A"], ["A", "C"], "none", 0.0),
        (["A"], ["A", "C"], "half", 0.5),
        (["A"], ["A", "B", "C", "D"], "fraction", 0.25),
        (["A", "E"], ["A", "C"], "half", 0.0),  # any wrong letter: zero
        ([], ["A"], "fraction", 0.0),
    ],
)
def test_credit(chosen, answer, mode, expected):
    assert autodridm.credit(chosen, answer, mode) == expected


def test_tasks_levels_and_average(samples):
    metrics = autodridm.score(samples, predictions(RAW))
    tasks = metrics["all"]["tasks"]
    assert tasks == pytest.approx(
        {
            "Object-1": 2 / 3,
            "Object-2": 1 / 3,
            "Scene-1": 0.5,
            "Scene-2": 0.0,
            "Decision-1": 2 / 3,
            "Decision-2": 0.5,
        }
    )
    # (2/3 + 1/3 + 1/2 + 0 + 2/3 + 1/2) / 6 = (8/3) / 6 = 4/9
    assert metrics["all"]["average"] == pytest.approx(4 / 9)
    # Object (2/3 + 1/3)/2 = 1/2; Scene (1/2 + 0)/2 = 1/4; Decision (2/3 + 1/2)/2 = 7/12
    assert metrics["all"]["levels"] == pytest.approx({"Object": 0.5, "Scene": 0.25, "Decision": 7 / 12})
    assert metrics["n_questions"] == 14 and metrics["n_missing"] == 1


@pytest.mark.parametrize(
    ("mode", "average"), [("half", (8 / 3 + 0.5) / 6), ("fraction", (8 / 3 + 2 / 3) / 6)]
)
def test_partial_credit_modes(samples, mode, average):
    metrics = autodridm.score(samples, predictions(RAW), partial_credit=mode)
    assert metrics["all"]["average"] == pytest.approx(average)


def test_high_risk_split(samples):
    # danger >= 4: img1 ("4", a string) and img3 (5).
    # O1 img1 1, img3 0 -> 1/2; O2 1, 0 -> 1/2; S1 img1 1; S2 img1 0; D1 1, 0 -> 1/2; D2 img1 0.
    high = autodridm.score(samples, predictions(RAW))["high_risk"]
    assert high["tasks"] == pytest.approx(
        {
            "Object-1": 0.5,
            "Object-2": 0.5,
            "Scene-1": 1.0,
            "Scene-2": 0.0,
            "Decision-1": 0.5,
            "Decision-2": 0.0,
        }
    )
    assert high["average"] == pytest.approx(2.5 / 6)


def test_correlation_phi_over_shared_images(samples):
    corr = autodridm.score(samples, predictions(RAW))["correlation"]["all"]
    phi = {
        (a, b): corr["phi"][i][j] for i, a in enumerate(corr["tasks"]) for j, b in enumerate(corr["tasks"])
    }
    # per-image exact correctness: O1 = (1, 1, 0), O2 = (1, 0, 0) over img1..3:
    # means 2/3, 1/3; cov = (2/9 - 1/9 + 2/9)/3 = 1/9; var = 2/9 each -> phi = 1/2
    assert phi["Object-1", "Object-2"] == pytest.approx(0.5)
    assert phi["Object-1", "Decision-1"] == pytest.approx(1.0)  # identical vectors
    assert phi["Decision-2", "Scene-1"] == pytest.approx(-1.0)  # (0, 1) vs (1, 0) on img1, img2
    assert phi["Object-1", "Scene-1"] is None  # O1 is (1, 1) on img1, img2: no variance
    assert phi["Scene-2", "Object-1"] is None  # one shared image
    assert phi["Scene-2", "Scene-2"] == 1.0
    assert corr["n_images"][0][2] == 2  # Object-1 x Scene-1 share img1 and img2


def test_cli_reads_kinegraph_predictions(tmp_path):
    data = write_dataset(tmp_path / "AutoDriDM")
    preds = tmp_path / "predictions.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"sample_id": k, "raw": v, "status": "ok"}) + "\n" for k, v in predictions(RAW).items()
        )
    )
    result = CliRunner().invoke(app, ["evaluate", "autodridm", str(preds), "--data", str(data)])
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)
    assert metrics["all"]["average"] == pytest.approx(4 / 9)
    assert "non-official" in metrics["scorer"]

    preds.write_text(json.dumps({"sample_id": "autodridm/Object-1/99", "raw": "A"}) + "\n")
    result = CliRunner().invoke(app, ["evaluate", "autodridm", str(preds), "--data", str(data)])
    assert result.exit_code == 2
    assert "unknown sample ids" in result.output and str(preds) in result.output

"""Corrupt data, one thing at a time, over every benchmark: a one-line refusal or a per-sample error.

Each row starts from a valid synthetic world (the suite's own generator), corrupts one file, then loads
(or scores) it. `REFUSE` rows must raise `DataError` whose one-line message names the corrupted file;
`SAMPLE` rows must load and then, in a real run, end as failed predictions whose error names the file.
Nothing else is allowed: no other exception type (a traceback) and no silent change.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.errors import DataError
from kinegraph.run import execute as run
from kinegraph.suites import suites
from kinegraph.types import RunConfig

REFUSE, SAMPLE = "refuse", "sample error"
SUITES = ("egodyn", "quantiphy", "tad", "stsbench", "dsi", "autodridm")


# --- corrupting one file -------------------------------------------------------------------------------


def jsonl_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().split("\n") if line.strip()]


def write_jsonl(path: Path, rows: list[Any]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def edit_row(rel: str, change: Callable[[dict[str, Any]], Any], row: int = 0) -> Callable[[Path], None]:
    """Change one row of a JSONL file (`change` edits it in place)."""

    def corrupt(root: Path) -> None:
        rows = jsonl_rows(root / rel)
        change(rows[row])
        write_jsonl(root / rel, rows)

    return corrupt


def edit_record(rel: str, change: Callable[[dict[str, Any]], Any], index: int = 0) -> Callable[[Path], None]:
    """Change one record of a JSON array file."""

    def corrupt(root: Path) -> None:
        records = json.loads((root / rel).read_text())
        change(records[index])
        (root / rel).write_text(json.dumps(records))

    return corrupt


def edit_json(rel: str, change: Callable[[Any], Any]) -> Callable[[Path], None]:
    """Replace a JSON file's document by `change(document)`."""

    def corrupt(root: Path) -> None:
        (root / rel).write_text(json.dumps(change(json.loads((root / rel).read_text()))))

    return corrupt


def edit_text(rel: str, change: Callable[[str], str]) -> Callable[[Path], None]:
    def corrupt(root: Path) -> None:
        (root / rel).write_text(change((root / rel).read_text()))

    return corrupt


def edit_csv(rel: str, change: Callable[[pd.DataFrame], pd.DataFrame | None]) -> Callable[[Path], None]:
    """Change a CSV through pandas (every cell read as text, so nothing else changes)."""

    def corrupt(root: Path) -> None:
        frame = pd.read_csv(root / rel, dtype=str, keep_default_na=False)
        changed = change(frame)
        (frame if changed is None else changed).to_csv(root / rel, index=False)

    return corrupt


def set_cell(rel: str, column: str, value: str, row: int = 0) -> Callable[[Path], None]:
    return edit_csv(
        rel,
        lambda frame: frame.__setitem__(
            column, [value if i == row else v for i, v in enumerate(frame[column])]
        ),
    )


def remove(rel: str) -> Callable[[Path], None]:
    def corrupt(root: Path) -> None:
        path = root / rel
        shutil.rmtree(path) if path.is_dir() else path.unlink()

    return corrupt


def empty(rel: str) -> Callable[[Path], None]:
    return lambda root: (root / rel).write_text("")


def truncate(rel: str) -> Callable[[Path], None]:
    """Cut the file in the middle of its second half (a download that stopped)."""

    def corrupt(root: Path) -> None:
        data = (root / rel).read_bytes()
        (root / rel).write_bytes(data[: len(data) * 3 // 4])

    return corrupt


def latin1(rel: str, old: str, new: str = "café") -> Callable[[Path], None]:
    """Re-encode the file in Latin-1 after putting a non-ASCII word in it."""

    def corrupt(root: Path) -> None:
        text = (root / rel).read_text().replace(old, new, 1)
        (root / rel).write_bytes(text.encode("latin-1"))

    return corrupt


def duplicate_row(rel: str, row: int = 0) -> Callable[[Path], None]:
    def corrupt(root: Path) -> None:
        rows = jsonl_rows(root / rel)
        write_jsonl(root / rel, [*rows[: row + 1], rows[row], *rows[row + 1 :]])

    return corrupt


def first_file(root: Path, pattern: str) -> Path:
    return sorted(root.rglob(pattern))[0]


def both(*steps: Callable[[Path], None]) -> Callable[[Path], None]:
    def corrupt(root: Path) -> None:
        for step in steps:
            step(root)

    return corrupt


# --- the table -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    suite: str
    name: str
    corrupt: Callable[[Path], None]
    expected: str
    names: str  # what the message (or the failed predictions' error) must name: a file or folder name
    act: Callable[[Path], Any] | None = None  # default: the suite's loader on the world
    graph: str = ""  # SAMPLE rows: the graph a run uses
    loader_options: dict[str, Any] = field(default_factory=dict)


def load_selected(root: Path) -> Any:
    return suites.get("egodyn").load(root / "selected_clips.json")


def evaluate(suite: str, predictions: str, **flags: Any) -> Callable[[Path], Any]:
    """`kinegraph evaluate <suite>` on a prediction file under the world."""

    def act(root: Path) -> Any:
        path: Any = root / predictions
        if suite == "quantiphy":
            path = [path]
        resolved = {k: root / v if isinstance(v, str) else v for k, v in flags.items()}
        return suites.get(suite).evaluate_files(path, lambda message: None, **resolved)

    return act


def _pop(key: str) -> Callable[[dict[str, Any]], Any]:
    return lambda row: row.pop(key)


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    return lambda row: row.__setitem__(key, value)


def _set_feature(name: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    return lambda row: row["features"].__setitem__(name, value)


NS_QA, NS_INDEX = "nuscenes_clips/qa.jsonl", "nuscenes_clips/clips_index.jsonl"
QP = "quantiphy_validation.csv"
STS = "STSnu.json"
DSI_STD = "metadatas/std.csv"
OBJ1 = "Object-1.json"


def _dsi_duplicate_rows(root: Path) -> None:
    for variant in ("std", "hflip", "reverse", "reverse_hflip"):
        path = root / "metadatas" / f"{variant}.csv"
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        pd.concat([frame.iloc[:1], frame], ignore_index=True).to_csv(path, index=False)


def _dsi_drop_row(root: Path) -> None:
    path = root / "metadatas" / "hflip.csv"
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame.iloc[1:].to_csv(path, index=False)


def _quantiphy_predictions(root: Path, change: Callable[[pd.DataFrame], None]) -> None:
    """An official-layout prediction file answering every question right, then changed."""
    frame = pd.read_csv(root / QP, dtype=str, keep_default_na=False)
    frame = frame.rename(columns={"": "Unnamed: 0"}).loc[:, lambda f: ~f.columns.str.startswith("Unnamed: 1")]
    frame = frame.loc[:, [c for c in frame.columns if not c.startswith("Unnamed:") or c == "Unnamed: 0"]]
    frame["parsed_value"] = frame["ground_truth_posterior"]
    change(frame)
    frame.to_csv(root / "preds.csv", index=False)


def quantiphy_predictions(change: Callable[[pd.DataFrame], None]) -> Callable[[Path], None]:
    return lambda root: _quantiphy_predictions(root, change)


def _set_first(column: str, value: str) -> Callable[[pd.DataFrame], None]:
    return lambda frame: frame.__setitem__(column, [value, *frame[column].iloc[1:]])


def _tad_scene_frame(root: Path) -> None:
    first_file(root / "nuscenes" / "samples" / "CAM_FRONT", "*.jpg").unlink()


CASES: tuple[Case, ...] = (
    # EgoDyn-Bench: HF layout (clips_index.jsonl + qa.jsonl) and selected_clips.json
    Case("egodyn", "qa.jsonl missing", remove(NS_QA), REFUSE, "qa.jsonl"),
    Case("egodyn", "clips_index.jsonl missing", remove(NS_INDEX), REFUSE, "clips_index.jsonl"),
    Case("egodyn", "qa.jsonl empty", empty(NS_QA), REFUSE, "qa.jsonl"),
    Case("egodyn", "qa.jsonl truncated", truncate(NS_QA), REFUSE, "qa.jsonl"),
    Case("egodyn", "qa.jsonl in Latin-1", latin1(NS_QA, "vehicle"), REFUSE, "qa.jsonl"),
    Case("egodyn", "qa row is a list", lambda r: write_jsonl(r / NS_QA, [[1, 2]]), REFUSE, "qa.jsonl"),
    Case("egodyn", "choices as a string", edit_row(NS_QA, _set("choices", "left,right")), REFUSE, "qa.jsonl"),
    Case("egodyn", "answer outside choices", edit_row(NS_QA, _set("answer", "sideways")), REFUSE, "qa.jsonl"),
    Case("egodyn", "answer missing", edit_row(NS_QA, _pop("answer")), REFUSE, "qa.jsonl"),
    Case("egodyn", "answer wrong type", edit_row(NS_QA, _set("answer", ["left"])), REFUSE, "qa.jsonl"),
    Case("egodyn", "unknown question_id", edit_row(NS_QA, _set("question_id", "warp")), REFUSE, "qa.jsonl"),
    Case("egodyn", "unknown clip_id", edit_row(NS_QA, _set("clip_id", "clip_99999")), REFUSE, "qa.jsonl"),
    Case("egodyn", "empty question text", edit_row(NS_QA, _set("question", " ")), REFUSE, "qa.jsonl"),
    Case("egodyn", "duplicate qa row", duplicate_row(NS_QA), REFUSE, "qa.jsonl"),
    Case("egodyn", "duplicate clip row", duplicate_row(NS_INDEX), REFUSE, "clips_index.jsonl"),
    Case("egodyn", "index clip_id missing", edit_row(NS_INDEX, _pop("clip_id")), REFUSE, "clips_index.jsonl"),
    Case(
        "egodyn",
        "feature NaN",
        edit_row(NS_INDEX, _set_feature("mean_speed", float("nan"))),  # json.dumps writes NaN
        REFUSE,
        "clips_index.jsonl",
    ),
    Case(
        "egodyn",
        "feature 1e300",
        edit_row(NS_INDEX, _set_feature("mean_speed", 1e300)),
        REFUSE,
        "clips_index.jsonl",
    ),
    Case(
        "egodyn",
        "feature non-numeric",
        edit_row(NS_INDEX, _set_feature("mean_speed", "fast")),
        REFUSE,
        "clips_index.jsonl",
    ),
    Case("egodyn", "camera wrong type", edit_row(NS_INDEX, _set("camera", 7)), REFUSE, "clips_index.jsonl"),
    Case(
        "egodyn",
        "selected: truncated",
        truncate("selected_clips.json"),
        REFUSE,
        "selected_clips.json",
        load_selected,
    ),
    Case(
        "egodyn",
        "selected: feature NaN",
        edit_record("selected_clips.json", _set_feature("mean_speed", float("nan"))),
        REFUSE,
        "selected_clips.json",
        load_selected,
    ),
    Case(
        "egodyn",
        "selected: feature 1e300",
        edit_record("selected_clips.json", _set_feature("mean_speed", 1e300)),
        REFUSE,
        "selected_clips.json",
        load_selected,
    ),
    Case(
        "egodyn",
        "selected: duplicate clip",
        edit_json("selected_clips.json", lambda d: [d[0], *d]),
        REFUSE,
        "selected_clips.json",
        load_selected,
    ),
    Case(
        "egodyn",
        "selected: answers not an object",
        edit_record("selected_clips.json", _set("answers", [])),
        REFUSE,
        "selected_clips.json",
        load_selected,
    ),
    Case(
        "egodyn",
        "predictions: empty file",
        empty("preds.jsonl"),
        REFUSE,
        "preds.jsonl",
        evaluate("egodyn", "preds.jsonl"),
    ),
    Case(
        "egodyn",
        "CARLA video undecodable",
        lambda r: first_file(r / "carla_videos_simulation", "*.mp4").write_bytes(b"\x00not a video"),
        SAMPLE,
        ".mp4",
        graph="egodyn.vision",
    ),
    # QuantiPhy: the validation CSV, and the scorer's ground truth / prediction files
    Case("quantiphy", "table missing", remove(QP), REFUSE, "quantiphy"),
    Case("quantiphy", "table empty", empty(QP), REFUSE, QP),
    Case("quantiphy", "table in Latin-1", latin1(QP, "distance"), REFUSE, QP),
    Case("quantiphy", "ground truth inf", set_cell(QP, "ground_truth_posterior", "inf"), REFUSE, QP),
    Case(
        "quantiphy", "ground truth nan in one row", set_cell(QP, "ground_truth_posterior", "nan"), REFUSE, QP
    ),
    Case("quantiphy", "ground truth non-numeric", set_cell(QP, "ground_truth_posterior", "7 m"), REFUSE, QP),
    Case("quantiphy", "id 1.7", set_cell(QP, "Unnamed: 0", "1.7"), REFUSE, QP),
    Case("quantiphy", "id not a number", set_cell(QP, "Unnamed: 0", "q1"), REFUSE, QP),
    Case("quantiphy", "duplicate id", set_cell(QP, "Unnamed: 0", "2"), REFUSE, QP),
    Case("quantiphy", "empty question", set_cell(QP, "question", ""), REFUSE, QP),
    Case("quantiphy", "empty video_id", set_cell(QP, "video_id", ""), REFUSE, QP),
    Case("quantiphy", "bad video_type", set_cell(QP, "video_type", "XX"), REFUSE, QP),
    Case("quantiphy", "fps non-numeric", set_cell(QP, "fps", "fast"), REFUSE, QP),
    Case(
        "quantiphy",
        "question column missing",
        edit_csv(QP, lambda f: f.drop(columns=["question"])),
        REFUSE,
        QP,
    ),
    Case(
        "quantiphy",
        "scorer: prediction id unknown",
        quantiphy_predictions(_set_first("Unnamed: 0", "999")),
        REFUSE,
        "preds.csv",
        evaluate("quantiphy", "preds.csv", ground_truth=QP),
    ),
    Case(
        "quantiphy",
        "scorer: prediction id 1.7",
        quantiphy_predictions(_set_first("Unnamed: 0", "1.7")),
        REFUSE,
        "preds.csv",
        evaluate("quantiphy", "preds.csv", ground_truth=QP),
    ),
    Case(
        "quantiphy",
        "scorer: duplicate prediction id",
        quantiphy_predictions(_set_first("Unnamed: 0", "2")),
        REFUSE,
        "preds.csv",
        evaluate("quantiphy", "preds.csv", ground_truth=QP),
    ),
    Case(
        "quantiphy",
        "scorer: ground truth inf",
        both(quantiphy_predictions(lambda f: None), set_cell(QP, "ground_truth_posterior", "inf")),
        REFUSE,
        QP,
        evaluate("quantiphy", "preds.csv", ground_truth=QP),
    ),
    Case(
        "quantiphy",
        "video missing",
        lambda r: first_file(r / "validation_videos", "*.mp4").unlink(),
        SAMPLE,
        ".mp4",
        graph="quantiphy.zero_shot",
    ),
    # TAD: task configs + keysegments (JSONL) and the nuScenes tables
    Case("tad", "keysegments missing", remove("keysegments.jsonl"), REFUSE, "tad"),
    Case(
        "tad",
        "every task config missing",
        lambda r: [p.unlink() for p in r.glob("*.jsonl") if p.stem != "keysegments"],
        REFUSE,
        "tad",
    ),
    Case("tad", "task config empty", empty("mc_action.jsonl"), REFUSE, "mc_action.jsonl"),
    Case("tad", "task config truncated", truncate("temp_ordering.jsonl"), REFUSE, "temp_ordering.jsonl"),
    Case(
        "tad",
        "task config in Latin-1",
        latin1("action_duration.jsonl", "vehicle"),
        REFUSE,
        "action_duration.jsonl",
    ),
    Case("tad", "duplicate idx", duplicate_row("action_duration.jsonl"), REFUSE, "action_duration.jsonl"),
    Case(
        "tad",
        "answer outside the options",
        edit_row("mc_action.jsonl", _set("answer", "Z")),
        REFUSE,
        "mc_action.jsonl",
    ),
    Case(
        "tad",
        "localisation answer as text",
        edit_row("temp_action_localize.jsonl", _set("answer", "3, 9")),
        REFUSE,
        "temp_action_localize.jsonl",
    ),
    Case(
        "tad",
        "options as a string",
        edit_row("temp_ordering.jsonl", _set("options", "A. x B. y")),
        REFUSE,
        "temp_ordering.jsonl",
    ),
    Case(
        "tad",
        "empty question",
        edit_row("action_duration.jsonl", _set("question", "")),
        REFUSE,
        "action_duration.jsonl",
    ),
    Case(
        "tad",
        "unknown scene",
        edit_row("action_duration.jsonl", _set("scene_token", "nope")),
        REFUSE,
        "action_duration.jsonl",
    ),
    Case("tad", "idx missing", edit_row("temp_ordering.jsonl", _pop("idx")), REFUSE, "temp_ordering.jsonl"),
    Case(
        "tad",
        "segment question without sample_token",
        edit_row("mc_action.jsonl", _pop("sample_token")),
        REFUSE,
        "mc_action.jsonl",
    ),
    Case(
        "tad", "duplicate keysegments scene", duplicate_row("keysegments.jsonl"), REFUSE, "keysegments.jsonl"
    ),
    Case(
        "tad",
        "keysegment index not an int",
        edit_row(
            "keysegments.jsonl", lambda r: r["keyframes_index_formatted"][0]["indices"].__setitem__(0, "x")
        ),
        REFUSE,
        "keysegments.jsonl",
    ),
    Case(
        "tad",
        "nuScenes sample table missing",
        remove("nuscenes/v1.0-trainval/sample.json"),
        REFUSE,
        "sample.json",
    ),
    Case(
        "tad",
        "nuScenes ego pose non-numeric",
        edit_json(
            "nuscenes/v1.0-trainval/ego_pose.json",
            lambda rows: [{**rows[0], "translation": ["x", 0, 0]}, *rows[1:]],
        ),
        REFUSE,
        "ego_pose.json",
    ),
    Case(
        "tad",
        "scorer: prediction without idx",
        lambda r: (
            write_jsonl(r / "preds" / "mc_action.jsonl", [{"pred": "A"}])
            if (r / "preds").mkdir() is None
            else None
        ),
        REFUSE,
        "mc_action.jsonl",
        evaluate("tad", "preds", data="."),
    ),
    Case("tad", "keyframe image missing", _tad_scene_frame, SAMPLE, ".jpg", graph="tad.baseline"),
    # STSBench: STSnu.json
    Case("stsbench", "file missing", remove(STS), REFUSE, STS),
    Case("stsbench", "file empty", empty(STS), REFUSE, STS),
    Case("stsbench", "file truncated", truncate(STS), REFUSE, STS),
    Case("stsbench", "not a list", edit_json(STS, lambda d: {"records": d}), REFUSE, STS),
    Case("stsbench", "scenario missing", edit_record(STS, _pop("scenario")), REFUSE, STS),
    Case("stsbench", "too few negatives", edit_record(STS, _set("negative_scenarios", "a,b")), REFUSE, STS),
    Case(
        "stsbench",
        "negatives repeat the scenario",
        edit_record(STS, lambda r: r.__setitem__("negative_scenarios", f"{r['scenario']},a,b,c,d")),
        REFUSE,
        STS,
    ),
    Case("stsbench", "no ego or agent block", edit_record(STS, _pop("ego")), REFUSE, STS),
    Case(
        "stsbench",
        "agent block without camera",
        edit_record(
            STS, lambda r: r.update(agent={}, other_agent={}) if r.pop("ego", None) is not None else None
        ),
        REFUSE,
        STS,
    ),
    Case(
        "stsbench",
        "scorer: predictions not a list",
        lambda r: (r / "preds.json").write_text("{}"),
        REFUSE,
        "preds.json",
        evaluate("stsbench", "preds.json", data=STS),
    ),
    Case(
        "stsbench",
        "frame missing",
        lambda r: first_file(r / "samples", "*.jpg").unlink(),
        SAMPLE,
        ".jpg",
        graph="stsbench.baseline",
        loader_options={"data_root": "."},
    ),
    # DSI-Bench: metadatas/<variant>.csv and the videos
    Case("dsi", "variant CSV missing", remove(DSI_STD), REFUSE, "std.csv"),
    Case("dsi", "variant CSV empty", empty(DSI_STD), REFUSE, "std.csv"),
    Case("dsi", "variant CSV in Latin-1", latin1(DSI_STD, "object"), REFUSE, "std.csv"),
    Case("dsi", "GT missing", set_cell(DSI_STD, "GT", ""), REFUSE, "std.csv"),
    Case("dsi", "GT outside the options", set_cell(DSI_STD, "GT", "E"), REFUSE, "std.csv"),
    Case("dsi", "empty question", set_cell(DSI_STD, "question", ""), REFUSE, "std.csv"),
    Case("dsi", "empty options", set_cell(DSI_STD, "options", ""), REFUSE, "std.csv"),
    Case("dsi", "GT column missing", edit_csv(DSI_STD, lambda f: f.drop(columns=["GT"])), REFUSE, "std.csv"),
    Case("dsi", "duplicated row in every variant", _dsi_duplicate_rows, REFUSE, "std.csv"),
    Case("dsi", "a variant lacks a row", _dsi_drop_row, REFUSE, "metadatas"),
    Case(
        "dsi",
        "video missing",
        lambda r: first_file(r / "videos" / "std", "*.mp4").unlink(),
        SAMPLE,
        ".mp4",
        graph="dsi.baseline",
    ),
    # AutoDriDM: <task>.json arrays and the images
    Case(
        "autodridm",
        "every task file missing",
        lambda r: [p.unlink() for p in r.glob("*-?.json")],
        REFUSE,
        "autodridm",
    ),
    Case("autodridm", "task file truncated", truncate(OBJ1), REFUSE, OBJ1),
    Case("autodridm", "task file empty", empty(OBJ1), REFUSE, OBJ1),
    Case("autodridm", "task file in Latin-1", latin1(OBJ1, "Building"), REFUSE, OBJ1),
    Case("autodridm", "not an array", edit_json(OBJ1, lambda d: {"records": d}), REFUSE, OBJ1),
    Case("autodridm", "answer outside the options", edit_record(OBJ1, _set("task1_a", "Z")), REFUSE, OBJ1),
    Case(
        "autodridm", "two answers to a single choice", edit_record(OBJ1, _set("task1_a", "A,B")), REFUSE, OBJ1
    ),
    Case(
        "autodridm", "danger score non-numeric", edit_record(OBJ1, _set("danger_score", "high")), REFUSE, OBJ1
    ),
    Case(
        "autodridm",
        "danger score NaN",
        edit_text(OBJ1, lambda t: t.replace('"danger_score": 5', '"danger_score": NaN', 1)),
        REFUSE,
        OBJ1,
    ),
    Case("autodridm", "image_name missing", edit_record(OBJ1, _pop("image_name")), REFUSE, OBJ1),
    Case("autodridm", "empty question", edit_record(OBJ1, _set("task1_q", "")), REFUSE, OBJ1),
    Case("autodridm", "duplicated record", edit_json(OBJ1, lambda d: [d[0], *d]), REFUSE, OBJ1),
    Case(
        "autodridm",
        "scorer: prediction without id",
        lambda r: write_jsonl(r / "preds.jsonl", [{"raw": "A"}]),
        REFUSE,
        "preds.jsonl",
        evaluate("autodridm", "preds.jsonl", data="."),
    ),
    Case(
        "autodridm",
        "image missing",
        lambda r: first_file(r / "images", "*.png").unlink(),
        SAMPLE,
        ".png",
        graph="autodridm.baseline",
    ),
)


# --- running the table ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One valid world per suite (its synthetic generator), copied by every case."""
    out = {}
    for name in SUITES:
        path = suites.get(name).generate(tmp_path_factory.mktemp(name) / "world", n=2, seed=0)
        out[name] = path if path.is_dir() else path.parent
    return out


def _world(worlds: dict[str, Path], suite: str, tmp_path: Path) -> Path:
    root = tmp_path / suite
    shutil.copytree(worlds[suite], root)
    return root


def _load_path(suite: str, root: Path) -> Path:
    return root / STS if suite == "stsbench" else root


def test_the_table_covers_every_benchmark_with_60_corruptions():
    assert len(CASES) >= 60
    assert {c.suite for c in CASES} == set(SUITES)
    assert all(c.expected in (REFUSE, SAMPLE) for c in CASES)
    assert len({(c.suite, c.name) for c in CASES}) == len(CASES)


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.expected == REFUSE], ids=lambda c: f"{c.suite}: {c.name}"
)
def test_corruption_is_refused_in_one_line_naming_the_file(case: Case, worlds, tmp_path):
    root = _world(worlds, case.suite, tmp_path)
    case.corrupt(root)
    act = case.act or (lambda r: suites.get(case.suite).load(_load_path(case.suite, r)))
    with pytest.raises(DataError) as caught:
        act(root)
    message = str(caught.value)
    assert "\n" not in message and case.names in message


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.expected == SAMPLE], ids=lambda c: f"{c.suite}: {c.name}"
)
def test_corruption_fails_only_its_samples_naming_the_file(case: Case, worlds, tmp_path):
    root = _world(worlds, case.suite, tmp_path)
    intact = suites.get(case.suite).load(_load_path(case.suite, root))
    case.corrupt(root)
    options = {k: str(root / v) for k, v in case.loader_options.items()}
    with OpenAILoopback(responder=lambda body: "A") as server:
        config = RunConfig(
            benchmark=case.suite,
            graph=case.graph,
            model="vllm:loopback-vlm",
            base_url=server.base_url,
            data=str(_load_path(case.suite, root)),
            out_dir=str(tmp_path / "run"),
            concurrency=4,
            use_cache=False,
            loader_options=options,
        )
        run(config, show_progress=False)
    lines = (tmp_path / "run" / "predictions.jsonl").read_text().split("\n")
    predictions = [json.loads(line) for line in lines if line]
    assert len(predictions) == len(intact)  # every sample ends with a prediction: none dropped
    failed = [p for p in predictions if p["status"] not in ("ok", "parse_failure")]
    assert failed and len(failed) < len(predictions)
    assert all(case.names in (p["error"] or "") for p in failed)


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])
def test_unicode_line_separators_inside_json_strings_are_data(separator, worlds, tmp_path):
    """A raw U+2028/U+2029/U+0085 inside a JSON string is valid JSON Lines (only \\n ends a line)."""
    for suite, rel, key in (
        ("egodyn", NS_QA, "question"),
        ("tad", "action_duration.jsonl", "question"),
    ):
        root = _world(worlds, suite, tmp_path / separator.encode("unicode_escape").decode())
        rows = jsonl_rows(root / rel)
        rows[0][key] = f"Before{separator}after?"
        (root / rel).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        assert separator in (root / rel).read_text()
        samples = suites.get(suite).load(root)
        assert sum(s.question == f"Before{separator}after?" for s in samples) == 1

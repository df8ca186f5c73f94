"""The synthetic QuantiPhy world: official file format, consistent codes, real videos, stated physics."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from kinegraph.benchmarks.quantiphy.world import generate
from kinegraph.cli import app
from kinegraph.evaluators.quantiphy import score_file
from kinegraph.media import read_video
from kinegraph.suites import suites
from kinegraph.tools.quantiphy_text import parse_depth_info, parse_prior, parse_question

OFFICIAL_COLUMNS = [
    "Unnamed: 0",
    "video_id",
    "video_source",
    "video_type",
    "fps",
    "inference_type",
    "question",
    "ground_truth_prior",
    "depth_info",
    "ground_truth_posterior",
    "Unnamed: 10",
    "Unnamed: 11",
]
SI = {"mm": 1e-3, "cm": 1e-2, "m": 1.0, "m/s": 1.0, "cm/s": 1e-2, "m/s^2": 1.0, "cm/s^2": 1e-2}


@pytest.fixture(scope="module")
def table(quantiphy_world):
    return pd.read_csv(quantiphy_world / "quantiphy_validation.csv")


@pytest.fixture(scope="module")
def truth(quantiphy_world):
    return json.loads((quantiphy_world / "quantiphy_truth.json").read_text())


def test_header_and_line_ends_are_the_official_ones(quantiphy_world, table):
    raw = (quantiphy_world / "quantiphy_validation.csv").read_bytes()
    assert raw.startswith(
        b",video_id,video_source,video_type,fps,inference_type,question,ground_truth_prior,"
        b"depth_info,ground_truth_posterior,,\r\n"
    )
    assert list(table.columns) == OFFICIAL_COLUMNS
    assert table["Unnamed: 0"].dtype.kind == "i" and table["Unnamed: 0"].is_unique
    assert table["Unnamed: 10"].isna().all() and table["Unnamed: 11"].isna().all()


def test_same_columns_as_the_official_validation_file(golden):
    official = pd.read_csv(golden / "quantiphy" / "quantiphy_validation.csv", nrows=1)
    assert list(official.columns) == OFFICIAL_COLUMNS


def test_codes_are_consistent_with_priors_and_questions(table):
    assert len(table) >= 100
    for _, row in table.iterrows():
        video_type, inference = row["video_type"], row["inference_type"]
        assert re.fullmatch(r"[SVA][23][SM][XSC]", video_type)
        prior = parse_prior(row["ground_truth_prior"])
        assert video_type[0] == {"size": "S", "speed": "V", "acceleration": "A"}[prior.kind]
        assert inference[0] == ("S" if video_type[0] == "S" else "D")
        question = parse_question(row["question"])
        assert inference[1] == ("D" if question.kind in ("speed", "acceleration") else "S")
        assert (video_type[1] == "3") == isinstance(row["depth_info"], str)
    categories = (table["inference_type"].str[0] + table["video_type"].str[1]).value_counts()
    assert set(categories.index) == {"S2", "D2", "S3", "D3"} and categories.min() >= 20
    assert set(table["video_type"].str[3]) == {"X", "S", "C"}
    assert set(table["video_type"].str[2]) == {"S", "M"}
    assert (table["ground_truth_posterior"] > 0).all()


def test_object_codes_follow_the_questions(table, truth):
    for video_id, rows in table.groupby("video_id"):
        grounding = [truth["rows"][str(qid)] for qid in rows["Unnamed: 0"]]
        others = any(t != g["prior_object"] for g in grounding for t in g["target_objects"])
        assert rows["video_type"].iloc[0][2] == ("M" if others else "S"), video_id


def test_videos_are_real_mp4_files_matching_the_table(quantiphy_world, table, truth):
    for video_id, rows in table.groupby("video_id"):
        frames, fps = read_video(quantiphy_world / "validation_videos" / f"{video_id}.mp4")
        video = truth["videos"][video_id]
        assert frames.shape == (video["n_frames"], 480, 640, 3)
        assert fps == rows["fps"].iloc[0] == video["fps"]
        # The prior's object is where the truth says: its pixel differs from the clip's median there.
        x, y = np.round(
            video["objects"][truth["rows"][str(rows["Unnamed: 0"].iloc[0])]["prior_object"]]["centre_px"][0]
        )
        assert (
            np.abs(frames[0, int(y), int(x)].astype(int) - np.median(frames[:, int(y), int(x)], axis=0)).max()
            > 30
        )


def test_depth_entries_name_every_object_and_match_the_pinhole_geometry(table, truth):
    """Distance + pixel ray + true focal length give each body one physical size at both entry times."""
    for video_id, rows in table[table["video_type"].str[1] == "3"].groupby("video_id"):
        video = truth["videos"][video_id]
        entries = parse_depth_info(rows["depth_info"].iloc[0])
        assert {e.entity for e in entries} == set(video["objects"])
        (cx, cy), f = video["principal_point_px"], video["focal_px"]
        for name, obj in video["objects"].items():
            sizes = []
            for e in (e for e in entries if e.entity == name):
                (u, v), extent = (
                    obj["centre_px"][round(e.t_s * video["fps"])],
                    obj["extent_px"][round(e.t_s * video["fps"])],
                )
                z = e.distance_m * f / np.sqrt((u - cx) ** 2 + (v - cy) ** 2 + f**2)
                sizes.append(np.array(extent) * z / f)
            assert len(sizes) == 2
            assert sizes[0] == pytest.approx(sizes[1], rel=1e-4)
            # World sizes are two-significant-digit numbers, so the prior text is exact.
            assert [float(f"{s:.2g}") for s in sizes[0]] == pytest.approx(sizes[0], rel=1e-4)


def test_2d_priors_describe_the_drawn_motion(table, truth):
    """In 2D the prior measured on the exact pixel track, times the true scale, is the prior's value."""
    checked = 0
    for _, row in table[table["video_type"].str[1] == "2"].drop_duplicates("video_id").iterrows():
        video = truth["videos"][row["video_id"]]
        obj = video["objects"][truth["rows"][str(row["Unnamed: 0"])]["prior_object"]]
        gamma, fps = video["gamma_m_per_px"], video["fps"]
        xy, extent = np.array(obj["centre_px"]), np.array(obj["extent_px"])
        prior = parse_prior(row["ground_truth_prior"])
        velocity = np.gradient(xy, axis=0, edge_order=2) * fps
        if prior.kind == "size":
            sides = {"width": extent[0, 0], "height": extent[0, 1]}
            measured = sides.get(prior.aspect, extent[0].max())
        elif prior.kind == "speed":
            i = 0 if prior.t_s is None else round(prior.t_s * fps)
            measured = (
                np.linalg.norm(velocity[i])
                if prior.t_s is not None
                else np.linalg.norm(velocity, axis=1).mean()
            )
        else:
            measured = np.linalg.norm(np.gradient(velocity, axis=0, edge_order=2)[len(xy) // 2]) * fps
        assert measured * gamma == pytest.approx(prior.value * SI[prior.unit.symbol], rel=1e-3), row[
            "ground_truth_prior"
        ]
        checked += 1
    assert checked >= 10


def test_a_perfect_prediction_file_scores_one_with_the_official_scorer(quantiphy_world, table, tmp_path):
    predictions = table.drop(columns=["Unnamed: 10", "Unnamed: 11"])
    predictions["parsed_value"] = predictions["ground_truth_posterior"]
    path = tmp_path / "perfect.csv"
    predictions.to_csv(path, index=False)
    result = score_file(path, quantiphy_world / "quantiphy_validation.csv")
    assert result["mra_average"] == 1.0 and result["invalid_percentage"] == 0


def test_same_seed_same_files(tmp_path):
    a, b = generate(tmp_path / "a", n=2, seed=4), generate(tmp_path / "b", n=2, seed=4)
    for name in ("quantiphy_validation.csv", "quantiphy_truth.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes()
    c = generate(tmp_path / "c", n=2, seed=5)
    assert (a / "quantiphy_validation.csv").read_bytes() != (c / "quantiphy_validation.csv").read_bytes()


def test_registered_and_reachable_from_the_cli(tmp_path):
    assert suites.get("quantiphy").generate.resolve() is generate
    result = CliRunner().invoke(
        app, ["synth", "quantiphy", "--out", str(tmp_path), "--n", "1", "--seed", "2"]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "validation_videos" / "synthetic_0000.mp4").is_file()
    assert len(pd.read_csv(tmp_path / "quantiphy_validation.csv")) >= 2


def test_n_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="n must be at least 1"):
        generate(tmp_path, n=0)


def test_parsed_object_phrases_are_the_grounded_objects(table, truth):
    """What the text parser extracts is exactly what a grounding step must resolve to tracks."""
    for _, row in table.iterrows():
        grounding = truth["rows"][str(row["Unnamed: 0"])]
        assert parse_question(row["question"]).objects == tuple(grounding["target_objects"])
        assert parse_prior(row["ground_truth_prior"]).object in (grounding["prior_object"], "gravity")

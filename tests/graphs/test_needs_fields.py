"""Every graph that reads a field from each sample declares it, and data without it is refused in one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kinegraph.errors import DataError
from kinegraph.graphs import graph_spec, graphs
from kinegraph.suites import suites
from kinegraph.types import Sample

# What each graph reads from every sample's context, written out here (not read from the registry), so
# a graph that loses its declaration fails below. Graphs missing from the list read frames only, or
# build what they need the documented way (a measured trajectory, CoT sub-questions from the prior), or
# read one of two fields (egodyn.oracle: the clip's arrays, else its features).
NEEDS: list[tuple[str, str]] = [
    ("autodridm.agent", "image_name"),
    ("autodridm.agent", "options_text"),
    ("autodridm.baseline", "image_name"),
    ("autodridm.baseline", "options_text"),
    ("autodridm.few_shot", "image_name"),
    ("autodridm.few_shot", "options_text"),
    ("autodridm.tools", "image_name"),
    ("autodridm.tools", "options_text"),
    ("dsi.agent", "options_text"),
    ("dsi.baseline", "options_text"),
    ("dsi.ffr", "options_text"),
    ("dsi.tools", "options_text"),
    ("egodyn.text_only", "features"),
    ("egodyn.trajectory", "features"),
    ("quantiphy.agent", "ground_truth_prior"),
    ("quantiphy.cot", "ground_truth_prior"),
    ("quantiphy.hybrid", "ground_truth_prior"),
    ("quantiphy.oracle_tracks", "source_dir"),
    ("quantiphy.prior_only", "ground_truth_prior"),
    ("quantiphy.tools", "ground_truth_prior"),
    ("quantiphy.tracker", "source_dir"),
    ("quantiphy.zero_shot", "ground_truth_prior"),
    ("tad.ego_pose", "ego_poses"),
    ("tad.tcogmap", "ego_poses"),
    ("tad.tcogmap_only", "ego_poses"),
]
SIZES = {"egodyn": 1, "quantiphy": 2, "tad": 1, "dsi": 1, "autodridm": 2}


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[Sample]]]:
    """family -> (a small synthetic set, its loaded samples), written on first use."""

    class Worlds(dict):
        def __missing__(self, family: str) -> tuple[Path, list[Sample]]:
            suite = suites.get(family)
            path = suite.generate(tmp_path_factory.mktemp(family), n=SIZES[family], seed=0)
            self[family] = (path, suite.load(path))
            return self[family]

    return Worlds()


def test_the_declarations_are_the_reviewed_list():
    declared = sorted((name, field) for name in graphs.names() for field in graph_spec(name).needs_fields)
    assert declared == sorted(
        NEEDS + [("quantiphy.counterfactual", f) for f in ("alt_prior", "alt_posterior")]
    )


def _with_context(sample: Sample, context: dict) -> Sample:
    return sample.model_copy(update={"context": context})


@pytest.mark.parametrize(("name", "field"), NEEDS, ids=[f"{n}-{f}" for n, f in NEEDS])
def test_data_without_the_field_is_refused_in_one_line(worlds, name, field):
    path, samples = worlds[name.partition(".")[0]]
    spec = graph_spec(name)
    spec.check_fields(samples, str(path))  # the generator's own data has it

    without = [_with_context(s, {k: v for k, v in s.context.items() if k != field}) for s in samples]
    with pytest.raises(DataError) as missing:
        spec.check_fields(without, str(path))
    assert (
        str(missing.value) == f"{path}: field '{field}': column missing: graph {name} reads it from every row"
    )

    emptied = samples[:-1] + [_with_context(samples[-1], {**samples[-1].context, field: None})]
    with pytest.raises(DataError) as empty:
        spec.check_fields(emptied, str(path))
    assert str(empty.value) == (
        f"{path}: field '{field}': empty for {samples[-1].id}: graph {name} reads it from every row"
    )
    assert "\n" not in str(empty.value)


def test_tad_without_nuscenes_poses_is_refused_before_any_call(worlds, kinegraph, tmp_path):
    world, _ = worlds["tad"]
    bare = tmp_path / "tad_without_nuscenes"
    shutil.copytree(world, bare, ignore=shutil.ignore_patterns("nuscenes"))
    result = kinegraph(
        "run", "tad", "--graph", "tad.tcogmap_only", "--model", "scripted:A", "--data", bare,
        "--out", tmp_path / "run", "--no-progress", expect=2,
    )  # fmt: skip
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {bare}: field 'ego_poses': empty for tad/")
    assert line.endswith("graph tad.tcogmap_only reads it from every row")
    assert not (tmp_path / "run" / "predictions.jsonl").exists()

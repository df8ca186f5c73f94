"""stdout carries the result alone (JSON that parses, without float noise); progress goes to stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kinegraph.jsonfiles import without_float_noise
from kinegraph.registry import Registry, UnknownEntryError, did_you_mean
from tests.support.run_data import write_egodyn_world


def kinegraph(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-m", "kinegraph.cli", *args], capture_output=True, text=True, env=env
    )


@pytest.mark.slow
def test_run_prints_only_json_on_stdout_and_its_progress_on_stderr(tmp_path):
    data = write_egodyn_world(tmp_path / "data", n_clips=1)
    done = kinegraph(
        "run", "egodyn", "--graph", "egodyn.oracle", "--data", str(data), "--out", str(tmp_path / "r")
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)  # the whole of stdout is one JSON document
    assert summary["status"] == "completed" and summary["predictions"] == 14
    assert "run" in done.stderr and "14/14" in done.stderr  # the bar, on stderr


@pytest.mark.slow
def test_synth_shows_what_it_writes_on_a_terminals_stderr(tmp_path):
    done = kinegraph("synth", "egodyn", "--out", str(tmp_path / "w"), "--n", "1", FORCE_COLOR="1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("wrote ") and "synth: writing 1 of the egodyn world" in done.stderr


def test_json_numbers_lose_their_binary_rounding_noise():
    noisy = {"acc": 0.1 + 0.2 + 0.14, "rows": [1 / 3, 2, "x"], "n": 168}
    assert (
        json.dumps(without_float_noise(noisy)) == '{"acc": 0.44, "rows": [0.333333333333, 2, "x"], "n": 168}'
    )


def test_a_misspelt_name_is_offered_the_close_ones_and_a_far_one_none():
    known = ["egodyn.oracle", "egodyn.vo", "egodyn.vision", "quantiphy.zero_shot"]
    assert did_you_mean("egodyn.orcle", known) == "'egodyn.oracle'"
    assert did_you_mean("quantiphy.zeroshot", known) == "'quantiphy.zero_shot'"
    assert did_you_mean("egodyn.nope", known) == ""  # a shared family alone is not close
    registry: Registry[int] = Registry("graph")
    for name in known:
        registry.register(name, 1)
    with pytest.raises(
        UnknownEntryError, match=r"^unknown graph 'egodyn.vison' \(did you mean 'egodyn.vision'"
    ):
        registry.get("egodyn.vison")

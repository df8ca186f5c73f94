"""Synthetic sets of the four suites (official layouts) and a CLI runner for the end-to-end graph tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kinegraph.benchmarks.stsbench.world import write_stsbench_world
from kinegraph.benchmarks.tad.world import write_tad_world
from kinegraph.cli import app
from kinegraph.suites import suites


@pytest.fixture(scope="session")
def tad_world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(TAD config dir, nuScenes root): 6 scripted scenes of 4 segments, ego questions of 6 tasks."""
    return write_tad_world(tmp_path_factory.mktemp("tad"), n_scenes=6, seed=0)


@pytest.fixture(scope="session")
def sts_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """STSnu.json with 24 ego scenarios (frames beside it)."""
    return write_stsbench_world(tmp_path_factory.mktemp("sts"), n_records=24, seed=0)


@pytest.fixture(scope="session")
def dsi_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return suites.get("dsi").generate(tmp_path_factory.mktemp("dsi"), n=15, seed=0)


@pytest.fixture(scope="session")
def autodridm_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return suites.get("autodridm").generate(tmp_path_factory.mktemp("autodridm"), n=20, seed=0)


@pytest.fixture
def kinegraph() -> Callable[..., Any]:
    """`kinegraph ARGS...` in process (the typer app), failing the test on a non-zero exit."""
    runner = CliRunner()

    def invoke(*args: str, expect: int = 0) -> Any:
        result = runner.invoke(app, [str(a) for a in args])
        assert result.exit_code == expect, (result.output, result.exception)
        return result

    return invoke

"""Shared fixtures: the upstream golden files (skipped, with how to get them, when absent); a private
response cache per test; a synthetic QuantiPhy world (26 videos, over 100 rows) written once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from kinegraph.fixtures import fixtures_dir

GOLDEN_HINT = (
    "upstream golden files not found: set KINEGRAPH_FIXTURES or place them in ../shared/fixtures "
    "(see README, 'Golden files', for the upstream repositories and commits)"
)


@pytest.fixture(scope="session")
def golden() -> Path:
    """Directory of the upstream golden files."""
    path = fixtures_dir()
    if path is None:
        pytest.skip(GOLDEN_HINT)
    return path


@pytest.fixture(autouse=True)
def private_response_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own response cache: none reads or writes the user's ~/.cache/kinegraph."""
    path = tmp_path_factory.mktemp("cache") / "responses.sqlite"
    monkeypatch.setenv("KINEGRAPH_CACHE", str(path))
    return path


@pytest.fixture(scope="session")
def quantiphy_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from kinegraph.benchmarks.quantiphy.world import generate

    return generate(tmp_path_factory.mktemp("quantiphy_world"), n=26, seed=11)

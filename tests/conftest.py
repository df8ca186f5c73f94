"""Shared fixtures: the upstream golden files (skipped, with how to get them, when absent)."""

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

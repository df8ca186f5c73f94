"""A synthetic QuantiPhy world written once per session (26 videos, over 100 rows)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kinegraph.benchmarks.synthetic.quantiphy_world import generate


@pytest.fixture(scope="session")
def quantiphy_world(tmp_path_factory) -> Path:
    return generate(tmp_path_factory.mktemp("quantiphy_world"), n=26, seed=11)

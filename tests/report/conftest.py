"""Two hand-built TAD runs whose per-task deltas can be worked out by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tad_runs import write_run


@pytest.fixture
def tad_pair(tmp_path: Path) -> tuple[Path, Path]:
    """mc_action: 3/30 right, then 27/30 (the other scenes): +0.8, clearly above 0.
    temp_ordering: right on the first half, then on the second half: +0, with scenes moving both ways.
    """
    first_half, second_half = set(range(15)), set(range(15, 30))
    base = write_run(tmp_path / "base", "tad.baseline", {"mc_action": {0, 1, 2}, "temp_ordering": first_half})
    tools = write_run(
        tmp_path / "tools", "tad.tcogmap", {"mc_action": set(range(3, 30)), "temp_ordering": second_half}
    )
    return base, tools

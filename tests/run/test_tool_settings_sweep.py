"""examples/tool_settings_sweep.yaml runs as docs/tool-settings-sweep.md shows, on a smaller world."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kinegraph.cli import app

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tool_settings_sweep.yaml"
ARMS = [
    "quantiphy.oracle_tracks (non-official) (ceiling)",  # exact tracks: the report labels the ceiling
    "quantiphy.oracle_tracks[differencing=centred] (non-official) (ceiling)",
    "quantiphy.oracle_tracks[differencing=speed_diff] (non-official) (ceiling)",
    "quantiphy.tracker (non-official)",
    "quantiphy.tracker[differencing=quadratic_fit,fit_window=15] (non-official)",
]


@pytest.mark.slow
def test_the_example_sweep_runs_and_reports_every_setting(tmp_path: Path):
    runner = CliRunner()
    world = tmp_path / "quantiphy_world"
    made = runner.invoke(app, ["synth", "quantiphy", "--out", str(world), "--n", "4"])
    assert made.exit_code == 0, made.output
    sweep = tmp_path / "tool_settings_sweep.yaml"
    shutil.copy(EXAMPLE, sweep)  # the example as shipped: its data path is relative to the file
    out = tmp_path / "sweeps" / "tool_settings"
    result = runner.invoke(app, ["sweep", str(sweep), "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text()
    rows = {line.split(" | ")[0].lstrip("| "): line for line in report.splitlines() if line.startswith("| ")}
    for arm in ARMS:
        cells = rows[arm].split(" | ")
        assert cells[0].lstrip("| ") == arm
        assert 0.0 < float(cells[2]) <= 1.0, rows[arm]  # mra_average: every category present, measured
    assert rows[ARMS[0]].split(" | ")[2] == "1.000"  # exact tracks: the ceiling, whichever differencing
    runs = [line for line in report.split("## Runs", 1)[1].splitlines() if line.startswith("| quantiphy |")]
    assert len(runs) == len(ARMS) and all("| completed |" in line for line in runs)

"""The official scorers' outputs on published predictions, reproduced through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kinegraph.cli", *args], capture_output=True, text=True)


def test_egodyn_cli_equals_official_metrics(golden):
    result = run_cli("evaluate", "egodyn", str(golden / "egodyn" / "flow_heuristic.jsonl"))
    assert result.returncode == 0, result.stderr
    expected = json.loads((golden / "egodyn" / "expected_metrics__flow_heuristic.json").read_text())
    assert json.loads(result.stdout) == expected


def test_quantiphy_cli_is_byte_identical_to_official_results(golden):
    q = golden / "quantiphy"
    result = run_cli(
        "evaluate", "quantiphy", str(q / "gpt-5.1.csv"), "--ground-truth", str(q / "quantiphy_validation.csv")
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.encode() == (q / "all_model_results.csv").read_bytes()

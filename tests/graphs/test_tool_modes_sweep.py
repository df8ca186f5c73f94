"""`examples/tool_modes_sweep.yaml` as shipped (data, model and server swapped for test ones): none /
injected / agent-called tools on TAD through `kinegraph sweep`, whose own report has every pair (`pairs:
all`), the same pairs `compare --pairs all` gives."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from kinegraph.agents.loopback import OpenAILoopback
from tests.support.agent_models import tad_model

EXAMPLE = Path(__file__).parents[2] / "examples" / "tool_modes_sweep.yaml"
ARMS = ["tad.baseline", "tad.tcogmap", "tad.agent"]  # none, injected, agent-called
PAIRS_TITLE = "Every pair of runs: Δ task_average (b − a, paired bootstrap 95% CI), Holm over pairs:"
INTERVAL = re.compile(r"^([+-]\d+\.\d{3}) \[(-?\d+\.\d{3}), (-?\d+\.\d{3})\]( \*)?$")


def pair_rows(report: str) -> dict[tuple[int, int], list[float]]:
    """The every-pair table of a markdown report: (a, b) run indices -> [delta, low, high, p, p Holm]."""
    table = report.split(PAIRS_TITLE, 1)[1].strip().split("\n\n", 1)[0].splitlines()[2:]
    out = {}
    for line in table:
        a, b, interval, p, p_holm = (cell.strip() for cell in line.strip("| ").split(" | "))
        match = INTERVAL.match(interval)
        assert match, interval
        key = (int(a.split(".")[0]) - 1, int(b.split(".")[0]) - 1)
        out[key] = [float(match[1]), float(match[2]), float(match[3]), float(p), float(p_holm)]
    return out


@pytest.mark.slow
def test_the_example_sweep_gives_three_arms_and_a_paired_interval_per_pair(kinegraph, tmp_path):
    kinegraph("synth", "tad", "--out", tmp_path / "tad_world", "--n", "2")
    spec = yaml.safe_load(EXAMPLE.read_text())
    assert [g for g in spec["graphs"]] == ARMS and list(spec["benchmarks"]) == ["tad"]
    assert spec["pairs"] == "all"
    with OpenAILoopback(responder=tad_model()) as server:
        spec["benchmarks"]["tad"] |= {"data": str(tmp_path / "tad_world"), "limit": 14}
        spec["models"] = ["vllm:loopback-vlm"]
        spec["run"]["base_url"] = server.base_url
        (tmp_path / "sweep.yaml").write_text(yaml.safe_dump(spec))
        kinegraph(
            "sweep", tmp_path / "sweep.yaml", "--out", tmp_path / "out", "--no-progress", "--n-boot", "300"
        )
    runs = [tmp_path / "out" / "tad" / f"{arm}__vllm-loopback-vlm" for arm in ARMS]
    report = (tmp_path / "out" / "report.md").read_text()
    assert all(f"{arm} · vllm:loopback-vlm" in report for arm in ARMS)
    assert (
        "tad.agent · vllm:loopback-vlm (non-official)" in report
        and "tcogmap · vllm:loopback-vlm (" not in report
    )
    swept = pair_rows(report)
    assert sorted(swept) == [(0, 1), (0, 2), (1, 2)]  # agent vs injected too, not only each vs the first
    assert PAIRS_TITLE.rstrip(":") in (tmp_path / "out" / "tad" / "report.html").read_text()

    printed = kinegraph(
        "compare", *runs, "--pairs", "all", "--n-boot", "300", "--out", tmp_path / "r.json"
    ).output
    assert "Holm over pairs" in printed
    comparison = json.loads((tmp_path / "r.json").read_text())
    assert [r["name"] for r in comparison["runs"]] == [f"{arm} · vllm:loopback-vlm" for arm in ARMS]
    pairs = {(p["a"], p["b"]): p for p in comparison["pairs"]}
    assert sorted(pairs) == [(0, 1), (0, 2), (1, 2)]
    scores = [r["headline"]["task_average"] for r in comparison["runs"]]
    for (a, b), pair in pairs.items():
        assert pair["low"] <= pair["delta"] <= pair["high"] and pair["n_groups"] == 2
        assert pair["delta"] == pytest.approx(scores[b] - scores[a])
        assert pair["p"] <= pair["p_holm"] <= 1
        delta, low, high, p, p_holm = swept[(a, b)]  # the sweep's report: the same numbers, as printed
        assert low <= delta <= high and p <= p_holm <= 1
        expected = [pair["delta"], pair["low"], pair["high"], pair["p"], pair["p_holm"]]
        assert [delta, low, high, p, p_holm] == pytest.approx(expected, abs=5e-4)  # shown to 3 decimals
    assert scores[0] < scores[1] and scores[0] < scores[2]  # the ego motion, injected or called, helps
    tool_use = [r["tool_use"]["calls"] for r in comparison["runs"]]
    assert tool_use[:2] == [0, 0] and tool_use[2] == 2 * 14  # only the agent calls, both tools each time

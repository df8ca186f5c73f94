"""EgoDyn's VO and flow thresholds are graph options: the paper's by default, others labelled non-official."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from kinegraph.graphs import graphs
from kinegraph.graphs.catalog import FLOW_UPSTREAM, VO_UPSTREAM
from kinegraph.graphs.egodyn.tools import measure_probes
from kinegraph.report.runs import labelled
from kinegraph.run import execute as run
from kinegraph.rundir import read_predictions
from kinegraph.tools.flow import FlowSignals, FlowThresholds
from kinegraph.tools.probe_results import flow_result, vo_from_signals
from kinegraph.tools.vo import VOSignals, VOThresholds
from kinegraph.types import RunConfig


def _defaults(graph: str) -> dict[str, object]:
    return {o.name: o.default for o in graphs.get(graph).options}


@pytest.mark.parametrize(
    ("graph", "cls", "upstream"),
    [("egodyn.vo", VOThresholds, VO_UPSTREAM), ("egodyn.flow", FlowThresholds, FLOW_UPSTREAM)],
)
def test_the_builders_defaults_are_the_papers_thresholds(graph, cls, upstream):
    paper = dataclasses.asdict(cls())
    defaults = _defaults(graph)
    assert {k: defaults[k] for k in paper} == paper
    assert dict(upstream) == paper
    assert not graphs.get(graph).is_non_official({})


def test_a_threshold_off_the_papers_is_labelled_non_official():
    assert labelled("vo", "egodyn.vo", {"heading_deg": 3.0}) == "vo (non-official)"
    assert labelled("vo", "egodyn.vo", {"heading_deg": 1.5}) == "vo"
    assert labelled("flow", "egodyn.flow", {"turn_px": 0.1}) == "flow (non-official)"
    raft = {"method": "raft_large"}
    assert labelled("raft", "egodyn.gpu_flow", raft) == "raft"
    assert (
        labelled("raft", "egodyn.gpu_flow", {**raft, "thresholds": {"turn_px": 0.1}}) == "raft (non-official)"
    )


@pytest.mark.parametrize(
    ("graph", "options"),
    [
        ("egodyn.tools", {"vo_thresholds": {"heading": 2.0}}),
        ("egodyn.tool_calls", {"flow_thresholds": {"turn": 0.1}}),
        ("egodyn.gpu_flow", {"thresholds": {"yaw_deadzone_deg": 0.1}}),
    ],
)
def test_an_unknown_threshold_name_is_refused_in_one_line_at_build(graph, options):
    with pytest.raises(ValueError, match=r"no (VO|flow) threshold '\w+' \(thresholds: ") as info:
        graphs.get(graph).build(options)
    assert "\n" not in str(info.value)


def test_the_mapping_reads_the_thresholds_and_the_trace_names_the_changed_ones():
    yaw = np.array([0.5, 0.5, 0.5, 0.5])  # 2 degrees in all: a heading change at 1.5, none at 3.0
    signals = VOSignals(yaw, np.full(4, 5.0), ("essential",) * 4)
    assert vo_from_signals(signals)["answers"]["significant_heading_change"] == "yes"
    assert "non_official_thresholds" not in vo_from_signals(signals)["signals"]
    changed = vo_from_signals(signals, VOThresholds(heading_deg=3.0))
    assert changed["answers"]["significant_heading_change"] == "no"
    assert changed["signals"]["non_official_thresholds"] == {"heading_deg": 3.0}
    flow = FlowSignals(np.full(4, 0.1), np.zeros(4), np.full(4, 2.0))
    assert flow_result(flow)["answers"]["yaw_rate_turn_direction"] == "left"
    assert flow_result(flow, FlowThresholds(turn_px=0.2))["answers"]["yaw_rate_turn_direction"] == "straight"


def test_the_tools_graphs_probes_use_the_thresholds_they_are_given():
    rng = np.random.default_rng(0)
    base = rng.integers(0, 255, (90, 170, 3), dtype=np.uint8)
    frames = np.stack([np.roll(base, 2 * k, axis=1)[:, :160] for k in range(4)])  # the scene slides right
    paper = measure_probes(["flow", "vo"], frames)
    wide = measure_probes(
        ["flow", "vo"], frames, vo=VOThresholds(yaw_peak_deg=5.0), flow=FlowThresholds(turn_px=0.1)
    )
    # turn signals of about 0.075 px (flow) and a 0.8 deg peak (VO): left under the paper's deadzones
    assert paper["flow"]["answers"]["yaw_rate_turn_direction"] == "left"
    assert paper["vo"]["answers"]["yaw_rate_turn_direction"] == "left"
    assert wide["flow"]["answers"]["yaw_rate_turn_direction"] == "straight"
    assert wide["vo"]["answers"]["yaw_rate_turn_direction"] == "straight"
    assert wide["flow"]["signals"]["non_official_thresholds"] == {"turn_px": 0.1}
    assert wide["vo"]["signals"]["non_official_thresholds"] == {"yaw_peak_deg": 5.0}


@pytest.mark.slow
def test_a_run_with_changed_vo_thresholds_answers_by_them(tmp_path):
    from kinegraph.suites import suites

    data = suites.get("egodyn").generate(tmp_path / "world", n=2, seed=3)
    answers = {}
    for name, options in (("paper", {}), ("never", {"heading_deg": 1e9, "lateral_deg": 1e9})):
        out = tmp_path / name
        config = RunConfig(
            benchmark="egodyn", graph="egodyn.vo", options=options, data=str(data), out_dir=str(out)
        )
        run(config, show_progress=False)
        answers[name] = {
            p.sample_id: p.answer
            for p in read_predictions(out / "predictions.jsonl")
            if p.sample_id.endswith(("significant_heading_change", "high_lateral_accel"))
        }
    assert answers["never"] and set(answers["never"].values()) == {"no"}
    assert answers["paper"].keys() == answers["never"].keys()
    assert "yes" in answers["paper"].values()  # the paper's thresholds do see some turns here

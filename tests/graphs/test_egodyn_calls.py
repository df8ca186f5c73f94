"""The EgoDyn probes as tool specs, and the per-clip tool table that reveals their measurements."""

from __future__ import annotations

import pytest

from kinegraph.graphs.egodyn.calls import probe_offer, probe_tools, tool_spec

VO_MEASURED = {
    "answers": {"yaw_rate_turn_direction": "left"},
    "signals": {"yaw_deg": [1.5, 2.5], "disp_px": [4.0, 5.0], "method": ["essential", "essential"]},
}
TCOGMAP_MEASURED = {
    "answers": {},
    "summary": "the ego vehicle is stopping.",
    "signals": {
        "net_yaw_deg": -0.5,
        "start_disp_px": 6.25,
        "end_disp_px": 0.1,
        "stationary_pairs": 1,
        "n_pairs": 2,
    },
}


def test_every_probe_has_a_tool_name():
    from kinegraph.graphs.egodyn.calls import TOOL_NAMES
    from kinegraph.graphs.egodyn.tools import CLIP_PROBES, PROBES

    assert set(TOOL_NAMES) == set(PROBES) | set(CLIP_PROBES)


def test_specs_name_the_probes_and_take_no_arguments():
    spec = tool_spec("vo")
    assert spec.name == "visual_odometry" and "yaw in degrees (+ = left)" in spec.description
    assert spec.parameters == {"type": "object", "properties": {}, "additionalProperties": False}
    assert [tool_spec(p).name for p in ("flow", "gpu_flow", "tcogmap")] == [
        "optical_flow",
        "dense_optical_flow",
        "ego_motion_summary",
    ]


def test_tools_reveal_each_probe_as_the_text_mode_writes_it():
    tools = probe_tools(("tcogmap_vo", "vo"), {"vo": VO_MEASURED, "tcogmap_vo": TCOGMAP_MEASURED})
    assert list(tools) == ["ego_motion_summary_from_pixels", "visual_odometry"]
    assert tools["ego_motion_summary_from_pixels"][1]({}).splitlines() == [
        "TCogMap-style ego-motion summary from visual odometry (pixels): the ego vehicle is stopping.",
        "  net_yaw_deg: -0.5",
        "  start_disp_px: 6.25",
        "  end_disp_px: 0.1",
        "  stationary_pairs: 1",
        "  n_pairs: 2",
    ]
    assert tools["visual_odometry"][1]({}).splitlines() == [
        "Visual odometry (KLT tracks + essential matrix) between consecutive frames:",
        "  yaw_deg: 1.5, 2.5",
        "  disp_px: 4, 5",
        "  total heading change: 4.0 deg to the left (+ = left)",
        "  its reading of the questions it can answer:",
        "  - Is the vehicle turning left, right, or going straight? -> left",
    ]


def test_offer_builds_the_table_from_the_clip_measurements():
    offer = probe_offer(("vo",), max_rounds=2)
    table = offer.table({"probes": {"vo": VO_MEASURED}, "tools": {}})
    assert offer.max_rounds == 2 and list(table) == ["visual_odometry"]


@pytest.mark.parametrize(
    ("probes", "rounds", "message"),
    [(("lidar",), 3, "probes must name"), ((), 3, "probes must name"), (("vo",), 0, "max_tool_rounds")],
)
def test_bad_offers_are_rejected(probes, rounds, message):
    with pytest.raises(ValueError, match=message):
        probe_offer(probes, rounds)

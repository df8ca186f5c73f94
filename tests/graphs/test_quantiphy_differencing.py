"""The QuantiPhy calculator's differencing is a graph option, the paper's forward differences by default."""

from __future__ import annotations

import pytest

from kinegraph.graphs import graph_spec
from kinegraph.run import execute
from kinegraph.rundir import read_predictions
from kinegraph.suites import suites
from kinegraph.types import RunConfig


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("qp")
    data = suites.get("quantiphy").generate(root / "world", n=3, seed=0) / "quantiphy_validation.csv"
    out = {}
    for name, options in {"default": {}, "centred": {"differencing": "centred"}}.items():
        config = RunConfig(
            benchmark="quantiphy",
            graph="quantiphy.oracle_tracks",
            options=options,
            data=str(data),
            out_dir=str(root / name),
        )
        execute(config, show_progress=False)
        out[name] = {p.sample_id: p for p in read_predictions(root / name / "predictions.jsonl")}
    return out


def test_the_default_is_the_papers_forward_difference_and_the_trace_says_so(runs):
    default, centred = runs["default"], runs["centred"]
    assert {p.trace[0]["differencing"] for p in default.values()} == {"forward"}
    assert {p.trace[0]["differencing"] for p in centred.values()} == {"centred"}
    # velocities of accelerating objects: the schemes disagree by a * dt / 2, far above the 6 printed digits
    changed = [k for k in default if abs(float(default[k].answer) - float(centred[k].answer)) > 1e-3]
    assert len(changed) >= 3
    for k in changed:
        truth = float(default[k].ground_truth)
        # the exact tracks are noiseless: the centred scheme is exact for constant acceleration, the
        # forward one is biased, so it is the farther of the two from the truth
        assert abs(float(centred[k].answer) - truth) < abs(float(default[k].answer) - truth)


def test_an_unknown_scheme_is_refused_in_one_line():
    with pytest.raises(ValueError) as excinfo:
        graph_spec("quantiphy.tracker").check_options({"differencing": "central"})
    assert str(excinfo.value).startswith("graph quantiphy.tracker option differencing: ")
    assert "\n" not in str(excinfo.value)
    for name in ("quantiphy.oracle_tracks", "quantiphy.tracker", "quantiphy.tools", "quantiphy.hybrid"):
        options = {o.name: o.default for o in graph_spec(name).options}
        assert options["differencing"] == "forward", name

"""`kinegraph list`: what the registries hold, one aligned line each; a bad kind is one line, exit 2."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kinegraph.cli import app


def _list(kind: str):
    return CliRunner().invoke(app, ["list", kind])


def test_benchmarks_with_primary_metric_and_scorer():
    result = _list("benchmarks")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["autodridm", "average", "non-official"]
    assert lines[2].split() == ["egodyn", "balanced_acc", "official"]
    assert len(lines) == 6 and len({line.index(line.split()[1]) for line in lines}) == 1  # aligned


def test_graphs_and_models():
    lines = [line for line in _list("graphs").stdout.splitlines() if not line.startswith("    options: ")]
    graphs = [line.split()[0] for line in lines]
    assert "egodyn.vision" in graphs and "tad.tcogmap" in graphs and graphs == sorted(graphs)
    rows = {line.split()[0]: line for line in lines}
    assert "  no model  " in rows["egodyn.measured"] and "  model  " in rows["egodyn.vision"]
    assert "GPU when present" in rows["egodyn.gpu_flow"] and "trajectory" in rows["egodyn.text_only"]
    assert "column alt_prior, column alt_posterior" in rows["quantiphy.counterfactual"]
    models = _list("models").stdout.splitlines()
    assert models == ["anthropic", "google", "openai", "reader", "replay", "scripted", "transformers", "vllm"]


def test_unknown_kind():
    result = _list("datasets")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == "error: cannot list 'datasets'; choose one of benchmarks, graphs, models\n"


def test_each_graph_is_followed_by_its_options_with_their_defaults():
    lines = _list("graphs").stdout.splitlines()
    options = {
        lines[i - 1].split()[0]: line for i, line in enumerate(lines) if line.startswith("    options: ")
    }
    assert len(options) == len(lines) // 2  # one options line under every graph
    assert options["egodyn.oracle"] == "    options: none"
    assert (
        "correspondences=lk" in options["egodyn.measured"] and "focal_px=None" in options["egodyn.measured"]
    )
    assert "max_tool_rounds=3" in options["autodridm.agent"]  # a constant imported from another module
    assert "turn_yaw_deg=10.0" in options["tad.tcogmap"]


_AGREE = """
from kinegraph.graphs import graphs
from kinegraph.graphs.source_defaults import REQUIRED, source_options

read = {name: source_options(graphs.get(name).target) for name in graphs}  # before any graph is imported
assert any(found is not None for found in read.values()), "nothing read from source"
for name, found in read.items():
    if found is None:
        continue
    signature = [(o.name, REQUIRED if o.required else o.default) for o in graphs.get(name).options]
    assert [n for n, _ in found] == [n for n, _ in signature], name
    for (option, shown), (_, default) in zip(found, signature, strict=True):
        assert shown == default or (isinstance(shown, str) and default is not REQUIRED), (name, option, shown)
print("agree", sum(found is not None for found in read.values()))
"""


@pytest.mark.slow
def test_the_options_listed_are_the_builders_signature():
    """Read from source (no graph library imported: a fresh interpreter, whatever earlier tests imported)
    they agree with the imported builder's signature."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _AGREE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("agree ") and int(done.stdout.split()[1]) > 0


def test_describe_a_benchmark_prints_its_card():
    result = CliRunner().invoke(app, ["describe", "tad"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "tad: TAD: Temporal understanding in Autonomous Driving"
    assert "  upstream:  github.com/vbdi/tad_bench@1c89f7e" in lines
    assert "  hub:       vbdai/TAD (with nuScenes frames)" in lines
    assert "  frames:    keyframes at 2 Hz (a video is sampled at it)" in lines
    assert lines[-1] == "  scorer:    official metric (parity with the upstream scorer)"

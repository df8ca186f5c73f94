"""`kinegraph list`: what the registries hold, one aligned line each; a bad kind is one line, exit 2."""

from __future__ import annotations

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
    lines = _list("graphs").stdout.splitlines()
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

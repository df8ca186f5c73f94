"""VLM-free EgoDyn graphs through the runner."""

from __future__ import annotations

from kinegraph.runner import run
from kinegraph.types import RunConfig
from runner_support import write_egodyn_world


def test_oracle_graph_is_a_perfect_ceiling(tmp_path):
    data = write_egodyn_world(tmp_path / "data", n_clips=10)
    summary = run(
        RunConfig(benchmark="egodyn", graph="egodyn.oracle", data=str(data), out_dir=str(tmp_path / "r")),
        show_progress=False,
    )
    assert summary.status_counts == {"ok": 140}
    assert summary.metrics["global"]["accuracy"] == 1.0 and summary.metrics["consistency"]["rate"] == 1.0


def test_oracle_from_stored_features_answers_six_and_skips_the_rest(golden, tmp_path):
    summary = run(
        RunConfig(
            benchmark="egodyn",
            graph="egodyn.oracle",
            data=str(golden / "egodyn" / "selected_clips.json"),
            out_dir=str(tmp_path / "r"),
            limit=1400,
        ),
        show_progress=False,
    )
    assert summary.status_counts == {"ok": 600, "skipped": 800}
    assert summary.metrics["n_total"] == 600 and summary.metrics["global"]["accuracy"] == 1.0

"""Baseline vs tool graph on the synthetic TAD, STSBench, DSI-Bench and AutoDriDM sets; prints the table.

The model is the text-only stand-in of the tests (`tests/support/suite_readers.py`) behind a real
OpenAI-compatible loopback server: it cannot see images and reads only what tools wrote into the
prompt. The figures show what each tool's text makes answerable, not what a VLM would score. Also prints
requests, wall time per run and the paired-bootstrap delta of the headline metric
(over scenes / records / rows / images).

    PYTHONPATH=src python perf/suite_graphs.py [--scale 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.suite_readers import autodridm_reader, dsi_reader, stsbench_reader, tad_reader  # noqa: E402

from kinegraph.agents.loopback import OpenAILoopback  # noqa: E402
from kinegraph.benchmarks.stsbench.world import write_stsbench_world  # noqa: E402
from kinegraph.benchmarks.tad.world import write_tad_world  # noqa: E402
from kinegraph.report import compare  # noqa: E402
from kinegraph.run import execute as run  # noqa: E402
from kinegraph.suites import suites  # noqa: E402
from kinegraph.types import RunConfig  # noqa: E402


def worlds(root: Path, scale: int) -> dict[str, tuple]:
    tad, nus = write_tad_world(root / "tad", n_scenes=6 * scale)
    sts = write_stsbench_world(root / "sts", n_records=24 * scale)
    return {
        "tad": (tad, {"nuscenes_root": str(nus)}, tad_reader, "tad.baseline", "tad.tcogmap"),
        "stsbench": (
            sts,
            {"data_root": str(sts.parent)},
            stsbench_reader,
            "stsbench.baseline",
            "stsbench.tcogmap",
        ),
        "dsi": (
            suites.get("dsi").generate(root / "dsi", n=15 * scale, seed=0),
            {},
            dsi_reader,
            "dsi.baseline",
            "dsi.tools",
        ),
        "autodridm": (
            suites.get("autodridm").generate(root / "adm", n=20 * scale, seed=0),
            {},
            autodridm_reader,
            "autodridm.baseline",
            "autodridm.tools",
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=1, help="multiply the synthetic set sizes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print("| suite | graph | n | headline (primary first) | Δ primary [95% CI] | requests | wall s |")
        print("|---|---|---|---|---|---|---|")
        for name, (data, loader_options, reader, *graph_names) in worlds(root, args.scale).items():
            dirs = []
            with OpenAILoopback(responder=reader) as server:
                stats = []
                for graph in graph_names:
                    out = root / "runs" / graph
                    config = RunConfig(
                        benchmark=name, graph=graph, model="vllm:loopback", base_url=server.base_url,
                        data=str(data), out_dir=str(out), concurrency=16, use_cache=False,
                        loader_options=loader_options,
                    )  # fmt: skip
                    n0, t0 = len(server.requests), time.perf_counter()
                    summary = run(config, show_progress=False)
                    stats.append((summary, len(server.requests) - n0, time.perf_counter() - t0))
                    dirs.append(out)
            comparison = compare(dirs, n_boot=2000)
            for i, (summary, requests, wall_s) in enumerate(stats):
                head = ", ".join(f"{k} {v:.3f}" for k, v in (summary.headline or {}).items() if v is not None)
                d = comparison.deltas[i]
                delta = (
                    "baseline"
                    if d is None
                    else f"{d.delta:+.3f} [{d.low:+.3f}, {d.high:+.3f}] ({d.n_groups} groups)"
                )
                print(
                    f"| {name} | {graph_names[i]} | {summary.n_predictions} | {head} | {delta} | "
                    f"{requests} | {wall_s:.1f} |"
                )


if __name__ == "__main__":
    main()

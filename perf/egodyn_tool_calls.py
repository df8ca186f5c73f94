"""`egodyn.vision` vs `egodyn.tools` and `egodyn.tool_calls` on a synthetic EgoDyn world; prints the table.

The model is the text-only stand-in of the tests behind a real OpenAI-compatible loopback server: it cannot
see images; offered the probes as functions it asks for `visual_odometry` on the questions VO answers and for
`ego_motion_summary` on the others
(`tests/support/tool_caller_model.py`), then reads the tool text. The figures show
what the probes make answerable and what the calls cost in requests and tokens, not what a VLM would score.

    PYTHONPATH=src python perf/egodyn_tool_calls.py [--n 10] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.text_reader_model import text_reader  # noqa: E402
from tests.support.tool_caller_model import tool_caller  # noqa: E402

from kinegraph.agents.loopback import OpenAILoopback  # noqa: E402
from kinegraph.benchmarks.egodyn.questions import VISION_BASELINE_QUESTIONS  # noqa: E402
from kinegraph.run import execute as run  # noqa: E402
from kinegraph.suites import suites  # noqa: E402
from kinegraph.types import RunConfig  # noqa: E402

RUNS = [
    ("egodyn.vision", {}, text_reader),
    ("egodyn.tools", {}, text_reader),
    ("egodyn.tool_calls", {}, tool_caller),
    ("egodyn.tool_calls never called", {}, text_reader),
    ("egodyn.tool_calls grouped", {"grouped": True}, tool_caller),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10, help="clips per source (nuScenes-style and CARLA-style)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="egodyn_tool_calls_") as tmp:
        data = suites.get("egodyn").generate(Path(tmp) / "data", n=args.n, seed=args.seed)
        print(f"world: {args.n} + {args.n} clips, seed {args.seed} (test size 800x450 / 640x360)\n")
        print("| graph | 6 probe questions acc | all 14 acc | requests | input tokens / sample | wall s |")
        print("|---|---|---|---|---|---|")
        for k, (label, options, responder) in enumerate(RUNS):
            graph = label.split()[0]
            with OpenAILoopback(responder=responder) as server:
                start = time.perf_counter()
                summary = run(
                    RunConfig(
                        benchmark="egodyn",
                        graph=graph,
                        model="vllm:reader",
                        base_url=server.base_url,
                        data=str(data),
                        out_dir=str(Path(tmp) / f"run{k}"),
                        use_cache=False,
                        options=options,
                    ),
                    show_progress=False,
                )
                wall_s = time.perf_counter() - start
                requests = len(server.requests)
            per_question = summary.metrics["per_question"]
            probe = sum(per_question[q]["accuracy"] for q in VISION_BASELINE_QUESTIONS) / 6
            overall = summary.metrics["global"]["accuracy"]
            tokens = summary.usage.input_tokens / summary.n_predictions
            print(f"| {label} | {probe:.3f} | {overall:.3f} | {requests} | {tokens:.0f} | {wall_s:.1f} |")


if __name__ == "__main__":
    main()

"""`egodyn.vision` vs `egodyn.measured_trajectory` (and the ground-truth `egodyn.trajectory`) in
`kinegraph compare`, on CARLA-style clips with camera rigs and seeds never used for tuning.

The model is the text-only stand-in of the tests behind a real OpenAI-compatible loopback server: it
cannot see images and answers from the trajectory text when there is one
(`tests/support/text_reader_model.py`).
The figures show what the measured trajectory makes answerable, next to what the true one would.

    python perf/egodyn_measured_compare.py [--n 60] [--seed 2000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.text_reader_model import text_reader  # noqa: E402

from kinegraph.agents.loopback import OpenAILoopback  # noqa: E402
from kinegraph.benchmarks.egodyn.extract import write_qa  # noqa: E402
from kinegraph.benchmarks.egodyn.world import write_carla_clips  # noqa: E402
from kinegraph.report import compare  # noqa: E402
from kinegraph.run import execute as run  # noqa: E402
from kinegraph.types import RunConfig  # noqa: E402

ARMS = (
    ("egodyn.vision", {}),
    ("egodyn.measured_trajectory", {"encoding": "timeseries"}),
    ("egodyn.trajectory", {"encoding": "timeseries"}),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60, help="clips")
    parser.add_argument("--seed", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="egodyn_measured_compare_") as tmp:
        data = Path(tmp) / "data"
        write_qa(write_carla_clips(data, args.n, args.seed, varied=True), data / "carla_clips")
        runs = []
        with OpenAILoopback(responder=text_reader) as server:
            for graph, options in ARMS:
                out = Path(tmp) / graph
                summary = run(
                    RunConfig(
                        benchmark="egodyn", graph=graph, model="vllm:text-reader", base_url=server.base_url,
                        data=str(data), out_dir=str(out), concurrency=8, options=options,
                        cache=str(Path(tmp) / "cache.sqlite"),
                    ),
                    show_progress=False,
                )  # fmt: skip
                print(f"{graph}: {summary.status_counts}")
                runs.append(out)
        comparison = compare(runs, n_boot=2000)
    print(f"\n{args.n} clips x 14 questions, seed {args.seed}, drawn camera rigs; {comparison.primary}\n")
    print(f"| graph | {comparison.primary} | delta vs egodyn.vision (95% CI, {args.n} clips) |")
    print("|---|---|---|")
    for (graph, _), headline, delta in zip(ARMS, comparison.headlines, comparison.deltas, strict=True):
        cell = "-" if delta is None else f"{delta.delta:+.3f} [{delta.low:+.3f}, {delta.high:+.3f}]"
        print(f"| {graph} | {headline[comparison.primary]:.3f} | {cell} |")


if __name__ == "__main__":
    main()

"""kinegraph's peak RSS at 2,000 and 14,000 EgoDyn vision questions, and a cached rerun's throughput.

Each run is `egodyn.vision` (10 frames of 800x450 a clip, 14 questions a clip) with the response cache on,
in its own process, against the loopback model (perf/peer_clients.py). Then the largest run is run again
into a new directory with the same cache: every answer comes from the cache, no frame is decoded, and its
throughput is printed in questions/s (target >= 2,000). Peak RSS should not grow with the number of
questions (target: within 1.2x).

    python perf/run_memory.py [--clips 143 1000] [--concurrency 64] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from peer_clients import dataset, kinegraph_argv, measure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, nargs="+", default=[143, 1000], help="14 questions a clip")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        peaks = {}
        for clips in args.clips:
            data, cache = dataset(clips), Path(tmp) / f"cache-{clips}.sqlite"
            argv = kinegraph_argv(data, Path(tmp) / f"run-{clips}", args.concurrency, cache)
            m = measure("kinegraph", argv, args.latency)
            peaks[clips] = m.peak_rss_mib
            print(
                f"{m.report['answers']:>6} questions: wall {m.run_s:.2f} s, "
                f"peak RSS {m.peak_rss_mib:.0f} MiB, {m.report['decodes']} decodes, "
                f"the server saw {m.requests} requests"
            )
        low, high = min(peaks.values()), max(peaks.values())
        print(f"peak RSS, largest / smallest run: {high / low:.2f}x (target <= 1.2)")
        clips = max(args.clips)
        argv = kinegraph_argv(
            dataset(clips), Path(tmp) / "rerun", args.concurrency, Path(tmp) / f"cache-{clips}.sqlite"
        )
        m = measure("kinegraph (cached rerun)", argv, args.latency)
        n = m.report["answers"]
        print(
            f"cached rerun of {n} questions: {m.run_s:.2f} s = {n / m.run_s:,.0f} questions/s "
            "(target >= 2,000); "
            f"{m.report['cached']} from the cache, {m.requests} requests, {m.report['decodes']} decodes, "
            f"peak RSS {m.peak_rss_mib:.0f} MiB"
        )


if __name__ == "__main__":
    main()

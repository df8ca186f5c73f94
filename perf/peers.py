"""kinegraph beside a bare aiohttp client and Inspect AI: the same EgoDyn vision requests, the same server.

N questions (14 a clip, 10 frames of 800x450 each) at concurrency K against an OpenAI-compatible loopback
model with a fixed latency, in its own process. Each client runs in its own process; printed per client:
its run's wall time, the process's wall, CPU and peak RSS, and the requests the server saw; then the
ratios. Inspect AI is installed into its own virtual environment under the perf cache (skipped, with a
message, when it cannot be installed) and measured with and without its sample log. Best of `--repeat`.

    python perf/peers.py [--clips 143] [--concurrency 64] [--latency 0.05] [--repeat 2] [--no-inspect]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from peer_clients import (
    CACHE_ROOT,
    INSPECT_CLIENT,
    Measured,
    bare_argv,
    dataset,
    kinegraph_argv,
    measure,
)

INSPECT_VENV = CACHE_ROOT / "inspect-venv"


def inspect_python() -> Path | None:
    """The Inspect AI environment's python, made on first use; None (said why) when it cannot be made."""
    python = INSPECT_VENV / "bin" / "python"
    probe = [str(python), "-c", "import inspect_ai, openai"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print(f"installing inspect-ai into {INSPECT_VENV} ...", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(INSPECT_VENV)], check=True, capture_output=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "inspect-ai", "openai"],
            check=True,
            capture_output=True,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        tail = (getattr(exc, "stderr", b"") or b"").decode(errors="replace").strip().splitlines()[-1:]
        print(f"Inspect AI skipped: it could not be installed ({' '.join(tail) or exc})")
        return None
    return python


def best(runs: list[Measured]) -> Measured:
    """The run with the shortest wall time; the spread is printed beside it."""
    return min(runs, key=lambda m: m.run_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=143, help="14 questions each (143: 2,002 questions)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--no-inspect", action="store_true")
    args = parser.parse_args()
    data = dataset(args.clips)
    clients: dict[str, list[str]] = {
        "kinegraph": [],
        "bare aiohttp": bare_argv(data, args.concurrency),
    }
    python = None if args.no_inspect else inspect_python()
    env = {**os.environ, "OPENAI_API_KEY": "unused", "INSPECT_LOG_LEVEL": "warning"}
    results: dict[str, list[Measured]] = {name: [] for name in clients}
    if python is not None:
        results["inspect (sample log)"] = []
        results["inspect (--no-log-samples)"] = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeat):
            for name in results:
                out = Path(tmp) / f"{r}-{name.split()[0]}"
                if name == "kinegraph":
                    argv = kinegraph_argv(data, out, args.concurrency, cache=None)
                elif name.startswith("inspect"):
                    log_samples = "0" if "no-log" in name else "1"
                    plan = str(data / "plan.json")
                    argv = [str(python), "-c", INSPECT_CLIENT, plan, "{base_url}", str(args.concurrency)]
                    argv += [str(out), log_samples]
                else:
                    argv = clients[name]
                results[name].append(measure(name, argv, args.latency, env=env))
                m = results[name][-1]
                print(f"  run {r + 1}: {name}: {m.run_s:.2f} s, {m.peak_rss_mib:.0f} MiB", flush=True)
    n = args.clips * 14
    print(
        f"\n{n} EgoDyn vision questions (10 frames of 800x450 each), concurrency {args.concurrency}, "
        f"model latency {args.latency * 1000:.0f} ms; best of {args.repeat} by wall time"
    )
    print(f"{'client':28} {'wall s':>16} {'process s':>10} {'CPU s':>7} {'peak RSS MiB':>13} {'requests':>9}")
    for name, runs in results.items():
        b = best(runs)
        spread = f"{b.run_s:.2f} ({min(m.run_s for m in runs):.1f}-{max(m.run_s for m in runs):.1f})"
        print(
            f"{name:28} {spread:>16} {b.process_s:>10.2f} {b.cpu_s:>7.2f} "
            f"{min(m.peak_rss_mib for m in runs):>13.0f} {b.requests:>9}"
        )
    kg, bare = best(results["kinegraph"]), best(results["bare aiohttp"])
    print(f"kinegraph / bare client wall: {kg.run_s / bare.run_s:.2f}x (target <= 1.2)")
    for name in ("inspect (sample log)", "inspect (--no-log-samples)"):
        if name in results:
            ins = best(results[name])
            print(
                f"kinegraph throughput / {name}: {ins.run_s / kg.run_s:.1f}x (target >= 10); "
                f"peak RSS {kg.peak_rss_mib:.0f} vs {ins.peak_rss_mib:.0f} MiB"
            )


if __name__ == "__main__":
    main()

"""Whole-process wall time of `kinegraph --help` and `kinegraph evaluate egodyn` (1 and 14,000 records), the
top import costs (`-X importtime`), and the same scoring by upstream's EgoDyn script. Best of 5 runs each.

Upstream's script runs from its own checkout when one is found: `--upstream DIR` (a checkout of
TUM-AVS/EgoDyn-Bench), `$EGODYN_UPSTREAM`, or `scripts/evaluate.py` under the golden-file and spec folders.
Otherwise the stand-in `perf/upstream_like/egodyn_evaluate.py` (written from the spec, same imports and
pure-Python metrics) is timed, and the output says so. Both scorers' numbers are checked to agree.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from egodyn_scorer import make_records  # the scorer figure's 14,000 records, in upstream's JSONL format

from kinegraph.benchmarks.egodyn.questions import QUESTION_BANK
from kinegraph.fixtures import fixtures_dir

RUNS = 5
STAND_IN = Path(__file__).resolve().parent / "upstream_like" / "egodyn_evaluate.py"
KINEGRAPH = [sys.executable, "-m", "kinegraph.cli"]


def best_wall_s(commands: dict[str, tuple[list[str], Path | None]]) -> dict[str, tuple[float, str]]:
    """Fastest of `RUNS` runs (seconds) and the stdout of each named (command, cwd); the commands take
    turns, round by round, so a change in the machine's load touches them alike. A failure stops here."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    outs: dict[str, str] = {}
    for _ in range(RUNS):
        for name, (command, cwd) in commands.items():
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, cwd=cwd)
            times[name].append(time.perf_counter() - start)
            if done.returncode != 0:
                sys.exit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
            outs[name] = done.stdout
    return {name: (min(times[name]), outs[name]) for name in commands}


def top_imports(command: list[str], n: int = 10) -> tuple[float, list[tuple[float, str]]]:
    """Total import time (s) and the `n` costliest top-level imports (cumulative s, module)."""
    done = subprocess.run([sys.executable, "-X", "importtime", *command[1:]], capture_output=True, text=True)
    top = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.split("|")
        if not name.startswith("  "):  # one space of padding: imported by no other module
            top.append((int(cumulative) / 1e6, name.strip()))
    top.sort(reverse=True)
    return sum(t for t, _ in top), top[:n]


def find_upstream(given: str | None) -> Path | None:
    """A checkout of upstream EgoDyn-Bench holding `scripts/evaluate.py`, if one is at hand."""
    candidates = [Path(p) for p in (given, os.environ.get("EGODYN_UPSTREAM")) if p]
    if (golden := fixtures_dir()) is not None:
        for folder in (golden / "egodyn", golden.parent / "spec"):
            candidates += [p.parents[1] for p in folder.glob("**/scripts/evaluate.py")]
    return next((c for c in candidates if (c / "scripts" / "evaluate.py").is_file()), None)


def question_template(tmp: Path) -> Path:
    """Upstream's questions_template.yaml from the golden files, else the built-in bank in its format."""
    golden = fixtures_dir()
    if golden is not None and (golden / "egodyn" / "questions_template.yaml").is_file():
        return golden / "egodyn" / "questions_template.yaml"
    questions = [
        {
            "question_id": q.question_id,
            "category": q.category,
            "answer_type": q.answer_type,
            "choices": q.choices,
            "metadata": {"temporal": q.temporal},
        }
        for q in QUESTION_BANK
    ]
    path = tmp / "questions_template.yaml"
    path.write_text(yaml.safe_dump({"questions": questions}))
    return path


def agree(ours: dict, theirs: dict, whole: bool) -> bool:
    """The same numbers: the whole dict for upstream's script, the blocks the stand-in prints otherwise."""
    if whole:
        return ours == theirs
    return ours["global"] == theirs["global"] and ours["temporal"] == theirs["temporal"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--upstream", help="A checkout of TUM-AVS/EgoDyn-Bench (run from where it is).")
    upstream = find_upstream(parser.parse_args().upstream)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        records = make_records()
        one, many = tmp / "one.jsonl", tmp / "predictions.jsonl"
        one.write_text(json.dumps(records[0]) + "\n")
        many.write_text("".join(json.dumps(r) + "\n" for r in records))

        if upstream is not None:
            label = f"upstream's scripts/evaluate.py, run from {upstream}"
            theirs, cwd = [sys.executable, "scripts/evaluate.py", "--predictions"], upstream
        else:
            label = "no upstream checkout found: the stand-in perf/upstream_like/egodyn_evaluate.py"
            theirs = [sys.executable, str(STAND_IN), "--config", str(question_template(tmp)), "--predictions"]
            cwd = None
        n = f"{len(records):,}"
        timed = best_wall_s(
            {
                "python -c pass": ([sys.executable, "-c", "pass"], None),
                "kinegraph --help": ([*KINEGRAPH, "--help"], None),
                "kinegraph evaluate egodyn, 1 record": ([*KINEGRAPH, "evaluate", "egodyn", str(one)], None),
                "upstream, 1 record": ([*theirs, str(one)], cwd),
                f"kinegraph evaluate egodyn, {n} records": (
                    [*KINEGRAPH, "evaluate", "egodyn", str(many)],
                    None,
                ),
                f"upstream, {n} records": ([*theirs, str(many)], cwd),
            }
        )
        print(f"wall time, best of {RUNS} runs ({sys.executable}); upstream = {label}")
        for name, (seconds, _) in timed.items():
            print(f"  {name:<45} {seconds * 1000:6.0f} ms")
        ours_1, ours_n = (
            timed["kinegraph evaluate egodyn, 1 record"],
            timed[f"kinegraph evaluate egodyn, {n} records"],
        )
        theirs_1, theirs_n = timed["upstream, 1 record"], timed[f"upstream, {n} records"]
        same = agree(json.loads(ours_n[1]), json.loads(theirs_n[1]), whole=upstream is not None)
        print(
            f"  kinegraph / upstream: 1 record {ours_1[0] / theirs_1[0]:.2f}x, {n} records "
            f"{ours_n[0] / theirs_n[0]:.2f}x (target <= 1.00); same metrics: {same}"
        )

        total, top = top_imports([*KINEGRAPH, "evaluate", "egodyn", str(one)])
        print(f"imports of `kinegraph evaluate egodyn` (one run): {total * 1000:.0f} ms in all; costliest:")
        for seconds, name in top:
            print(f"  {seconds * 1000:6.1f} ms  {name}")


if __name__ == "__main__":
    main()

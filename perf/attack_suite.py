"""The attack suite's figure: how many of its cases hold, held / total (README, "Reliability").

    PYTHONPATH=src python perf/attack_suite.py              # this tree
    python perf/attack_suite.py --src ../main/src           # another tree, e.g. to see what it fails

Runs `tests/attacks` (real servers on loopback, real files, real processes) in one pytest process against
the package under `--src` and prints one line per file and the total.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTCOME = re.compile(r"^(PASSED|FAILED|ERROR) (tests/attacks/[^:]+)::", re.MULTILINE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the package tree to attack")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(args.src.resolve()), str(ROOT)])}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "tests/attacks"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    held, total = Counter(), Counter()
    for outcome, path in OUTCOME.findall(result.stdout):
        total[path] += 1
        held[path] += outcome == "PASSED"
    for path in sorted(total):
        print(f"{path}: {held[path]} / {total[path]} held")
    print(f"attack suite against {args.src}: {sum(held.values())} / {sum(total.values())} held")


if __name__ == "__main__":
    main()

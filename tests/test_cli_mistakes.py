"""Every mistake docs/cli.md names ends in one line on stderr and exit code 2 (the table is the contract)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kinegraph.cli import app
from kinegraph.rundir import lock_run_dir
from tests.support.run_data import write_egodyn_world

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
ROW = re.compile(r"^\| `kinegraph (?P<args>[^`]+)` \| `(?P<line>[^`]+)` \|$")


def mistakes() -> list[tuple[str, str]]:
    """(arguments, a fragment of the error line) for every row of the doc's table."""
    text = DOC.read_text()
    table = text.split("<!-- mistakes -->", 1)[1].split("<!-- /mistakes -->", 1)[0]
    rows = [ROW.match(line) for line in table.splitlines() if line.startswith("| `kinegraph")]
    assert all(rows), "a row of the mistakes table does not parse"
    return [(m["args"], m["line"]) for m in rows if m]


def substitute(arg: str, places: dict[str, str]) -> str:
    """A placeholder argument as its path, also after `key=` (`ids=PRED`)."""
    key, sep, value = arg.partition("=")
    return f"{key}={places[value]}" if sep and value in places else places.get(arg, arg)


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The doc's placeholders as real paths: a small EgoDyn set, a finished run, an empty folder, ..."""
    root = tmp_path_factory.mktemp("mistakes")
    data = write_egodyn_world(root / "data", n_clips=1)
    run = root / "run"
    done = CliRunner().invoke(
        app,
        [
            "run",
            "egodyn",
            "--graph",
            "egodyn.oracle",
            "--data",
            str(data),
            "--out",
            str(run),
            "--no-progress",
        ],
    )
    assert done.exit_code == 0, done.output
    (root / "empty").mkdir()
    (root / "pred.jsonl").write_text("not json\n")
    (root / "bad_sweep.yaml").write_text("benchmarks: [egodyn]\ngraphs: 3\n")
    (root / "sweep.yaml").write_text(f"benchmarks: {{egodyn: {{data: '{data}'}}}}\ngraphs: [egodyn.oracle]\n")
    (root / "bad_pairs.yaml").write_text(
        "benchmarks: {egodyn: {data: d}}\ngraphs: [egodyn.oracle]\npairs: every\n"
    )
    (root / "deep_sweep.yaml").write_text("benchmarks: " + "[" * 10_000 + "]" * 10_000 + "\n")
    axis = "[" + ", ".join(map(str, range(10))) + "]"
    (root / "grid_sweep.yaml").write_text(
        "benchmarks: {egodyn: {data: d}}\ngraphs:\n  - graph: egodyn.oracle\n    options: {"
        + ", ".join(f"{k}: {axis}" for k in "abcde")
        + "}\n"
    )
    with lock_run_dir(root / "locked"):  # as a run still writing there holds it
        yield {
            "DATA": str(data),
            "RUN": str(run),
            "LOG": str(run / "predictions.jsonl"),
            "OFFICIAL": str(run / "official" / "egodyn_predictions.jsonl"),
            "LOCKED": str(root / "locked"),
            "EMPTY": str(root / "empty"),
            "MISSING": str(root / "missing"),
            "PRED": str(root / "pred.jsonl"),
            "GOOD_SWEEP": str(root / "sweep.yaml"),
            "BAD_SWEEP": str(root / "bad_sweep.yaml"),
            "DEEP_SWEEP": str(root / "deep_sweep.yaml"),
            "GRID_SWEEP": str(root / "grid_sweep.yaml"),
            "BAD_PAIRS": str(root / "bad_pairs.yaml"),
            "OUT": str(root / "out"),
        }


def test_the_doc_names_the_mistakes_of_every_command():
    commands = {args.split()[0] for args, _ in mistakes()}
    assert commands >= {"frobnicate", "run", "evaluate", "compare", "synth", "sweep", "serve", "list"}


@pytest.mark.parametrize(("args", "expected"), mistakes(), ids=[args for args, _ in mistakes()])
def test_a_mistake_is_one_line_and_exit_2(args: str, expected: str, places: dict[str, str]):
    argv = [substitute(a, places) for a in shlex.split(args)]
    for name, path in places.items():
        expected = expected.replace(name, path)
    result = CliRunner().invoke(app, argv, prog_name="kinegraph")
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.stderr
    assert lines[0].startswith("error: ") and expected in lines[0], lines[0]

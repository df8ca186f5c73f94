"""docs/extending.md, run as written: its four toy modules, its one registry line, its commands."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kinegraph.cli import app
from kinegraph.suites import suites

DOC = Path(__file__).parents[1] / "docs" / "extending.md"
BLOCK = re.compile(r"<!-- (file: (?P<path>\S+)|register) -->\n```python\n(?P<code>.*?)```", re.DOTALL)


def doc_blocks() -> tuple[dict[str, str], str]:
    """The doc's modules (path -> source) and its registry line."""
    files, register = {}, ""
    for match in BLOCK.finditer(DOC.read_text()):
        if match["path"]:
            files[match["path"]] = match["code"]
        else:
            register = match["code"]
    return files, register


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The doc's package on sys.path and its suite registered (for this test only)."""
    files, register = doc_blocks()
    assert sorted(files) == [f"toy_bench/{m}.py" for m in ("toy", "toy_graph", "toy_scorer", "toy_suite")]
    for path, code in {**files, "toy_bench/__init__.py": ""}.items():
        (tmp_path / "pkg" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "pkg" / path).write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    monkeypatch.setattr(suites, "_entries", dict(suites._entries))  # the registration ends with the test
    exec(register, {"suites": suites})
    monkeypatch.chdir(tmp_path)
    return tmp_path


def kinegraph(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_toy_benchmark_end_to_end(toy):
    assert "toy        accuracy       non-official" in kinegraph("list", "benchmarks")
    assert kinegraph("synth", "toy", "--out", "data", "--n", "4") == "wrote data\n"
    assert [json.loads(line)["answer"] for line in Path("data/toy.jsonl").read_text().splitlines()] == [
        0,
        2,
        2,
        4,
    ]
    for out, graph in (("R1", "build"), ("R2", "build_doubler")):
        kinegraph("run", "toy", "--graph", f"toy_bench.toy_graph:{graph}", "--data", "data", "--out", out,
                  "--no-progress")  # fmt: skip
    assert json.loads(Path("R1/metrics.json").read_text())["accuracy"] == 1.0
    assert json.loads(Path("R2/metrics.json").read_text())["accuracy"] == 0.5
    printed = kinegraph("evaluate", "toy", "R2/official/toy_predictions.jsonl", "--data", "data")
    assert json.loads(printed) == {"accuracy": 0.5, "correct": 2, "n": 4}
    kinegraph("compare", "R1", "R2", "--out", "report.html")
    report = Path("report.html").read_text()
    assert "<td>1.000</td>" in report and "<td>0.500</td>" in report and "<td>-0.500 [" in report
    assert "kinegraph&#x27;s own scorer (non-official)" in report and "paired unit: question" in report


def test_the_toy_evaluate_command_has_help_and_warns(toy):
    assert "Prediction JSONL of {id, answer} lines." in kinegraph("evaluate", "toy", "--help")
    kinegraph("synth", "toy", "--out", "data", "--n", "4")
    Path("p.jsonl").write_text('{"id": "q1", "answer": 2}\n{"id": "q9", "answer": 1}\n')
    result = CliRunner().invoke(app, ["evaluate", "toy", "p.jsonl", "--data", "data"])
    assert json.loads(result.stdout) == {"accuracy": 0.25, "correct": 1, "n": 4}
    assert result.stderr == "warning: p.jsonl: answers to unknown ids left out: q9\n"

"""Markdown, terminal and HTML views show each item's value per run and its delta with the 95% interval."""

from __future__ import annotations

import re

import pytest
from rich.console import Console

from kinegraph.report import compare, markdown, print_table, write_report


@pytest.fixture
def comparison(tad_pair):
    return compare(list(tad_pair), n_boot=2000)


def _row(text: str, item: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"| {item} |"))


def test_markdown_item_table(comparison):
    text = markdown(comparison)
    assert "| item: value (answered/asked) | tad.baseline | tad.tcogmap | Δ vs first (95% CI) |" in text
    gain = _row(text, "mc_action")
    assert re.fullmatch(
        r"\| mc_action \| 0\.100 \(30/30\) \| 0\.900 \(30/30\) \| \+0\.800 \[0\.\d{3}, (0|1)\.\d{3}\] \* \|",
        gain,
    )
    wash = _row(text, "temp_ordering")
    assert re.fullmatch(
        r"\| temp_ordering \| 0\.500 \(30/30\) \| 0\.500 \(30/30\) \| \+0\.000 \[-0\.\d{3}, 0\.\d{3}\] \|",
        wash,
    )
    assert re.search(r"\| tad.tcogmap \| \d+/60 \(\d+%\) \|", text)  # the headline table, with coverage


def test_terminal_item_table(comparison):
    console = Console(record=True, width=200)
    print_table(comparison, console)
    text = console.export_text()
    assert "runs compared" in text and "per question / task" in text
    line = next(line for line in text.splitlines() if "mc_action" in line)
    assert "0.100" in line and "0.900" in line and "+0.800 [" in line and "] *" in line


def test_terminal_shows_bracketed_run_names_verbatim(tad_pair, tmp_path):
    import json
    import shutil

    options_run = tmp_path / "opt"
    shutil.copytree(tad_pair[1], options_run)
    info = json.loads((options_run / "run.json").read_text())
    info["config"]["options"] = {"encoding": "timeseries"}
    (options_run / "run.json").write_text(json.dumps(info))
    console = Console(record=True, width=250)
    print_table(compare([tad_pair[0], options_run], n_boot=100), console)
    assert "tad.tcogmap[encoding=timeseries]" in console.export_text()  # not eaten as rich markup


def test_every_row_naming_an_agent_run_says_it_is_non_official(tad_pair, tmp_path):
    import json
    import shutil
    from html import unescape

    agent = tmp_path / "agent"
    shutil.copytree(tad_pair[1], agent)
    info = json.loads((agent / "run.json").read_text())
    info["config"]["graph"] = "tad.agent"
    (agent / "run.json").write_text(json.dumps(info))
    comparison = compare([tad_pair[0], agent], n_boot=100, pairs="all")
    console = Console(record=True, width=400)
    print_table(comparison, console)
    page = unescape(write_report(comparison, tmp_path / "r.html").read_text())
    for text in (markdown(comparison), console.export_text(), page.replace("<", "\n<")):
        naming = [line for line in text.splitlines() if "tad.agent" in line]
        assert len(naming) >= 3, text  # headline, per-item and pair tables
        assert all("tad.agent (non-official)" in line for line in naming), naming
        assert "tad.baseline (non-official)" not in text
    summary = json.loads(write_report(comparison, tmp_path / "r.json").read_text())
    assert [(r["name"], r["non_official"]) for r in summary["runs"]] == [
        ("tad.baseline", False),
        ("tad.agent", True),
    ]


def test_a_non_official_graph_run_with_a_papers_options_is_labelled_official(tad_pair, tmp_path):
    import json
    import shutil

    runs = []
    for name, options in (("hs", {}), ("raft", {"method": "raft_large"})):
        run = tmp_path / name
        shutil.copytree(tad_pair[1], run)
        info = json.loads((run / "run.json").read_text())
        info["config"].update(graph="egodyn.gpu_flow", options=options)
        (run / "run.json").write_text(json.dumps(info))
        runs.append(run)
    summary = json.loads(write_report(compare(runs, n_boot=100), tmp_path / "r.json").read_text())
    # Horn-Schunck is kinegraph's own setting; RAFT large is the EgoDyn paper's RAFT Flow row
    assert [r["non_official"] for r in summary["runs"]] == [True, False]


def test_html_has_item_table_and_forest_plot(comparison, tmp_path):
    html = write_report(comparison, tmp_path / "r.html").read_text()
    assert "<th>Δ vs first (95% CI)</th>" in html
    assert "<td>+0.800 [" in html and "] *</td>" in html
    assert 'alt="item deltas" src="data:image/png;base64,' in html
    assert 'alt="breakdown"' in html and 'alt="deltas"' in html


def test_single_run_has_no_item_deltas(tad_pair, tmp_path):
    single = compare([tad_pair[0]], n_boot=100)
    assert single.item_deltas == [{}]
    text = markdown(single)
    assert "| mc_action | 0.100 (30/30) |" in text and "Δ vs first" not in _row(text, "mc_action")
    html = write_report(single, tmp_path / "one.html").read_text()
    assert 'alt="item deltas"' not in html


@pytest.mark.parametrize(
    ("suite", "official", "unit"), [("autodridm", False, "image"), ("egodyn", True, "clip")]
)
def test_reports_say_whose_scorer_made_the_scores(suite, official, unit, tmp_path):
    from html import unescape

    from tests.support.suite_runs import suite_run

    comparison = compare(suite_run(suite, tmp_path), n_boot=50)
    for name in ("report.html", "report.md"):
        text = unescape(write_report(comparison, tmp_path / name).read_text())
        assert ("Scores: official metric (parity with the upstream scorer)." in text) is official, name
        assert ("Scores: kinegraph's own scorer (non-official)." in text) is not official, name
        assert "official metric" in text if official else "official metric" not in text
        assert f"paired unit: {unit}" in text


def test_every_item_score_has_its_coverage_beside_it(tad_pair, tmp_path):
    """A run that left questions unanswered says so beside each item's score, in every view."""
    import json

    lines = (tad_pair[1] / "predictions.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    for record in records:
        if record["question_id"] == "mc_action" and record["group"] < "scene-10":
            record.update(answer=None, status="parse_failure")
    (tad_pair[1] / "predictions.jsonl").write_text("\n".join(map(json.dumps, records)) + "\n")
    comparison = compare(list(tad_pair), n_boot=100)
    assert _row(markdown(comparison), "mc_action").startswith("| mc_action | 0.100 (30/30) | 0.")
    assert "(20/30) |" in _row(markdown(comparison), "mc_action")
    assert "(30/30) |" in _row(markdown(comparison), "temp_ordering")
    console = Console(record=True, width=250)
    print_table(comparison, console)
    assert "(20/30)" in next(line for line in console.export_text().splitlines() if "mc_action" in line)
    assert re.search(
        r"<td>0\.\d{3} \(20/30\)</td>", write_report(comparison, tmp_path / "r.html").read_text()
    )


def test_views_round_to_three_decimals_and_files_keep_full_precision(comparison, tmp_path):
    text = markdown(comparison)
    assert not re.search(r"\d\.\d{4}", _row(text, "mc_action"))
    assert re.search(r"\| tad.tcogmap \| \d+/60 \(\d+%\) \| \d\.\d{3} \|", text)
    summary = write_report(comparison, tmp_path / "r.json").read_text()
    assert re.search(r"\d\.\d{5,}", summary)  # report.json is not rounded for display

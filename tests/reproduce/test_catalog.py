"""The published numbers load, name real graphs and options, and are found by `paper:table`."""

from __future__ import annotations

from pathlib import Path

import pytest

from kinegraph.errors import UsageError
from kinegraph.graphs import graph_spec
from kinegraph.reproduce import all_tables, find_table, listing, pages, papers
from kinegraph.reproduce.catalog import Arm


def test_five_papers_and_their_numbers():
    assert sorted(papers()) == ["autodridm", "dsi", "egodyn", "quantiphy", "tad"]
    vo = next(a for a in find_table("egodyn:table3").arms if a.model == "Visual Odometry")
    assert find_table("egodyn:table3").published(vo)["balanced_acc"] == pytest.approx(0.638)
    tcogmap = find_table("tad:table4").arms[7]  # after Human, Chance, GPT-5-mini, Gemini, Qwen-7B, +EP, +CoT
    assert (tcogmap.label, tcogmap.values[-1]) == ("Qwen2.5-VL-7B · + TCogMap", 62.18)


@pytest.mark.parametrize("table", all_tables(), ids=lambda t: t.key)
def test_every_reproducible_arm_names_a_graph_of_its_benchmark_with_valid_options(table):
    for arm in table.reproducible:
        spec = graph_spec(arm.graph)
        assert arm.graph.startswith(f"{table.benchmark}.")
        spec.check_options(arm.options)


def test_list_names_every_table_with_its_status():
    text = listing()
    for table in all_tables():
        assert table.key in text
    assert "tad:table12" in text and "not reproducible here" in text.split("tad:table12", 1)[1].split("\n")[0]
    assert "reproducible" in text.split("tad:table10", 1)[1].split("\n")[0]  # caption_style: Table 10's arms


def test_an_arm_not_reproducible_here_must_say_why():
    with pytest.raises(ValueError, match="gives a reason"):
        Arm(model="m", status="not reproducible here", values=[1.0])
    with pytest.raises(ValueError, match="names its graph"):
        Arm(model="m", values=[1.0])


def test_unknown_paper_or_table():
    with pytest.raises(UsageError, match="unknown paper 'nosuch'"):
        find_table("nosuch:table1")
    with pytest.raises(UsageError, match="tad has: table4"):
        find_table("tad:table99")


@pytest.mark.parametrize("paper", ["autodridm", "dsi", "egodyn", "quantiphy", "tad"])
def test_each_papers_page_lists_what_the_catalog_holds(paper):
    page = (Path(__file__).resolve().parents[2] / "docs" / "papers" / f"{paper}.md").read_text()
    generated = page.split(pages.BEGIN + "\n", 1)[1].split(pages.END, 1)[0]
    assert generated == pages.section(paper), "regenerate: python -m kinegraph.reproduce.pages docs/papers"
    assert f"kinegraph reproduce {paper}:" in generated or "not reproducible here" in generated


def test_a_role_reaches_the_sweep_and_only_the_graphs_that_have_it(tmp_path):
    from kinegraph.reproduce.runner import Request, sweep_spec
    from kinegraph.roles import parse_roles
    from kinegraph.run.sweep_spec import expand

    request = Request(
        out=tmp_path, data=str(tmp_path), model="vllm:captioner", roles=parse_roles(["answerer=vllm:llm"])
    )
    runs = expand(sweep_spec(find_table("tad:table4"), request, seed=0), tmp_path / "out")
    roles = {run.config.graph: {k: r.model for k, r in run.config.roles.items()} for run in runs}
    assert roles["tad.scene_cot"] == {"answerer": "vllm:llm"} and roles["tad.baseline"] == {}


def _seed_text(paper: str) -> list[str]:
    from kinegraph.fixtures import fixtures_dir

    shared = fixtures_dir()
    seed = shared.parent / "seeds" / papers()[paper].seed if shared else None
    if seed is None or not seed.is_file():
        pytest.skip("the papers' texts (../shared/seeds) are not here")
    return seed.read_text().splitlines()


@pytest.mark.parametrize("table", all_tables(), ids=lambda t: t.key)
def test_every_published_number_is_printed_in_the_lines_the_table_cites(table):
    import re

    first, last = map(int, table.source.lines.split("-"))
    cited = "\n".join(_seed_text(table.paper)[first - 1 : last])
    printed = {float(n) for n in re.findall(r"\d+(?:\.\d+)?", cited)}
    missing = [(arm.label, v) for arm in table.arms for v in arm.values if v is not None and v not in printed]
    assert not missing, f"{table.key}: lines {table.source.lines} do not print {missing[:3]}"


def test_group_wise_tables_say_what_the_scorer_counts():
    import inspect

    from kinegraph.evaluators.dsi import group_wise

    at_least = inspect.signature(group_wise).parameters["min_correct"].default
    words = {3: "at least three of the four"}[at_least]
    assert words in find_table("dsi:table1-group").title
    assert not [t.key for t in papers()["dsi"].tables if "all four" in t.title]

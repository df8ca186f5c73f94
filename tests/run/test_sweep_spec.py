"""Sweep files: parsing, checks with file and field in the message, and the expansion into runs."""

from __future__ import annotations

import textwrap

import pytest

from kinegraph.errors import DataError
from kinegraph.run.sweep_spec import expand, load_sweep, option_grid, run_name
from kinegraph.types import RoleModel
from tests.support.run_data import write_graph_module


@pytest.fixture
def user_graph(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    return write_graph_module(tmp_path)


def write(tmp_path, text):
    path = tmp_path / "sweep.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_grid_models_and_vlm_free_graphs_expand_in_file_order(tmp_path, user_graph):
    path = write(
        tmp_path,
        f"""
        benchmarks:
          egodyn: {{data: data/egodyn, limit: 28}}
        graphs:
          - {user_graph}
          - graph: egodyn.trajectory
            options: {{encoding: [summary, timeseries]}}
        models:
          - vllm:qwen2.5-vl-7b
          - {{model: "openai:gpt-4o", base_url: "http://other:1/v1"}}
        options: {{num_frames: 4}}
        run: {{concurrency: 4, cache: cache.sqlite, base_url: "http://vllm:8000/v1"}}
        """,
    )
    runs = expand(load_sweep(path), tmp_path / "out", path)
    names = [r.name for r in runs]
    assert names == [
        "first_option_graph-build__num_frames=4",  # VLM-free: once, not once per model
        "egodyn.trajectory__encoding=summary__num_frames=4__vllm-qwen2.5-vl-7b",
        "egodyn.trajectory__encoding=summary__num_frames=4__openai-gpt-4o",
        "egodyn.trajectory__encoding=timeseries__num_frames=4__vllm-qwen2.5-vl-7b",
        "egodyn.trajectory__encoding=timeseries__num_frames=4__openai-gpt-4o",
    ]
    first, openai_run = runs[0].config, runs[2].config
    assert first.model is None and first.data == str(tmp_path / "data" / "egodyn") and first.limit == 28
    assert first.out_dir == str(tmp_path / "out" / "egodyn" / names[0])
    assert openai_run.base_url == "http://other:1/v1" and runs[1].config.base_url == "http://vllm:8000/v1"
    assert openai_run.options == {"encoding": "summary", "num_frames": 4} and openai_run.concurrency == 4
    assert openai_run.cache == str(tmp_path / "cache.sqlite")


def test_option_grid_and_names():
    assert option_grid({"a": [1, 2], "b": "x", "c": [True, False]}) == [
        {"a": 1, "b": "x", "c": True},
        {"a": 1, "b": "x", "c": False},
        {"a": 2, "b": "x", "c": True},
        {"a": 2, "b": "x", "c": False},
    ]
    assert option_grid({"size": [[1, 2]]}) == [{"size": [1, 2]}]  # a list-valued option, fixed
    assert option_grid({}) == [{}]
    assert run_name("pkg.mod:build", {"k": "a/b"}, "vllm:org/model") == "pkg.mod-build__k=a-b__vllm-org-model"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("benchmarks: {egodyn: {data: d}}\ngraphs: [egodyn.vision]\nmodelz: [x]\n", "field 'modelz'"),
        ("benchmarks: {egodyn: {data: d}}\ngraphs: [egodyn.vision]\n", "needs a model"),
        ("benchmarks: {egodyn: {data: d}}\ngraphs: [quantiphy.x]\nmodels: [a:b]\n", "no quantiphy benchmark"),
        ("benchmarks: {egodyn: {data: d}}\ngraphs: [egodyn.vision]\nmodels: [a:b]\nrun: {speed: 2}\n", "run"),
        ("benchmarks: {egodyn: {}}\ngraphs: [egodyn.vision]\n", "field 'benchmarks.egodyn.data'"),
        (
            "benchmarks: {egodyn: {data: d}}\ngraphs: [egodyn.nope]\nmodels: [a:b]\n",
            "'graphs.0'.*unknown graph",
        ),
        ("benchmarks: {egodyn: {data: d}}\ngraphs: [nomodule:build]\n", "'graphs.0'.*nomodule"),
        (
            "benchmarks: {egodyn: {data: d}}\ngraphs: [egodyn.oracle, egodyn.measured]\n"
            "options: {num_frames: 6}\n",
            "'graphs.0'.*graph egodyn.oracle has no option 'num_frames'",
        ),
        (
            "benchmarks: {egodyn: {data: d}}\n"
            "graphs: [{graph: egodyn.measured, options: {num_frames: [6, x]}}]\n",
            "'graphs.0'.*option num_frames: expected",
        ),
        (
            "benchmarks: {egodyn: {data: d}}\ngraphs: [egodyn.vision]\nmodels: [a:b]\nrun: {concurrency: x}",
            "field 'run.concurrency'",
        ),
        ("benchmarks: {egodyn: {data: d}\ngraphs: [", "sweep.yaml:"),
        ("benchmarks: {egodyn: {data: d}}\ngraphs: [egodyn.vision, egodyn.vision]\nmodels: [a:b]\n", "share"),
        (
            "benchmarks: {egodyn: {data: d}}\ngraphs: [egodyn.vision]\n"
            "models: [{model: a:b, roles: {answerer: a:c}}]\n",
            "'models.0'.*no graph of the sweep has model role 'answerer'",
        ),
        (
            "benchmarks: {autodridm: {data: d}}\ngraphs: [autodridm.explained]\nmodels: [a:b]\n",
            "'graphs.0'.*needs --role analyzer=PROVIDER:MODEL",
        ),
        (
            "benchmarks: {egodyn: {data: d}}\ngraphs: [egodyn.oracle]\npairs: every\n",
            "field 'pairs': Input should be 'first', 'all' or '2x2'",
        ),
        (
            "benchmarks: {egodyn: {data: d}}\ngraphs: [egodyn.oracle, egodyn.measured]\npairs: 2x2\n",
            "field 'pairs': pairs 2x2 needs 4 runs per benchmark \\(neither, A, B, both\\); egodyn has 2",
        ),
    ],
)
def test_bad_sweep_files_name_file_and_field(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(DataError, match=message) as info:
        expand(load_sweep(path), tmp_path / "out", path)
    assert str(path) in str(info.value)


def test_a_models_roles_go_to_the_graphs_that_have_them(tmp_path):
    path = write(
        tmp_path,
        """
        benchmarks: {egodyn: {data: e}, tad: {data: t}}
        graphs: [egodyn.vision, tad.scene_cot]
        models:
          - vllm:vl
          - {model: vllm:vl, roles: {answerer: vllm:llm}}
          - {model: vllm:vl, roles: {answerer: {model: vllm:big, base_url: "http://b:1/v1"}}}
        """,
    )
    runs = expand(load_sweep(path), tmp_path / "out", path)
    assert [r.name for r in runs] == [
        "egodyn.vision__vllm-vl",
        "tad.scene_cot__vllm-vl",
        "tad.scene_cot__vllm-vl__answerer=vllm-llm",
        "tad.scene_cot__vllm-vl__answerer=vllm-big",
    ]
    assert runs[0].config.roles == {} and runs[1].config.roles == {}
    assert runs[2].config.roles == {"answerer": RoleModel(model="vllm:llm")}
    assert runs[3].config.roles == {"answerer": RoleModel(model="vllm:big", base_url="http://b:1/v1")}


def test_a_models_options_are_its_runs_backend_options(tmp_path):
    path = write(
        tmp_path,
        """
        benchmarks:
          egodyn: {data: data/egodyn}
        graphs: [egodyn.vision]
        models:
          - {model: "scripted:fixed", options: {responses: [left, right]}}
          - vllm:qwen
        """,
    )
    scripted, plain = (r.config for r in expand(load_sweep(path), tmp_path / "out", path))
    assert scripted.model_options == {"responses": ["left", "right"]} and plain.model_options == {}

"""`kinegraph data fetch` against a loopback Hub: all six suites end to end, resume, token, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import huggingface_hub.constants
import pytest
from typer.testing import CliRunner

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.cli import app
from kinegraph.data.fetch import RECORD_NAME
from kinegraph.data.hub_layouts import LAYOUTS
from kinegraph.run import execute
from kinegraph.rundir import read_predictions
from kinegraph.suites import suites
from kinegraph.types import RunConfig
from tests.data.hub_repos import SUITES, hub_repo, put_local
from tests.support.hf_hub import LoopbackHub
from tests.support.suite_runs import GRAPHS

runner = CliRunner()


def _fetch(hub: LoopbackHub, suite: str, to: Path, monkeypatch: pytest.MonkeyPatch, *extra: str):
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    return runner.invoke(app, ["data", "fetch", suite, "--to", str(to), *extra])


@pytest.mark.slow
@pytest.mark.parametrize("suite", SUITES)
def test_fetch_check_and_run_each_suite(suite: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = hub_repo(suite, tmp_path)
    folder = tmp_path / "fetched"
    with LoopbackHub(repo) as hub:
        result = _fetch(hub, suite, folder, monkeypatch)
    assert result.exit_code == 0, result.output
    assert f"fetched {repo.repo_id}@{repo.commit}" in result.output
    for name, data in repo.files.items():
        if name != "README.md":
            assert (folder / name).read_bytes() == data, name
    assert not (folder / "README.md").exists()  # outside the benchmark's allow-patterns
    record = json.loads((folder / RECORD_NAME).read_text())
    assert (record["repo_id"], record["commit"], record["revision"]) == (repo.repo_id, repo.commit, "main")
    assert record["allow_patterns"] == list(LAYOUTS[suite].allow_patterns)
    loader_options = put_local(suite, tmp_path, folder)

    checked = runner.invoke(app, ["data", "check", suite, str(folder)])
    assert checked.exit_code == 0, checked.output
    assert checked.output.startswith("ok: ")

    data = LAYOUTS[suite].loader_path(folder)
    n_samples = len(suites.get(suite).load(data, **loader_options))
    graph, options = GRAPHS[suite]
    with OpenAILoopback(responder=lambda body: "<answer>A</answer>") as model:
        config = RunConfig(
            benchmark=suite,
            graph=graph,
            model="vllm:loopback-vlm",
            base_url=model.base_url,
            data=str(data),
            out_dir=str(tmp_path / "run"),
            use_cache=False,
            options=options,
            loader_options=loader_options,
        )
        execute(config, show_progress=False)
    predictions = read_predictions(tmp_path / "run" / "predictions.jsonl")
    assert n_samples > 0
    assert sorted(p.sample_id for p in predictions) == sorted(
        s.id for s in suites.get(suite).load(data, **loader_options)
    )


def test_a_dropped_connection_resumes_with_a_range_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # small read chunks, so the bytes before the drop reach the .incomplete file (default: 10 MB chunks)
    monkeypatch.setattr(huggingface_hub.constants, "DOWNLOAD_CHUNK_SIZE", 64)
    repo = hub_repo("dsi", tmp_path)
    dropped = "metadatas/std.csv"
    size = len(repo.files[dropped])
    with LoopbackHub(repo, drop_once=(dropped,)) as hub:
        result = _fetch(hub, "dsi", tmp_path / "dsi", monkeypatch)
        gets = [s for s in hub.seen if s.method == "GET" and s.path.endswith(dropped)]
    assert result.exit_code == 0, result.output
    assert len(gets) == 2
    first, second = gets
    assert "range" not in {k.lower() for k in first.headers}
    ranges = [v for k, v in second.headers.items() if k.lower() == "range"]
    assert len(ranges) == 1 and ranges[0].startswith("bytes=") and ranges[0].endswith("-")
    resumed_at = int(ranges[0][len("bytes=") : -1])
    assert 0 < resumed_at <= size // 2
    assert (tmp_path / "dsi" / dropped).read_bytes() == repo.files[dropped]


def test_hf_token_is_sent_to_a_gated_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = hub_repo("autodridm", tmp_path)
    with LoopbackHub(repo, token="hf_secret") as hub:
        monkeypatch.delenv("HF_TOKEN", raising=False)
        refused = _fetch(hub, "autodridm", tmp_path / "a", monkeypatch)
        monkeypatch.setenv("HF_TOKEN", "hf_secret")
        fetched = _fetch(hub, "autodridm", tmp_path / "b", monkeypatch)
    assert refused.exit_code == 2
    assert refused.output.strip().splitlines() == [
        f"error: {hub.endpoint}/datasets/{repo.repo_id}@main: the Hub answered HTTP 401 "
        "(set HF_TOKEN for gated or private repos)"
    ]
    assert fetched.exit_code == 0, fetched.output
    assert (tmp_path / "b" / "Object-1.json").read_bytes() == repo.files["Object-1.json"]


def test_a_revision_is_pinned_to_its_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = hub_repo("autodridm", tmp_path)
    with LoopbackHub(repo) as hub:
        result = _fetch(hub, "autodridm", tmp_path / "a", monkeypatch, "--revision", repo.commit)
        missing = _fetch(hub, "autodridm", tmp_path / "b", monkeypatch, "--revision", "v9")
        resolves = [s.path for s in hub.seen if "/resolve/" in s.path]
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "a" / RECORD_NAME).read_text())["commit"] == repo.commit
    assert resolves and all(f"/resolve/{repo.commit}/" in p for p in resolves)
    assert missing.exit_code == 2
    assert "@v9: the Hub answered HTTP 404" in missing.output


def test_nuscenes_prints_what_to_download_and_where() -> None:
    result = runner.invoke(app, ["data", "fetch", "nuscenes"])
    assert result.exit_code == 0
    assert "v1.0-trainval_meta.tgz" in result.output
    assert "v1.0-trainval01_blobs.tgz" in result.output
    assert "ROOT/samples/CAM_FRONT" in result.output and "DIR/nuscenes" in result.output

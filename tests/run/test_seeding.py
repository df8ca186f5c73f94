"""A run's seed end to end against loopback models: on the wire where the provider takes one, recorded as
not sent (and warned about) where it does not, a cache entry per seed, and part of what a resume checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kinegraph.agents import get_backend
from kinegraph.agents.loopback import AnthropicLoopback, OpenAILoopback
from kinegraph.run import execute
from kinegraph.rundir import RunDirTaken
from kinegraph.types import RunConfig
from tests.support.run_data import write_egodyn_world
from tests.support.text_reader_model import text_reader

LIMIT = 2


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_egodyn_world(tmp_path_factory.mktemp("egodyn"), n_clips=1)


def _config(world: Path, out: Path, **fields) -> RunConfig:
    fields.setdefault("use_cache", False)
    return RunConfig(
        benchmark="egodyn", graph="egodyn.vision", data=str(world), out_dir=str(out), limit=LIMIT, **fields
    )


def _run_json(out: Path) -> dict:
    return json.loads((out / "run.json").read_text())


def test_the_seed_reaches_an_openai_compatible_model_and_run_json(world, tmp_path, capfd):
    with OpenAILoopback(responder=text_reader) as server:
        execute(
            _config(world, tmp_path / "run", model="vllm:m", base_url=server.base_url, seed=3),
            show_progress=False,
        )
    assert [r.body["seed"] for r in server.requests] == [3] * LIMIT
    info = _run_json(tmp_path / "run")
    assert info["config"]["seed"] == 3 and info["seed_sent"] == {"backend": True}
    assert "warning" not in capfd.readouterr().err


def test_without_a_seed_none_is_sent_and_run_json_says_so(world, tmp_path):
    with OpenAILoopback(responder=text_reader) as server:
        execute(
            _config(world, tmp_path / "run", model="vllm:m", base_url=server.base_url), show_progress=False
        )
    assert all("seed" not in r.body for r in server.requests)
    info = _run_json(tmp_path / "run")
    assert info["config"]["seed"] is None and info["seed_sent"] == {"backend": False}


def test_anthropic_records_the_seed_as_not_sent_with_one_warning(world, tmp_path, capfd):
    with AnthropicLoopback(responder=lambda body: "A") as server:
        config = _config(
            world,
            tmp_path / "run",
            model="anthropic:claude-sonnet-4-6",
            base_url=server.base_url,
            model_options={"api_key": "sk-ant-test"},
            seed=3,
        )
        execute(config, show_progress=False)
    assert len(server.requests) == LIMIT and all("seed" not in r.body for r in server.requests)
    assert _run_json(tmp_path / "run")["seed_sent"] == {"backend": False}
    warnings = [line for line in capfd.readouterr().err.splitlines() if line.startswith("warning")]
    assert warnings == [
        "warning: seed 3 is not sent to anthropic:claude-sonnet-4-6 (the provider takes no sampling seed); "
        "run.json records seed_sent false"
    ]


def test_runs_with_seeds_0_and_1_use_different_cache_entries(world, tmp_path):
    cache = str(tmp_path / "cache.sqlite")
    with OpenAILoopback(responder=text_reader) as server:
        for seed, out in ((0, "seed0"), (1, "seed1"), (0, "seed0-again")):
            config = _config(
                world,
                tmp_path / out,
                model="vllm:m",
                base_url=server.base_url,
                seed=seed,
                use_cache=True,
                cache=cache,
            )
            execute(config, show_progress=False)
    # seed 1 is asked anew although seed 0's answers are stored; seed 0 again is answered from the cache
    assert [r.body["seed"] for r in server.requests] == [0] * LIMIT + [1] * LIMIT
    assert _run_json(tmp_path / "seed0-again")["totals"]["usage"]["cached_requests"] == LIMIT


def test_resuming_with_another_seed_is_refused(world, tmp_path):
    with OpenAILoopback(responder=text_reader) as server:
        execute(
            _config(world, tmp_path / "run", model="vllm:m", base_url=server.base_url, seed=0),
            show_progress=False,
        )
        with pytest.raises(RunDirTaken, match="seed 0 there, 1 asked"):
            execute(_config(world, tmp_path / "run", model="vllm:m", base_url=server.base_url, seed=1))


def test_a_run_recorded_before_seeds_were_sent_resumes_without_a_seed(world, tmp_path):
    out = tmp_path / "run"
    with OpenAILoopback(responder=text_reader) as server:
        execute(_config(world, out, model="vllm:m", base_url=server.base_url), show_progress=False)
        info = _run_json(out)
        del info["seed_sent"]
        info["config"]["seed"] = 0  # what every run.json held while the seed reached nothing
        (out / "run.json").write_text(json.dumps(info))
        summary = execute(_config(world, out, model="vllm:m", base_url=server.base_url), show_progress=False)
    assert summary.n_new == 0 and len(server.requests) == LIMIT


def test_a_backend_given_in_process_must_send_the_runs_seed(world, tmp_path):
    with OpenAILoopback(responder=text_reader) as server:
        unseeded = get_backend("vllm:m", base_url=server.base_url, cache=False)
        with pytest.raises(ValueError, match=r"sends no seed but the run's seed is 3: .*seed=3\)"):
            execute(_config(world, tmp_path / "a", seed=3), backend=unseeded, show_progress=False)
        seeded = get_backend("vllm:m", base_url=server.base_url, cache=False, seed=3)
        execute(_config(world, tmp_path / "b", seed=3), backend=seeded, show_progress=False)
    assert [r.body["seed"] for r in server.requests] == [3] * LIMIT


def test_a_seed_that_changes_nothing_is_said(world, tmp_path, capfd):
    config = _config(world, tmp_path / "run", seed=3).model_copy(update={"graph": "egodyn.oracle"})
    execute(config, show_progress=False)
    assert _run_json(tmp_path / "run")["seed_sent"] == {}
    assert (
        "warning: seed 3 changes nothing here: graph egodyn.oracle runs no model and has no seed option"
        in (capfd.readouterr().err)
    )

"""Spending limits stop before the budget is crossed; `run --dry-run` prints the worst case, sends nothing."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from typer.testing import CliRunner

from kinegraph.agents import GenerateRequest, Message, encode_image, user_message
from kinegraph.agents.estimate import image_tokens, input_tokens
from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.cli import app
from kinegraph.run import execute as run
from kinegraph.rundir import read_predictions
from kinegraph.types import RunConfig
from tests.support.run_data import write_egodyn_world
from tests.support.text_reader_model import text_reader


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return write_egodyn_world(tmp_path_factory.mktemp("egodyn"), n_clips=4)


@pytest.fixture
def prices(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text("openai:\n  loopback-vlm: {input: 1000, output: 1000}\n")
    return path


def test_prompt_token_estimate_leans_high():
    request = GenerateRequest(messages=[Message(role="system", content="abcdef"), user_message("xyz")])
    assert input_tokens(request) == 3  # 9 characters at 3 per token
    small = encode_image(np.zeros((48, 64, 3), dtype=np.uint8))
    large = encode_image(np.zeros((900, 1600, 3), dtype=np.uint8))
    assert (image_tokens(small), image_tokens(large)) == (85, 1600)  # 3,072 px -> floor; 1.44 Mpx -> cap
    assert image_tokens(small.model_copy(update={"width": None})) == 1600  # unknown size: the cap
    assert (
        input_tokens(GenerateRequest(messages=[user_message("xyz", [np.zeros((48, 64, 3), np.uint8)])])) == 86
    )


def test_max_cost_stops_before_the_budget_is_crossed(world, tmp_path, prices):
    # each answer costs (500 + 1) tokens x $1000/Mtok = $0.501: the 56 questions would cost $28.06
    with OpenAILoopback(responder=text_reader, usage=(500, 1)) as server:
        config = RunConfig(
            benchmark="egodyn",
            graph="egodyn.vision",
            model="openai:loopback-vlm",
            base_url=server.base_url,
            data=str(world),
            out_dir=str(tmp_path / "run"),
            concurrency=16,
            use_cache=False,
            max_cost_usd=3.0,
            model_options={"api_key": "k", "prices": str(prices)},
        )
        summary = run(config, show_progress=False)
    assert 1 <= server.received and server.received * 0.501 <= 3.0
    assert summary.status == "budget_exceeded" and summary.usage.cost_usd <= 3.0
    statuses = Counter(p.status for p in read_predictions(tmp_path / "run" / "predictions.jsonl"))
    assert statuses["ok"] == server.received and set(statuses) == {"ok", "budget_exceeded"}
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["status"] == "budget_exceeded" and info["totals"]["error_rate"] > 0


def test_dry_run_prints_the_worst_case_and_sends_nothing(world, tmp_path, prices):
    out = tmp_path / "run"
    args = ["run", "egodyn", "--graph", "egodyn.vision", "--model", "openai:loopback-vlm"]
    args += ["--data", str(world), "--out", str(out), "--dry-run", "--model-option", f"prices={prices}"]
    result = CliRunner().invoke(app, args)  # no API key, no server: nothing is sent
    assert result.exit_code == 0, result.output
    estimate = json.loads(result.stdout)
    assert estimate["questions"] == 56 and estimate["requests"] == 56  # one request per question
    assert estimate["max_output_tokens"] == 56 * 256  # egodyn.vision asks for at most 256 tokens
    assert estimate["input_tokens"] > 56 * 85  # at least one frame per request
    expected = (estimate["input_tokens"] + estimate["max_output_tokens"]) * 1000 / 1e6
    assert estimate["worst_case_cost_usd"] == pytest.approx(expected)
    assert not out.exists()


def test_dry_run_of_a_graph_without_a_model_costs_nothing(world, tmp_path):
    args = ["run", "egodyn", "--graph", "egodyn.oracle", "--data", str(world), "--out", str(tmp_path / "r")]
    result = CliRunner().invoke(app, [*args, "--dry-run"])
    assert result.exit_code == 0, result.output
    estimate = json.loads(result.stdout)
    assert (estimate["questions"], estimate["requests"], estimate["worst_case_cost_usd"]) == (56, 0, 0.0)

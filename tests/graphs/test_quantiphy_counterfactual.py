"""QuantiPhy counterfactual priors end to end: the alpha family written by the CLI, run through
`kinegraph run` against loopback VLMs that read only the prompt, and re-scored by `kinegraph evaluate`.

A prior-faithful model scales the true answer by the prior it is given; a prior-ignoring one answers
the true value. Scored on alt_posterior (alpha * y, the paper's protocol) the first is perfect and the
second is not; scored on the unscaled truth it would be the other way round.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.report import compare
from kinegraph.suites import suites
from tests.support.text_reader_model import prompt_text

NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """15 questions over 4 videos, all four categories (S2, D2, S3, D3)."""
    return suites.get("quantiphy").generate(tmp_path_factory.mktemp("qp_cf"), n=4, seed=1)


def _phrase(prior: str) -> str:
    return prior[: max(prior.rfind("="), prior.rfind("~"))].strip()


def _truths(world: Path) -> dict[tuple[str, str], tuple[float, float]]:
    """(prior phrase, question) -> (true prior value, true answer), read from the world's own CSV."""
    rows = pd.read_csv(world / "quantiphy_validation.csv", keep_default_na=False)
    truth = {}
    for _, r in rows.iterrows():
        value = re.search(NUMBER, r["ground_truth_prior"][len(_phrase(r["ground_truth_prior"])) :])
        truth[(_phrase(r["ground_truth_prior"]), r["question"])] = (
            float(value.group(1)),
            float(r["ground_truth_posterior"]),
        )
    assert len(truth) == len(rows)  # every question is told apart by its prior phrase and text
    return truth


def model(world: Path, faithful: bool) -> Callable[[dict[str, Any]], str]:
    """A VLM reading the prompt's prior: faithful answers y * given / true prior, ignoring answers y."""
    truth = _truths(world)

    def respond(body: dict[str, Any]) -> str:
        text = prompt_text(body)
        for (phrase, question), (prior, answer) in truth.items():
            given = re.search(re.escape(f"Given that {phrase}") + r"\s*[=~]\s*" + NUMBER, text)
            if given and question in text:
                return f"{answer * float(given.group(1)) / prior if faithful else answer:.6g} m"
        return "I cannot tell."

    return respond


def _run(kinegraph: Any, data: Path, out: Path, server: OpenAILoopback) -> dict[str, Any]:
    kinegraph(
        "run", "quantiphy", "--graph", "quantiphy.counterfactual", "--model", "vllm:loopback",
        "--base-url", server.base_url, "--data", data, "--out", out, "--no-cache", "--no-progress",
        "-O", "max_frames=2",
    )  # fmt: skip
    return json.loads((out / "metrics.json").read_text())


def _evaluate(kinegraph: Any, *args: Any) -> dict[str, Any]:
    row = pd.read_csv(io.StringIO(kinegraph("evaluate", "quantiphy", *args).stdout)).iloc[0]
    return row.to_dict()


def test_prior_faithful_scores_one_and_prior_ignoring_scores_low(world, tmp_path, kinegraph):
    kinegraph(
        "data", "quantiphy-counterfactual", "--from", world / "quantiphy_validation.csv", "--out", tmp_path
    )
    data = tmp_path / "quantiphy_counterfactual.csv"
    assert len(pd.read_csv(data)) == 15 * 10  # one row per question per alpha
    metrics = {}
    for name, faithful in (("faithful", True), ("ignoring", False)):
        with OpenAILoopback(responder=model(world, faithful)) as server:
            metrics[name] = _run(kinegraph, data, tmp_path / name, server)
        assert metrics[name]["invalid_percentage"] == 0.0
    assert metrics["faithful"]["mra_average"] == 1.0
    # y against alpha * y: only alpha = 5 (relative error 0.8) passes one threshold of ten
    assert metrics["ignoring"]["mra_average"] < 0.05
    for name in ("faithful", "ignoring"):
        official = tmp_path / name / "official" / "quantiphy_predictions.csv"
        for args in ((official,), (official, "--ground-truth", data)):
            row = _evaluate(kinegraph, *args)
            for key in ("mra_S2", "mra_D2", "mra_S3", "mra_D3", "mra_average", "invalid_percentage"):
                assert row[key] == pytest.approx(metrics[name][key], abs=1e-12), (name, args, key)
    # reports rebuild the truth from the predictions: the same alpha * y
    comparison = compare([tmp_path / "faithful", tmp_path / "ignoring"], n_boot=50)
    assert comparison.deltas[1].delta == pytest.approx(metrics["ignoring"]["mra_average"] - 1.0)
    # the same file scored on the unscaled truth (no alt_posterior) is what the paper does not do
    plain = pd.read_csv(tmp_path / "ignoring" / "official" / "quantiphy_predictions.csv")
    plain.drop(columns=["prior_used", "alt_posterior"]).to_csv(tmp_path / "as_v3.csv", index=False)
    assert _evaluate(kinegraph, tmp_path / "as_v3.csv")["mra_average"] == 1.0


@pytest.mark.parametrize(
    ("drop", "missing"),
    [(("alt_prior", "alt_posterior"), "alt_prior"), (("alt_posterior",), "alt_posterior")],
)
def test_a_set_without_its_counterfactual_column_is_refused_in_one_line(
    world, tmp_path, kinegraph, drop, missing
):
    kinegraph(
        "data", "quantiphy-counterfactual", "--from", world / "quantiphy_validation.csv", "--out", tmp_path
    )
    data = tmp_path / "without.csv"
    pd.read_csv(tmp_path / "quantiphy_counterfactual.csv").drop(columns=list(drop)).to_csv(data, index=False)
    with OpenAILoopback(responder=model(world, True)) as server:
        result = kinegraph(
            "run", "quantiphy", "--graph", "quantiphy.counterfactual", "--model", "vllm:loopback",
            "--base-url", server.base_url, "--data", data, "--out", tmp_path / "run", "--no-progress",
            expect=2,
        )  # fmt: skip
        assert server.requests == []  # refused before any model call
    lines = result.stderr.strip().splitlines()
    graph = "graph quantiphy.counterfactual"
    assert lines == [f"error: {data}: field '{missing}': column missing: {graph} reads it from every row"]

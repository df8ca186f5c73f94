"""One real run per suite on its small synthetic world, answered by a noisy text-only loopback VLM.

The noise (a hash of the prompt picks: the suite's reader, a random choice, or an unparsable reply) gives
each per-question / per-task entry a mix of right, wrong and unparsed answers, so official scores differ
from item to item and from seed to seed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.benchmarks.egodyn.questions import QUESTION_BANK
from kinegraph.benchmarks.stsbench.world import write_stsbench_world
from kinegraph.benchmarks.tad.world import write_tad_world
from kinegraph.run import execute as run
from kinegraph.suites import suites
from kinegraph.types import RunConfig
from tests.support.run_data import write_egodyn_world
from tests.support.suite_readers import autodridm_reader, dsi_reader, stsbench_reader, tad_reader
from tests.support.text_reader_model import prompt_text, text_reader

SUITES = ("egodyn", "quantiphy", "tad", "stsbench", "dsi", "autodridm")
EGODYN_WORDS = sorted({c for q in QUESTION_BANK for c in (q.choices or [])})
LETTERS = "ABCD"


def _hash(text: str, seed: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}|{text}".encode()).digest()[:8], "big")


def _quantiphy_reader(world: Path) -> Callable[[dict[str, Any]], str]:
    """Answers the ground truth scaled by a hashed factor (the test reads the world's answers)."""
    rows = pd.read_csv(world / "quantiphy_validation.csv", keep_default_na=False)
    truth = {
        (r["ground_truth_prior"], r["question"]): float(r["ground_truth_posterior"])
        for _, r in rows.iterrows()
    }

    def reader(body: dict[str, Any]) -> str:
        text = prompt_text(body)
        gt = next((v for (prior, q), v in truth.items() if prior in text and q in text), 5.0)
        return f"{gt * (0.97, 1.15, 1.35, 1.8)[_hash(text, 7) % 4]:.3f} m"

    return reader


def noisy(
    reader: Callable[[dict[str, Any]], str], alternative: Callable[[int], str], seed: int
) -> Callable[[dict[str, Any]], str]:
    """Half the reader's answer, a quarter a hashed alternative, a quarter an unparsable reply."""

    def respond(body: dict[str, Any]) -> str:
        h = _hash(prompt_text(body), seed)
        if h % 4 == 0:
            return "I cannot tell from this."
        if h % 4 == 1:
            return alternative(h // 4)
        return reader(body)

    return respond


def _world(suite: str, root: Path) -> tuple[str, dict[str, Any]]:
    """(data path, loader options) of the suite's world under `root`."""
    if suite == "egodyn":
        return str(write_egodyn_world(root, n_clips=12)), {}
    if suite == "tad":
        tad, nus = write_tad_world(root, n_scenes=6, seed=0)
        return str(tad), {"nuscenes_root": str(nus)}
    if suite == "stsbench":
        path = write_stsbench_world(root, n_records=24, seed=0)
        return str(path), {"data_root": str(path.parent)}
    n = {"quantiphy": 6, "dsi": 15, "autodridm": 20}[suite]
    path = suites.get(suite).generate(root, n=n, seed=0)
    return str(path / "quantiphy_validation.csv" if suite == "quantiphy" else path), {}


GRAPHS = {
    "egodyn": ("egodyn.trajectory", {"encoding": "timeseries"}),
    "quantiphy": ("quantiphy.prior_only", {}),
    "tad": ("tad.tcogmap", {}),
    "stsbench": ("stsbench.tcogmap", {}),
    "dsi": ("dsi.tools", {"max_attempts": 2}),
    "autodridm": ("autodridm.tools", {}),
}


def suite_run(suite: str, root: Path, seeds: tuple[int, ...] = (0,)) -> list[Path]:
    """Write the suite's world under `root` and one run per noise seed; returns the run directories."""
    data, loader_options = _world(suite, root / "world")
    readers = {
        "egodyn": text_reader,
        "quantiphy": _quantiphy_reader(Path(data).parent) if suite == "quantiphy" else None,
        "tad": tad_reader,
        "stsbench": stsbench_reader,
        "dsi": dsi_reader,
        "autodridm": autodridm_reader,
    }
    alternatives = {
        "egodyn": lambda h: EGODYN_WORDS[h % len(EGODYN_WORDS)],
        "quantiphy": lambda h: f"{h % 40 / 4:.2f} m",
        "tad": lambda h: LETTERS[h % 4],
        "stsbench": lambda h: LETTERS[h % 4],
        "dsi": lambda h: f"<answer>{LETTERS[h % 4]}</answer>",
        "autodridm": lambda h: f"<answer>{LETTERS[h % 4]}</answer>",
    }
    graph, options = GRAPHS[suite]
    out = []
    for seed in seeds:
        with OpenAILoopback(responder=noisy(readers[suite], alternatives[suite], seed)) as server:
            config = RunConfig(
                benchmark=suite,
                graph=graph,
                model="vllm:loopback-vlm",
                base_url=server.base_url,
                data=data,
                out_dir=str(root / f"run{seed}"),
                concurrency=16,
                use_cache=False,
                options=options,
                loader_options=loader_options,
            )
            run(config, show_progress=False)
        out.append(Path(config.out_dir))
    return out

"""The editable price table: lookup rules, override by env var or path, clear errors for bad files."""

from __future__ import annotations

import pytest

from kinegraph.agents.pricing import PriceTable
from kinegraph.errors import DataError


def test_exact_name_then_longest_glob():
    table = PriceTable.load()
    assert table.price("openai", "gpt-4o").input_usd_per_mtok == 2.5
    assert table.price("openai", "gpt-4o-mini-2024-07-18").input_usd_per_mtok == 0.15
    assert table.price("openai", "gpt-5-mini").output_usd_per_mtok == 2.0
    assert table.price("google", "gemini-2.5-flash-lite").input_usd_per_mtok == 0.10
    assert table.cost_usd("anthropic", "claude-sonnet-4-6", 1_000_000, 100_000) == pytest.approx(3.0 + 1.5)


def test_unlisted_models_cost_zero_local_ones_silently():
    table = PriceTable.load()
    assert table.cost_usd("vllm", "Qwen/Qwen2.5-VL-7B-Instruct", 10**6, 10**6) == 0.0
    with pytest.warns(UserWarning, match="no price for openai:my-finetune"):
        assert table.cost_usd("openai", "my-finetune", 10**6, 0) == 0.0


def test_override_by_env_and_path(tmp_path, monkeypatch):
    custom = tmp_path / "prices.yaml"
    custom.write_text("vllm:\n  qwen*: {input: 0.5, output: 1.0}\n")
    monkeypatch.setenv("KINEGRAPH_PRICES", str(custom))
    assert PriceTable.load().cost_usd("vllm", "qwen2.5-vl", 2_000_000, 0) == pytest.approx(1.0)
    other = tmp_path / "other.yaml"
    other.write_text("vllm:\n  qwen*: {input: 2, output: 1}\n")
    assert PriceTable.load(other).cost_usd("vllm", "qwen", 10**6, 0) == pytest.approx(2.0)


def test_bad_table_names_file_and_field(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("openai:\n  gpt-4o: {input: 2.5}\n")
    with pytest.raises(DataError, match=r"bad.yaml: field 'openai.gpt-4o'"):
        PriceTable.load(bad)

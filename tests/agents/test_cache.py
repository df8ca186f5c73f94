"""The SQLite response cache: hits, misses on different image bytes, bypass, location, concurrent writers."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading

import numpy as np

from kinegraph.agents import GenerateRequest, GenerateResponse, get_backend, user_message
from kinegraph.agents.cache import ResponseCache, request_key
from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.types import Usage
from tests.support.event_loop import run


def _ask(backend, frames, text="Turning?"):
    return run(backend.generate(GenerateRequest(messages=[user_message(text, frames)])))


def test_second_identical_call_hits_the_cache_and_different_image_bytes_miss(frames, tmp_path):
    cache = tmp_path / "responses.sqlite"
    with OpenAILoopback(responder=lambda body: "left", usage=(50, 1)) as server:
        backend = get_backend("vllm:m", base_url=server.base_url, cache=cache)
        first = _ask(backend, frames)
        second = _ask(backend, frames)
        assert len(server.requests) == 1
        assert (first.cached, second.cached, second.text) == (False, True, "left")
        assert second.usage == Usage(cached_requests=1)
        changed = frames.copy()
        changed[0, 0, 0, 0] ^= 0xFF  # one pixel -> different JPEG bytes
        third = _ask(backend, changed)
        assert third.cached is False and len(server.requests) == 2
        # a new backend object on the same file (a rerun of a finished run) makes zero requests
        rerun = get_backend("vllm:m", base_url=server.base_url, cache=cache)
        assert _ask(rerun, frames).cached and _ask(rerun, changed).cached
        assert len(server.requests) == 2
    assert backend.usage.requests == 2 and backend.usage.cached_requests == 1
    assert backend.usage.input_tokens == 100


def test_no_cache_bypasses_and_env_sets_the_default_location(frames, tmp_path, monkeypatch):
    with OpenAILoopback() as server:
        off = get_backend("vllm:m", base_url=server.base_url, cache=False)
        _ask(off, frames)
        _ask(off, frames)
        assert len(server.requests) == 2 and off.cache is None
        monkeypatch.setenv("KINEGRAPH_CACHE", str(tmp_path / "env.sqlite"))
        default = get_backend("vllm:m", base_url=server.base_url)
        assert default.cache is not None and default.cache.path == tmp_path / "env.sqlite"


def test_key_depends_on_model_parameters_and_decoding_but_not_metadata(frames):
    base = GenerateRequest(messages=[user_message("q", frames)], max_tokens=10)
    key = request_key("openai", "gpt-4o", {}, base)
    assert key == request_key(
        "openai", "gpt-4o", {}, base.model_copy(update={"metadata": {"sample_id": "x"}})
    )
    assert key != request_key("openai", "gpt-4o-mini", {}, base)
    assert key != request_key("anthropic", "gpt-4o", {}, base)
    assert key != request_key("openai", "gpt-4o", {"image_detail": "low"}, base)
    assert key != request_key("openai", "gpt-4o", {}, base.model_copy(update={"temperature": 0.7}))
    assert key != request_key("openai", "gpt-4o", {}, base.model_copy(update={"max_tokens": 11}))
    reordered = GenerateRequest(messages=[user_message("q", frames[::-1])], max_tokens=10)
    assert key != request_key("openai", "gpt-4o", {}, reordered)


def test_empty_answers_are_not_cached(frames, tmp_path):
    with OpenAILoopback(responder=lambda body: "") as server:
        backend = get_backend("vllm:m", base_url=server.base_url, cache=tmp_path / "c.sqlite")
        _ask(backend, frames)
        _ask(backend, frames)
    assert len(server.requests) == 2


def _write_many(path: str, prefix: str, n: int) -> None:
    cache = ResponseCache(path)
    for i in range(n):
        cache.put(f"{prefix}-{i}", "p", "m", GenerateResponse(text=f"{prefix}{i}", model="m"))


def test_concurrent_writers_threads_and_processes(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    ResponseCache(path)
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_write_many, args=(path, f"proc{i}", 100)) for i in range(3)]
    threads = [threading.Thread(target=_write_many, args=(path, f"thread{i}", 100)) for i in range(3)]
    for worker in (*processes, *threads):
        worker.start()
    for worker in (*processes, *threads):
        worker.join(timeout=120)
    assert all(p.exitcode == 0 for p in processes)
    cache = ResponseCache(path)
    assert len(cache) == 600
    assert cache.get("proc2-99").text == "proc299" and cache.get("thread0-0").text == "thread00"
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_cache_survives_several_event_loops(tmp_path):
    rng = np.random.default_rng(1)
    frames = rng.integers(0, 256, (1, 16, 16, 3), dtype=np.uint8)
    with OpenAILoopback() as server:
        backend = get_backend("vllm:m", base_url=server.base_url, cache=tmp_path / "c.sqlite")
        assert [_ask(backend, frames, str(i)).cached for i in (1, 2, 1)] == [False, False, True]

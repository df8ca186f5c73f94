"""The SQLite response cache: hits, misses on different image bytes, bypass, location, concurrent writers."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading

import numpy as np
import pytest

from kinegraph.agents import GenerateRequest, GenerateResponse, get_backend, user_message
from kinegraph.agents.cache import ResponseCache, request_key
from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.errors import DataError
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


def _fill_up(backend) -> None:
    """Cap the cache file at the pages it has: SQLite then fails every insert that needs one more page,
    with the error a full disk gives (SQLITE_FULL, "database or disk is full")."""

    def cap() -> None:
        conn = backend.cache._connect()  # the worker thread's connection, the one the backend writes through
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(sqlite3.OperationalError, match="database or disk is full"):
            conn.execute("INSERT INTO responses VALUES ('probe', 'p', 'm', ?, 0)", ("left " * 3000,))

    backend.cache._in_worker().submit(cap).result()


def test_a_full_cache_costs_no_answer_and_warns_once(frames, tmp_path, capsys):
    long_answer = "left " * 3000  # a row larger than a page: storing it needs new pages
    with OpenAILoopback(responder=lambda body: long_answer) as server:
        backend = get_backend("vllm:m", base_url=server.base_url, cache=tmp_path / "c.sqlite")
        _fill_up(backend)
        answers = [_ask(backend, frames, f"question {i}") for i in range(3)]
    assert [a.text for a in answers] == [long_answer] * 3 and len(server.requests) == 3
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, warnings
    assert "response cache" in warnings[0] and "database or disk is full" in warnings[0]


def test_a_cache_that_fails_to_read_is_a_miss_and_the_run_carries_on(frames, tmp_path, capsys):
    path = tmp_path / "c.sqlite"
    with OpenAILoopback(responder=lambda body: "right") as server:
        backend = get_backend("vllm:m", base_url=server.base_url, cache=path)
        assert _ask(backend, frames).text == "right"
        sqlite3.connect(path).execute("DROP TABLE responses")  # another process damages the file
        again = [_ask(backend, frames) for _ in range(2)]
    assert [a.text for a in again] == ["right", "right"] and not any(a.cached for a in again)
    assert len(server.requests) == 3
    err = capsys.readouterr().err
    assert err.count("warning: response cache") == 1 and "no such table: responses" in err


def test_a_stored_row_that_does_not_parse_is_a_miss(frames, tmp_path, capsys):
    path = tmp_path / "c.sqlite"
    with OpenAILoopback(responder=lambda body: "left") as server:
        backend = get_backend("vllm:m", base_url=server.base_url, cache=path)
        assert not _ask(backend, frames).cached
        with sqlite3.connect(path) as conn:  # the stored row, cut off by hand
            assert conn.execute("UPDATE responses SET response = substr(response, 1, 12)").rowcount == 1
        first = _ask(backend, frames)
        second = _ask(backend, frames)
    assert (first.text, first.cached, second.text, second.cached) == ("left", False, "left", True)
    assert len(server.requests) == 2  # the corrupt row was a miss, then replaced by the new answer
    assert capsys.readouterr().err.count("does not parse") == 1


def test_a_file_that_is_no_database_is_refused_in_one_line(tmp_path):
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"these bytes are not an SQLite database, " * 40)
    with pytest.raises(DataError) as caught:
        ResponseCache(path)
    assert str(caught.value).startswith(
        f"{path}: cannot use it as the response cache (file is not a database)"
    )
    assert "\n" not in str(caught.value)

"""Locks that freeze: a response cache another process holds write-locked is waited on with a bound in a
worker thread, then skipped with one warning; the event loop keeps serving and no answer is lost
(class "Locks that freeze")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from kinegraph.agents.cache import ResponseCache
from kinegraph.agents.loopback import OpenAILoopback
from tests.support.serving import AUTH, TURN, TURN_OPTIONS, running

HOLD = (
    "import sqlite3, sys\n"
    "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "c.execute('BEGIN EXCLUSIVE')\n"
    "print('locked', flush=True)\n"
    "sys.stdin.read()\n"
)


@pytest.mark.slow
def test_a_write_locked_cache_is_skipped_and_every_answer_kept(attack_root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "responses.sqlite"
    ResponseCache(cache)  # the file and table, in WAL mode, as a first run leaves them
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(cache)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        frames = [f"clip/frame_{i}.png" for i in range(5)]
        answers = []
        with OpenAILoopback(responder=lambda b: "left") as model:
            settings = {"data_root": attack_root, "graphs": ("egodyn.vision",), "request_timeout_s": 60}
            with running(model, cache=str(cache), **settings) as srv:
                for i in range(3):
                    body = {"question": f"{TURN} ({i})", "options": TURN_OPTIONS, "frame_paths": frames}
                    answers.append(httpx.post(srv.url + "/v1/qa", json=body, headers=AUTH, timeout=30))
                health = httpx.get(srv.url + "/healthz", timeout=30)
    finally:
        holder.communicate("", timeout=30)
    assert [r.status_code for r in answers] == [200, 200, 200], [r.text for r in answers]
    assert all(r.json()["status"] == "ok" for r in answers)
    assert health.status_code == 200
    assert model.received == 3

"""The response cache: SQLite in WAL mode, safe for concurrent threads and processes.

The key is a SHA-256 over the provider, the model, the backend's generation parameters and the exact
request (messages, with each image's bytes by digest, or by its `source` when it has one: the exact
identity of bytes made on first need, so a cached rerun decodes no frames; each video's bytes by digest;
temperature, max_tokens, schema, tools).
`metadata` is not part of the key. A rerun of a finished run is answered from here with zero requests.

The cache never costs an answer: a file that cannot be opened is refused up front; once a run is under
way a read or write that fails (a full disk, a locked or damaged file) is warned about once on stderr and
the run carries on without that half of the cache, and a stored row that does not parse is a miss.
A file another process holds write-locked is waited on for at most `BUSY_TIMEOUT_S`, then that half is
skipped the same way; backends call the cache from a worker thread, so the wait never blocks the event
loop (other questions, `/healthz`), and an answer the model gave is returned whether or not it was stored.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from kinegraph.agents.protocol import ContentPart, GenerateRequest, GenerateResponse, ImagePart, VideoPart
from kinegraph.errors import DataError

CACHE_ENV = "KINEGRAPH_CACHE"
DEFAULT_CACHE = Path("~/.cache/kinegraph/responses.sqlite")
BUSY_TIMEOUT_S = 2.0  # how long a locked cache is waited on before that half is skipped

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created_s REAL NOT NULL
)
"""


def resolve_cache_path(cache: str | Path | bool | None) -> Path | None:
    """`False` -> no cache; a path -> that file; `None`/`True` -> `$KINEGRAPH_CACHE` or the default."""
    if cache is False:
        return None
    if cache is None or cache is True:
        cache = os.environ.get(CACHE_ENV) or DEFAULT_CACHE
    return Path(cache).expanduser()


def request_key(provider: str, model: str, params: dict[str, Any], request: GenerateRequest) -> str:
    """Hex SHA-256 identifying a request; images enter by their `source` or the digest of their bytes,
    videos by the digest of their bytes."""
    messages = []
    for message in request.messages:
        parts = [_part_key(p) for p in message.parts]
        entry: dict[str, Any] = {"role": message.role, "parts": parts}
        if message.tool_call_id is not None:
            entry["tool_call_id"] = message.tool_call_id
        if message.tool_calls:
            entry["tool_calls"] = [c.model_dump() for c in message.tool_calls]
        messages.append(entry)
    canonical = {
        "provider": provider,
        "model": model,
        "params": params,
        "messages": messages,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "response_schema": request.response_schema,
        "tools": [t.model_dump() for t in request.tools] if request.tools else None,
    }
    if request.attempt:
        canonical["attempt"] = request.attempt  # absent for first asks, so existing cache entries stay valid
    blob = json.dumps(canonical, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _part_key(part: ContentPart) -> dict[str, Any]:
    """What of one part enters the key (a video with how it is to be sampled)."""
    if isinstance(part, ImagePart):
        return {"image": part.source or part.sha256, "mime": part.mime_type}
    if isinstance(part, VideoPart):
        return {"video": part.sha256, "mime": part.mime_type, "fps": part.fps, "num_frames": part.num_frames}
    return {"text": part.text}


class ResponseCache:
    """Stored responses by request key. One connection per thread and process; WAL lets writers overlap."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._local = threading.local()
        self._lock = threading.Lock()
        self._failed: set[str] = set()  # "read", "write": that half is off; "parse": a row did not parse
        self._worker: tuple[int, ThreadPoolExecutor] | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._connect()  # create the file and table now, so a cache that cannot work is refused up front
        except (OSError, sqlite3.Error) as exc:
            raise DataError(
                f"cannot use it as the response cache ({_reason(exc)}); "
                "fix or remove it, or run without a cache (--no-cache)",
                path=self.path,
            ) from None

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid == os.getpid():
            return conn
        conn = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(_SCHEMA)
        self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def get(self, key: str) -> GenerateResponse | None:
        """The stored response, or None: not stored, not readable, or not parseable (all misses)."""
        if "read" in self._failed:
            return None
        try:
            row = self._connect().execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        except (OSError, sqlite3.Error) as exc:
            self._note("read", f"cannot read it ({_reason(exc)}); asking the model instead")
            return None
        if row is None:
            return None
        try:
            return GenerateResponse.model_validate_json(row[0])
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            self._note("parse", f"a stored response does not parse ({type(exc).__name__}); a miss")
            return None

    def put(self, key: str, provider: str, model: str, response: GenerateResponse) -> None:
        """Store a response; a write that fails turns writing off (the answer itself is kept by the run)."""
        if "write" in self._failed:
            return
        try:
            self._connect().execute(
                "INSERT OR REPLACE INTO responses (key, provider, model, response, created_s) "
                "VALUES (?, ?, ?, ?, ?)",
                (key, provider, model, response.model_dump_json(), time.time()),
            )
        except (OSError, sqlite3.Error) as exc:
            self._note("write", f"cannot write it ({_reason(exc)}); carrying on without storing answers")

    async def aget(self, key: str) -> GenerateResponse | None:
        """`get` in the cache's worker thread: a locked file is waited on there, never on the event loop."""
        return await asyncio.wrap_future(self._in_worker().submit(self.get, key))

    async def aput(self, key: str, provider: str, model: str, response: GenerateResponse) -> None:
        """`put` in the cache's worker thread (see `aget`)."""
        await asyncio.wrap_future(self._in_worker().submit(self.put, key, provider, model, response))

    def _in_worker(self) -> ThreadPoolExecutor:
        """One worker thread per process for the async calls: one connection; a forked child makes its own."""
        with self._lock:
            if self._worker is None or self._worker[0] != os.getpid():
                self._worker = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="kinegraph-cache"))
            return self._worker[1]

    def rows_for(self, provider: str, model: str) -> dict[str, str]:
        """Every stored response of one model as key -> response JSON (a snapshot for Ray workers)."""
        if "read" in self._failed:
            return {}
        try:
            rows = self._connect().execute(
                "SELECT key, response FROM responses WHERE provider = ? AND model = ?", (provider, model)
            )
            return dict(rows.fetchall())
        except (OSError, sqlite3.Error) as exc:
            self._note("read", f"cannot read it ({_reason(exc)}); asking the model instead")
            return {}

    def __len__(self) -> int:
        return int(self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def _note(self, what: str, message: str) -> None:
        """Record a failure: a failed read or write turns that half off. One warning for the first failed
        read or write, one for the first row that does not parse."""
        with self._lock:
            if what in self._failed:
                return
            warned = bool(self._failed & {"read", "write"}) and what != "parse"
            self._failed.add(what)
        if not warned:
            print(f"warning: response cache {self.path}: {message}", file=sys.stderr, flush=True)


def _reason(exc: BaseException) -> str:
    """An OSError's strerror or an SQLite error's text, in one line."""
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return (text.splitlines() or [type(exc).__name__])[0]

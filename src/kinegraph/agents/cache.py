"""The response cache: SQLite in WAL mode, safe for concurrent threads and processes.

The key is a SHA-256 over the provider, the model, the backend's generation parameters and the exact
request (messages, with each image's bytes by digest; temperature, max_tokens, schema, tools).
`metadata` is not part of the key. A rerun of a finished run is answered from here with zero requests.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from kinegraph.agents.protocol import GenerateRequest, GenerateResponse, ImagePart

CACHE_ENV = "KINEGRAPH_CACHE"
DEFAULT_CACHE = Path("~/.cache/kinegraph/responses.sqlite")

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
    """Hex SHA-256 identifying a request; images enter by the digest of their exact bytes."""
    messages = []
    for message in request.messages:
        parts = [
            {"image": p.sha256, "mime": p.mime_type} if isinstance(p, ImagePart) else {"text": p.text}
            for p in message.parts
        ]
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


class ResponseCache:
    """Stored responses by request key. One connection per thread and process; WAL lets writers overlap."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._connect()  # create the file and table now, so errors surface at construction

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid == os.getpid():
            return conn
        conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=60000")
        conn.execute(_SCHEMA)
        self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def get(self, key: str) -> GenerateResponse | None:
        row = self._connect().execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else GenerateResponse.model_validate_json(row[0])

    def put(self, key: str, provider: str, model: str, response: GenerateResponse) -> None:
        self._connect().execute(
            "INSERT OR REPLACE INTO responses (key, provider, model, response, created_s) "
            "VALUES (?, ?, ?, ?, ?)",
            (key, provider, model, response.model_dump_json(), time.time()),
        )

    def rows_for(self, provider: str, model: str) -> dict[str, str]:
        """Every stored response of one model as key -> response JSON (a snapshot for Ray workers)."""
        rows = self._connect().execute(
            "SELECT key, response FROM responses WHERE provider = ? AND model = ?", (provider, model)
        )
        return dict(rows.fetchall())

    def __len__(self) -> int:
        return int(self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

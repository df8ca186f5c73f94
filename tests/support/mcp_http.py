"""`kinegraph mcp --transport http` in a child process on a free loopback port, for the MCP tests."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def mcp_over_http(data_root: Path, *options: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """The MCP endpoint URL once the server listens (a bounded poll, not a timed assertion)."""
    port = free_port()
    args = ["mcp", "--data-root", str(data_root), "--transport", "http", "--port", str(port), *options]
    command = [sys.executable, "-m", "kinegraph.cli", *args]
    process = subprocess.Popen(command, env={**os.environ, **(env or {})})
    try:
        for _ in range(300):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)

"""Run the app with uvicorn: in the foreground (`kinegraph serve`) or on a background thread.

Both refuse a non-loopback host when no API keys are configured.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from typing import Any

import uvicorn

from kinegraph.serve.settings import ServeSettings, check_bind


def serve(
    settings: ServeSettings, host: str = "127.0.0.1", port: int = 8000, log_level: str = "info"
) -> None:
    """Serve until interrupted."""
    from kinegraph.serve.app import create_app

    check_bind(host, settings)
    app = create_app(settings)  # bad settings (an unknown graph) are refused before anything is printed
    if not settings.auth_enabled:
        sys.stderr.write("no API keys configured: authentication is off and only loopback may connect\n")
    uvicorn.run(
        app, host=host, port=port, log_level=log_level, server_header=False, **proxy_options(settings)
    )


def proxy_options(settings: ServeSettings) -> dict[str, Any]:
    """uvicorn's forwarded-header options: trusted only from `settings.forwarded_allow_ips`.

    uvicorn's own default trusts `X-Forwarded-For` from 127.0.0.1, so any local client could name itself
    another client and escape its `--per-client` share.
    """
    ips = list(settings.forwarded_allow_ips)
    return {"proxy_headers": bool(ips), "forwarded_allow_ips": ips or None}


class BackgroundServer:
    """The app served by uvicorn on a background thread, on a free port picked by the OS::

    with BackgroundServer(settings) as server:
        httpx.get(server.url + "/healthz")
    """

    def __init__(
        self, settings: ServeSettings, *, host: str = "127.0.0.1", app: Any = None, log_level: str = "warning"
    ) -> None:
        check_bind(host, settings)
        from kinegraph.serve.app import create_app

        self.app = app if app is not None else create_app(settings)
        self.host = host
        self.port = 0
        config = uvicorn.Config(
            self.app,
            log_level=log_level,
            server_header=False,
            timeout_graceful_shutdown=5,
            **proxy_options(settings),
        )
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> BackgroundServer:
        # Bound here, before the thread starts, so the port is known and nothing else can take it.
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and
        # without it each response waits ~40 ms for a delayed ACK.
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((self.host, 0))
        self.port = self._socket.getsockname()[1]
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()

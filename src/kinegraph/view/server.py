"""The viewer's HTTP server: loopback only, the page's own files, the samples as JSON, frame thumbnails.

No route serves a path a request names: `/frame` looks the frame up in the predictions by run, sample and
position, so the page can show only what the runs recorded.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from functools import lru_cache
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from typing import Any
from urllib.parse import parse_qs, urlsplit

from kinegraph.errors import DataError
from kinegraph.view.samples import RunView, samples_payload
from kinegraph.view.thumbs import thumbnail

log = logging.getLogger("kinegraph.view")
#: The page's files (all shipped in the package) and their content types.
STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/app.css": ("app.css", "text/css; charset=utf-8"),
}


class ViewServer:
    """Serve `views` on 127.0.0.1:`port` (0: a free port) in a background thread; `url` once started."""

    def __init__(self, views: Sequence[RunView], port: int = 0) -> None:
        self.views = list(views)
        payload = json.dumps(samples_payload(self.views)).encode()
        handler = _handler(self.views, payload)
        self._server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/"

    def start(self) -> ViewServer:
        """Start serving in a daemon thread."""
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted."""
        self._server.serve_forever()

    def close(self) -> None:
        """Stop serving and free the port."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ViewServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _handler(views: list[RunView], payload: bytes) -> type[BaseHTTPRequestHandler]:
    @lru_cache(maxsize=512)
    def frame(run: int, sample: str, k: int) -> bytes:
        prediction = views[run].predictions.get(sample)
        if prediction is None or prediction.frames is None:
            raise DataError(f"run {run} has no frames for sample {sample!r}")
        return thumbnail(prediction.frames, k)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the http.server protocol)
            url = urlsplit(self.path)
            if url.path in STATIC:
                name, kind = STATIC[url.path]
                self._send(HTTPStatus.OK, (files("kinegraph.view") / "static" / name).read_bytes(), kind)
            elif url.path == "/api/samples":
                self._send(HTTPStatus.OK, payload, "application/json")
            elif url.path == "/frame":
                self._frame(parse_qs(url.query))
            else:
                self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain")

        def _frame(self, query: dict[str, list[str]]) -> None:
            try:
                run, sample, k = int(query["run"][0]), query["sample"][0], int(query["k"][0])
                if not 0 <= run < len(views):
                    raise DataError(f"no run {run}")
                body = frame(run, sample, k)
            except DataError as exc:  # before ValueError, which it is
                self._send(HTTPStatus.NOT_FOUND, str(exc).encode(), "text/plain")
            except (KeyError, ValueError) as exc:
                self._send(HTTPStatus.BAD_REQUEST, f"bad frame request: {exc}".encode(), "text/plain")
            else:
                self._send(HTTPStatus.OK, body, "image/jpeg")

        def _send(self, status: HTTPStatus, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(body)))
            self.send_header("cache-control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
            log.debug(format, *args)

    return Handler

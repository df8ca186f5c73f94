"""A loopback Hugging Face Hub: the HTTP endpoints `huggingface_hub.snapshot_download` calls for datasets.

Real HTTP on 127.0.0.1 at a free port, serving in-memory repos at one commit each:
`GET /api/datasets/{repo}/revision/{rev}` (repo info: `sha`, `siblings`),
`GET /api/datasets/{repo}/tree/{rev}[/{path}]` (the recursive file listing),
`HEAD|GET /datasets/{repo}/resolve/{rev}/{file}` (`X-Repo-Commit`, `ETag`, `Content-Length`; `Range`
answered with 206). `token` makes every repo gated (401 without `Authorization: Bearer <token>`);
`drop_once` names files whose first GET sends half the body and then closes the connection.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit


@dataclass
class HubRepo:
    """A dataset repo at one commit: path in repo -> bytes."""

    repo_id: str
    files: dict[str, bytes]
    commit: str = ""

    def __post_init__(self) -> None:
        if not self.commit:
            digest = hashlib.sha1(self.repo_id.encode())
            for name in sorted(self.files):
                digest.update(name.encode() + self.files[name])
            self.commit = digest.hexdigest()

    @classmethod
    def from_folder(cls, repo_id: str, folder: Path, prefix: str = "") -> HubRepo:
        """Every file under `folder`, at `prefix/<relative path>` in the repo."""
        files = {
            f"{prefix}{p.relative_to(folder).as_posix()}": p.read_bytes()
            for p in sorted(folder.rglob("*"))
            if p.is_file()
        }
        return cls(repo_id, files)


@dataclass
class Seen:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]


@dataclass
class _State:
    repos: dict[str, HubRepo]
    token: str | None
    drop_once: set[str]
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


_INFO = re.compile(r"^/api/datasets/([^/]+/[^/]+)/revision/([^/]+)$")
_TREE = re.compile(r"^/api/datasets/([^/]+/[^/]+)/tree/([^/]+)(/.*)?$")
_RESOLVE = re.compile(r"^/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$")


def _etag(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: _State

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
        pass

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self._serve(head=False)

    def do_HEAD(self) -> None:  # noqa: N802
        self._serve(head=True)

    def _json(self, status: int, payload: object) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str) -> None:
        body = json.dumps({"error": message}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Error-Message", message)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _repo(self, repo_id: str, revision: str) -> HubRepo | None:
        repo = self.state.repos.get(repo_id)
        if repo is None:
            self.send_response(404)
            self.send_header("X-Error-Code", "RepoNotFound")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if self.state.token and self.headers.get("Authorization") != f"Bearer {self.state.token}":
            self._error(401, "Access to this dataset is restricted.")
            return None
        if revision not in ("main", repo.commit):
            self.send_response(404)
            self.send_header("X-Error-Code", "RevisionNotFound")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        return repo

    def _serve(self, head: bool) -> None:
        path = urlsplit(self.path).path
        with self.state.lock:
            self.state.seen.append(Seen(self.command, path, dict(self.headers)))
        if match := _INFO.match(path):
            if repo := self._repo(match[1], unquote(match[2])):
                siblings = [{"rfilename": name} for name in sorted(repo.files)]
                self._json(
                    200, {"id": repo.repo_id, "sha": repo.commit, "siblings": siblings, "private": False}
                )
        elif match := _TREE.match(path):
            if repo := self._repo(match[1], unquote(match[2])):
                under = unquote(match[3] or "").strip("/")
                entries = [
                    {"type": "file", "oid": _etag(data), "size": len(data), "path": name}
                    for name, data in sorted(repo.files.items())
                    if not under or name.startswith(under + "/")
                ]
                self._json(200, entries)
        elif match := _RESOLVE.match(path):
            if repo := self._repo(match[1], unquote(match[2])):
                self._file(repo, unquote(match[3]), head)
        else:
            self._error(404, f"no route for {path}")

    def _file(self, repo: HubRepo, name: str, head: bool) -> None:
        data = repo.files.get(name)
        if data is None:
            self.send_response(404)
            self.send_header("X-Error-Code", "EntryNotFound")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        start = 0
        if (spec := self.headers.get("Range")) and (m := re.fullmatch(r"bytes=(\d+)-", spec)):
            start = int(m[1])
        part = data[start:]
        self.send_response(206 if start else 200)
        self.send_header("X-Repo-Commit", repo.commit)
        self.send_header("ETag", f'"{_etag(data)}"')
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(len(part)))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        if head:
            return
        with self.state.lock:
            drop = name in self.state.drop_once
            self.state.drop_once.discard(name)
        if drop:
            self.wfile.write(part[: len(part) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        self.wfile.write(part)


class LoopbackHub:
    """Serve `repos` on a loopback port; use as a context manager; `endpoint` is its HF_ENDPOINT."""

    def __init__(self, *repos: HubRepo, token: str | None = None, drop_once: tuple[str, ...] = ()) -> None:
        self.state = _State({r.repo_id: r for r in repos}, token, set(drop_once))
        handler = type("Handler", (_Handler,), {"state": self.state})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def seen(self) -> list[Seen]:
        with self.state.lock:
            return list(self.state.seen)

    def __enter__(self) -> LoopbackHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

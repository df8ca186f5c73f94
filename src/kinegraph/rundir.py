"""The run directory contract: run.json, an append-only predictions.jsonl, metrics.json, official/.

predictions.jsonl gets one line per finished sample, flushed as written. A process killed mid-write leaves
at most one torn last line, which `PredictionLog.open` cuts off; a rerun therefore resumes with exactly
one prediction per finished sample. One process at a time writes a run directory (`lock_run_dir`), and
a rerun resumes only the run the directory holds (`check_resumable`).
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import platform
import subprocess
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from kinegraph.atomic import write_atomic
from kinegraph.errors import DataError, UsageError
from kinegraph.types import Prediction, RunConfig, Status
from kinegraph.unicode_text import scrub_json

PREDICTIONS = "predictions.jsonl"
RUN_JSON = "run.json"
METRICS = "metrics.json"
OFFICIAL = "official"
LOCK = "run.lock"
MAX_STAMP_LINE_BYTES = 16 * 2**20  # the first prediction, read for its stamps
log = logging.getLogger(__name__)

#: The config fields a resumed run must share with the run in its directory (the rest may change).
RESUME_FIELDS = ("benchmark", "graph", "model", "roles", "data", "options", "loader_options", "seed")


class RunDirBusy(UsageError):
    """Another process is writing the run directory."""


class RunDirTaken(UsageError):
    """The run directory holds a run of another benchmark, graph, model, data or options."""


@contextmanager
def lock_run_dir(out_dir: Path) -> Iterator[None]:
    """Hold the run directory's lock while the body runs; a second writer is refused with the holder's pid.

    An OS lock (flock) on `run.lock`: the kernel drops it when the holder exits or is killed, so a
    crashed run never leaves the directory locked.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / LOCK
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES):
                raise
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise RunDirBusy(
                f"{out_dir}: another kinegraph run is writing here (pid {holder}); "
                "wait for it to end or pass another --out"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the last descriptor releases the lock


def check_resumable(config: RunConfig) -> None:
    """Refuse to resume into a directory whose run.json records another benchmark, graph, model, model
    roles, data, graph options, loader options or seed: the two runs' predictions would be mixed and
    scored as one."""
    out_dir = Path(config.out_dir)
    info = read_json(out_dir / RUN_JSON) or {}
    stored = info.get("config")
    if not isinstance(stored, dict):
        _check_orphan_predictions(config)
        return
    if "seed_sent" not in info:  # written before a run's seed was sent anywhere: its seed (0) did nothing
        stored = {**stored, "seed": None}
    asked = json.loads(json.dumps(config.model_dump(), default=str))  # as run.json holds it
    differ = [
        f"{field} {stored.get(field)!r} there, {asked[field]!r} asked"
        for field in RESUME_FIELDS
        if not _same(field, stored.get(field), asked[field])
    ]
    if differ:
        raise RunDirTaken(
            f"{out_dir}: holds another run ({'; '.join(differ)}); pass another --out, "
            "or rerun with the same settings to resume"
        )


def _check_orphan_predictions(config: RunConfig) -> None:
    """Without run.json (deleted, or lost), the predictions' own stamps must match the run asked for: a
    rerun with another benchmark, graph or model never adopts them."""
    out_dir = Path(config.out_dir)
    try:
        with (out_dir / PREDICTIONS).open("rb") as handle:
            first = handle.readline(MAX_STAMP_LINE_BYTES)
    except OSError:
        return
    try:
        record = json.loads(first)
    except ValueError:
        return  # no whole first line: nothing was kept
    if not isinstance(record, dict):
        return
    asked = {"benchmark": config.benchmark, "graph": config.graph, "model": config.model}
    differ = [
        f"{k} {record[k]!r} there, {v!r} asked" for k, v in asked.items() if k in record and record[k] != v
    ]
    if differ:
        raise RunDirTaken(
            f"{out_dir}: holds predictions of another run and no {RUN_JSON} ({'; '.join(differ)}); "
            "pass another --out, or rerun with the same settings to resume"
        )


def _same(field: str, stored: Any, asked: Any) -> bool:
    if stored == asked:
        return True
    if field == "roles":  # run.json written before roles existed holds none
        return (stored or {}) == (asked or {})
    if field == "data" and stored is not None and asked is not None:
        return Path(stored).resolve() == Path(asked).resolve()
    return False


def read_predictions(path: Path, repair: bool = False) -> list[Prediction]:
    """All predictions in a predictions.jsonl; a torn last line is dropped (and cut off if `repair`)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    lines = data.split(b"\n")
    predictions: list[Prediction] = []
    offset = 0
    for lineno, raw in enumerate(lines, start=1):
        is_last = lineno == len(lines)
        if raw.strip():
            try:
                predictions.append(Prediction.model_validate_json(raw))
            except (ValidationError, ValueError) as exc:
                torn = is_last or all(not rest.strip() for rest in lines[lineno:])
                if not torn:
                    raise DataError(
                        f"corrupt prediction line ({exc.__class__.__name__})", path=path, line=lineno
                    ) from exc
                if repair:
                    with path.open("r+b") as handle:
                        handle.truncate(offset)
                break
        offset += len(raw) + 1
    return predictions


def official_instead(path: Path) -> list[Path]:
    """The files of a run's official/ export to score instead of `path`, when `path` is that run's own
    predictions.jsonl and the export is in another format (a scorer of upstream records finds none of its
    fields in kinegraph's and scores zero); empty otherwise."""
    official = path.parent / OFFICIAL
    if not (path.is_file() and official.is_dir() and _first_record_is_a_prediction(path)):
        return []
    exported = sorted(p for p in official.iterdir() if not p.name.startswith("."))
    if any(_fields_of_a_prediction(p) for p in exported):
        return []  # the export is kinegraph's own fields (e.g. {sample_id, raw}): the log reads the same
    return exported


def _first_record_is_a_prediction(path: Path) -> bool:
    with path.open("rb") as handle:
        for raw in handle:
            if raw.strip():
                try:
                    Prediction.model_validate_json(raw)
                except ValueError:
                    return False
                return True
    return False


def _fields_of_a_prediction(path: Path) -> bool:
    """Whether the first record of a JSON-lines export holds only fields a Prediction has."""
    if path.suffix != ".jsonl" or not path.is_file():
        return False
    with path.open("rb") as handle:
        for raw in handle:
            if raw.strip():
                try:
                    record = json.loads(raw)
                except ValueError:
                    return False
                return isinstance(record, dict) and set(record) <= set(Prediction.model_fields)
    return False


def prediction_line(p: Prediction) -> str:
    """One JSON line of predictions.jsonl; a lone UTF-16 surrogate anywhere in it (a tool's text, a
    question) is written as U+FFFD, with one warning, rather than aborting the run."""
    try:
        return p.model_dump_json() + "\n"
    except PydanticSerializationError:
        clean, n = scrub_json(p.model_dump(mode="json"))
        log.warning("%s: %d lone UTF-16 surrogate(s) written as U+FFFD", p.sample_id, n)
        return Prediction.model_validate(clean).model_dump_json() + "\n"


class PredictionLog:
    """Append-only predictions.jsonl: one JSON line per sample, flushed at once, never two for one sample."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.done: dict[str, Prediction] = {}
        self._handle: TextIO | None = None

    def open(self, drop_errors: bool = False) -> PredictionLog:
        """Load what is there (repairing a torn tail); `drop_errors` rewrites it without failed samples."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        existing = read_predictions(self.path, repair=True)
        for p in existing:
            self.done.setdefault(p.sample_id, p)
        if drop_errors:
            kept = [p for p in self.done.values() if p.status in (Status.ok, Status.parse_failure)]
            self._rewrite(kept)
            self.done = {p.sample_id: p for p in kept}
        elif len(self.done) != len(existing):  # duplicates from an older tool: keep the first of each
            self._rewrite(list(self.done.values()))
        self._handle = self.path.open("a", encoding="utf-8")
        return self

    def _rewrite(self, predictions: list[Prediction]) -> None:
        write_atomic(self.path, "".join(prediction_line(p) for p in predictions))

    def append(self, predictions: Iterable[Prediction]) -> int:
        if self._handle is None:
            raise RuntimeError("PredictionLog.append before open()")
        n = 0
        try:
            with naming_the_file(self.path):
                for p in predictions:
                    if p.sample_id in self.done:
                        continue
                    self._handle.write(prediction_line(p))
                    self.done[p.sample_id] = p
                    n += 1
                self._handle.flush()
        except OSError:
            handle, self._handle = self._handle, None
            with suppress(OSError):  # closing would retry the failed write; the error raised says it all
                handle.close()
            self.done = {}  # what is done is what reached the disk (a torn last line is not)
            for p in read_predictions(self.path):
                self.done.setdefault(p.sample_id, p)
            raise
        return n

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def git_sha() -> str | None:
    """The commit of the kinegraph source tree, when it is a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in (
        "kinegraph",
        "langgraph",
        "numpy",
        "opencv-python-headless",
        "torch",
        "openai",
        "anthropic",
        "google-genai",
        "transformers",
    ):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out


def write_json(path: Path, payload: Any) -> None:
    """Write JSON atomically (a crash never leaves a half-written run.json or metrics.json)."""
    write_atomic(path, json.dumps(payload, indent=2, default=str) + "\n")


@contextmanager
def naming_the_file(path: Path) -> Iterator[None]:
    """An OSError of a write (a full disk, a file size limit) names `path`; write errors name no file."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from exc


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as exc:
        raise DataError(f"not valid JSON ({exc.msg})", path=path, line=exc.lineno) from exc

"""The run directory contract: run.json, an append-only predictions.jsonl, metrics.json, official/.

predictions.jsonl gets one line per finished sample, flushed as written. A process killed mid-write leaves
at most one torn last line, which `PredictionLog.open` cuts off; a rerun therefore resumes with exactly
one prediction per finished sample.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from kinegraph.errors import DataError
from kinegraph.types import Prediction, Status

PREDICTIONS = "predictions.jsonl"
RUN_JSON = "run.json"
METRICS = "metrics.json"
OFFICIAL = "official"


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
        tmp = self.path.with_suffix(".jsonl.tmp")
        tmp.write_text("".join(p.model_dump_json() + "\n" for p in predictions))
        os.replace(tmp, self.path)

    def append(self, predictions: Iterable[Prediction]) -> int:
        if self._handle is None:
            raise RuntimeError("PredictionLog.append before open()")
        n = 0
        for p in predictions:
            if p.sample_id in self.done:
                continue
            self._handle.write(p.model_dump_json() + "\n")
            self.done[p.sample_id] = p
            n += 1
        self._handle.flush()
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
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2, default=str) + "\n")
    os.replace(tmp, path)


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as exc:
        raise DataError(f"not valid JSON ({exc.msg})", path=path, line=exc.lineno) from exc

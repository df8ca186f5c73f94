"""`kinegraph data fetch`: download one benchmark's Hub dataset at a pinned commit, resumably.

The branch or tag asked for is resolved to a commit first and every file comes from that commit; the
commit, the patterns and the time are written to `kinegraph-fetch.json` so `check` and the loaders know
which snapshot a folder holds. `HF_ENDPOINT` and `HF_TOKEN` are read when the fetch starts (not when
huggingface_hub is imported), so a loopback Hub works in tests. Interrupted files resume from their
`.incomplete` part on the next call (huggingface_hub's range requests).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from kinegraph.atomic import write_atomic
from kinegraph.data.hub_layouts import NUSCENES_STEPS, layout
from kinegraph.errors import UsageError

RECORD_NAME = "kinegraph-fetch.json"
DEFAULT_ENDPOINT = "https://huggingface.co"


class FetchError(UsageError):
    """The Hub refused or could not be reached; `str()` is one line."""


@dataclass(frozen=True)
class FetchRecord:
    """What `kinegraph-fetch.json` holds: which commit of which repo, through which patterns, when."""

    benchmark: str
    repo_id: str
    revision: str
    commit: str
    allow_patterns: list[str]
    endpoint: str
    fetched_at: str
    files: int


def read_record(root: Path) -> FetchRecord | None:
    """The fetch record of `root`, or None when the folder was not written by `data fetch`."""
    path = root / RECORD_NAME
    if not path.is_file():
        return None
    return FetchRecord(**json.loads(path.read_text()))


def nuscenes_instructions() -> str:
    """What to download by hand for nuScenes, and where to put it."""
    return "\n".join(NUSCENES_STEPS)


def fetch(
    benchmark: str, to: Path, revision: str = "main", endpoint: str | None = None, progress: bool = True
) -> FetchRecord:
    """Download `benchmark` into `to` (a plain folder in the repo's layout) and record the commit.

    `endpoint` defaults to `HF_ENDPOINT`, then huggingface.co."""
    spec = layout(benchmark)
    import httpx2  # huggingface_hub's HTTP client
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError
    from huggingface_hub.utils import disable_progress_bars, enable_progress_bars

    endpoint = (endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
    token = os.environ.get("HF_TOKEN") or None
    where = f"{endpoint}/datasets/{spec.repo_id}"
    try:
        info = HfApi(endpoint=endpoint, token=token).repo_info(
            spec.repo_id, repo_type="dataset", revision=revision
        )
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "?"
        hint = " (set HF_TOKEN for gated or private repos)" if status in (401, 403) else ""
        raise FetchError(f"{where}@{revision}: the Hub answered HTTP {status}{hint}") from None
    except (OSError, httpx2.TransportError) as exc:
        raise FetchError(f"{where}: cannot reach the Hugging Face Hub ({type(exc).__name__})") from None
    commit = str(info.sha)
    to.mkdir(parents=True, exist_ok=True)
    if not progress:
        disable_progress_bars()
    try:
        snapshot_download(
            spec.repo_id,
            repo_type="dataset",
            revision=commit,
            allow_patterns=list(spec.allow_patterns),
            local_dir=to,
            endpoint=endpoint,
            token=token,
        )
    except (HfHubHTTPError, LocalEntryNotFoundError, OSError, httpx2.TransportError) as exc:
        raise FetchError(
            f"{where}@{commit[:12]}: download failed ({type(exc).__name__}); run again to resume"
        ) from None
    finally:
        if not progress:
            enable_progress_bars()
    files = sum(1 for p in to.rglob("*") if p.is_file() and ".cache" not in p.relative_to(to).parts)
    record = FetchRecord(
        benchmark=benchmark,
        repo_id=spec.repo_id,
        revision=revision,
        commit=commit,
        allow_patterns=list(spec.allow_patterns),
        endpoint=endpoint,
        fetched_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        files=files,
    )
    write_atomic(to / RECORD_NAME, json.dumps(asdict(record), indent=2) + "\n")
    return record

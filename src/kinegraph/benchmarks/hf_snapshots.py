"""Pick one snapshot when a Hugging Face cache holds several versions of the same files.

Both caches keep each version in a folder named by a hash: the Hub cache in `snapshots/<commit>/`, the
`datasets` cache in `<config>/<version>/<fingerprint>/`. Reading every file below a config would read each
question once per version, so a loader keeps the files of one: the commit pinned by `kinegraph-fetch.json`
at the data root, else the Hub cache's `refs/main`, else the most recently written one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

FETCH_RECORD = "kinegraph-fetch.json"
_HASH_NAME = re.compile(r"[0-9a-f]{16,64}")


def is_snapshot_name(name: str) -> bool:
    """Whether a folder name looks like a cache snapshot (a commit or a fingerprint)."""
    return _HASH_NAME.fullmatch(name) is not None


def _snapshot(path: Path, top: Path) -> Path | None:
    """The nearest folder between `top` and `path` named like a commit or fingerprint, if any."""
    for parent in path.parents:
        if parent == top or top not in parent.parents:
            return None
        if is_snapshot_name(parent.name):
            return parent
    return None


def pinned_commit(root: Path) -> str | None:
    """The commit `kinegraph data fetch` recorded for `root`, if it wrote one."""
    record = root / FETCH_RECORD
    if not record.is_file():
        return None
    try:
        commit = json.loads(record.read_text()).get("commit")
    except (ValueError, AttributeError):
        return None
    return commit if isinstance(commit, str) else None


def _written_at(folder: Path) -> float:
    return max((p.stat().st_mtime for p in folder.rglob("*") if p.is_file()), default=folder.stat().st_mtime)


def choose(snapshots: Sequence[Path], root: Path) -> tuple[Path, str]:
    """The snapshot a loader reads among `snapshots`, and why (see the module docstring for the order)."""
    pin = pinned_commit(root)
    for folder in snapshots:
        if pin and folder.name == pin:
            return folder, f"pinned by {FETCH_RECORD}"
    for folder in snapshots:
        ref = folder.parent.parent / "refs" / "main"
        if folder.parent.name == "snapshots" and ref.is_file() and ref.read_text().strip() == folder.name:
            return folder, "refs/main"
    return max(snapshots, key=lambda f: (_written_at(f), f.name)), "the newest"


def snapshot_groups(files: Sequence[Path], top: Path) -> dict[Path | None, list[Path]]:
    """`files` grouped by the snapshot folder each lies in (None: in no snapshot folder)."""
    groups: dict[Path | None, list[Path]] = {}
    for file in files:
        groups.setdefault(_snapshot(file, top), []).append(file)
    return groups


def one_snapshot(files: Sequence[Path], top: Path, root: Path) -> list[Path]:
    """`files` (found below `top`) limited to one snapshot when they span several; order kept."""
    groups = snapshot_groups(files, top)
    snapshots = [s for s in groups if s is not None]
    if len(snapshots) < 2:
        return list(files)
    keep, _ = choose(snapshots, root)
    return [f for f in files if _snapshot(f, top) in (keep, None)]

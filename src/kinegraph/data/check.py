"""`kinegraph data check`: is a benchmark folder complete and readable, before any run?

Each finding names the problem, where it is and how to fix it. The checks, cheapest first: the folder
exists and is a dataset folder (not a Hub cache root); no folder holds two cache snapshots of the same
files; the required files are present; the nuScenes join (EgoDyn `frame_paths`) resolves; the loader
reads every row (its `DataError` names file, line and field); ids are unique; a sample of videos decodes.
`preflight` runs the cheap ones at the start of `kinegraph run`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kinegraph.benchmarks.card import HubLayout
from kinegraph.benchmarks.hf_snapshots import FETCH_RECORD, choose, is_snapshot_name
from kinegraph.data.hub_layouts import layout
from kinegraph.errors import DataError
from kinegraph.jsonfiles import collecting_bad_lines, read_jsonl
from kinegraph.suites import card_of
from kinegraph.types import Sample

VIDEO_SAMPLE = 3
MAX_FINDINGS = 50  # of one kind; the rest are counted in one more line
_NOT_SNAPSHOTS = frozenset({".cache", "nuscenes", "samples", "sweeps"})  # never cache versions


@dataclass(frozen=True)
class Finding:
    """One thing missing or wrong in a benchmark folder, with the fix; warnings do not fail the check."""

    where: str
    problem: str
    fix: str
    severity: Literal["error", "warning"] = "error"


def _fetch_hint(benchmark: str, root: Path) -> str:
    return f"kinegraph data fetch {benchmark} --to {root}"


def _folder(benchmark: str, root: Path) -> list[Finding]:
    if not root.exists():
        return [Finding(str(root), "no such file or directory", _fetch_hint(benchmark, root))]
    if (root / "snapshots").is_dir() and (root / "refs").is_dir():
        snaps = [p for p in (root / "snapshots").iterdir() if p.is_dir()]
        pick = str(choose(snaps, root)[0]) if snaps else "<snapshot>"
        return [Finding(str(root), "a Hugging Face cache folder, not a dataset folder", f"use --data {pick}")]
    return []


def duplicate_snapshots(root: Path) -> list[Finding]:
    """One warning per folder holding several cache snapshots of the same files, naming the one read."""
    by_parent: dict[Path, list[Path]] = {}
    for parent, dirs, _ in os.walk(root):  # symlinks (a linked nuScenes root) are not followed
        dirs[:] = sorted(d for d in dirs if d not in _NOT_SNAPSHOTS)
        snapshots = [Path(parent) / d for d in dirs if is_snapshot_name(d)]
        if len(snapshots) > 1:
            by_parent[Path(parent)] = [s for s in snapshots if any(p.is_file() for p in s.rglob("*"))]
    out = []
    for parent, snapshots in sorted(by_parent.items()):
        if len(snapshots) < 2:
            continue
        keep, why = choose(snapshots, root)
        names = ", ".join(sorted(s.name[:12] for s in snapshots))
        out.append(
            Finding(
                str(parent),
                f"{len(snapshots)} snapshots of the same files ({names}); questions would repeat",
                f"kinegraph reads {keep.name[:12]} ({why}); delete the others to keep one",
                "warning",
            )
        )
    return out


def _required(benchmark: str, spec: HubLayout, root: Path) -> list[Finding]:
    out = []
    for group in spec.required:
        if not any((root / name).exists() for name in group):
            others = f" (or {', '.join(group[1:])})" if len(group) > 1 else ""
            out.append(Finding(str(root / group[0]), f"missing{others}", _fetch_hint(benchmark, root)))
    return out


def _nuscenes_join(spec: HubLayout, root: Path) -> list[Finding]:
    """A clips index (the layout's `frame_index`, EgoDyn's nuScenes clips) names its frames relative to
    the nuScenes root: they must all be there."""
    if spec.frame_index is None or not (root / spec.frame_index).is_file():
        return []
    index = root / spec.frame_index
    nuscenes = root / "nuscenes"
    fix = f"put nuScenes under {nuscenes} (kinegraph data fetch nuscenes says what to download)"
    if not nuscenes.is_dir():
        return [Finding(str(nuscenes), "no nuScenes root (the nuScenes clips' frames live there)", fix)]
    out = []
    for lineno, row in read_jsonl(index):
        paths = row.get("frame_paths") or []
        missing = [p for p in paths if not (nuscenes / p).is_file()]
        if missing:
            out.append(
                Finding(
                    f"{index}:{lineno}",
                    f"field 'frame_paths': {len(missing)} of {len(paths)} frames missing under {nuscenes} "
                    f"(first: {missing[0]})",
                    fix,
                )
            )
    return out


def _rows(benchmark: str, spec: HubLayout, root: Path) -> list[Finding]:
    """Every bad JSON line (not only the first), then the loader's own refusal or, loaded, duplicate ids
    and media files the samples name that are missing."""
    from kinegraph.suites import suites

    fix = f"correct it, or {_fetch_hint(benchmark, root)} again"
    with collecting_bad_lines() as bad_lines:
        try:
            samples = suites.get(benchmark).load(spec.loader_path(root))
        except DataError as exc:
            samples, refused = [], [exc]
        else:
            refused = []
    out = [_finding(exc, root, fix) for exc in [*bad_lines[:MAX_FINDINGS], *refused]]
    if len(bad_lines) > MAX_FINDINGS:
        out.append(Finding(str(root), f"and {len(bad_lines) - MAX_FINDINGS} more bad lines", fix))
    seen: set[str] = set()
    for sample in samples:
        if sample.id in seen:
            out.append(Finding(str(root), f"duplicate sample id {sample.id!r}", "keep one copy of its file"))
            break
        seen.add(sample.id)
    return out + _missing_media(samples, benchmark, root)


def _finding(exc: DataError, root: Path, fix: str) -> Finding:
    where = (exc.path or str(root)) + (f":{exc.line}" if exc.line is not None else "")
    return Finding(where, (f"field {exc.field!r}: " if exc.field else "") + exc.message, fix)


def _missing_media(samples: list[Sample], benchmark: str, root: Path) -> list[Finding]:
    """One finding per video a loaded sample names that is not a file, each named once (frames are the
    loaders' and the nuScenes join's to check)."""
    named = dict.fromkeys(s.media.video_path for s in samples if s.media.video_path is not None)
    missing = [p for p in named if not (root / p).is_file()]  # an absolute path stays itself
    fix = _fetch_hint(benchmark, root) + " (re-downloads it)"
    out = [Finding(path, "missing (a sample names it)", fix) for path in missing[:MAX_FINDINGS]]
    if len(missing) > MAX_FINDINGS:
        out.append(Finding(str(root), f"and {len(missing) - MAX_FINDINGS} more missing videos", fix))
    return out


def _videos(benchmark: str, spec: HubLayout, root: Path) -> list[Finding]:
    from kinegraph.media import read_video

    videos = sorted({p for pattern in spec.video_globs for p in root.glob(pattern) if p.is_file()})
    step = max(1, len(videos) // VIDEO_SAMPLE)
    out = []
    for video in videos[::step][:VIDEO_SAMPLE]:
        try:
            read_video(video, [0])
        except DataError as exc:
            out.append(Finding(str(video), exc.message, _fetch_hint(benchmark, root) + " (re-downloads it)"))
    return out


def preflight_findings(benchmark: str, root: Path) -> list[Finding]:
    """The cheap checks: the folder, cache snapshots, required files (folders written by `data fetch`)."""
    spec = layout(benchmark)
    found = _folder(benchmark, root)
    if found or root.is_file():
        return found
    found += duplicate_snapshots(root)
    if (root / FETCH_RECORD).is_file():
        found += _required(benchmark, spec, root)
    return found


def check(benchmark: str, root: Path) -> list[Finding]:
    """Every finding for `benchmark` in `root`; the loader runs only when the files are present."""
    spec = layout(benchmark)
    found = _folder(benchmark, root)
    if found:
        return found
    found += duplicate_snapshots(root) + _required(benchmark, spec, root)
    if any(f.severity == "error" for f in found):
        return found
    found += _nuscenes_join(spec, root)
    found += _rows(benchmark, spec, root)
    found += _videos(benchmark, spec, root)
    return found


def preflight(benchmark: str, data: str | Path) -> None:
    """Refuse a broken layout before a run's first request: raises DataError naming the first error."""
    card = card_of(benchmark)
    if card is None or card.hub is None:  # a suite registered elsewhere, or one without a Hub layout
        return
    for finding in preflight_findings(benchmark, Path(data)):
        if finding.severity == "error":
            raise DataError(f"{finding.problem}; fix: {finding.fix}", path=finding.where)


def table(findings: list[Finding]) -> str:
    """One line per finding: severity, where, problem, fix (tab-free, aligned by columns)."""
    if not findings:
        return ""
    width = max(len(f.where) for f in findings)
    return "".join(f"{f.severity:<7}  {f.where:<{width}}  {f.problem}  -> {f.fix}\n" for f in findings)

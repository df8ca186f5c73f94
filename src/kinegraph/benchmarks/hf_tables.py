"""Read a Hugging Face dataset config saved locally, without the `datasets` package.

Accepted layouts for a config NAME under a root directory: `NAME.{jsonl,json,parquet,arrow}`, or a folder
`NAME/` holding such files at any depth (what `save_to_disk`, `to_json`/`to_parquet` or the HF cache
write; of a cache holding several versions, one: see `hf_snapshots`), or a `save_to_disk` DatasetDict
(`dataset_dict.json` at the root) whose split NAME is a folder.
Arrow files are read with pyarrow in either IPC format (`datasets` writes the streaming one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kinegraph.benchmarks.hf_snapshots import one_snapshot
from kinegraph.errors import DataError
from kinegraph.extras import require
from kinegraph.jsonfiles import read_json, read_jsonl

DATA_SUFFIXES: tuple[str, ...] = (".jsonl", ".json", ".parquet", ".arrow")
_METADATA_FILES = frozenset({"dataset_info.json", "state.json", "dataset_dict.json"})


def _read_arrow(path: Path) -> list[dict[str, Any]]:
    pa = require("pyarrow", f"reading {path.name}")
    try:
        with pa.memory_map(str(path)) as source:
            try:
                table = pa.ipc.open_stream(source).read_all()
            except pa.ArrowInvalid:
                source.seek(0)
                table = pa.ipc.open_file(source).read_all()
    except (pa.ArrowInvalid, OSError) as exc:
        raise DataError(f"not a readable Arrow file ({exc})", path=path) from exc
    return table.to_pylist()


def _read_json_rows(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".jsonl":
        rows = [row for _, row in read_jsonl(path)]
    else:
        rows = read_json(path)
        if not isinstance(rows, list):
            raise DataError("expected a JSON array of rows", path=path)
    for i, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise DataError(f"row {i} is not a JSON object", path=path)
    return rows


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Rows of one data file (JSONL, JSON array, Parquet or Arrow)."""
    path = Path(path)
    if path.suffix == ".parquet":
        return require("pyarrow.parquet", f"reading {path.name}").read_table(path).to_pylist()
    if path.suffix == ".arrow":
        return _read_arrow(path)
    if path.suffix in (".json", ".jsonl"):
        return _read_json_rows(path)
    raise DataError(f"unsupported data file type {path.suffix!r}", path=path)


def config_files(root: str | Path, name: str) -> list[Path]:
    """The data files of config `name` under `root` (sorted); [] when the config is absent."""
    root = Path(root)
    for suffix in DATA_SUFFIXES:
        single = root / f"{name}{suffix}"
        if single.is_file():
            return [single]
    folder = root / name
    if not folder.is_dir():
        return []
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and p.suffix in DATA_SUFFIXES and p.name not in _METADATA_FILES
    )
    return one_snapshot(files, folder, root)  # a cache holding two versions: read one, not both


def read_config(root: str | Path, name: str) -> list[dict[str, Any]] | None:
    """All rows of config `name`, or None when `root` has no such config."""
    files = config_files(root, name)
    if not files:
        return None
    rows: list[dict[str, Any]] = []
    for file in files:
        rows.extend(read_rows(file))
    return rows

"""Run a benchmark on part of its samples: `--subset key=value[,value...]`, with keys declared per suite.

A suite names its natural keys (`Suite.subset_keys`: key -> function of a Sample); every suite also has
`ids`, a file of sample or group ids (one a line). Keys combine with AND, the values of one key with OR.
An unknown key, or a value or id that matches no sample, is refused in one line naming what is valid.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from kinegraph.errors import DataError, UsageError
from kinegraph.types import Sample

SubsetKey = Callable[[Sample], "str | None"]
#: the key every suite has: a text file of sample ids or group ids (clip, video, scene, row, image)
IDS = "ids"
MAX_LISTED = 20


def metadata_key(field: str) -> SubsetKey:
    """A key reading `sample.metadata[field]` as text (None, never matching, where a sample lacks it)."""

    def value(sample: Sample) -> str | None:
        found = sample.metadata.get(field)
        return None if found is None else str(found)

    return value


def parse_subset(specs: Iterable[str]) -> dict[str, list[str]]:
    """`["source=carla", "category=a,b"]` -> {key: values}; a key given twice adds its values."""
    subset: dict[str, list[str]] = {}
    for spec in specs:
        key, sep, values = spec.partition("=")
        parts = [v.strip() for v in values.split(",")]
        if not sep or not key.strip() or not all(parts):
            raise UsageError(f"--subset expects key=value[,value...], got {spec!r}")
        known = subset.setdefault(key.strip(), [])
        known += [v for v in parts if v not in known]
    return subset


def resolve_id_files(subset: Mapping[str, Sequence[str]], base: str | Path) -> dict[str, list[str]]:
    """`subset` with its id files as absolute paths (relative ones are under `base`), as run.json keeps it."""
    return {
        key: [str((Path(base) / v).resolve()) for v in values] if key == IDS else list(values)
        for key, values in subset.items()
    }


def check_keys(subset: Mapping[str, Sequence[str]], keys: Mapping[str, SubsetKey], benchmark: str) -> None:
    """Refuse a key the suite does not declare, naming the keys it has."""
    known = sorted({*keys, IDS})
    for key in subset:
        if key not in known:
            raise UsageError(f"--subset: {benchmark} has no key {key!r} (keys: {', '.join(known)})")


def _listing(values: Iterable[str]) -> str:
    ordered = sorted(set(values))
    shown = ", ".join(ordered[:MAX_LISTED])
    return shown + (f", ... ({len(ordered)} in all)" if len(ordered) > MAX_LISTED else "")


def read_ids(path: str | Path) -> list[tuple[int, str]]:
    """(line number, id) of every non-blank line of an id file that is not a `#` comment."""
    path = Path(path)
    try:
        text = path.read_text()
    except (FileNotFoundError, IsADirectoryError):
        raise DataError("id list not found", path=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read the id list ({exc.__class__.__name__})", path=path) from None
    rows = [(n, line.strip()) for n, line in enumerate(text.split("\n"), start=1)]
    ids = [(n, line) for n, line in rows if line and not line.startswith("#")]
    if not ids:
        raise DataError("the id list names no id", path=path)
    return ids


def _id_filter(paths: Sequence[str], samples: Sequence[Sample], benchmark: str) -> set[str]:
    """The ids of every listed file, each checked to name a sample (its id) or a group of samples."""
    known = {s.id for s in samples} | {s.group for s in samples}
    wanted: set[str] = set()
    for path in paths:
        for line, name in read_ids(path):
            if name not in known:
                raise DataError(f"id {name!r} matches no {benchmark} sample or group", path=path, line=line)
            wanted.add(name)
    return wanted


def select(
    samples: Sequence[Sample],
    subset: Mapping[str, Sequence[str]],
    keys: Mapping[str, SubsetKey],
    benchmark: str,
) -> list[Sample]:
    """The samples every key of `subset` accepts (AND across keys, OR across one key's values)."""
    check_keys(subset, keys, benchmark)
    kept = list(samples)
    for key, values in subset.items():
        if key == IDS:
            wanted = _id_filter(values, samples, benchmark)
            kept = [s for s in kept if s.id in wanted or s.group in wanted]
            continue
        of = keys[key]
        present = {v for v in map(of, samples) if v is not None}
        for value in values:
            if value not in present:
                raise UsageError(
                    f"--subset {key}={value} matches no {benchmark} sample "
                    f"({key} values: {_listing(present) or 'none'})"
                )
        kept = [s for s in kept if of(s) in values]
    if not kept:
        given = " ".join(f"{key}={','.join(values)}" for key, values in subset.items())
        raise UsageError(f"--subset {given}: no {benchmark} sample matches every key at once")
    return kept


def check_limit_key(key: str, keys: Mapping[str, SubsetKey], benchmark: str) -> None:
    """Refuse a `--limit-per` key the suite does not declare (`ids` is no stratum), naming the keys."""
    if key == IDS or key not in keys:
        known = ", ".join(sorted(keys)) or "none"
        raise UsageError(f"--limit-per: {benchmark} has no key {key!r} (keys: {known})")


def first_groups_per(
    samples: Sequence[Sample], n: int, key: str, keys: Mapping[str, SubsetKey], benchmark: str
) -> list[Sample]:
    """A stratified `--limit`: the samples of the first `n` groups (clip, video, scene, row) of each value
    of `key`, in file order, so a small limit still scores every task or category (a plain `--limit`
    takes the first samples of a file ordered by task: one task, and every average undefined).

    A group is kept whole within its value (DSI's four variants of a row, a clip's questions)."""
    check_limit_key(key, keys, benchmark)
    of = keys[key]
    groups: dict[str, list[str]] = {}
    for s in samples:
        value = of(s)
        if value is None:
            continue
        seen = groups.setdefault(value, [])
        if s.group not in seen and len(seen) < n:
            seen.append(s.group)
    return [s for s in samples if (value := of(s)) is not None and s.group in groups[value]]

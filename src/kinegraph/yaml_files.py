"""YAML files read with bounds: size, nesting depth, and node count with aliases expanded.

`yaml.safe_load` alone recurses once per nesting level (a 100k-deep file is a `RecursionError`) and keeps
an alias as a reference, so nine anchors of ten aliases each (a "billion laughs" of a few hundred bytes)
load small and grow to gigabytes in the first copy or validation that walks them. The file's events are
counted first, without building anything; a file over a bound is one `DataError` line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kinegraph.bounded_read import TooLarge, read_bounded
from kinegraph.errors import DataError

MAX_YAML_BYTES = 4 * 2**20
MAX_YAML_DEPTH = 64
MAX_YAML_NODES = 200_000  # scalars and collections, each alias counted as the size of what it names


class YamlShapeError(ValueError):
    """A YAML file past a bound; `line` is where it passed it."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def read_yaml(
    path: str | Path,
    *,
    max_bytes: int = MAX_YAML_BYTES,
    max_depth: int = MAX_YAML_DEPTH,
    max_nodes: int = MAX_YAML_NODES,
) -> Any:
    """The YAML document at `path`; DataError for a missing, unreadable, malformed or oversized file."""
    path = Path(path)
    try:
        data = read_bounded(path, max_bytes)
    except FileNotFoundError:
        raise DataError("file not found", path=path) from None
    except OSError as exc:
        raise DataError(f"cannot read ({exc.strerror})", path=path) from None
    except TooLarge as exc:
        raise DataError(f"{exc} for a YAML file", path=path) from None
    try:
        text = data.decode("utf-8")
        check_yaml_shape(text, max_depth=max_depth, max_nodes=max_nodes)
        return yaml.safe_load(text)
    except UnicodeDecodeError:
        raise DataError("not UTF-8 text", path=path) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise DataError(f"not valid YAML ({exc.__class__.__name__})", path=path, line=line) from None
    except YamlShapeError as exc:
        raise DataError(str(exc), path=path, line=exc.line) from None


def check_yaml_shape(text: str, *, max_depth: int, max_nodes: int) -> None:
    """YamlShapeError when `text` nests deeper than `max_depth` or expands (aliases followed) past
    `max_nodes` nodes; read from the parser's events, iteratively, building nothing."""
    sizes: dict[str, int] = {}  # anchor -> the expanded size of its node
    open_nodes: list[tuple[str | None, int]] = []  # (anchor, total nodes at its start)
    total = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            total += sizes.get(event.anchor, 0)  # an undefined one: safe_load says so
        elif isinstance(event, yaml.ScalarEvent):
            total += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.CollectionStartEvent):
            total += 1
            open_nodes.append((event.anchor, total - 1))
            if len(open_nodes) > max_depth:
                raise YamlShapeError(
                    f"nested deeper than the limit of {max_depth} levels", event.start_mark.line + 1
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, start = open_nodes.pop()
            if anchor is not None:
                sizes[anchor] = total - start
        if total > max_nodes:
            raise YamlShapeError(
                f"expands to more than the limit of {max_nodes:,} values with its aliases followed",
                event.start_mark.line + 1,
            )

"""EgoDyn-Bench's home: loader, question bank, clip extraction, a clip measured from its frames, world."""

from kinegraph.benchmarks.egodyn.loader import (
    DEFAULT_NUM_FRAMES,
    MAX_FEATURE_MAGNITUDE,
    SOURCES,
    load,
    load_arrays,
    load_hf,
    load_selected_clips,
    source_of,
)

__all__ = [
    "DEFAULT_NUM_FRAMES",
    "MAX_FEATURE_MAGNITUDE",
    "SOURCES",
    "load",
    "load_arrays",
    "load_hf",
    "load_selected_clips",
    "source_of",
]

"""DSI-Bench's home: the loader and the synthetic world."""

from kinegraph.benchmarks.dsi.loader import (
    BENCHMARK,
    CATEGORIES,
    RAWQA_PROMPT,
    REQUIRED_COLUMNS,
    VARIANTS,
    VIDEO_SAMPLING_FPS,
    build_prompt,
    build_sample,
    category_name,
    load,
    read_csv,
    read_metadata,
    split_options,
)

__all__ = [
    "BENCHMARK",
    "CATEGORIES",
    "RAWQA_PROMPT",
    "REQUIRED_COLUMNS",
    "VARIANTS",
    "VIDEO_SAMPLING_FPS",
    "build_prompt",
    "build_sample",
    "category_name",
    "load",
    "read_csv",
    "read_metadata",
    "split_options",
]

"""STSBench's home: the loader, the scenario vocabulary and the synthetic world."""

from kinegraph.benchmarks.stsbench.loader import (
    BENCHMARK,
    EGO_QUESTION,
    GROUPS,
    KEYFRAME_RATE_HZ,
    N_NEGATIVES,
    build_choices,
    build_sample,
    frame_paths,
    linear_weighted_sample,
    load,
    maneuver_ids,
    question_text,
    read_records,
    record_ids,
    scenario_group,
    scenario_ids,
)

__all__ = [
    "BENCHMARK",
    "EGO_QUESTION",
    "GROUPS",
    "KEYFRAME_RATE_HZ",
    "N_NEGATIVES",
    "build_choices",
    "build_sample",
    "frame_paths",
    "linear_weighted_sample",
    "load",
    "maneuver_ids",
    "question_text",
    "read_records",
    "record_ids",
    "scenario_group",
    "scenario_ids",
]

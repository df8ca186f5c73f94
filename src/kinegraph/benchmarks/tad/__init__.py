"""TAD's home: the loader and the synthetic world (nuScenes scenes with TAD's questions)."""

from kinegraph.benchmarks.tad.loader import (
    BENCHMARK,
    CONFIGS,
    EGO_KEYWORD,
    EGO_ONLY_TASKS,
    KEYFRAME_RATE_HZ,
    LOCALIZATION_TASKS,
    MIXED_TASKS,
    NON_EGO_ONLY_TASKS,
    SEGMENT_TASKS,
    TASKS,
    build_sample,
    is_ego_question,
    load,
    load_ground_truth,
    scene_frames_from_segments,
    segment_frames,
)

__all__ = [
    "BENCHMARK",
    "CONFIGS",
    "EGO_KEYWORD",
    "EGO_ONLY_TASKS",
    "KEYFRAME_RATE_HZ",
    "LOCALIZATION_TASKS",
    "MIXED_TASKS",
    "NON_EGO_ONLY_TASKS",
    "SEGMENT_TASKS",
    "TASKS",
    "build_sample",
    "is_ego_question",
    "load",
    "load_ground_truth",
    "scene_frames_from_segments",
    "segment_frames",
]

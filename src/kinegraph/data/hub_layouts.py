"""Where each benchmark lives on the Hugging Face Hub and what its folder must hold once fetched.

Repo ids and file names follow the dataset cards and the official code (see each loader's card docstring).
`required` lists groups of alternatives relative to the fetched folder: every group needs one present path.
nuScenes is not redistributed by any of them; `NUSCENES_STEPS` says what to download by hand and where.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kinegraph.benchmarks.tad.loader import CONFIGS as TAD_CONFIGS
from kinegraph.errors import UsageError


@dataclass(frozen=True)
class HubLayout:
    """One benchmark's Hub dataset: repo, files to fetch, files that must be present, the loader's path."""

    benchmark: str
    repo_id: str
    allow_patterns: tuple[str, ...]
    required: tuple[tuple[str, ...], ...]
    video_globs: tuple[str, ...] = ()
    needs_nuscenes: bool = False
    loader_file: tuple[str, ...] = ()  # the loader reads this file (first present) instead of the folder
    notes: tuple[str, ...] = field(default_factory=tuple)

    def loader_path(self, root: Path) -> Path:
        """The path `suites.get(benchmark).load` takes for a fetched folder `root`."""
        for name in self.loader_file:
            if (root / name).is_file():
                return root / name
        return root / self.loader_file[0] if self.loader_file else root


LAYOUTS: dict[str, HubLayout] = {
    layout.benchmark: layout
    for layout in (
        HubLayout(
            "egodyn",
            "fnc1901/EgoDyn-Bench",
            (
                "selected_clips.json",
                "nuscenes_clips/*",
                "carla_clips/*",
                "carla_videos_transferred/*",
                "carla_videos_simulation/*",
            ),
            (("nuscenes_clips/qa.jsonl", "carla_clips/qa.jsonl", "selected_clips.json"),),
            video_globs=("carla_videos_transferred/*.mp4", "carla_videos_simulation/*.mp4"),
            needs_nuscenes=True,
        ),
        HubLayout(
            "quantiphy",
            "PaulineLi/QuantiPhy-validation",
            ("*.csv", "*.parquet", "validation_videos/*"),
            (
                ("quantiphy_validation.csv", "validation_dataset.csv", "validation_dataset.parquet"),
                ("validation_videos",),
            ),
            video_globs=("validation_videos/*.mp4",),
            loader_file=("quantiphy_validation.csv", "validation_dataset.csv", "validation_dataset.parquet"),
        ),
        HubLayout(
            "tad",
            "vbdai/TAD",
            tuple(p for c in TAD_CONFIGS for p in (f"{c}/*", f"{c}.*")),
            (
                tuple(f"keysegments{s}" for s in ("", ".jsonl", ".json", ".parquet", ".arrow")),
                tuple(
                    f"{c}{s}" for c in TAD_CONFIGS[:7] for s in ("", ".jsonl", ".json", ".parquet", ".arrow")
                ),
            ),
            needs_nuscenes=True,
        ),
        HubLayout(
            "stsbench",
            "ivc-lrp/STSBench",
            ("STSnu/*",),
            (("STSnu/STSnu.json", "STSnu.json"),),
            needs_nuscenes=True,
            loader_file=("STSnu/STSnu.json", "STSnu.json"),
        ),
        HubLayout(
            "dsi",
            "Viglong/DSI-Bench",
            ("metadatas/*", "videos/*"),
            tuple((f"metadatas/{v}.csv",) for v in ("std", "hflip", "reverse", "reverse_hflip"))
            + (("videos",),),
            video_globs=("videos/std/**/*.mp4",),
        ),
        HubLayout(
            "autodridm",
            "ColamentosZJU/AutoDriDM",
            ("*.json",),
            (
                tuple(
                    f"{t}.json"
                    for t in ("Object-1", "Object-2", "Scene-1", "Scene-2", "Decision-1", "Decision-2")
                ),
            ),
            notes=(
                "AutoDriDM's images are not on the Hub: put each record's image_name (images/...) under the "
                "folder, from nuScenes, KITTI and BDD100K",
            ),
        ),
    )
}

NUSCENES_STEPS = (
    "nuScenes cannot be fetched (its licence needs an account): sign in at "
    "https://www.nuscenes.org/nuscenes#download",
    "download the 'Full dataset (v1.0)' Trainval metadata archive v1.0-trainval_meta.tgz and the camera "
    "blobs v1.0-trainval01_blobs.tgz ... v1.0-trainval10_blobs.tgz (only samples/CAM_FRONT and "
    "sweeps/CAM_FRONT are read)",
    "extract them all into one root: ROOT/v1.0-trainval/*.json, ROOT/samples/CAM_FRONT/*.jpg, "
    "ROOT/sweeps/CAM_FRONT/*.jpg",
    "then link or move ROOT to DIR/nuscenes (or pass the loader option nuscenes_root=ROOT; "
    "STSBench: data_root=ROOT)",
)


def layout(benchmark: str) -> HubLayout:
    """The Hub layout of `benchmark`; an unknown name is refused with the known ones."""
    if benchmark not in LAYOUTS:
        known = ", ".join([*LAYOUTS, "nuscenes"])
        raise UsageError(f"unknown benchmark {benchmark!r} for data fetch/check; known: {known}")
    return LAYOUTS[benchmark]

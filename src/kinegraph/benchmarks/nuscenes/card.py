"""nuScenes' card: no benchmark of its own, the frames and ego poses EgoDyn, TAD and STSBench read.

nuScenes is not redistributed on the Hub (its licence needs an account): `manual_steps` say what to
download by hand and where.
"""

from __future__ import annotations

from kinegraph.benchmarks.card import Card

CARD = Card(
    name="nuscenes",
    title="nuScenes (v1.0)",
    paper="Caesar et al., CVPR 2020, arXiv 1903.11027",
    licence="CC BY-NC-SA 4.0 (account required)",
    upstream="github.com/nutonomy/nuscenes-devkit@d9de17a",
    manual_steps=(
        "nuScenes cannot be fetched (its licence needs an account): sign in at "
        "https://www.nuscenes.org/nuscenes#download",
        "download the 'Full dataset (v1.0)' Trainval metadata archive v1.0-trainval_meta.tgz and the camera "
        "blobs v1.0-trainval01_blobs.tgz ... v1.0-trainval10_blobs.tgz (only samples/CAM_FRONT and "
        "sweeps/CAM_FRONT are read)",
        "extract them all into one root: ROOT/v1.0-trainval/*.json, ROOT/samples/CAM_FRONT/*.jpg, "
        "ROOT/sweeps/CAM_FRONT/*.jpg",
        "then link or move ROOT to DIR/nuscenes (or pass the loader option nuscenes_root=ROOT; "
        "STSBench: data_root=ROOT)",
    ),
)

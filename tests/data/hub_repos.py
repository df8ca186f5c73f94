"""Small fixture repos in each benchmark's Hub layout, written from the project's synthetic generators.

`hub_repo(suite, scratch)` returns the repo the loopback Hub serves and `put_local(suite, scratch, folder)`
adds what no Hub repo holds (nuScenes frames and tables, AutoDriDM's images), as a user would by hand.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from kinegraph.data.hub_layouts import LAYOUTS
from kinegraph.suites import suites
from tests.support.hf_hub import HubRepo

SUITES = ("egodyn", "quantiphy", "tad", "stsbench", "dsi", "autodridm")
N = {"egodyn": 2, "quantiphy": 4, "tad": 2, "stsbench": 4, "dsi": 4, "autodridm": 4}
# what each generator writes that the Hub repo does not hold: it stays on the user's side
_LOCAL_ONLY = ("nuscenes/", "samples/", "images/", "synthetic_truth", "quantiphy_truth", "detections.json")


def generated(suite: str, scratch: Path) -> Path:
    """The suite's synthetic world (written once per scratch folder)."""
    world = scratch / "world" / suite
    if not world.exists():
        suites.get(suite).generate(world, n=N[suite], seed=0)
    return world


def hub_repo(suite: str, scratch: Path) -> HubRepo:
    """The generated world as the Hub holds it: TAD configs as folders, STSBench under STSnu/."""
    world = generated(suite, scratch)
    files: dict[str, bytes] = {}
    for path in sorted(world.rglob("*")):
        rel = path.relative_to(world).as_posix()
        if not path.is_file() or rel.startswith(_LOCAL_ONLY):
            continue
        if suite == "tad":
            rel = f"{path.stem}/train-00000-of-00001.jsonl"
        elif suite == "stsbench":
            rel = f"STSnu/{rel}"
        files[rel] = path.read_bytes()
    files["README.md"] = b"---\nlicense: other\n---\n"  # matched by no pattern: never fetched
    return HubRepo(LAYOUTS[suite].repo_id, files)


def put_local(suite: str, scratch: Path, folder: Path) -> dict[str, str]:
    """Copy the non-Hub files next to the fetched ones; returns the loader options the run needs."""
    world = generated(suite, scratch)
    if suite in ("egodyn", "tad"):
        shutil.copytree(world / "nuscenes", folder / "nuscenes", dirs_exist_ok=True)
    if suite == "stsbench":
        shutil.copytree(world / "samples", folder / "nuscenes" / "samples", dirs_exist_ok=True)
        return {"data_root": str(folder / "nuscenes")}
    if suite == "autodridm":
        shutil.copytree(world / "images", folder / "images", dirs_exist_ok=True)
    return {}

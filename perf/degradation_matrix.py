"""The degradation matrix of `egodyn.measured`: every capture condition alone and combined, scored officially.

For each named condition (`benchmarks/synthetic/conditions.py`: noise, JPEG q10, 40 ms motion blur, dusk
darkness, row-wise flicker, a bonnet, 5-30 fps, uneven frame times, traffic, the camera unknown, and their
combinations) it writes CARLA-style clips on drawn camera rigs, runs `egodyn.measured` through the runner
and prints the official scorer's global balanced accuracy, the share of questions answered, which
estimate answered (full / fallback), the median speed ratio measured/true and CPU ms per clip.
The estimator was tuned on seeds 1-9 and 5000-5009; report on other seeds (default 4000).
Usage: python perf/degradation_matrix.py [--n 40] [--seed 4000] [--conditions dusk,flicker15 ...]
       [--work DIR (keep the rendered clips)] [--plot docs/img/degradation_matrix.png] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

from kinegraph.benchmarks.egodyn.extract import write_qa
from kinegraph.benchmarks.egodyn.world import write_carla_clips
from kinegraph.benchmarks.synthetic.conditions import CONDITIONS, condition
from kinegraph.run import execute
from kinegraph.types import RunConfig


def clips_for(work: Path, name: str, n: int, seed: int) -> Path:
    """The condition's clips under `work` (rendered once, reused by later runs)."""
    data = work / f"{name.replace('/', '+').replace(' ', '_')}-{seed}-{n}"
    if not (data / "carla_clips" / "qa.jsonl").exists():
        records = write_carla_clips(data, n, seed, conditions=condition(name))
        write_qa(records, data / "carla_clips")
    return data


def speed_ratio_and_estimates(run_dir: Path, data: Path) -> tuple[float, Counter, list[str]]:
    """Median measured/true mean speed over moving clips, which estimate answered each clip, and the
    camera sources seen."""
    ratios, estimates, cameras, seen = [], Counter(), [], set()
    for line in (run_dir / "predictions.jsonl").read_text().splitlines():
        pred = json.loads(line)
        clip = pred["sample_id"].split(":")[0]
        if clip in seen:
            continue
        seen.add(clip)
        if pred["status"] != "ok":
            estimates[pred["status"]] += 1
            continue
        signals = pred["trace"][0]["output"]
        kind = signals["trajectory"].get("estimate", {}).get("kind", "tracked_road")
        estimates["full" if kind == "tracked_road" else "fallback"] += 1
        camera = signals["trajectory"]["camera"]
        cameras.append(str(camera.get("source")) + (" + scene" if camera.get("from_scene") else ""))
        with np.load(data / "carla_clips" / "arrays" / f"{clip}.npz") as truth:
            true_speed = float(np.mean(truth["speed"]))
        if true_speed > 1.0:
            ratios.append(float(np.mean(signals["kinematics"]["speed"])) / true_speed)
    return (float(np.median(ratios)) if ratios else math.nan), estimates, cameras


def evaluate(data: Path, out: Path, scene_camera: bool = True) -> tuple[dict, float]:
    """(official metrics, wall s) of `egodyn.measured` over the clips."""
    t0 = time.perf_counter()
    config = RunConfig(
        benchmark="egodyn",
        graph="egodyn.measured",
        data=str(data),
        out_dir=str(out),
        concurrency=2,
        options={"scene_camera": scene_camera},
    )
    execute(config, show_progress=False)
    return json.loads((out / "metrics.json").read_text()), time.perf_counter() - t0


def cpu_ms_per_clip(conditions: list[str], n_clips: int, seed: int) -> dict[str, float]:
    """CPU ms (process time, so a busy machine inflates it less than wall time) per 1280x720 clip of 31
    frames under each condition, its camera given: `estimate_trajectory`, then the 14 answers (official
    kinematics, oracle, and the re-measured halves of `unresolved_halves`)."""
    from kinegraph.benchmarks.egodyn.measured_clip import unresolved_halves
    from kinegraph.benchmarks.egodyn.questions import load_question_bank
    from kinegraph.media import read_video
    from kinegraph.tools.camera_model import camera_from_row
    from kinegraph.tools.ego_trajectory import estimate_trajectory, measured_kinematics
    from kinegraph.tools.oracle import label_clip

    bank = load_question_bank()
    out = {}
    for name in conditions:
        fixed = replace(condition(name), resolution=(1280, 720), camera_given=True)
        with tempfile.TemporaryDirectory() as tmp:
            records = write_carla_clips(Path(tmp), n_clips, seed, conditions=fixed)
            total = 0.0
            for record in records:
                frames, _ = read_video(Path(tmp) / "carla_videos_simulation" / f"{record['clip_id']}.mp4")
                t0 = time.process_time()
                trajectory = estimate_trajectory(
                    frames, np.arange(len(frames)) / fixed.fps, camera_from_row(record["camera"])
                )
                kinematics = measured_kinematics(trajectory)
                answers = label_clip(kinematics.arrays(), bank, features=kinematics.features)
                unresolved_halves(answers, trajectory, bank)
                total += time.process_time() - t0
        out[name] = 1e3 * total / len(records)
    return out


def plot(rows: list[dict], path: Path) -> None:
    """Horizontal bars of balanced accuracy per condition, the targets drawn in."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 0.34 * len(rows) + 1.2))
    names = [r["condition"] for r in rows]
    values = [r["balanced_acc"] for r in rows]
    colours = ["#2b8a3e" if v >= 0.9 else "#e67700" if v >= 0.85 else "#c92a2a" for v in values]
    ax.barh(names, values, color=colours)
    for y, (v, r) in enumerate(zip(values, rows, strict=True)):
        ax.text(v + 0.005, y, f"{v:.3f}  ({100 * r['answered']:.0f} % answered)", va="center", fontsize=8)
    ax.axvline(0.90, color="#555", ls="--", lw=0.8)
    ax.axvline(0.85, color="#999", ls=":", lw=0.8)
    ax.set_xlim(0.4, 1.14)
    ax.invert_yaxis()
    ax.set_xlabel("global balanced accuracy, official EgoDyn scorer (14 questions)")
    clips = sorted({r["clips"] for r in rows})
    each = f"{clips[0]}" if len(clips) == 1 else f"{clips[0]}-{clips[-1]}"
    ax.set_title(f"egodyn.measured under capture conditions\n({each} clips each, seed {rows[0]['seed']})")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40, help="clips per condition")
    parser.add_argument("--seed", type=int, default=4000)
    parser.add_argument(
        "--conditions",
        default=",".join(CONDITIONS),
        help="comma-separated names; any name + /camera_unknown leaves the camera out",
    )
    parser.add_argument("--work", type=Path, help="keep the rendered clips here and reuse them")
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--timing", default="", help="comma-separated conditions to time at 1280x720 (CPU ms per clip)"
    )
    parser.add_argument("--timing-clips", type=int, default=6)
    parser.add_argument(
        "--no-scene-camera",
        action="store_true",
        help="run with -O scene_camera=false (no lens or height lent by scene-mates: assumed instead)",
    )
    args = parser.parse_args()
    names = [c.strip() for c in args.conditions.split(";" if ";" in args.conditions else ",") if c.strip()]
    for name in names:
        try:
            condition(name)
        except KeyError as error:
            parser.error(str(error.args[0]))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        print(
            "| condition | global balanced accuracy | questions answered "
            "| estimate (full / fallback / error) | camera | measured/true speed | ms per clip |"
        )
        print("|---|---|---|---|---|---|---|")
        for name in names:
            data = clips_for(work, name, args.n, args.seed)
            metrics, wall = evaluate(data, Path(tmp) / f"run-{len(rows)}", not args.no_scene_camera)
            ratio, estimates, cameras = speed_ratio_and_estimates(Path(tmp) / f"run-{len(rows)}", data)
            asked = metrics["global"].get("n", 14 * args.n)
            n_failed = sum(v for k, v in estimates.items() if k not in ("full", "fallback"))
            answered = 1.0 - n_failed / max(1, sum(estimates.values()))
            row = {
                "condition": name,
                "balanced_acc": metrics["global"]["balanced_acc"],
                "answered": answered,
                "estimates": dict(estimates),
                "camera": dict(Counter(cameras)),
                "speed_ratio": ratio,
                "ms_per_clip": 1e3 * wall / args.n,
                "clips": args.n,
                "seed": args.seed,
                "asked": asked,
                "per_question": {q: m["balanced_acc"] for q, m in metrics["per_question"].items()},
            }
            rows.append(row)
            est = f"{estimates.get('full', 0)} / {estimates.get('fallback', 0)} / {n_failed}"
            cams = ", ".join(f"{k} {v}" for k, v in sorted(row["camera"].items()))
            print(
                f"| {name} | {row['balanced_acc']:.3f} | {100 * answered:.1f} % | {est} | {cams} "
                f"| {ratio:.2f} | {row['ms_per_clip']:.0f} |",
                flush=True,
            )
    if args.timing:
        timed = [c.strip() for c in args.timing.split(";" if ";" in args.timing else ",") if c.strip()]
        print("\n| condition (1280x720, 31 frames, camera given) | CPU ms per clip |\n|---|---|")
        for name, ms in cpu_ms_per_clip(timed, args.timing_clips, args.seed + 1).items():
            print(f"| {name} | {ms:.0f} |", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()

"""EgoDyn vision probes (VO, flow heuristic, torch Horn-Schunck flow) scored with the EgoDyn scorer on a
synthetic EgoDyn world (`kinegraph synth egodyn` layout), on the 6 geometrically answerable questions.

With --calib-n (or --calib-data), each probe's thresholds are also recalibrated on a separate
calibration world (another seed) with `kinegraph.tools.probe_calibration` and scored on the test world.
Frames as upstream feeds its baselines: 10 evenly spaced frames per clip, at the native sizes of the
real data (nuScenes 1600x900 JPEG sweeps, CARLA-style 1280x720 mp4), since the paper's thresholds are
in pixels. Per-pair signals are cached in --out so that re-scoring is instant.
Usage: python perf/tools_vision_accuracy.py [--data DIR | --n 100 --seed 0] [--calib-n 50 --calib-seed 1]
       [--out DIR] [--device auto]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from kinegraph.benchmarks.egodyn.questions import VISION_BASELINE_QUESTIONS as PROBE_QUESTIONS
from kinegraph.evaluators.egodyn import score
from kinegraph.media import load_frames
from kinegraph.tools.flow import FlowSignals, FlowThresholds, flow_answers, flow_signals
from kinegraph.tools.gpu_flow import gpu_flow_signals, resolve_device
from kinegraph.tools.probe_calibration import FLOW_GROUPS, VO_GROUPS, Calibration, calibrate_thresholds
from kinegraph.tools.vo import VOSignals, VOThresholds, vo_answers, vo_signals
from kinegraph.types import Media

N_FRAMES = 10
CHUNK_CLIPS = 8  # clips decoded at once (10 frames at 1600x900 are ~43 MB per clip)
BASELINES = ("vo", "flow", "gpu_flow")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def load_world(root: Path) -> tuple[list[tuple[str, Media]], dict[str, list[dict[str, Any]]]]:
    """(clip_id, media) for every clip of both sources, and the 6 probe questions' QA rows per clip."""
    clips: list[tuple[str, Media]] = []
    for record in read_jsonl(root / "nuscenes_clips" / "clips_index.jsonl"):
        paths = [str(root / "nuscenes" / p) for p in record["frame_paths"]]
        clips.append((record["clip_id"], Media(kind="frames", frame_paths=paths)))
    for record in read_jsonl(root / "carla_clips" / "clips_index.jsonl"):
        video = root / "carla_videos_simulation" / f"{record['clip_id']}.mp4"
        clips.append((record["clip_id"], Media(kind="video", video_path=str(video))))
    qa: dict[str, list[dict[str, Any]]] = {}
    for source in ("nuscenes_clips", "carla_clips"):
        for row in read_jsonl(root / source / "qa.jsonl"):
            if row["question_id"] in PROBE_QUESTIONS:
                qa.setdefault(row["clip_id"], []).append(row)
    return clips, qa


def _chunks(items: list[tuple[str, Media]], size: int) -> Iterator[list[tuple[str, Media]]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def compute_signals(clips: list[tuple[str, Media]], device: str) -> dict[str, Any]:
    """Per-clip signals of the three probes, as JSON-ready lists."""
    out: dict[str, Any] = {}
    for chunk in _chunks(clips, CHUNK_CLIPS):
        frames = [load_frames(media, N_FRAMES)[0] for _, media in chunk]
        for (clip_id, _), clip in zip(chunk, frames, strict=True):
            vo, fl = vo_signals(clip), flow_signals(clip)
            out[clip_id] = {
                "vo": {
                    "yaw_deg": vo.yaw_deg.tolist(),
                    "disp_px": vo.disp_px.tolist(),
                    "method": list(vo.method),
                },
                "flow": {k: v.tolist() for k, v in fl._asdict().items()},
            }
        for (clip_id, _), gs in zip(chunk, gpu_flow_signals(frames, device=device), strict=True):
            out[clip_id]["gpu_flow"] = {k: v.tolist() for k, v in gs._asdict().items()}
        print(f"  {len(out)}/{len(clips)} clips", flush=True)
    return out


def typed_signals(baseline: str, signals: dict[str, Any]) -> VOSignals | FlowSignals:
    """One clip's cached signals of one baseline as the probe's signal tuple."""
    if baseline == "vo":
        s = signals["vo"]
        return VOSignals(np.array(s["yaw_deg"]), np.array(s["disp_px"]), tuple(s["method"]))
    return FlowSignals(**{k: np.array(v) for k, v in signals[baseline].items()})


def answers_for(baseline: str, signals: dict[str, Any], thresholds: Any = None) -> dict[str, str]:
    """The six answers of one baseline from cached signals."""
    typed = typed_signals(baseline, signals)
    if isinstance(typed, VOSignals):
        return vo_answers(typed, thresholds)
    return flow_answers(typed, thresholds)


def calibrate(
    baseline: str, signals: dict[str, Any], qa: dict[str, list[dict[str, Any]]], criterion: str
) -> Calibration:
    """Recalibrate one baseline's thresholds on a calibration world's signals and oracle answers."""
    clip_ids = sorted(signals)
    typed = [typed_signals(baseline, signals[c]) for c in clip_ids]
    oracle = [{row["question_id"]: row["answer"] for row in qa[c]} for c in clip_ids]
    if baseline == "vo":
        return calibrate_thresholds(typed, oracle, vo_answers, VOThresholds(), VO_GROUPS, criterion)
    return calibrate_thresholds(typed, oracle, flow_answers, FlowThresholds(), FLOW_GROUPS, criterion)


def prediction_records(
    baseline: str, signals: dict[str, Any], qa: dict[str, list[dict[str, Any]]], thresholds: Any = None
) -> list[dict[str, Any]]:
    """Upstream prediction records {qa_id, clip_id, question_id, category, oracle_label, model_answer}."""
    records = []
    for clip_id, clip_signals in signals.items():
        answers = answers_for(baseline, clip_signals, thresholds)
        for row in qa[clip_id]:
            records.append(
                {
                    "qa_id": row["qa_id"],
                    "clip_id": clip_id,
                    "question_id": row["question_id"],
                    "category": row["category"],
                    "oracle_label": row["answer"],
                    "model_answer": answers[row["question_id"]],
                }
            )
    return records


def metrics_table(results: dict[str, dict[str, Any]]) -> str:
    """Markdown: global and per-source figures, then balanced accuracy per question, in %."""
    lines = [
        "| baseline | Acc | BAcc | F1 | Temp. BAcc | nuScenes BAcc | CARLA BAcc | n |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, m in results.items():
        g, t, src = m["global"], m["temporal"], m["per_source"]
        lines.append(
            f"| {name} | {100 * g['accuracy']:.1f} | {100 * g['balanced_acc']:.1f} "
            f"| {100 * g['macro_f1']:.1f} | {100 * t['balanced_acc']:.1f} "
            f"| {100 * src['nuscenes']['balanced_acc']:.1f} "
            f"| {100 * src['carla']['balanced_acc']:.1f} | {m['n_total']} |"
        )
    lines += [
        "",
        "| baseline | " + " | ".join(PROBE_QUESTIONS) + " |",
        "|---" * (len(PROBE_QUESTIONS) + 1) + "|",
    ]
    for name, m in results.items():
        row = [f"{100 * m['per_question'][q]['balanced_acc']:.1f}" for q in PROBE_QUESTIONS]
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def label_balance(qa: dict[str, list[dict[str, Any]]]) -> str:
    """Markdown: oracle label counts per probe question."""
    counts: dict[str, dict[str, int]] = {q: {} for q in PROBE_QUESTIONS}
    for rows in qa.values():
        for row in rows:
            counts[row["question_id"]][row["answer"]] = counts[row["question_id"]].get(row["answer"], 0) + 1
    lines = ["| question | oracle labels |", "|---|---|"]
    for q, c in counts.items():
        lines.append(f"| {q} | " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())) + " |")
    return "\n".join(lines)


def world_signals(root: Path, out: Path, name: str, device: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Signals of a world (cached as out/signals_<name>.json) and its QA rows."""
    clips, qa = load_world(root)
    cache = out / f"signals_{name}.json"
    if cache.exists():
        return json.loads(cache.read_text())["signals"], qa
    print(f"{name}: {len(clips)} clips from {root}", flush=True)
    signals = compute_signals(clips, device)
    cache.write_text(json.dumps({"root": str(root), "signals": signals}))
    return signals, qa


def ensure_world(data: Path | None, out: Path, n: int, seed: int, name: str) -> Path:
    """An existing `synth egodyn` directory, or a new one rendered at the real data's native sizes."""
    if data is not None:
        return data
    root = out / f"world_{name}"
    if not (root / "selected_clips.json").exists():
        from kinegraph.benchmarks.egodyn.world import generate

        print(f"rendering {name} world: {n} nuScenes + {n} CARLA-style clips, seed {seed}", flush=True)
        generate(root, n, seed, width_px=1600, height_px=900, carla_width_px=1280, carla_height_px=720)
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="an existing `kinegraph synth egodyn` output (test world)")
    parser.add_argument("--n", type=int, default=100, help="clips per source when rendering (2n in all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--calib-data", type=Path, help="an existing `synth egodyn` output (calibration world)"
    )
    parser.add_argument("--calib-n", type=int, default=0, help="clips per source of the calibration world")
    parser.add_argument("--calib-seed", type=int, default=1)
    parser.add_argument("--out", type=Path, help="cache/output dir (default: a temporary one)")
    parser.add_argument("--device", default="auto", help="device of the torch flow probe")
    args = parser.parse_args()
    if args.calib_seed == args.seed and args.calib_data is None and args.calib_n:
        parser.error("the calibration world needs its own seed")
    # one torch thread: on a shared CPU, OpenMP barriers of many small tensor ops stall under load
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        print(f"torch flow probe device: {resolve_device(args.device)}")
        root = ensure_world(args.data, out, args.n, args.seed, "test")
        signals, qa = world_signals(root, out, "test", args.device)
        results = {b: score(prediction_records(b, signals, qa)) for b in BASELINES}
        (out / "metrics_default.json").write_text(json.dumps(results, indent=1))
        print(f"\n{len(signals)} test clips (seed {args.seed}), paper's default thresholds\n")
        print(metrics_table(results))
        print("\n" + label_balance(qa))
        if args.calib_data is None and not args.calib_n:
            return
        calib_root = ensure_world(args.calib_data, out, args.calib_n, args.calib_seed, "calib")
        calib_signals, calib_qa = world_signals(calib_root, out, "calib", args.device)
        for criterion in ("frequency", "balanced_accuracy"):
            calibrated, tuned = {}, {}
            for b in BASELINES:
                calibration = calibrate(b, calib_signals, calib_qa, criterion)
                tuned[b] = {"thresholds": vars(calibration.thresholds), "alphas": calibration.alphas}
                calibrated[f"{b} (recalibrated)"] = score(
                    prediction_records(b, signals, qa, calibration.thresholds)
                )
            (out / f"metrics_calibrated_{criterion}.json").write_text(json.dumps(calibrated, indent=1))
            print(f"\nrecalibrated on {len(calib_signals)} calibration clips, criterion '{criterion}'\n")
            print(metrics_table(calibrated))
            for b, t in tuned.items():
                alphas = ", ".join(f"{q} {a:.3g}" for q, a in t["alphas"].items())
                print(
                    f"\n{b} alphas: {alphas}\n{b} thresholds: "
                    + json.dumps({k: round(v, 4) for k, v in t["thresholds"].items()})
                )


if __name__ == "__main__":
    main()

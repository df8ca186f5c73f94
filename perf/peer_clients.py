"""What perf/peers.py and perf/run_memory.py share: 800x450 EgoDyn clips, the model server, measured clients.

Each client runs in its own process; its wall time, CPU time and peak RSS come from `os.wait4`, so every
client is measured the same way. The loopback model server (runner_throughput.py's) runs in a process of
its own and reports how many requests it saw.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from runner_throughput import SERVER, clip_ids, write_tables

CACHE_ROOT = Path(os.environ.get("KINEGRAPH_PERF_CACHE", "~/.cache/kinegraph-perf")).expanduser()
WIDTH, HEIGHT, FRAMES = 800, 450, 10  # the synthetic EgoDyn world's camera; EgoDyn sends 10 frames

# kinegraph: `kinegraph run egodyn --graph egodyn.vision` in process, the CLI's defaults otherwise
KINEGRAPH_CLIENT = """
import json, sys, time
from kinegraph.graphs import graph_spec
from kinegraph.run import execute
from kinegraph.types import RunConfig
data, out, base_url, concurrency, cache = sys.argv[1:6]
graph_spec("egodyn.vision").builder
start = time.perf_counter()
summary = execute(RunConfig(benchmark="egodyn", graph="egodyn.vision", model="vllm:bench", base_url=base_url,
    data=data, out_dir=out, concurrency=int(concurrency), use_cache=cache != "-",
    cache=None if cache == "-" else cache), show_progress=False)
print(json.dumps({"run_s": time.perf_counter() - start, "answers": summary.n_predictions,
    "decodes": summary.decodes, "cached": summary.usage.cached_requests}))
"""

# the least a client can do for the same requests: decode each clip once (OpenCV), encode its frames once
# (JPEG q90, as kinegraph), post every question's body through one aiohttp session, `concurrency` at once
BARE_CLIENT = """
import asyncio, base64, json, math, sys, time
import aiohttp, cv2

plan, base_url, concurrency = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])

def data_urls(video, indices):
    cap, frames, i = cv2.VideoCapture(video), {}, 0
    while i <= max(indices):
        ok, bgr = cap.read()
        if not ok:
            break
        if i in indices:
            frames[i] = bgr
        i += 1
    cap.release()
    jpegs = [cv2.imencode(".jpg", frames[j], [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes() for j in indices]
    return ["data:image/jpeg;base64," + base64.b64encode(b).decode() for b in jpegs]

async def main():
    calls, answered = asyncio.Semaphore(concurrency), 0
    clips = iter(plan)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
        async def ask(prompt, urls):
            nonlocal answered
            content = [{"type": "text", "text": prompt}] + [
                {"type": "image_url", "image_url": {"url": u}} for u in urls]
            body = json.dumps({"model": "bench", "messages": [{"role": "user", "content": content}],
                "max_tokens": 256, "temperature": 0.0})
            async with calls:
                async with session.post(base_url + "/chat/completions", data=body,
                        headers={"Content-Type": "application/json"}) as response:
                    json.loads(await response.read())["choices"][0]["message"]["content"]
                    answered += 1
        async def worker():
            for clip in clips:
                urls = await asyncio.to_thread(data_urls, clip["video"], clip["indices"])
                await asyncio.gather(*(ask(q["prompt"], urls) for q in clip["questions"]))
        per_clip = max(1, len(plan[0]["questions"]))
        await asyncio.gather(*(worker() for _ in range(math.ceil(concurrency / per_clip) + 2)))
    return answered

start = time.perf_counter()
answered = asyncio.run(main())
print(json.dumps({"run_s": time.perf_counter() - start, "answers": answered}))
"""

# Inspect AI: the same messages as one Sample per question (its images from the JPEG files of the same
# frames, as an Inspect dataset gives them), generate() only, its openai provider on the same server; a
# run that does not end in success is a failure of the measurement
INSPECT_CLIENT = """
import json, sys, time
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
from inspect_ai.solver import generate

plan, base_url, concurrency, log_dir, log_samples = sys.argv[1:6]
samples = [
    Sample(id=f"{clip['clip_id']}/{q['id']}", target="A", input=[ChatMessageUser(content=[
        ContentText(text=q["prompt"]), *[ContentImage(image=path) for path in clip["jpegs"]]])])
    for clip in json.load(open(plan)) for q in clip["questions"]
]
start = time.perf_counter()
logs = eval(Task(dataset=samples, solver=[generate()]), model="openai/bench", model_base_url=base_url,
    model_args={"responses_api": False},  # Chat Completions, what the other clients and the server speak
    max_connections=int(concurrency), log_dir=log_dir, log_samples=log_samples == "1", display="none",
    max_tokens=256, temperature=0.0)
if logs[0].status != "success":
    sys.exit(f"inspect eval ended {logs[0].status}: {logs[0].error.message if logs[0].error else ''}")
print(json.dumps({"run_s": time.perf_counter() - start, "answers": len(samples), "status": logs[0].status}))
"""


@dataclass
class Measured:
    """One client run: its own timing of the run, and the process's wall, CPU and peak RSS."""

    name: str
    run_s: float
    process_s: float
    cpu_s: float
    peak_rss_mib: float
    requests: int
    report: dict[str, Any] = field(default_factory=dict)


def dataset(n_clips: int) -> Path:
    """CARLA-layout EgoDyn clips (800x450, 10 frames, 14 questions each), each clip's frames also as the
    JPEG files kinegraph would send, and plan.json (clip, frame indices, prompt per question); written
    once per size under the perf cache."""
    root = CACHE_ROOT / f"egodyn-{WIDTH}x{HEIGHT}-v2-{n_clips}"
    if (root / "plan.json").is_file():
        return root
    from kinegraph.agents.images import encode_image
    from kinegraph.graphs.egodyn import prompts as egodyn_prompts
    from kinegraph.media import load_frames, write_video
    from kinegraph.suites import suites

    tmp = root.with_name(root.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    clip_dir, videos = tmp / "carla_clips", tmp / "carla_videos_transferred"
    (clip_dir / "arrays").mkdir(parents=True)
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH]
    noise = np.random.default_rng(0).integers(0, 12, (HEIGHT, WIDTH, 3), dtype=np.uint8)
    for c, clip_id in enumerate(clip_ids(n_clips)):
        stamp = np.repeat(np.array([(c >> b) & 1 for b in range(16)], np.uint8) * 255, 24)  # c in binary
        frames = []
        for f in range(FRAMES):  # a gradient scrolling by and a checker pattern, the clip's number stamped on
            frame = np.dstack(
                [(x + 7 * f + 13 * c) % 256, (2 * y + 5 * c) % 256, ((x // 40 + y // 40 + f + c) % 2) * 180]
            ).astype(np.uint8)
            frame += noise
            frame[:24, : stamp.size] = stamp[None, :, None]
            frames.append(frame)
        write_video(videos / f"{clip_id}.mp4", frames, fps=10.0)
    write_tables(clip_dir, clip_ids(n_clips))
    plan: dict[str, dict[str, Any]] = {}
    for sample in suites.get("egodyn").load(str(tmp)):
        clip = plan.get(sample.group)
        if clip is None:
            decoded, record = load_frames(sample.media, FRAMES)
            jpegs = []
            for i, frame in zip(record.indices, decoded, strict=True):
                path = tmp / "jpeg" / sample.group / f"{i}.jpg"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(encode_image(frame).data)
                jpegs.append(str(root / path.relative_to(tmp)))
            clip = plan[sample.group] = {
                "clip_id": sample.group,
                "video": str(root / Path(sample.media.video_path).relative_to(tmp)),
                "indices": record.indices,
                "jpegs": jpegs,
                "questions": [],
            }
        prompt = egodyn_prompts.single_prompt(sample.question, sample.options, FRAMES, [])
        clip["questions"].append({"id": sample.question_id, "prompt": prompt})
    (tmp / "plan.json").write_text(json.dumps(list(plan.values())))
    tmp.rename(root)
    return root


@contextmanager
def model_server(latency_s: float) -> Iterator[dict[str, Any]]:
    """The loopback OpenAI-compatible server in its own process; `seen["requests"]` is set on exit."""
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(latency_s)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    seen: dict[str, Any] = {}
    try:
        seen["base_url"] = server.stdout.readline().strip()
        yield seen
        server.stdin.write("\n")
        server.stdin.flush()
        seen["requests"], seen["most_at_once"] = map(int, server.stdout.readline().split())
    finally:
        server.stdin.close()
        server.wait(timeout=60)


def measure(name: str, argv: list[str], latency_s: float, env: dict[str, str] | None = None) -> Measured:
    """Run one client (argv; `{base_url}` is filled in) against a fresh server; its figures."""
    with model_server(latency_s) as seen:
        argv = [a.replace("{base_url}", seen["base_url"]) for a in argv]
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            start = time.perf_counter()
            proc = subprocess.Popen(argv, stdout=out, stderr=err, text=True, env=env)
            _, status, usage = os.wait4(proc.pid, 0)  # this child's own CPU and peak RSS
            proc.returncode = os.waitstatus_to_exitcode(status)
            process_s = time.perf_counter() - start
            out.seek(0)
            err.seek(0)
            out_text, err_text = out.read(), err.read()
    if proc.returncode != 0:
        raise RuntimeError(f"{name} failed:\n{err_text[-3000:]}")
    report = json.loads(out_text.strip().splitlines()[-1])
    return Measured(
        name=name,
        run_s=report["run_s"],
        process_s=process_s,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_rss_mib=usage.ru_maxrss / 1024,
        requests=seen["requests"],
        report=report,
    )


def kinegraph_argv(data: Path, out: Path, concurrency: int, cache: Path | None) -> list[str]:
    return [
        sys.executable,
        "-c",
        KINEGRAPH_CLIENT,
        str(data),
        str(out),
        "{base_url}",
        str(concurrency),
        str(cache) if cache else "-",
    ]


def bare_argv(data: Path, concurrency: int) -> list[str]:
    return [sys.executable, "-c", BARE_CLIENT, str(data / "plan.json"), "{base_url}", str(concurrency)]

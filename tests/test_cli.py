"""The CLI's contracts: one-line errors naming file, line and field, exit code 2; instant --help."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def kinegraph(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kinegraph.cli", *args], capture_output=True, text=True)


def test_help_lists_commands():
    result = kinegraph("--help")
    assert result.returncode == 0
    for command in ("demo", "evaluate", "synth"):
        assert command in result.stdout


def test_egodyn_bad_inputs(tmp_path):
    good = {
        "clip_id": "clip_1",
        "question_id": "speed_trend",
        "oracle_label": "steady",
        "model_answer": "steady",
    }
    path = tmp_path / "pred.jsonl"
    path.write_text(json.dumps(good) + "\n\n{oops\n")
    result = kinegraph("evaluate", "egodyn", str(path))
    assert result.returncode == 2
    assert (
        result.stderr.strip()
        == f"error: {path}:3: not valid JSON (Expecting property name enclosed in double quotes)"
    )
    path.write_text("")
    result = kinegraph("evaluate", "egodyn", str(path))
    assert result.returncode == 2 and "empty file" in result.stderr and "Traceback" not in result.stderr
    result = kinegraph("evaluate", "egodyn", str(tmp_path / "absent.jsonl"))
    assert result.returncode == 2 and "absent.jsonl" in result.stderr


def test_egodyn_unknown_question_is_counted_as_upstream_with_a_warning(tmp_path):
    rows = [
        {
            "clip_id": "clip_1",
            "question_id": "speed_trend",
            "oracle_label": "steady",
            "model_answer": "steady",
        },
        {"clip_id": "clip_1", "question_id": "mystery", "oracle_label": "a", "model_answer": "a"},
    ]
    path = tmp_path / "pred.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    out = tmp_path / "m.json"
    result = kinegraph("evaluate", "egodyn", str(path), "--out", str(out))
    assert result.returncode == 0
    assert "unknown question_id(s) counted as unparsed, as upstream: mystery" in result.stderr
    metrics = json.loads(out.read_text())
    assert (metrics["n_total"], metrics["n_parsed"]) == (2, 1)


def test_quantiphy_missing_column(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("id,video_id,question\n1,v,q\n")
    result = kinegraph("evaluate", "quantiphy", str(path))
    assert result.returncode == 2
    assert "p.csv: field 'video_type': column missing" in result.stderr


def test_unknown_synthetic_world():
    result = kinegraph("synth", "atlantis", "--out", "/tmp/none")
    assert result.returncode == 2 and "unknown synthetic world 'atlantis'" in result.stderr


@pytest.mark.slow
def test_model_options_reach_the_backend(tmp_path):
    from kinegraph.agents.loopback import OpenAILoopback
    from tests.support.run_data import write_egodyn_hf

    data = write_egodyn_hf(tmp_path / "data", n_clips=1)
    agents = {}
    with OpenAILoopback(responder=lambda body: "left") as server:
        for transport in ("sdk", "aiohttp"):
            out = tmp_path / transport
            args = ["run", "egodyn", "--graph", "egodyn.vision", "--data", str(data), "--out", str(out)]
            args += ["--model", "vllm:m", "--base-url", server.base_url, "--no-cache", "--no-progress"]
            result = kinegraph(*args, "--model-option", f"transport={transport}")
            assert result.returncode == 0, result.stderr
            config = json.loads((out / "run.json").read_text())["config"]
            assert config["model_options"] == {"transport": transport}
            agents[transport] = {r.headers.get("user-agent", "") for r in server.requests[-14:]}
        result = kinegraph(*args, "--model-option", "colour=blue")
    assert len(agents["sdk"]) == 1 and "OpenAI" in agents["sdk"].pop()
    assert len(agents["aiohttp"]) == 1 and "aiohttp" in agents["aiohttp"].pop()
    assert result.returncode == 2 and "vllm:m: the vllm provider has no option 'colour'" in result.stderr


@pytest.mark.slow
def test_unknown_graph_option_is_one_line_naming_the_valid_ones(tmp_path):
    from tests.support.run_data import write_egodyn_world

    data = write_egodyn_world(tmp_path / "data", n_clips=1)
    result = kinegraph(
        "run", "egodyn", "--graph", "egodyn.measured", "--data", str(data), "--out", str(tmp_path / "r"),
        "-O", "bogus=1", "--no-progress",
    )  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        "error: graph egodyn.measured has no option 'bogus' (options: focal_px, camera_height_m, "
        "pitch_deg, num_frames, correspondences, weights, scene_camera)"
    ]

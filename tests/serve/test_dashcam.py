"""A dashcam video is enough for every driving graph: over a real server, a plain question about an
ordinary video (question, options, video, trajectory) is answered by every registered graph, or refused
with a 4xx naming what is missing; never a server error. TAD and STSBench graphs get the video's
keyframes at their benchmark's keyframe rate, and ego poses read off the trajectory or measured from the
video; the response names each input the server made."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kinegraph.agents.protocol import GenerateRequest, TextPart
from kinegraph.benchmarks.egodyn.world import write_carla_clips
from kinegraph.graphs import graphs
from kinegraph.media import read_video, video_info, write_image
from kinegraph.serve import BackgroundServer
from kinegraph.types import RoleModel
from tests.support.serving import AUTH, TURN, TURN_OPTIONS, running, turning

#: request fields a refusal may name as what is missing (or the graph's own refusal, from /v1/graphs)
REQUEST_FIELDS = ("images", "prior", "video", "frames", "keysegments", "ego_poses", "trajectory", "task")


def answer(request: GenerateRequest) -> str:
    """A scripted VLM: EgoDyn's turn questions get a direction, every other prompt option A."""
    text = " ".join(p.text for m in request.messages for p in m.content if isinstance(p, TextPart))
    return "left" if "left, right, or going straight" in text else "<answer>A</answer>"


@pytest.fixture(scope="module")
def dashcam(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A data root holding a synthetic dashcam video (3 s at 10 Hz, the EgoDyn CARLA world) and one
    of its frames as an image: (root, video, image) relative to the root."""
    root = tmp_path_factory.mktemp("dashcam")
    write_carla_clips(root / "clips", 1, seed=21, width_px=480, height_px=270)
    video = next((root / "clips").rglob("*.mp4"))
    frames, _ = read_video(video, [0])
    write_image(root / "frame.jpg", frames[0])
    return root, str(video.relative_to(root)), "frame.jpg"


@pytest.fixture(scope="module")
def server(dashcam: tuple[Path, str, str]) -> Iterator[BackgroundServer]:
    analyzer = RoleModel(model="scripted:analyzer", options={"responses": "The road is clear."})
    with running(
        "scripted:dashcam",
        model_options={"fn": answer},
        roles={"analyzer": analyzer},
        data_root=dashcam[0],
        max_frames=64,
    ) as srv:
        yield srv


def ask(server: BackgroundServer, **fields: object) -> tuple[int, dict]:
    r = httpx.post(server.url + "/v1/qa", headers=AUTH, json=fields, timeout=120)
    return r.status_code, r.json()


@pytest.mark.slow
def test_every_graph_answers_a_plain_dashcam_question_or_names_what_is_missing(server, dashcam) -> None:
    root, video, _ = dashcam
    _, fps = video_info(root / video)
    listing = {g["name"]: g for g in httpx.get(server.url + "/v1/graphs", headers=AUTH).json()["graphs"]}
    assert set(listing) == set(graphs.names())
    outcomes = {}
    for name in graphs.names():
        plain = {"question": TURN, "options": TURN_OPTIONS, "video_path": video, "trajectory": turning(0.2)}
        outcomes[name] = ask(server, graph=name, fps=fps, **plain)
    assert {n: (s, b) for n, (s, b) in outcomes.items() if s >= 500} == {}
    unnamed = {}
    for name, (status, body) in outcomes.items():
        if status == 200:
            continue
        message = body["error"]["message"]
        refused = listing[name]["refused"]
        if not (400 <= status < 500 and (message == refused or message.split(":")[0] in REQUEST_FIELDS)):
            unnamed[name] = (status, message)
    assert unnamed == {}
    for name in graphs.names():  # the keyframe families take the video, none refuses it
        if name.split(".")[0] in ("tad", "stsbench"):
            status, body = outcomes[name]
            assert status == 200, (name, body)
            assert body["inputs"]["frames"] == "keyframes at 2 Hz from the video"
            assert body["frames"] is None or len(body["frames"]["indices"]) == 7, name  # 3 s at 2 Hz
    assert outcomes["tad.tcogmap"][1]["inputs"]["ego_poses"] == "from trajectory"
    assert outcomes["tad.baseline"][1]["frames"]["timestamps_s"] == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]


def test_the_documented_fields_answer_the_paper_agents_from_a_dashcam_video(server, dashcam) -> None:
    """docs/serve.md's fields per family: a video (and for TAD a task or keysegments: frames and poses
    derived), options; AutoDriDM one image. Each paper agent answers non-null."""
    root, video, image = dashcam
    _, fps = video_info(root / video)
    lettered = ["A. Turn left.", "B. Go straight.", "C. Turn right."]
    requests = {
        "egodyn.tools": {"question": TURN, "options": TURN_OPTIONS, "video_path": video, "fps": fps},
        "tad.tcogmap": {
            "question": "What is the ego vehicle doing?",
            "options": lettered,
            "task": "mc_action",
        },
        "tad.scene_cot": {
            "question": "What does the ego vehicle do?",
            "options": lettered,
            "keysegments": "derive",
        },
        "dsi.tools": {
            "question": "How does the camera move?",
            "options": ["left", "right", "forward", "back"],
        },
        "autodridm.tools": {"question": "What should the ego vehicle do?", "options": ["Stop", "Go"]},
    }
    answers = {}
    for name, fields in requests.items():
        media = {"frame_paths": [image]} if name.startswith("autodridm") else {"video_path": video}
        status, body = ask(server, graph=name, **{**media, **fields})
        assert status == 200, (name, body)
        answers[name] = (body["answer"], body["inputs"])
    assert answers["egodyn.tools"][0] == "left"
    assert all(a not in (None, "", []) for a, _ in answers.values()), answers
    assert answers["tad.tcogmap"][1] == {
        "frames": "keyframes at 2 Hz from the video",
        "ego_poses": "measured",
    }
    assert answers["tad.scene_cot"][1] == {
        "frames": "keyframes at 2 Hz from the video",
        "keysegments": "derived",
    }


def test_a_video_too_long_for_the_frame_limit_is_a_422_naming_the_video(server, dashcam) -> None:
    root, video, _ = dashcam
    with running("scripted:x", model_options={"responses": "A"}, data_root=root, max_frames=4) as small:
        status, body = ask(small, graph="tad.baseline", question="What happens?", video_path=video)
    assert status == 422
    assert body["error"]["message"] == (
        "video: 7 keyframes at 2 Hz exceed the limit of 4 frames per request (send a clip of at most 1.5 s)"
    )


def test_frames_with_a_trajectory_get_their_poses_from_it(server, dashcam) -> None:
    """TCogMap on frame files: the poses are read off the given trajectory at the frames' times."""
    root, video, _ = dashcam
    frames, _ = read_video(root / video, [0, 5, 10, 15, 20, 25])
    names = []
    for k, rgb in enumerate(frames):
        write_image(root / "frames" / f"{k}.jpg", rgb)
        names.append(f"frames/{k}.jpg")
    fields = {"question": "What is the ego vehicle doing?", "options": ["Turn left.", "Go straight."]}
    status, body = ask(
        server,
        graph="tad.tcogmap",
        frame_paths=names,
        fps=2.0,
        task="mc_action",
        trajectory=turning(0.4),
        **fields,
    )
    assert status == 200, body
    assert body["inputs"] == {"ego_poses": "from trajectory"}
    assert "Motion summary" in body["trace"][0]["prompt"]
    status, body = ask(server, graph="tad.tcogmap", frame_paths=names, fps=1.0, task="mc_action",
                       trajectory=turning(0.4), **fields)  # fmt: skip
    assert status == 422
    assert body["error"]["message"] == "trajectory: covers 0..3.1 s; the keyframes span 0..5 s"

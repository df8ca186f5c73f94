"""The shared frames -> prelude -> questions shape: one request per question, one decode per clip."""

from __future__ import annotations

import asyncio

from kinegraph.agents import get_backend
from kinegraph.graphs.egodyn.builders import answer_question, trajectory_blocks
from kinegraph.graphs.shapes import question_graph
from kinegraph.graphs.state import GraphContext
from kinegraph.suites import suites
from kinegraph.types import Status
from tests.support.run_data import write_egodyn_hf


def _clip(tmp_path):
    samples = suites.get("egodyn").load(str(write_egodyn_hf(tmp_path / "data", n_clips=1)))
    assert len(samples) == 14 and len({s.group for s in samples}) == 1
    return samples


def test_each_question_is_its_own_request_concurrently_on_frames_decoded_once(tmp_path):
    samples = _clip(tmp_path)
    asked: list[str] = []
    in_flight = [0, 0]  # now, most

    async def model(request):
        asked.append(request.messages[0].text)
        in_flight[0] += 1
        in_flight[1] = max(in_flight[1], in_flight[0])
        await asyncio.sleep(0.01)
        in_flight[0] -= 1
        return "left"

    graph = question_graph(answer_question(trajectory_blocks), num_frames=4)

    async def invoke():
        context = GraphContext(backend=get_backend("scripted:m", fn=model), limiter=asyncio.Semaphore(3))
        return context, await graph.ainvoke({"samples": samples, "results": []}, context=context)

    context, state = asyncio.run(invoke())
    assert context.stats.decodes == 1
    assert len(asked) == 14 and all(any(s.question in text for text in asked) for s in samples)
    assert in_flight[1] == 3  # concurrent, within the run-wide limit
    assert {p.sample_id for p in state["results"]} == {s.id for s in samples}
    assert len({tuple(p.frames.indices) for p in state["results"]}) == 1
    assert len(state["results"][0].frames.indices) == 4


def test_a_question_whose_node_crashes_is_a_graph_error_and_its_siblings_are_answered(tmp_path):
    samples = _clip(tmp_path)
    broken = samples[5].question

    def model(request):
        if broken in request.messages[0].text:
            raise RuntimeError("tool blew up")  # not a BackendError: the node itself fails
        return "straight"

    graph = question_graph(answer_question(trajectory_blocks), num_frames=2)
    context = GraphContext(backend=get_backend("scripted:m", fn=model))
    state = asyncio.run(graph.ainvoke({"samples": samples, "results": []}, context=context))
    by_id = {p.sample_id: p for p in state["results"]}
    assert len(by_id) == 14
    failed = [p for p in by_id.values() if p.status == Status.graph_error]
    assert [p.sample_id for p in failed] == [samples[5].id]
    assert failed[0].error == "RuntimeError: tool blew up"
    assert all(p.raw == "straight" for p in by_id.values() if p.sample_id != samples[5].id)

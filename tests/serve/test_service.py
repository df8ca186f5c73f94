"""The service's graph handling without a server: options checked by the spec, compiled graphs kept."""

from __future__ import annotations

import pytest

from kinegraph.serve.errors import ServeError
from kinegraph.serve.service import QAService, served_options
from kinegraph.serve.settings import ServeSettings
from kinegraph.types import RoleModel


@pytest.fixture
def service() -> QAService:
    return QAService(ServeSettings(graphs=("egodyn.vision", "egodyn.tools", "egodyn.oracle")))


def test_list_valued_options_compile_once_and_are_kept(service):
    spec = service.graphs["egodyn.tools"]
    options = served_options(spec, {"probes": ["vo"], "num_frames": 4}, max_frames=8)
    first = service.compiled(spec, options)
    assert service.compiled(spec, dict(reversed(options.items()))) is first
    assert service.compiled(spec, {**options, "probes": ["flow"]}) is not first


def test_options_are_refused_as_the_spec_refuses_them_plus_the_servers_limits(service):
    vision, oracle = service.graphs["egodyn.vision"], service.graphs["egodyn.oracle"]
    cases = [
        (vision, {"depth": 3}, "graph egodyn.vision has no option 'depth' (options: num_frames, "),
        (oracle, {"num_frames": 3}, "graph egodyn.oracle has no option 'num_frames' (options: none)"),
        (vision, {"num_frames": "3"}, "graph egodyn.vision option num_frames: expected int, got '3'"),
    ]
    for spec, options, message in cases:
        with pytest.raises(ServeError) as excinfo:
            served_options(spec, options, max_frames=8)
        assert excinfo.value.status == 422 and excinfo.value.message.startswith(f"graph_options: {message}")
    limits = [
        ({"num_frames": 9}, "num_frames: must be between 1 and 8"),
        ({"max_side": 0}, "max_side: must "),
    ]
    for options, message in limits:
        with pytest.raises(ServeError) as excinfo:
            served_options(vision, options, max_frames=8)
        assert excinfo.value.status == 422 and excinfo.value.message.startswith(f"graph_options.{message}")


def test_the_listing_comes_from_the_specs(service):
    infos = {info.name: info for info in service.graph_infos()}
    assert infos["egodyn.oracle"].options == [] and not infos["egodyn.oracle"].needs_model
    assert infos["egodyn.oracle"].available and not infos["egodyn.vision"].available  # no model configured
    assert infos["egodyn.tools"].description.startswith(
        "non-official: the VLM also gets, as text, what deterministic probes"
    )
    probes = next(o for o in infos["egodyn.tools"].options if o.name == "probes")
    assert (probes.type, probes.default) == ("Sequence[str]", "('vo', 'flow', 'tcogmap')")


def test_a_graph_whose_role_nothing_fills_is_unavailable_until_the_server_names_it():
    url, graphs = "http://127.0.0.1:9/v1", ("autodridm.baseline", "autodridm.explained")
    common = {"model": "vllm:vl", "base_url": url, "graphs": graphs, "default_graph": graphs[0]}
    plain = QAService(ServeSettings(**common))
    assert {g.name: g.available for g in plain.graph_infos()} == {
        "autodridm.baseline": True,
        "autodridm.explained": False,
    }
    with pytest.raises(ServeError) as excinfo:
        plain.served("autodridm.explained")
    assert excinfo.value.status == 503
    assert "needs --role analyzer=PROVIDER:MODEL" in excinfo.value.message

    judge = RoleModel(model="vllm:judge", base_url=url)
    named = QAService(ServeSettings(**common, roles={"analyzer": judge}))
    assert all(g.available for g in named.graph_infos())
    assert named.served("autodridm.explained").name == "autodridm.explained"
    assert f"{named.roles['analyzer'].provider}:{named.roles['analyzer'].model}" == "vllm:judge"
    with pytest.raises(ValueError, match="--role analyzer: no served graph has that model role"):
        QAService(ServeSettings(**{**common, "graphs": graphs[:1]}, roles={"analyzer": judge}))

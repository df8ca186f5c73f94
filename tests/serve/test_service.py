"""The service's graph handling without a server: options checked by the spec, compiled graphs kept."""

from __future__ import annotations

import pytest

from kinegraph.serve.errors import ServeError
from kinegraph.serve.service import QAService, served_options
from kinegraph.serve.settings import ServeSettings


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
        "the VLM also gets, as text, what deterministic probes"
    )
    probes = next(o for o in infos["egodyn.tools"].options if o.name == "probes")
    assert (probes.type, probes.default) == ("Sequence[str]", "('vo', 'flow', 'tcogmap')")

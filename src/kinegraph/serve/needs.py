"""What a served graph needs from a request, read off its `GraphSpec` declarations, never per graph.

A context field a graph declares in `needs_fields` (what a run's loader must supply) maps to the request
field that supplies it here; `needs_trajectory` asks for the clip's trajectory. A few declared fields are
evaluation data or synthetic-world files that no request can carry: a graph reading one is refused.
"""

from __future__ import annotations

from kinegraph.graphs import GraphSpec
from kinegraph.serve.errors import ServeError
from kinegraph.serve.schemas import QARequest

#: the request field that supplies each context field a graph may declare in `needs_fields`
REQUEST_FIELD = {
    "features": "trajectory",
    "ego_poses": "ego_poses",
    "ground_truth_prior": "prior",
    "options_text": "options",
    "image_name": "images",
}
_COUNTERFACTUAL = "it asks with QuantiPhy's scaled counterfactual prior and is scored on alt_posterior"
#: declared fields no request can supply, and why
UNSERVABLE = {
    "alt_prior": _COUNTERFACTUAL,
    "alt_posterior": _COUNTERFACTUAL,
    "source_dir": "it reads the truth sidecar of a world written by `kinegraph synth quantiphy`",
}
#: request fields the server may measure from the frames when a request lacks them
MEASURABLE = frozenset({"trajectory", "ego_poses"})


def request_needs(spec: GraphSpec) -> list[str]:
    """The request fields `spec` needs, in declaration order."""
    fields = ["trajectory"] if spec.needs_trajectory else []
    fields += [REQUEST_FIELD[f] for f in spec.needs_fields if f in REQUEST_FIELD]
    return list(dict.fromkeys(fields))


def refusal(spec: GraphSpec) -> str | None:
    """Why no request can be answered by `spec` (a declared need no request can carry), or None."""
    field = next((f for f in spec.needs_fields if f in UNSERVABLE), None)
    if field is None:
        return None
    return f"graph {spec.name} cannot be served: {UNSERVABLE[field]} ({field}), which a request cannot carry"


def supplied(request: QARequest, field: str, n_images: int) -> bool:
    """Whether `request` gives `field` (ego poses also come with a nuScenes scene; images as uploads)."""
    if field == "ego_poses":
        return request.ego_poses is not None or request.nuscenes_scene is not None
    if field == "images":
        return n_images + len(request.frame_paths) > 0
    return getattr(request, field) not in (None, [], "")


def check_needs(spec: GraphSpec, request: QARequest, n_images: int, has_media: bool) -> list[str]:
    """The fields to measure from the frames (empty when the request gives everything); a 422 naming
    the first needed field that is neither given nor measurable, or why the graph cannot be served."""
    reason = refusal(spec)
    if reason is not None:
        raise ServeError(422, reason)
    to_measure = []
    for field in request_needs(spec):
        if supplied(request, field, n_images):
            continue
        if field in MEASURABLE and has_media:
            to_measure.append(field)
            continue
        also = " (or frames to measure it from)" if field in MEASURABLE else ""
        raise ServeError(422, f"{field}: graph {spec.name} needs it{also}; see GET /v1/graphs")
    return to_measure

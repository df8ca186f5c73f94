"""STSBench's card: paper, licence, upstream, Hub layout, context schema, ad-hoc questions."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict  # pydantic builds schemas only from this one on 3.11

from kinegraph.benchmarks.card import Card, HubLayout, Question, lettered
from kinegraph.benchmarks.stsbench.loader import KEYFRAME_RATE_HZ

_STRICT = ConfigDict(extra="forbid", allow_inf_nan=False)


@with_config(_STRICT)
class STSBenchContext(TypedDict, total=False):
    """STSBench: the scenario's ego, agent and other-agent records (ego poses included)."""

    ego: dict[str, Any]
    agent: dict[str, Any]
    other_agent: dict[str, Any]


def shape(question: Question, fields: dict[str, Any], made: dict[str, str]) -> None:
    """STSBench's record layout: lettered options and the ego poses as `ego` (xyz, yaw)."""
    import numpy as np

    fields["options"] = lettered(question.options or [], ". ")
    poses = fields["context"].get("ego_poses")
    if poses:
        rotation = np.asarray(poses["rotation_wxyz"], dtype=float)
        yaw = np.arctan2(
            2 * (rotation[:, 0] * rotation[:, 3] + rotation[:, 1] * rotation[:, 2]),
            1 - 2 * (rotation[:, 2] ** 2 + rotation[:, 3] ** 2),
        )
        fields["context"]["ego"] = {"xyz": poses["translation_m"], "yaw": yaw.tolist()}


CARD = Card(
    name="stsbench",
    title="STSBench: spatio-temporal scenario understanding",
    paper="Fruhwirth-Reisinger et al., arXiv 2506.06218 (NeurIPS 2025 D&B)",
    licence="code MIT, data CC BY-NC-SA 4.0",
    upstream="github.com/LRP-IVC/STSBench@38c5174",
    hub=HubLayout(
        "ivc-lrp/STSBench",
        ("STSnu/*",),
        (("STSnu/STSnu.json", "STSnu.json"),),
        needs_nuscenes=True,
        loader_file=("STSnu/STSnu.json", "STSnu.json"),
    ),
    context=STSBenchContext,
    shape=shape,
    keyframe_rate_hz=KEYFRAME_RATE_HZ,
    data_hint="--data STSBENCH.json --data-option data_root=NUSCENES",
)

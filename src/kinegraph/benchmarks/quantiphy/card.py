"""QuantiPhy's card: paper, licence, upstream, Hub layout, context schema, ad-hoc questions."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict  # pydantic builds schemas only from this one on 3.11

from kinegraph.benchmarks.card import Card, HubLayout, Question, QuestionRefused

_STRICT = ConfigDict(extra="forbid", allow_inf_nan=False)
_KIND = {"length": "S", "speed": "V", "acceleration": "A"}


@with_config(_STRICT)
class QuantiPhyContext(TypedDict, total=False):
    """QuantiPhy: the prior and depth text of the question; `source_dir` (under the media root) holds a
    synthetic world's truth sidecar for the tracker graphs."""

    ground_truth_prior: str
    depth_info: str
    fps: float
    video_source: str
    alt_prior: str
    alt_posterior: float
    counterfactual_factor: float
    source_dir: str


def prior_text(prior: dict[str, Any]) -> str:
    """A prior (`quantity`, `value`, `unit`, optional `at_time_s`) as QuantiPhy's `ground_truth_prior`
    column writes it."""
    at = prior.get("at_time_s")
    lead = f"t={at:g}s, " if at is not None else ""
    return f"{lead}{prior['quantity']} = {prior['value']:g} {prior['unit']}"


def shape(question: Question, fields: dict[str, Any], made: dict[str, str]) -> None:
    """QuantiPhy's prior column, depths and codes ([prior kind][dim][objects][background])."""
    from kinegraph.benchmarks.quantiphy.loader import codes
    from kinegraph.tools.quantiphy_text import parse_prior
    from kinegraph.tools.units import parse_unit

    prior = question.extras.get("prior")
    if prior is None:
        return
    try:
        parse_unit(prior["unit"])
    except ValueError as exc:
        raise QuestionRefused(f"prior.unit: {exc}") from None
    text = prior_text(prior)
    try:
        unit = parse_prior(text).unit
    except ValueError as exc:
        raise QuestionRefused(f"prior: {exc}") from None
    kind = _KIND[unit.dimension] if unit else "S"
    depths = prior.get("depths")
    video_type = f"{kind}{'3' if depths else '2'}SC"
    fields["context"].update(ground_truth_prior=text, depth_info=depths or "", fps=fields["media"].fps)
    fields["metadata"] = {
        **codes(video_type, f"{kind}D"),
        "video_type": video_type,
        "inference_type": f"{kind}D",
    }


CARD = Card(
    name="quantiphy",
    title="QuantiPhy",
    paper="Puyin Li et al., CVPR 2026, arXiv 2512.19526",
    licence="code MIT, data CC-BY-4.0",
    upstream="github.com/Paulineli/QuantiPhy@426b0d8a7184d58cfcc4d20d56533adc9e0de7a3",
    hub=HubLayout(
        "PaulineLi/QuantiPhy-validation",
        ("*.csv", "*.parquet", "validation_videos/*"),
        (
            ("quantiphy_validation.csv", "validation_dataset.csv", "validation_dataset.parquet"),
            ("validation_videos",),
        ),
        video_globs=("validation_videos/*.mp4",),
        loader_file=("quantiphy_validation.csv", "validation_dataset.csv", "validation_dataset.parquet"),
    ),
    context=QuantiPhyContext,
    shape=shape,
    data_hint="--data quantiphy_validation.csv",
)

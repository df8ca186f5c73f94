"""The shipped graphs: one `GraphSpec` each, with what it needs declared here rather than on its builder.

Builders are `module:function` targets, imported only when a graph is built or its options are read.
"""

from __future__ import annotations

from typing import Any

from kinegraph.graphs.spec import GraphSpec


def _shipped(name: str, target: str, description: str, **needs: Any) -> GraphSpec:
    """A shipped graph: `target` is relative to `kinegraph.graphs`; the family is the name's prefix."""
    family, _, _ = name.partition(".")
    return GraphSpec(name, f"kinegraph.graphs.{target}", description, family=family, **needs)


SHIPPED: tuple[GraphSpec, ...] = (
    _shipped(
        "egodyn.vision",
        "egodyn:build_vision",
        "frames + question, upstream prompt; one question per request or grouped by clip",
    ),
    _shipped(
        "egodyn.trajectory",
        "egodyn:build_trajectory",
        "plus the ego trajectory as text (`text_only`: the paper's O=∅ ablation)",
        needs_trajectory=True,
    ),
    _shipped(
        "egodyn.text_only",
        "egodyn:build_text_only",
        "the trajectory text without frames (Table 4's O=∅ row)",
        needs_trajectory=True,
    ),
    _shipped(
        "egodyn.oracle",
        "egodyn_tools:build_oracle",
        "the labelling rules on the true kinematics, a sanity ceiling for every other graph",
        needs_model=False,
    ),
    _shipped(
        "egodyn.vo",
        "egodyn_tools:build_vo",
        "the paper's visual-odometry baseline (answers 6 questions)",
        needs_model=False,
    ),
    _shipped(
        "egodyn.flow",
        "egodyn_tools:build_flow",
        "the paper's Farneback flow heuristic (answers 6 questions)",
        needs_model=False,
    ),
    _shipped(
        "egodyn.gpu_flow",
        "egodyn_tools:build_gpu_flow",
        "dense flow in torch (Horn-Schunck, or RAFT), batched across clips, feeding the flow mapping",
        needs_model=False,
        needs_gpu=True,
    ),
    _shipped(
        "egodyn.tools",
        "egodyn:build_tools",
        "the VLM also gets, as text, what deterministic probes measured from the same frames",
    ),
    _shipped(
        "egodyn.measured",
        "egodyn_measured:build_measured",
        "frames -> measured metric trajectory -> official kinematics and oracle (14 answers)",
        needs_model=False,
    ),
    _shipped(
        "egodyn.measured_trajectory",
        "egodyn_measured:build_measured_trajectory",
        "`egodyn.trajectory` with the trajectory measured from the clip's frames instead of the true one",
    ),
    _shipped(
        "egodyn.tool_calls",
        "egodyn_calls:build_tool_calls",
        "upstream's prompt, with the probes of `egodyn.tools` offered as functions the model may call",
    ),
    _shipped(
        "quantiphy.zero_shot",
        "quantiphy:build_zero_shot",
        "the official v3 prompt with the video's frames (all of them by default)",
    ),
    _shipped(
        "quantiphy.prior_only",
        "quantiphy:build_prior_only",
        "v1, the same prompt without frames (the paper's video ablation)",
    ),
    _shipped(
        "quantiphy.counterfactual",
        "quantiphy:build_counterfactual",
        "v2, frames with the scaled `alt_prior` instead of the true prior, scored on `alt_posterior`",
        needs_fields=("alt_prior", "alt_posterior"),
    ),
    _shipped(
        "quantiphy.cot",
        "quantiphy:build_cot",
        "the three structured sub-questions, then the main question",
    ),
    _shipped(
        "quantiphy.oracle_tracks",
        "quantiphy_tools:build_oracle_tracks",
        "exact tracks from the synthetic world's sidecar -> calculator",
        needs_model=False,
    ),
    _shipped(
        "quantiphy.tracker",
        "quantiphy_tools:build_tracker",
        "the tracker seeded by the sidecar's frame-0 boxes -> calculator",
        needs_model=False,
    ),
    _shipped(
        "quantiphy.tools",
        "quantiphy_tools:build_tools",
        'VLM grounding -> tracker -> calculator -> "[value] [unit]"',
    ),
    _shipped(
        "quantiphy.hybrid",
        "quantiphy_tools:build_hybrid",
        "the tool answer when the measurement succeeds, else the VLM's zero-shot answer",
    ),
    _shipped(
        "tad.baseline",
        "tad:build_baseline",
        "keyframes + question (segment or scene prompt variant), upstream extraction",
    ),
    _shipped(
        "tad.blind",
        "tad:build_blind",
        "upstream's blind mode, a text stand-in for the frames",
    ),
    _shipped(
        "tad.ego_pose",
        "tad:build_ego_pose",
        "the baseline plus the raw ego poses as text (the paper's +EP ablation)",
    ),
    _shipped(
        "tad.tcogmap",
        "tad:build_tcogmap",
        "keyframes plus the ego-centric temporal cognitive map (per segment / per keysegment)",
    ),
    _shipped(
        "tad.tcogmap_only",
        "tad:build_tcogmap_only",
        "blind stand-in plus the cognitive map, no frames (the paper's Figure 4 probe)",
    ),
    _shipped(
        "tad.scene_cot",
        "tad_scene_cot:build_scene_cot",
        "caption each keysegment (4 chained VLM turns, 4 frames), then answer from the captions",
        model_roles=("captioner", "answerer"),
    ),
    _shipped(
        "stsbench.baseline",
        "stsbench:build_baseline",
        "the scenario's frames and upstream's multiple-choice prompt",
    ),
    _shipped(
        "stsbench.tcogmap",
        "stsbench:build_tcogmap",
        "plus TCogMap's ego-motion line from the record's ego poses",
    ),
    _shipped(
        "stsbench.scene_cot",
        "stsbench:build_scene_cot",
        "TAD's Scene-CoT on the scenario as one keysegment: 4 captioning turns, then the answerer",
        model_roles=("captioner", "answerer"),
    ),
    _shipped(
        "dsi.baseline",
        "dsi:build_baseline",
        "the video's frames and the official RAWQA prompt",
    ),
    _shipped(
        "dsi.tools",
        "dsi:build_tools",
        "plus the camera's self-motion measured by dense optical flow (non-official)",
    ),
    _shipped(
        "autodridm.baseline",
        "autodridm:build_baseline",
        "the image and the paper's prompts",
    ),
    _shipped(
        "autodridm.tools",
        "autodridm:build_tools",
        "plus measured illumination and lit-lamp cues (non-official)",
    ),
    _shipped(
        "autodridm.explained",
        "autodridm:build_explained",
        "the baseline, then the analyzer model tags the reasoning with error modes E1-E9 (Prompt 3)",
        model_roles=("backend", "analyzer"),
        own_model_roles=("analyzer",),
    ),
)

"""The shipped graphs: one `GraphSpec` each, with what it needs declared here rather than on its builder.

Builders are `module:function` targets, imported only when a graph is built or its options are read.
"""

from __future__ import annotations

from typing import Any

from kinegraph.graphs.spec import GraphSpec

# Algorithm 1's thresholds as upstream sets them (tools/tcogmap.py; literal here so listing imports no tools)
TCOGMAP_UPSTREAM: tuple[tuple[str, Any], ...] = (
    ("stationary_mps", 0.2),
    ("stopping_mps", 1.0),
    ("turn_yaw_deg", 10.0),
    ("lane_change_lateral_mps", 0.4),
    ("lane_change_min_forward_mps", 1.0),
)

# EgoDyn's probe thresholds as the paper prints them (tools/vo.py VOThresholds, tools/flow.py FlowThresholds)
VO_UPSTREAM: tuple[tuple[str, Any], ...] = (
    ("yaw_deadzone_deg", 0.03),
    ("yaw_peak_deg", 0.15),
    ("stopped_px", 0.5),
    ("moving_px", 2.0),
    ("trend_px_per_pair", 0.3),
    ("heading_deg", 1.5),
    ("lateral_deg", 0.8),
    ("brake_drop_fraction", 0.4),
)
FLOW_UPSTREAM: tuple[tuple[str, Any], ...] = (
    ("turn_px", 0.05),
    ("expansion_px", 0.2),
    ("lateral_px", 1.5),
    ("heading_px", 3.0),
    ("stopped_px", 0.3),
    ("moving_px", 1.5),
)


def _shipped(name: str, target: str, description: str, **needs: Any) -> GraphSpec:
    """A shipped graph: `target` is relative to `kinegraph.graphs`; the family is the name's prefix."""
    family, _, _ = name.partition(".")
    return GraphSpec(name, f"kinegraph.graphs.{target}", description, family=family, **needs)


SHIPPED: tuple[GraphSpec, ...] = (
    _shipped(
        "egodyn.vision",
        "egodyn.builders:build_vision",
        "frames + question, upstream prompt; one question per request or grouped by clip",
    ),
    _shipped(
        "egodyn.trajectory",
        "egodyn.builders:build_trajectory",
        "plus the ego trajectory as text (`text_only`: the paper's O=∅ ablation)",
        needs_trajectory=True,
        needs_fields=("features",),
    ),
    _shipped(
        "egodyn.text_only",
        "egodyn.builders:build_text_only",
        "the trajectory text without frames (Table 4's O=∅ row)",
        needs_trajectory=True,
        needs_fields=("features",),
    ),
    _shipped(
        "egodyn.blind",
        "egodyn.ablations:build_blind",
        "the question alone: no frames, no trajectory (Table 3's O=∅ row)",
    ),
    _shipped(
        "egodyn.static_first",
        "egodyn.ablations:build_static_first",
        "the clip's first frame I_0 alone (Table 3's static row; num_frames=1 gives the middle frame)",
    ),
    _shipped(
        "egodyn.shuffled",
        "egodyn.ablations:build_shuffled",
        "the clip's frames in a seeded random order, recorded in the trace (Table 3's shuffled row)",
    ),
    _shipped(
        "egodyn.oracle",
        "egodyn.tools:build_oracle",
        "non-official: the labelling rules on the true kinematics, a sanity ceiling for every other graph",
        needs_model=False,
        needs_trajectory=True,
        non_official=True,
        ceiling=True,
    ),
    _shipped(
        "egodyn.vo",
        "egodyn.tools:build_vo",
        "the paper's visual-odometry baseline (answers 6 questions)",
        needs_model=False,
        official_options=VO_UPSTREAM,  # other thresholds: a non-official ablation
    ),
    _shipped(
        "egodyn.flow",
        "egodyn.tools:build_flow",
        "the paper's Farneback flow heuristic (answers 6 questions)",
        needs_model=False,
        official_options=FLOW_UPSTREAM,
    ),
    _shipped(
        "egodyn.gpu_flow",
        "egodyn.tools:build_gpu_flow",
        "non-official: Horn-Schunck flow in torch, batched across clips (`method=raft_large`: the RAFT row)",
        needs_model=False,
        needs_gpu=True,
        non_official=True,
        # the paper's RAFT Flow row (Table 3): raft_large with upstream's input preparation (the default)
        official_options=(("method", "raft_large"), ("raft_preprocessing", "upstream"), ("thresholds", None)),
    ),
    _shipped(
        "egodyn.tools",
        "egodyn.builders:build_tools",
        "non-official: the VLM also gets, as text, what deterministic probes measured from the same frames",
        non_official=True,
    ),
    _shipped(
        "egodyn.measured",
        "egodyn.measured:build_measured",
        "non-official: frames -> measured metric trajectory -> official kinematics and oracle (14 answers)",
        needs_model=False,
        non_official=True,
    ),
    _shipped(
        "egodyn.measured_trajectory",
        "egodyn.measured:build_measured_trajectory",
        "non-official: `egodyn.trajectory` with the trajectory measured from the clip's frames",
        non_official=True,
    ),
    _shipped(
        "egodyn.tool_calls",
        "egodyn.calls:build_tool_calls",
        "non-official: upstream's prompt; `egodyn.tools`' probes as functions the model may call",
        non_official=True,
    ),
    _shipped(
        "egodyn.agent",
        "egodyn.agent:build_agent",
        "non-official: frames + question; the model may call the registry's VO, flow and ego trajectory",
        non_official=True,
    ),
    _shipped(
        "quantiphy.zero_shot",
        "quantiphy.builders:build_zero_shot",
        "the official v3 prompt with the video's frames (all of them by default)",
        needs_fields=("ground_truth_prior",),
        takes_video=True,
    ),
    _shipped(
        "quantiphy.prior_only",
        "quantiphy.builders:build_prior_only",
        "v1, the same prompt without frames (the paper's video ablation)",
        needs_fields=("ground_truth_prior",),
    ),
    _shipped(
        "quantiphy.counterfactual",
        "quantiphy.builders:build_counterfactual",
        "v2, frames with the scaled `alt_prior` instead of the true prior, scored on `alt_posterior`",
        needs_fields=("alt_prior", "alt_posterior"),
        takes_video=True,
    ),
    _shipped(
        "quantiphy.cot",
        "quantiphy.builders:build_cot",
        "the three structured sub-questions (from the prior when the data has none), then the main question",
        needs_fields=("ground_truth_prior",),
        takes_video=True,
    ),
    _shipped(
        "quantiphy.oracle_tracks",
        "quantiphy.tools:build_oracle_tracks",
        "non-official: exact tracks from the synthetic world's sidecar -> calculator (a sanity ceiling)",
        needs_model=False,
        needs_fields=("source_dir",),
        non_official=True,
        ceiling=True,
    ),
    _shipped(
        "quantiphy.tracker",
        "quantiphy.tools:build_tracker",
        "non-official: the tracker seeded by the sidecar's frame-0 boxes -> calculator",
        needs_model=False,
        needs_fields=("source_dir",),
        non_official=True,
    ),
    _shipped(
        "quantiphy.tools",
        "quantiphy.tools:build_tools",
        'non-official: VLM grounding -> tracker -> calculator -> "[value] [unit]"',
        needs_fields=("ground_truth_prior",),
        non_official=True,
    ),
    _shipped(
        "quantiphy.hybrid",
        "quantiphy.tools:build_hybrid",
        "non-official: the tool answer when the measurement succeeds, else the VLM's zero-shot answer",
        needs_fields=("ground_truth_prior",),
        non_official=True,
    ),
    _shipped(
        "quantiphy.agent",
        "quantiphy.agent:build_agent",
        "non-official: the v3 question and frames; the model may call the pixel-scale calculator and tracker",
        needs_fields=("ground_truth_prior",),
        non_official=True,
    ),
    _shipped(
        "tad.baseline",
        "tad.builders:build_baseline",
        "keyframes + question (segment or scene prompt variant), upstream extraction",
        takes_video=True,
    ),
    _shipped(
        "tad.blind",
        "tad.builders:build_blind",
        "upstream's blind mode, a text stand-in for the frames",
    ),
    _shipped(
        "tad.ego_pose",
        "tad.builders:build_ego_pose",
        "the baseline plus the raw ego poses as text (the paper's +EP ablation)",
        needs_fields=("ego_poses",),
        takes_video=True,
    ),
    _shipped(
        "tad.tcogmap",
        "tad.builders:build_tcogmap",
        "keyframes plus the ego-centric temporal cognitive map (per segment / per keysegment)",
        needs_fields=("ego_poses",),
        takes_video=True,
        official_options=TCOGMAP_UPSTREAM,  # other thresholds: a non-official ablation
    ),
    _shipped(
        "tad.tcogmap_only",
        "tad.builders:build_tcogmap_only",
        "blind stand-in plus the cognitive map, no frames (the paper's Figure 4 probe)",
        needs_fields=("ego_poses",),
        official_options=TCOGMAP_UPSTREAM,
    ),
    _shipped(
        "tad.scene_cot",
        "tad.scene_cot:build_scene_cot",
        "caption each keysegment (4 chained VLM turns, 4 frames), then answer from the captions",
        model_roles=("captioner", "answerer"),
        # Table 10's other styles: a named ablation; Table 11's detector context in kinegraph's wording
        official_options=(("caption_style", "both"), ("detections", None)),
    ),
    _shipped(
        "tad.agent",
        "tad.agent:build_agent",
        "non-official: keyframes + question; the model may call TCogMap on the ego poses and camera motion",
        non_official=True,
    ),
    _shipped(
        "stsbench.baseline",
        "stsbench.builders:build_baseline",
        "the scenario's frames and upstream's multiple-choice prompt",
    ),
    _shipped(
        "stsbench.tcogmap",
        "stsbench.builders:build_tcogmap",
        "plus TCogMap's ego-motion line from the record's ego poses",
    ),
    _shipped(
        "stsbench.scene_cot",
        "stsbench.builders:build_scene_cot",
        "TAD's Scene-CoT on the scenario as one keysegment: 4 captioning turns, then the answerer",
        model_roles=("captioner", "answerer"),
    ),
    _shipped(
        "stsbench.agent",
        "stsbench.agent:build_agent",
        "non-official: frames + question; the model may call TCogMap on the ego poses and camera motion",
        non_official=True,
    ),
    _shipped(
        "dsi.baseline",
        "dsi.builders:build_baseline",
        "the video's frames and the official RAWQA prompt",
        needs_fields=("options_text",),
    ),
    _shipped(
        "dsi.ffr",
        "dsi.builders:build_ffr",
        "the paper's free-form reasoning setting: the FFR prompt, <think> then <answer>, scored as RAWQA",
        needs_fields=("options_text",),
    ),
    _shipped(
        "dsi.tools",
        "dsi.builders:build_tools",
        "non-official: plus the camera's self-motion measured by dense optical flow",
        needs_fields=("options_text",),
        non_official=True,
    ),
    _shipped(
        "dsi.agent",
        "dsi.agent:build_agent",
        "non-official: the RAWQA prompt; the model may call camera motion and ground-plane visual odometry",
        needs_fields=("options_text",),
        non_official=True,
    ),
    _shipped(
        "autodridm.baseline",
        "autodridm.builders:build_baseline",
        "the image and the paper's prompts",
        needs_fields=("image_name", "options_text"),
    ),
    _shipped(
        "autodridm.few_shot",
        "autodridm.few_shot:build_few_shot",
        "the paper's k-shot setting: `shots` same-task exemplars (image, answer) drawn by `seed`",
        needs_fields=("image_name", "options_text"),
    ),
    _shipped(
        "autodridm.tools",
        "autodridm.builders:build_tools",
        "non-official: plus measured illumination and lit-lamp cues",
        needs_fields=("image_name", "options_text"),
        non_official=True,
    ),
    _shipped(
        "autodridm.agent",
        "autodridm.agent:build_agent",
        "non-official: the image and the paper's prompts; the model may call the image-cue tool",
        needs_fields=("image_name", "options_text"),
        non_official=True,
    ),
    _shipped(
        "autodridm.explained",
        "autodridm.builders:build_explained",
        "the baseline, then the analyzer model tags the reasoning with error modes E1-E9 (Prompt 3)",
        model_roles=("backend", "analyzer"),
        own_model_roles=("analyzer",),
    ),
)

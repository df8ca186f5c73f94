"""RAFT optical flow (Teed & Deng, ECCV 2020) in plain torch, as a learned dense-flow probe.

RAFT gives far better flow than the classical probes in `kinegraph.tools.flow` / `gpu_flow`, and runs on
CPU or GPU. torchvision ships it, but torchvision's compiled ops often clash with the installed torch, so
this module re-implements the network with the same layer names and shapes as torchvision's
`raft_small` / `raft_large`: the user's own downloaded torchvision checkpoints load with strict key
checking. Weights come from a local file or the torch hub cache; nothing is ever downloaded.

`raft_flow` turns uint8 RGB frame pairs into flow in pixels (x right, y down) at the working resolution.
Its `preprocessing` is EgoDyn's RAFT baseline by default (`upstream`, spec egodyn.md §3.3): frames
shrunk to the working width with OpenCV's INTER_AREA (as the classical flow baseline does), RGB to
[0, 1], zero-padded at the bottom and right to a multiple of 8, then torchvision's `OpticalFlow`
transform of the DEFAULT weights (normalise with mean 0.5, std 0.5, i.e. to [-1, 1]); the final
refinement, cropped back. `centred_edge` (non-official, kinegraph's earlier one) resizes with torch's
area mode and edge-pads on every side, centred.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from kinegraph.errors import DataError

RaftVariant = Literal["small", "large"]
RaftPreprocessing = Literal["upstream", "centred_edge"]
RAFT_PREPROCESSING: tuple[RaftPreprocessing, ...] = ("upstream", "centred_edge")

DOWNSAMPLE = 8  # the encoders work at 1/8 of the input resolution
NUM_FLOW_UPDATES = 12  # torchvision's default number of GRU refinement steps

# torchvision's published checkpoint file names, preferred first (its DEFAULT weights lead each list).
CHECKPOINT_FILES: dict[str, tuple[str, ...]] = {
    "large": (
        "raft_large_C_T_SKHT_V2-ff5fadd5.pth",
        "raft_large_C_T_V2-1bb1363a.pth",
        "raft_large_C_T_SKHT_V1-0b8c9e55.pth",
        "raft_large_C_T_V1-22a6c225.pth",
        "raft_large_C_T_SKHT_K_V2-b5c70766.pth",
        "raft_large_C_T_SKHT_K_V1-4a6a5039.pth",
    ),
    "small": (
        "raft_small_C_T_V2-01064c6d.pth",
        "raft_small_C_T_V1-ad48884c.pth",
    ),
}


@dataclass(frozen=True)
class RaftConfig:
    """Layer sizes of one RAFT variant; the two instances below mirror torchvision's hyper-parameters."""

    feature_layers: tuple[int, int, int, int, int]
    context_layers: tuple[int, int, int, int, int]
    bottleneck: bool  # bottleneck residual units (small) instead of plain ones (large)
    context_batch_norm: bool  # BatchNorm in the context encoder (large) or no norm at all (small)
    corr_levels: int
    corr_radius: int
    motion_corr_layers: tuple[int, ...]
    motion_flow_layers: tuple[int, int]
    motion_out: int
    hidden: int
    gru_kernels: tuple[tuple[int, int], ...]
    flow_head_hidden: int
    convex_upsampling: bool  # learned 8x upsampling mask (large) instead of bilinear (small)

    @property
    def corr_channels(self) -> int:
        """Channels of the looked-up correlation features: a (2r+1)^2 window per pyramid level."""
        return self.corr_levels * (2 * self.corr_radius + 1) ** 2

    @property
    def min_size_px(self) -> int:
        """Smallest input side: the coarsest correlation level must still be at least 2 cells wide."""
        return DOWNSAMPLE * 2 * 2 ** (self.corr_levels - 1)


CONFIGS: dict[str, RaftConfig] = {
    "large": RaftConfig(
        feature_layers=(64, 64, 96, 128, 256),
        context_layers=(64, 64, 96, 128, 256),
        bottleneck=False,
        context_batch_norm=True,
        corr_levels=4,
        corr_radius=4,
        motion_corr_layers=(256, 192),
        motion_flow_layers=(128, 64),
        motion_out=128,
        hidden=128,
        gru_kernels=((1, 5), (5, 1)),
        flow_head_hidden=256,
        convex_upsampling=True,
    ),
    "small": RaftConfig(
        feature_layers=(32, 32, 64, 96, 128),
        context_layers=(32, 32, 64, 96, 160),
        bottleneck=True,
        context_batch_norm=False,
        corr_levels=4,
        corr_radius=3,
        motion_corr_layers=(96,),
        motion_flow_layers=(64, 32),
        motion_out=82,
        hidden=96,
        gru_kernels=((3, 3),),
        flow_head_hidden=128,
        convex_upsampling=False,
    ),
}


# ---------------------------------------------------------------------------------------------- layers


def _conv_unit(
    c_in: int, c_out: int, kernel: int, *, stride: int = 1, norm: str | None = None, relu: bool = True
) -> nn.Sequential:
    """Conv (same padding, with bias) -> optional norm -> optional ReLU, indexed 0, 1, 2 as torchvision's
    Conv2dNormActivation so that checkpoint keys such as `convnormrelu.0.weight` line up."""
    layers: list[nn.Module] = [nn.Conv2d(c_in, c_out, kernel, stride, padding=(kernel - 1) // 2, bias=True)]
    if norm == "instance":
        layers.append(nn.InstanceNorm2d(c_out))
    elif norm == "batch":
        layers.append(nn.BatchNorm2d(c_out))
    if relu:
        layers.append(nn.ReLU(inplace=True))
    return nn.Sequential(*layers)


class ResidualUnit(nn.Module):
    """Two 3x3 conv units plus a (projected when strided) skip, then ReLU: RAFT-large's encoder unit."""

    def __init__(self, c_in: int, c_out: int, *, norm: str | None, stride: int) -> None:
        super().__init__()
        self.convnormrelu1 = _conv_unit(c_in, c_out, 3, stride=stride, norm=norm)
        self.convnormrelu2 = _conv_unit(c_out, c_out, 3, norm=norm)
        self.downsample = _skip(c_in, c_out, norm, stride)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu(self.downsample(x) + self.convnormrelu2(self.convnormrelu1(x)))


class BottleneckUnit(nn.Module):
    """1x1 -> 3x3 -> 1x1 conv units at a quarter of the width plus a skip, then ReLU: RAFT-small's unit."""

    def __init__(self, c_in: int, c_out: int, *, norm: str | None, stride: int) -> None:
        super().__init__()
        mid = c_out // 4
        self.convnormrelu1 = _conv_unit(c_in, mid, 1, norm=norm)
        self.convnormrelu2 = _conv_unit(mid, mid, 3, stride=stride, norm=norm)
        self.convnormrelu3 = _conv_unit(mid, c_out, 1, norm=norm)
        self.downsample = _skip(c_in, c_out, norm, stride)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.convnormrelu3(self.convnormrelu2(self.convnormrelu1(x)))
        return self.relu(self.downsample(x) + y)


def _skip(c_in: int, c_out: int, norm: str | None, stride: int) -> nn.Module:
    """Identity skip, or a strided 1x1 projection (no ReLU) when the unit downsamples."""
    return nn.Identity() if stride == 1 else _conv_unit(c_in, c_out, 1, stride=stride, norm=norm, relu=False)


class Encoder(nn.Module):
    """7x7/2 stem, three stages of two units (strides 1, 2, 2), 1x1 head: (B, 3, H, W) -> (B, C, H/8, W/8).

    Serves both as the feature encoder (instance norm) and the context encoder."""

    def __init__(self, layers: tuple[int, int, int, int, int], *, bottleneck: bool, norm: str | None) -> None:
        super().__init__()
        unit = BottleneckUnit if bottleneck else ResidualUnit
        self.convnormrelu = _conv_unit(3, layers[0], 7, stride=2, norm=norm)
        self.layer1 = _stage(unit, layers[0], layers[1], norm, stride=1)
        self.layer2 = _stage(unit, layers[1], layers[2], norm, stride=2)
        self.layer3 = _stage(unit, layers[2], layers[3], norm, stride=2)
        self.conv = nn.Conv2d(layers[3], layers[4], kernel_size=1)
        self._init_weights()

    def _init_weights(self) -> None:
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(module, nn.BatchNorm2d):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(self.layer3(self.layer2(self.layer1(self.convnormrelu(x)))))


def _stage(unit: type[nn.Module], c_in: int, c_out: int, norm: str | None, *, stride: int) -> nn.Sequential:
    """Two units; only the first changes width and stride."""
    return nn.Sequential(unit(c_in, c_out, norm=norm, stride=stride), unit(c_out, c_out, norm=norm, stride=1))


class MotionEncoder(nn.Module):
    """Encodes correlation features and the current flow; the raw flow is appended to its output."""

    def __init__(self, cfg: RaftConfig) -> None:
        super().__init__()
        corr = cfg.motion_corr_layers
        flow_1, flow_2 = cfg.motion_flow_layers
        self.convcorr1 = _conv_unit(cfg.corr_channels, corr[0], 1)
        self.convcorr2 = _conv_unit(corr[0], corr[1], 3) if len(corr) == 2 else nn.Identity()
        self.convflow1 = _conv_unit(2, flow_1, 7)
        self.convflow2 = _conv_unit(flow_1, flow_2, 3)
        self.conv = _conv_unit(corr[-1] + flow_2, cfg.motion_out - 2, 3)

    def forward(self, flow: torch.Tensor, corr: torch.Tensor) -> torch.Tensor:
        corr_features = self.convcorr2(self.convcorr1(corr))
        flow_features = self.convflow2(self.convflow1(flow))
        return torch.cat([self.conv(torch.cat([corr_features, flow_features], dim=1)), flow], dim=1)


class ConvGRU(nn.Module):
    """A convolutional GRU cell with one (kh, kw) kernel for its update, reset and candidate gates."""

    def __init__(self, input_size: int, hidden: int, kernel: tuple[int, int]) -> None:
        super().__init__()
        padding = ((kernel[0] - 1) // 2, (kernel[1] - 1) // 2)
        self.convz = nn.Conv2d(hidden + input_size, hidden, kernel, padding=padding)
        self.convr = nn.Conv2d(hidden + input_size, hidden, kernel, padding=padding)
        self.convq = nn.Conv2d(hidden + input_size, hidden, kernel, padding=padding)

    def forward(self, h: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        hx = torch.cat([h, x], dim=1)
        update = torch.sigmoid(self.convz(hx))
        reset = torch.sigmoid(self.convr(hx))
        candidate = torch.tanh(self.convq(torch.cat([reset * h, x], dim=1)))
        return h + update * (candidate - h)


class RecurrentBlock(nn.Module):
    """One GRU (small: 3x3) or two in sequence (large: 1x5 then 5x1, a separable 5x5)."""

    def __init__(self, input_size: int, hidden: int, kernels: tuple[tuple[int, int], ...]) -> None:
        super().__init__()
        for index, kernel in enumerate(kernels, start=1):
            self.add_module(f"convgru{index}", ConvGRU(input_size, hidden, kernel))

    def forward(self, h: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        for gru in self.children():
            h = gru(h, x)
        return h


class FlowHead(nn.Module):
    """Two 3x3 convs from the hidden state to the flow increment (2 channels, 1/8-resolution pixels)."""

    def __init__(self, hidden: int, width: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(hidden, width, 3, padding=1)
        self.conv2 = nn.Conv2d(width, 2, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.conv2(self.relu(self.conv1(h)))


class UpdateBlock(nn.Module):
    """Motion encoder -> GRU -> flow head: one refinement step of the flow estimate."""

    def __init__(self, cfg: RaftConfig) -> None:
        super().__init__()
        context_channels = cfg.context_layers[-1] - cfg.hidden
        self.motion_encoder = MotionEncoder(cfg)
        self.recurrent_block = RecurrentBlock(cfg.motion_out + context_channels, cfg.hidden, cfg.gru_kernels)
        self.flow_head = FlowHead(cfg.hidden, cfg.flow_head_hidden)

    def forward(
        self, h: torch.Tensor, context: torch.Tensor, corr: torch.Tensor, flow: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        motion = self.motion_encoder(flow, corr)
        h = self.recurrent_block(h, torch.cat([context, motion], dim=1))
        return h, self.flow_head(h)


class MaskPredictor(nn.Module):
    """Predicts the 9-neighbour convex weights of every 8x8 sub-pixel for learned upsampling (large)."""

    def __init__(self, hidden: int, width: int = 256, scale: float = 0.25) -> None:
        super().__init__()
        self.convrelu = _conv_unit(hidden, width, 3)
        self.conv = nn.Conv2d(width, DOWNSAMPLE * DOWNSAMPLE * 9, 1)
        self.scale = scale  # the original RAFT damps this branch by 0.25; checkpoints expect it

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.scale * self.conv(self.convrelu(h))


# ----------------------------------------------------------------------------------- correlation, grid


def correlation_pyramid(fmap1: torch.Tensor, fmap2: torch.Tensor, levels: int) -> list[torch.Tensor]:
    """All-pairs feature dot products / sqrt(C) as (B*h*w, 1, h, w) maps, avg-pooled `levels - 1` times."""
    batch, channels, height, width = fmap1.shape
    corr = torch.matmul(fmap1.flatten(2).transpose(1, 2), fmap2.flatten(2)) / channels**0.5
    pyramid = [corr.reshape(batch * height * width, 1, height, width)]
    for _ in range(levels - 1):
        pyramid.append(F.avg_pool2d(pyramid[-1], kernel_size=2, stride=2))
    return pyramid


def lookup_correlation(pyramid: list[torch.Tensor], coords: torch.Tensor, radius: int) -> torch.Tensor:
    """Bilinearly sample a (2r+1)^2 window around `coords` (B, 2, h, w; x then y) in every pyramid level.

    Channels run level-major, then x-offset, then y-offset: the order the pretrained weights expect."""
    batch, _, height, width = coords.shape
    offsets = torch.arange(-radius, radius + 1, device=coords.device, dtype=coords.dtype)
    side = offsets.numel()
    dx, dy = offsets.view(side, 1).expand(side, side), offsets.view(1, side).expand(side, side)
    window = torch.stack([dx, dy], dim=-1)  # (side, side, 2): x-offset along rows, y-offset along columns
    centres = coords.permute(0, 2, 3, 1).reshape(batch * height * width, 1, 1, 2)
    sampled = []
    for level, corr in enumerate(pyramid):
        points = centres / 2**level + window
        sampled.append(_sample_pixels(corr, points).view(batch, height, width, side * side))
    return torch.cat(sampled, dim=-1).permute(0, 3, 1, 2).contiguous()


def _sample_pixels(images: torch.Tensor, points: torch.Tensor) -> torch.Tensor:
    """grid_sample with pixel coordinates (x, y) instead of [-1, 1]; zeros outside the image."""
    height, width = images.shape[-2:]
    scale = torch.tensor([2 / (width - 1), 2 / (height - 1)], device=points.device, dtype=points.dtype)
    return F.grid_sample(images, points * scale - 1, mode="bilinear", align_corners=True)


def pixel_grid(batch: int, height: int, width: int, device: torch.device) -> torch.Tensor:
    """(B, 2, H, W) float grid of pixel coordinates, channel 0 = x (column), channel 1 = y (row)."""
    rows, cols = torch.arange(height, device=device), torch.arange(width, device=device)
    ys, xs = torch.meshgrid(rows, cols, indexing="ij")
    return torch.stack([xs, ys]).float().expand(batch, 2, height, width)


def upsample_flow(flow: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """1/8-resolution flow -> full resolution (values x8): convex 3x3 mix by `mask`, else bilinear."""
    batch, _, height, width = flow.shape
    factor = DOWNSAMPLE
    if mask is None:
        size = (height * factor, width * factor)
        return factor * F.interpolate(flow, size=size, mode="bilinear", align_corners=True)
    weights = torch.softmax(mask.view(batch, 1, 9, factor, factor, height, width), dim=2)
    neighbours = F.unfold(factor * flow, kernel_size=3, padding=1).view(batch, 2, 9, 1, 1, height, width)
    fine = (weights * neighbours).sum(dim=2)  # (B, 2, 8, 8, h, w): sub-row, sub-column per coarse cell
    return fine.permute(0, 1, 4, 2, 5, 3).reshape(batch, 2, height * factor, width * factor)


# ------------------------------------------------------------------------------------------------ model


class Raft(nn.Module):
    """RAFT with torchvision's module names; `forward` returns only the final full-resolution flow."""

    def __init__(self, cfg: RaftConfig) -> None:
        super().__init__()
        self.cfg = cfg
        context_norm = "batch" if cfg.context_batch_norm else None
        self.feature_encoder = Encoder(cfg.feature_layers, bottleneck=cfg.bottleneck, norm="instance")
        self.context_encoder = Encoder(cfg.context_layers, bottleneck=cfg.bottleneck, norm=context_norm)
        self.update_block = UpdateBlock(cfg)
        self.mask_predictor = MaskPredictor(cfg.hidden) if cfg.convex_upsampling else None

    def forward(
        self, image1: torch.Tensor, image2: torch.Tensor, num_flow_updates: int = NUM_FLOW_UPDATES
    ) -> torch.Tensor:
        """(B, 3, H, W) images in [-1, 1], H and W multiples of 8 and >= `cfg.min_size_px` -> (B, 2, H, W)
        flow in pixels mapping image1 onto image2."""
        self._check_inputs(image1, image2)
        fmap1, fmap2 = self.feature_encoder(torch.cat([image1, image2], dim=0)).chunk(2, dim=0)
        pyramid = correlation_pyramid(fmap1, fmap2, self.cfg.corr_levels)
        hidden, context = self._split_context(self.context_encoder(image1))
        coords0 = pixel_grid(fmap1.shape[0], fmap1.shape[2], fmap1.shape[3], fmap1.device)
        coords1 = coords0
        for _ in range(num_flow_updates):
            corr = lookup_correlation(pyramid, coords1, self.cfg.corr_radius)
            hidden, delta = self.update_block(hidden, context, corr, coords1 - coords0)
            coords1 = coords1 + delta
        mask = None if self.mask_predictor is None else self.mask_predictor(hidden)
        return upsample_flow(coords1 - coords0, mask)

    def _split_context(self, context_out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """First `hidden` channels -> tanh initial GRU state; the rest -> ReLU context features."""
        hidden, context = context_out.split([self.cfg.hidden, context_out.shape[1] - self.cfg.hidden], dim=1)
        return torch.tanh(hidden), F.relu(context)

    def _check_inputs(self, image1: torch.Tensor, image2: torch.Tensor) -> None:
        """RAFT needs equal shapes, sides divisible by 8 and large enough for the correlation pyramid."""
        if image1.shape != image2.shape:
            raise ValueError(f"image shapes differ: {tuple(image1.shape)} vs {tuple(image2.shape)}")
        height, width = image1.shape[-2:]
        if height % DOWNSAMPLE or width % DOWNSAMPLE:
            raise ValueError(f"image sides must be multiples of {DOWNSAMPLE}, got {height}x{width}")
        if min(height, width) < self.cfg.min_size_px:
            raise ValueError(f"image sides must be >= {self.cfg.min_size_px} px, got {height}x{width}")


# ------------------------------------------------------------------------------------ building, loading


def build_raft(variant: RaftVariant) -> Raft:
    """A randomly initialised RAFT-`variant` in eval mode (no weights are fetched from anywhere)."""
    if variant not in CONFIGS:
        raise ValueError(f"unknown RAFT variant {variant!r}; expected one of {sorted(CONFIGS)}")
    return Raft(CONFIGS[variant]).eval()


def load_raft(variant: RaftVariant, weights: str | Path | None = None) -> Raft:
    """RAFT-`variant` with torchvision weights from `weights`, else from the torch hub cache; never downloads.

    Raises FileNotFoundError (naming every path tried) when no checkpoint is found, and DataError when
    the checkpoint's keys or shapes do not match the variant."""
    model = build_raft(variant)
    path = find_checkpoint(variant, weights)
    model.load_state_dict(_read_state_dict(path, model), strict=True)
    return model.eval()


def hub_checkpoint_paths(variant: RaftVariant) -> list[Path]:
    """Where torchvision would have cached this variant's checkpoints: <torch hub dir>/checkpoints/<file>."""
    folder = Path(torch.hub.get_dir()) / "checkpoints"
    return [folder / name for name in CHECKPOINT_FILES[variant]]


def find_checkpoint(variant: RaftVariant, weights: str | Path | None = None) -> Path:
    """The explicit `weights` file if given, else the first known torchvision file in the hub cache."""
    if variant not in CHECKPOINT_FILES:
        raise ValueError(f"unknown RAFT variant {variant!r}; expected one of {sorted(CHECKPOINT_FILES)}")
    candidates = [Path(weights).expanduser()] if weights is not None else hub_checkpoint_paths(variant)
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(_missing_message(variant, candidates, explicit=weights is not None))


def _missing_message(variant: RaftVariant, looked_at: list[Path], *, explicit: bool) -> str:
    """One paragraph: what was looked for, where, and how to provide it (kinegraph downloads nothing)."""
    tried = ", ".join(str(path) for path in looked_at)
    default = CHECKPOINT_FILES[variant][0]
    hint = (
        f"no RAFT-{variant} checkpoint at {tried}. kinegraph never downloads weights: fetch torchvision's "
        f"https://download.pytorch.org/models/{default} yourself and pass its path as weights=, "
    )
    if explicit:
        cache = hub_checkpoint_paths(variant)[0].parent
        return hint + f"or drop weights= to use the torch hub cache ({cache})."
    return hint + f"or put it in {looked_at[0].parent} (the torch hub cache; set TORCH_HOME to move it)."


def _read_state_dict(path: Path, model: nn.Module) -> dict[str, torch.Tensor]:
    """Load a checkpoint (plain or wrapped in 'model'/'state_dict', optionally 'module.'-prefixed) and
    check its keys and shapes against `model`, failing with a one-line DataError."""
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # any unpickling failure means "not a usable checkpoint"
        reason = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"
        raise DataError(f"cannot read checkpoint: {reason}", path=path) from exc
    state = _unwrap(checkpoint, path)
    expected = model.state_dict()
    for key, value in expected.items():  # old BatchNorm checkpoints lack this (unused) counter
        if key.endswith("num_batches_tracked") and key not in state:
            state[key] = torch.zeros_like(value)
    problem = _key_problems(state, expected)
    if problem:
        raise DataError(f"not a torchvision RAFT checkpoint for this variant: {problem}", path=path)
    return state


def _unwrap(checkpoint: object, path: Path) -> dict[str, torch.Tensor]:
    """The tensor mapping inside a checkpoint, with a DataParallel 'module.' prefix removed."""
    for wrapper in ("model", "state_dict"):
        if isinstance(checkpoint, Mapping) and isinstance(checkpoint.get(wrapper), Mapping):
            checkpoint = checkpoint[wrapper]
            break
    if not isinstance(checkpoint, Mapping) or not _all_tensors(checkpoint):
        raise DataError("checkpoint is not a state dict of tensors", path=path)
    state = {str(key): value for key, value in checkpoint.items()}
    if state and all(key.startswith("module.") for key in state):
        state = {key.removeprefix("module."): value for key, value in state.items()}
    return state


def _all_tensors(mapping: Mapping[object, object]) -> bool:
    """True when every value is a tensor, as in a state dict."""
    return all(isinstance(value, torch.Tensor) for value in mapping.values())


def _key_problems(state: Mapping[str, torch.Tensor], expected: Mapping[str, torch.Tensor]) -> str:
    """'' when keys and shapes match, else a one-line summary of missing / unexpected / mis-shaped keys."""
    missing = sorted(expected.keys() - state.keys())
    unexpected = sorted(state.keys() - expected.keys())
    shapes = sorted(
        f"{key} {tuple(state[key].shape)} != {tuple(value.shape)}"
        for key, value in expected.items()
        if key in state and state[key].shape != value.shape
    )
    groups = (("missing keys", missing), ("unexpected keys", unexpected), ("bad shapes", shapes))
    parts = [f"{label} ({len(items)}): {_abbreviate(items)}" for label, items in groups if items]
    return "; ".join(parts)


def _abbreviate(items: list[str], limit: int = 4) -> str:
    """The first `limit` items, comma-separated, with a count of the rest."""
    shown = ", ".join(items[:limit])
    return shown + (f", ... (+{len(items) - limit} more)" if len(items) > limit else "")


# ----------------------------------------------------------------------------------------------- flow


def raft_flow(
    model: Raft,
    frames_a: np.ndarray,
    frames_b: np.ndarray,
    *,
    device: str | torch.device = "cpu",
    batch_size: int = 8,
    num_flow_updates: int = NUM_FLOW_UPDATES,
    max_width_px: int | None = None,
    preprocessing: RaftPreprocessing = "upstream",
) -> np.ndarray:
    """Dense flow from each frame of `frames_a` to the same-index frame of `frames_b`.

    Frames are (N, H, W, 3) uint8 RGB. They are first downscaled (area) to at most `max_width_px` wide, if
    given; that is the working resolution (H', W'). Returns (N, H', W', 2) float32: channel 0 = x
    (rightward), channel 1 = y (downward), in pixels of the working resolution, so that pixel p of frame
    a is seen at p + flow[p] in frame b. Pairs run `batch_size` at a time under `torch.inference_mode()`;
    the model is moved to `device` and put in eval mode. The all-pairs correlation volume takes about
    4 * (H' * W' / 64)^2 bytes per pair (~4 GB at 1920x1080, ~50 MB at 640x360): use `max_width_px`.
    Frames smaller than 128 px a side are padded up to it (RAFT's correlation pyramid needs that).
    `preprocessing`: `upstream` (EgoDyn's baseline, the default) or `centred_edge` (non-official); see
    the module docstring.
    """
    _check_frames(frames_a, frames_b)
    if preprocessing not in RAFT_PREPROCESSING:
        raise ValueError(f"preprocessing must be one of {list(RAFT_PREPROCESSING)}, got {preprocessing!r}")
    to_input, run = (
        (_upstream_input, _bottom_right_padded_flow)
        if preprocessing == "upstream"
        else (_to_model_input, _padded_flow)
    )
    if batch_size < 1 or num_flow_updates < 1:
        raise ValueError(f"batch_size and num_flow_updates must be >= 1, got {batch_size}/{num_flow_updates}")
    target = torch.device(device)
    model.to(target).eval()
    size = working_size(frames_a.shape[1], frames_a.shape[2], max_width_px)
    flow = np.empty((len(frames_a), *size, 2), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(frames_a), batch_size):
            stop = start + batch_size
            image1 = to_input(frames_a[start:stop], size, target)
            image2 = to_input(frames_b[start:stop], size, target)
            flow[start:stop] = run(model, image1, image2, num_flow_updates).cpu().numpy()
    return flow


def working_size(height: int, width: int, max_width_px: int | None) -> tuple[int, int]:
    """(H', W'): the frame size, shrunk to `max_width_px` wide (aspect kept) when it is wider."""
    if max_width_px is None or width <= max_width_px:
        return height, width
    if max_width_px < 1:
        raise ValueError(f"max_width_px must be >= 1, got {max_width_px}")
    return max(1, round(height * max_width_px / width)), max_width_px


def _check_frames(frames_a: np.ndarray, frames_b: np.ndarray) -> None:
    """Both arrays must be uint8 (N, H, W, 3) of the same shape."""
    for name, frames in (("frames_a", frames_a), ("frames_b", frames_b)):
        if not isinstance(frames, np.ndarray) or frames.dtype != np.uint8:
            raise ValueError(f"{name} must be a uint8 numpy array, got {type(frames).__name__}")
        if frames.ndim != 4 or frames.shape[-1] != 3:
            raise ValueError(f"{name} must have shape (N, H, W, 3), got {frames.shape}")
    if frames_a.shape != frames_b.shape:
        raise ValueError(f"frames_a and frames_b differ in shape: {frames_a.shape} vs {frames_b.shape}")


def _to_model_input(frames: np.ndarray, size: tuple[int, int], device: torch.device) -> torch.Tensor:
    """uint8 (B, H, W, 3) -> float (B, 3, H', W') in [-1, 1], as torchvision's OpticalFlow transform."""
    images = torch.from_numpy(np.ascontiguousarray(frames)).to(device).permute(0, 3, 1, 2).float()
    if tuple(images.shape[-2:]) != size:
        images = F.interpolate(images, size=size, mode="area")
    return ((images / 255.0 - 0.5) / 0.5).contiguous()


def _upstream_input(frames: np.ndarray, size: tuple[int, int], device: torch.device) -> torch.Tensor:
    """uint8 (B, H, W, 3) -> float (B, 3, H', W') in [0, 1], shrunk with OpenCV's INTER_AREA on the uint8
    frames (EgoDyn's RAFT baseline); the normalisation to [-1, 1] comes after the padding."""
    import cv2

    if tuple(frames.shape[1:3]) != size:
        frames = np.stack([cv2.resize(f, (size[1], size[0]), interpolation=cv2.INTER_AREA) for f in frames])
    images = torch.from_numpy(np.ascontiguousarray(frames)).to(device).permute(0, 3, 1, 2)
    return images.float() / 255.0


def _bottom_right_padded_flow(
    model: Raft, image1: torch.Tensor, image2: torch.Tensor, updates: int
) -> torch.Tensor:
    """Zero-pad [0, 1] images at the bottom and right to a multiple of 8 (and the model's minimum side),
    apply torchvision's OpticalFlow normalisation, run, keep the top-left (B, H, W, 2) flow."""
    height, width = image1.shape[-2:]
    pads = (
        0,
        _padded_side(width, model.cfg.min_size_px) - width,
        0,
        _padded_side(height, model.cfg.min_size_px) - height,
    )
    first, second = ((F.pad(image, pads, value=0.0) - 0.5) / 0.5 for image in (image1, image2))
    flow = model(first.contiguous(), second.contiguous(), updates)
    return flow[:, :, :height, :width].permute(0, 2, 3, 1)


def _padded_flow(model: Raft, image1: torch.Tensor, image2: torch.Tensor, updates: int) -> torch.Tensor:
    """Edge-pad (centred) to multiples of 8 and at least the model's minimum side, run, crop back.

    Returns (B, H, W, 2) flow for the unpadded images."""
    height, width = image1.shape[-2:]
    pad_h = _padded_side(height, model.cfg.min_size_px) - height
    pad_w = _padded_side(width, model.cfg.min_size_px) - width
    top, left = pad_h // 2, pad_w // 2
    pads = (left, pad_w - left, top, pad_h - top)
    flow = model(F.pad(image1, pads, mode="replicate"), F.pad(image2, pads, mode="replicate"), updates)
    return flow[:, :, top : top + height, left : left + width].permute(0, 2, 3, 1)


def _padded_side(side: int, minimum: int) -> int:
    """The smallest multiple of 8 that is >= both `side` and `minimum`."""
    return -(-max(side, minimum) // DOWNSAMPLE) * DOWNSAMPLE

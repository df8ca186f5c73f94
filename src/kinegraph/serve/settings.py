"""Server settings: the model behind the graphs, API keys, the data root and every request limit.

API keys come from `KINEGRAPH_API_KEYS` (comma-separated) and/or a keys file (one key per line, `#`
comments). Without any key the server runs unauthenticated and may only listen on loopback.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kinegraph.types import RoleModel

KEYS_ENV = "KINEGRAPH_API_KEYS"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


class ServeSettings(BaseModel):
    """Everything the app needs; `kinegraph serve` fills it from options and environment variables."""

    model_config = ConfigDict(frozen=True)

    model: str | None = Field(None, description="PROVIDER:MODEL behind the graphs (None: VLM-free only).")
    base_url: str | None = None
    model_options: dict[str, Any] = Field(
        default_factory=dict, description="Backend options of `model` (`--model-option key=value`)."
    )
    roles: dict[str, RoleModel] = Field(
        default_factory=dict, description="Model roles on their own models (`--role NAME=PROVIDER:MODEL`)."
    )
    cache: str | None = Field(None, description="Response cache (SQLite) path; None: no cache.")
    graphs: tuple[str, ...] = Field((), description="Graphs to serve; empty: every registered graph.")
    default_graph: str = "egodyn.vision"
    api_keys: frozenset[str] = frozenset()
    data_root: Path | None = Field(None, description="Directory file references are confined to.")
    nuscenes_version: str = Field("v1.0-trainval", description="Tables read for `nuscenes_scene` requests.")
    max_body_bytes: int = Field(32 * 2**20, gt=0)
    max_image_pixels: int = Field(4096 * 4096, gt=0, description="Per image (and per video frame).")
    max_frames: int = Field(64, gt=0, description="Images per request, and frames a graph may decode.")
    max_video_frames: int = Field(3000, gt=0, description="Frames in an uploaded or referenced video.")
    request_timeout_s: float = Field(120.0, gt=0)
    max_concurrency: int = Field(16, gt=0, description="Requests handled at once.")
    max_waiting: int = Field(32, ge=0, description="Requests queued beyond that; more get 429.")
    max_per_client: int = Field(
        8, gt=0, description="Requests one client (API key; address without keys) may have running or queued."
    )
    body_timeout_s: float = Field(30.0, gt=0, description="Time a request body may take to arrive; then 408.")
    retry_after_s: int = Field(1, ge=0)
    model_concurrency: int = Field(32, gt=0, description="Model calls in flight at once.")
    allowed_hosts: tuple[str, ...] = Field(
        (), description="Host names besides loopback a key-less server answers (a reverse proxy's)."
    )
    forwarded_allow_ips: tuple[str, ...] = Field(
        (),
        description="Proxy addresses whose X-Forwarded-For is trusted; empty: none, the peer is the client.",
    )

    @property
    def auth_enabled(self) -> bool:
        return bool(self.api_keys)


def parse_keys(text: str, separator: str | None = None) -> frozenset[str]:
    """Keys from a comma-separated value or a file's text (one per line, `#` comments, blanks ignored)."""
    lines = text.split(separator) if separator else text.splitlines()
    return frozenset(k for k in (line.split("#", 1)[0].strip() for line in lines) if k)


def load_api_keys(
    keys_file: str | Path | None = None, environ: dict[str, str] | None = None
) -> frozenset[str]:
    """The union of `KINEGRAPH_API_KEYS` and the keys file; a keys file that cannot be read is an error."""
    env = os.environ if environ is None else environ
    keys = parse_keys(env.get(KEYS_ENV, ""), ",")
    if keys_file is not None:
        path = Path(keys_file)
        try:
            keys |= parse_keys(path.read_text())
        except OSError as exc:
            raise ValueError(f"{path}: cannot read the API keys file ({exc.strerror})") from None
    return keys


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses (127.0.0.0/8, ::1)."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, settings: ServeSettings) -> None:
    """Refuse to listen beyond loopback without API keys."""
    if not settings.auth_enabled and not is_loopback(host):
        raise ValueError(
            f"refusing to listen on {host}: no API keys are configured, so the server would be open to "
            f"anyone who can reach it. Set {KEYS_ENV} (comma-separated) or pass --api-keys-file, or "
            "listen on loopback (--host 127.0.0.1)"
        )

"""`kinegraph serve` and `mcp`: the HTTP endpoint and the MCP tool server."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kinegraph.cli.common import (
    RoleOpt,
    RoleOptionOpt,
    clean_errors,
    fail,
    parse_options,
)


@clean_errors
def serve(
    host: Annotated[
        str, typer.Option(help="Interface to listen on (non-loopback needs API keys).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port.")] = 8000,
    model: Annotated[
        str | None, typer.Option(envvar="KINEGRAPH_SERVE_MODEL", help="PROVIDER:MODEL behind the graphs.")
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(envvar="KINEGRAPH_SERVE_BASE_URL", help="Server URL for vllm / OpenAI-compatible."),
    ] = None,
    model_option: Annotated[
        list[str] | None,
        typer.Option(help="Backend option key=value of --model (as `run --model-option`)."),
    ] = None,
    role: RoleOpt = None,
    role_option: RoleOptionOpt = None,
    graph: Annotated[
        list[str] | None,
        typer.Option("--graph", "-g", help="Serve only these graphs (or package.module:build)."),
    ] = None,
    default_graph: Annotated[
        str, typer.Option(help="Graph used when a request names none.")
    ] = "egodyn.vision",
    data_root: Annotated[
        Path | None,
        typer.Option(envvar="KINEGRAPH_DATA_ROOT", help="Directory file references are confined to."),
    ] = None,
    api_keys_file: Annotated[
        Path | None,
        typer.Option(envvar="KINEGRAPH_API_KEYS_FILE", help="API keys, one per line (+ KINEGRAPH_API_KEYS)."),
    ] = None,
    cache: Annotated[str | None, typer.Option(help="Response cache (SQLite) path; default: none.")] = None,
    max_body_mb: Annotated[float, typer.Option(help="Request body limit, MiB.")] = 32.0,
    max_image_pixels: Annotated[int, typer.Option(help="Pixels per image or video frame.")] = 4096 * 4096,
    max_frames: Annotated[int, typer.Option(help="Frames per request.")] = 64,
    timeout: Annotated[float, typer.Option(help="Per-request timeout, seconds.")] = 120.0,
    concurrency: Annotated[int, typer.Option(help="Requests handled at once.")] = 16,
    queue: Annotated[int, typer.Option(help="Requests that may wait for a slot; more get 429.")] = 32,
    per_client: Annotated[
        int, typer.Option(help="Requests one client (API key) may have running or queued; more get 429.")
    ] = 8,
    body_timeout: Annotated[
        float, typer.Option(help="Seconds a request body may take to arrive (408).")
    ] = 30.0,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(help="Without API keys: a Host/Origin name besides loopback to answer (a proxy's)."),
    ] = None,
    forwarded_allow_ips: Annotated[
        str, typer.Option(help="Comma-separated proxy addresses whose X-Forwarded-For is trusted.")
    ] = "",
) -> None:
    """Serve graphs as a driving-QA HTTP endpoint (/v1/qa, OpenAI-compatible /v1/chat/completions)."""
    from kinegraph.roles import parse_roles
    from kinegraph.serve import ServeSettings, load_api_keys
    from kinegraph.serve import serve as run_server

    try:
        settings = ServeSettings(
            model=model,
            base_url=base_url,
            model_options=parse_options(model_option),
            roles=parse_roles(role or [], role_option or []),
            cache=cache,
            graphs=tuple(graph or ()),
            default_graph=default_graph if not graph or default_graph in graph else graph[0],
            api_keys=load_api_keys(api_keys_file),
            data_root=data_root,
            max_body_bytes=int(max_body_mb * 2**20),
            max_image_pixels=max_image_pixels,
            max_frames=max_frames,
            request_timeout_s=timeout,
            max_concurrency=concurrency,
            max_waiting=queue,
            max_per_client=per_client,
            body_timeout_s=body_timeout,
            allowed_hosts=tuple(allow_host or ()),
            forwarded_allow_ips=tuple(ip.strip() for ip in forwarded_allow_ips.split(",") if ip.strip()),
        )
        run_server(settings, host=host, port=port)
    except ValueError as exc:
        raise fail(str(exc)) from None


def mcp_command(
    data_root: Annotated[
        Path | None,
        typer.Option(envvar="KINEGRAPH_DATA_ROOT", help="Directory media paths are confined to."),
    ] = None,
    transport: Annotated[str, typer.Option(help="stdio, or http (streamable HTTP at /mcp).")] = "stdio",
    host: Annotated[str, typer.Option(help="Interface for http (loopback only).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port for http.")] = 8765,
    max_frames: Annotated[int, typer.Option(help="Frames a tool may decode from one video.")] = 64,
    max_image_pixels: Annotated[int, typer.Option(help="Pixels per image or video frame.")] = 4096 * 4096,
    max_video_frames: Annotated[int, typer.Option(help="Frames a referenced video may hold.")] = 3000,
    max_calls: Annotated[int, typer.Option(help="Tool calls measured at once; the rest wait.")] = 2,
    max_decoded_mb: Annotated[
        int, typer.Option(help="MiB of decoded pixels one call may keep (memory: this x --max-calls).")
    ] = 1024,
) -> None:
    """Serve the deterministic tools over the Model Context Protocol (see docs/mcp.md)."""
    from kinegraph.extras import MissingExtraError

    try:
        from kinegraph.mcp.server import serve_mcp
        from kinegraph.serve.settings import is_loopback
        from kinegraph.tool_registry import MediaLimits
    except ImportError as exc:
        raise fail(str(MissingExtraError("kinegraph mcp", exc.name or "mcp", "mcp"))) from None
    if transport not in ("stdio", "http"):
        raise fail(f"--transport must be stdio or http, got {transport!r}")
    if transport == "http" and not is_loopback(host):
        raise fail(f"refusing to listen on {host}: the MCP server has no authentication (use loopback)")
    try:
        if max_calls < 1:
            raise ValueError(f"--max-calls must be at least 1, got {max_calls}")
        if not 1 <= max_decoded_mb <= 2**20:
            raise ValueError(f"--max-decoded-mb must be between 1 and {2**20}, got {max_decoded_mb}")
        limits = MediaLimits(
            data_root, max_frames, max_image_pixels, max_video_frames, max_decoded_mb * 2**20
        ).checked_root()
    except ValueError as exc:
        raise fail(str(exc)) from None
    serve_mcp(limits, transport, host, port, max_calls)  # type: ignore[arg-type]

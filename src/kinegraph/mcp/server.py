"""`kinegraph mcp`: the tool registry served over the Model Context Protocol (stdio or streamable HTTP).

Media arguments are paths relative to the data root, confined and size-checked as `kinegraph serve`
confines them, by the same code (`kinegraph.media_limits`). A call that cannot be answered (bad arguments,
a path outside the root, an unreadable video) returns a tool error (`isError`) with a one-line message;
the server keeps serving. Tools run in worker threads, so a long measurement never blocks the protocol;
at most `max_calls` run at once (the rest wait their turn), each keeping at most
`limits.max_decoded_bytes` of pixels, so memory stays under their product. Over HTTP, request bodies
are read with a size limit (`kinegraph.mcp.http_limits`).
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.server import Server

from kinegraph import __version__
from kinegraph.tool_registry import DataRootMedia, MediaLimits, ToolError, ToolRegistry, default_registry

Transport = Literal["stdio", "http"]
log = logging.getLogger(__name__)


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=f"Error: {message}")], is_error=True)


#: Tool calls measured at once by default; each may keep `MediaLimits.max_decoded_bytes` of pixels.
MAX_CALLS = 2


def build_server(
    limits: MediaLimits, registry: ToolRegistry | None = None, max_calls: int = MAX_CALLS
) -> Server[Any]:
    """An MCP server offering every tool of `registry` (default: all), media confined by `limits`,
    at most `max_calls` tool calls running at once."""
    if max_calls < 1:
        raise ValueError(f"max_calls must be at least 1, got {max_calls}")
    tools = registry or default_registry()
    media = DataRootMedia(limits)
    slots = anyio.CapacityLimiter(max_calls)

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t.name, description=t.description, input_schema=t.schema())
                for t in tools.tools.values()
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            result = await anyio.to_thread.run_sync(
                tools.call, params.name, params.arguments or {}, media, limiter=slots
            )
        except ToolError as exc:
            return error_result(str(exc))
        except Exception:  # a tool bug must not end the session: report it, log the traceback
            log.exception("tool %s failed", params.name)
            return error_result(f"{params.name} failed unexpectedly (the server log has the details)")
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(result))], structured_content=result
        )

    return Server(
        "kinegraph",
        version=__version__,
        instructions="Deterministic motion tools: measure ego motion, object speed and image cues from "
        "videos and images under the server's data root (paths relative to it).",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve_mcp(
    limits: MediaLimits,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8765,
    max_calls: int = MAX_CALLS,
) -> None:
    """Serve until stopped: over stdin/stdout, or streamable HTTP at http://HOST:PORT/mcp."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    server = build_server(limits, max_calls=max_calls)
    if transport == "stdio":
        from mcp.server.stdio import stdio_server

        from kinegraph.mcp.stdin import ScrubbedStdin

        async def run() -> None:
            async with stdio_server(stdin=ScrubbedStdin()) as (read, write):  # type: ignore[arg-type]
                await server.run(read, write, server.create_initialization_options())

        anyio.run(run)
        return
    import uvicorn

    uvicorn.run(http_app(server, host), host=host, port=port, log_level="warning", proxy_headers=False)


def http_app(server: Server[Any], host: str = "127.0.0.1") -> Any:
    """The streamable-HTTP app behind the same loopback `Host`/`Origin` check as a key-less `serve`, its
    request bodies read with a size limit."""
    from kinegraph.mcp.http_limits import BodyLimit
    from kinegraph.serve.access import LoopbackOrigins

    return LoopbackOrigins(BodyLimit(server.streamable_http_app(host=host)))

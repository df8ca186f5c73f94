"""Typed registry of the deterministic tools a model may call, with media given by reference."""

from kinegraph.tool_registry.catalog import default_registry
from kinegraph.tool_registry.media import Clip, DataRootMedia, Image, MediaLimits, MediaSource, ToolError
from kinegraph.tool_registry.registry import RegisteredTool, ToolRegistry, register

__all__ = [
    "Clip",
    "DataRootMedia",
    "Image",
    "MediaLimits",
    "MediaSource",
    "RegisteredTool",
    "ToolError",
    "ToolRegistry",
    "default_registry",
    "register",
]

"""Optional dependencies: which extra installs each one, and the one-line error when it is missing.

The core install (scoring, reports, the CLI, the registries, the graphs, the SDK-free providers) carries no
torch, transformers, OpenCV, model SDK, web server or Ray; a feature that needs one imports it through
`require`, or lets the CLI turn the `ModuleNotFoundError` into the same line (`missing_extra`):

    egodyn.gpu_flow needs torch: pip install 'kinegraph[gpu]'
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from kinegraph.errors import UsageError

#: Top-level module -> (the distribution that provides it, the extra that installs it).
EXTRA_OF_MODULE: dict[str, tuple[str, str]] = {
    "cv2": ("opencv-python-headless", "vision"),
    "scipy": ("scipy", "vision"),
    "openai": ("openai", "openai"),
    "anthropic": ("anthropic", "anthropic"),
    "google": ("google-genai", "google"),
    "httpx": ("httpx", "openai"),
    "transformers": ("transformers", "local"),
    "torch": ("torch", "gpu"),
    "fastapi": ("fastapi", "serve"),
    "starlette": ("starlette", "serve"),
    "uvicorn": ("uvicorn", "serve"),
    "multipart": ("python-multipart", "serve"),
    "python_multipart": ("python-multipart", "serve"),
    "prometheus_client": ("prometheus-client", "serve"),
    "swagger_ui": ("swagger-ui-py", "serve"),
    "mcp": ("mcp", "mcp"),
    "mcp_types": ("mcp-types", "mcp"),
    "anyio": ("anyio", "mcp"),
    "ray": ("ray", "ray"),
    "huggingface_hub": ("huggingface_hub", "data"),
    "httpx2": ("httpx2", "data"),
    "pyarrow": ("pyarrow", "data"),
    "langgraph_api": ("langgraph-api", "studio"),
}


class MissingExtraError(UsageError):
    """A feature whose optional dependency is not installed; `str()` names the extra that installs it."""

    def __init__(self, feature: str, module: str, extra: str | None = None) -> None:
        top = module.partition(".")[0]
        distribution, known_extra = EXTRA_OF_MODULE.get(top, (top, None))
        self.extra = extra or known_extra
        self.distribution = distribution
        target = f"kinegraph[{self.extra}]" if self.extra else distribution
        super().__init__(f"{feature} needs {distribution}: pip install '{target}'")


def require(module: str, feature: str, extra: str | None = None) -> ModuleType:
    """Import `module` for `feature`, or raise MissingExtraError naming the extra that installs it.

    Only a missing `module` (or a missing package above it) is reported that way; an installed package
    that fails on import raises its own error.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (module == exc.name or module.startswith(exc.name + ".")):
            raise
        raise MissingExtraError(feature, module, extra) from None


def need(module: str, feature: str, extra: str | None = None) -> None:
    """Check that the top-level `module` is installed, without importing it (torch takes seconds), or
    raise MissingExtraError: a graph checks when it is built, not once per clip."""
    if importlib.util.find_spec(module) is None:
        raise MissingExtraError(feature, module, extra)


def missing_extra(exc: BaseException, feature: str) -> MissingExtraError | None:
    """The MissingExtraError for `exc` when it is a missing optional module (one `EXTRA_OF_MODULE` knows),
    else None: a missing module of the core install is a broken install, not a missing extra."""
    if isinstance(exc, MissingExtraError):
        return exc
    if not isinstance(exc, ModuleNotFoundError) or exc.name is None:
        return None
    top = exc.name.partition(".")[0]
    if top not in EXTRA_OF_MODULE:
        return None
    return MissingExtraError(feature, top)

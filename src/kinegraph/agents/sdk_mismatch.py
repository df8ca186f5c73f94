"""An official SDK that does not fit the code calling it: an error no retry can fix.

An SDK older than the declared floor refuses a parameter we send (`TypeError: unexpected keyword
argument`), lacks a method, or hands back a response type without a field we read. Retrying such a call
only burns the retry budget on every sample, so it fails the sample at once, naming the SDK's version.
A response that lacks a field its SDK type does declare is a malformed answer instead, and stays retryable.
"""

from __future__ import annotations

import importlib.metadata
import re
from types import ModuleType

from kinegraph.agents.errors import BackendError

_NO_ATTRIBUTE = re.compile(r"'(?P<type>\w+)' object has no attribute '(?P<name>\w+)'")


class SdkMismatchError(BackendError):
    """The installed SDK does not fit this call; the message names it, its version and the upgrade."""


def sdk_version(sdk: ModuleType) -> tuple[str, str]:
    """(distribution, installed version) of the SDK module `sdk` (e.g. `google.genai`)."""
    from kinegraph.extras import EXTRA_OF_MODULE

    top = sdk.__name__.partition(".")[0]
    distribution, _ = EXTRA_OF_MODULE.get(top, (top, None))
    try:
        return distribution, importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return distribution, str(getattr(sdk, "__version__", "of unknown version"))


def sdk_mismatch(spec: str, sdk: ModuleType, exc: BaseException) -> SdkMismatchError:
    """The one-line error for `exc`, raised by (or on a response of) an SDK that does not fit."""
    from kinegraph.extras import EXTRA_OF_MODULE

    distribution, version = sdk_version(sdk)
    _, extra = EXTRA_OF_MODULE.get(sdk.__name__.partition(".")[0], (distribution, None))
    upgrade = f"kinegraph[{extra}]" if extra else distribution
    what = str(exc).splitlines()[0] if str(exc) else ""
    return SdkMismatchError(
        f"{spec}: {distribution} {version} does not fit this call ({type(exc).__name__}: {what}); "
        f"pip install -U '{upgrade}'"
    )


def lacks_field(exc: BaseException, response: object, sdk: ModuleType) -> bool:
    """Whether `exc` is a read of a field that the SDK's own response type (found in `response`) does not
    declare: the SDK is older than the code. False for a field it declares but the answer left out."""
    match = _NO_ATTRIBUTE.search(str(exc)) if isinstance(exc, AttributeError) else None
    if match is None:
        return False
    found = _sdk_object(response, match["type"], sdk.__name__.partition(".")[0], depth=6)
    if found is None:
        return False
    return match["name"] not in getattr(type(found), "model_fields", {})


def _sdk_object(value: object, type_name: str, package: str, depth: int) -> object | None:
    """The first object of the SDK's type `type_name` within `value` (fields and lists, `depth` deep)."""
    kind = type(value)
    if kind.__name__ == type_name and kind.__module__.partition(".")[0] == package:
        return value
    if depth == 0:
        return None
    children = value if isinstance(value, list | tuple) else getattr(value, "__dict__", {}).values()
    for child in children:
        found = _sdk_object(child, type_name, package, depth - 1)
        if found is not None:
            return found
    return None

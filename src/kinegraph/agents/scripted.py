"""The `scripted` provider: a fake VLM for graph tests and examples, reached like any real provider.

`get_backend("scripted:NAME", responses="left")` always answers "left"; `responses=[...]` answers
the items in turn (cycled, or consumed with `cycle=False`, after which it fails); `fn=f` answers
`f(request)`. An item may be a `GenerateResponse` (used as is) or an exception instance (raised, so a
test can script an API failure: raise `RetryableError` to exercise retries, `BackendError` to fail).
Usage is filled with a stand-in count (words of text in and out) so accounting code runs.

From the command line (`--model scripted:NAME --model-option ...`), `fn=package.module:function` names the
function by import path, so a run or `reproduce` can give varied answers per sample (from the prompt's
text, or `request.metadata["sample_id"]`) with no server: the function takes the `GenerateRequest` and
returns the answer text (or any item above), and may be async.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from kinegraph.agents.errors import BackendError
from kinegraph.agents.protocol import GenerateRequest, GenerateResponse, ImagePart, VideoPart
from kinegraph.registry import import_object
from kinegraph.types import Usage

ScriptItem = str | GenerateResponse | BaseException
ScriptFn = Callable[[GenerateRequest], Any]


class ScriptedBackend:
    """Answers from a fixed text, a list, or a function of the request."""

    provider = "scripted"
    cacheable = False

    def __init__(
        self,
        model: str = "scripted",
        *,
        responses: ScriptItem | Sequence[ScriptItem] | None = None,
        fn: ScriptFn | str | None = None,
        cycle: bool = True,
    ) -> None:
        if (responses is None) == (fn is None):
            raise ValueError("scripted backend needs exactly one of responses=... or fn=...")
        self.model = model
        self.fn = named_function(model, fn) if isinstance(fn, str) else fn
        self.cycle = cycle
        if isinstance(responses, int | float) and not isinstance(responses, bool):
            responses = str(responses)  # `--model-option responses=5` reads the 5 as a number
        single = isinstance(responses, str | GenerateResponse | BaseException)
        self.items: list[ScriptItem] = [responses] if single else list(responses or [])  # type: ignore[list-item]
        if fn is None and not self.items:
            raise ValueError("scripted backend needs at least one response")
        self.calls: list[GenerateRequest] = []

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        index = len(self.calls)
        self.calls.append(request)
        if self.fn is not None:
            item = self.fn(request)
            if inspect.isawaitable(item):
                item = await item
        elif self.cycle:
            item = self.items[index % len(self.items)]
        elif index < len(self.items):
            item = self.items[index]
        else:
            raise BackendError(f"scripted:{self.model}: the {len(self.items)} scripted responses ran out")
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, GenerateResponse):
            return item
        return GenerateResponse(text=str(item), model=self.model, usage=_word_usage(request, str(item)))


def named_function(model: str, spec: str) -> ScriptFn:
    """The answer function `fn=package.module:function` names; a one-line `BackendError` otherwise."""
    try:
        fn = import_object(spec)
    except ValueError as exc:  # ImportTargetError too
        raise BackendError(f"scripted:{model}: fn={spec}: {exc}") from None
    if not callable(fn):
        raise BackendError(f"scripted:{model}: fn={spec} is not a function of the request")
    return fn  # type: ignore[return-value]


def _word_usage(request: GenerateRequest, answer: str) -> Usage:
    words_in = sum(len(m.text.split()) for m in request.messages)
    images = sum(isinstance(p, ImagePart | VideoPart) for m in request.messages for p in m.parts)
    return Usage(input_tokens=words_in + images, output_tokens=len(answer.split()))


def create_scripted(model: str, *, base_url: str | None = None, **options: Any) -> ScriptedBackend:
    """Factory for `scripted:NAME` (`responses=`, `fn=` a function or its import path, `cycle=`)."""
    return ScriptedBackend(model, **options)

"""Images made on first need: a question answered from the response cache never decodes its clip.

A deferred `ImagePart` has a `source` (the exact identity of the bytes it stands for) and no bytes; the
cache keys it by `source`, so a lookup needs no pixels. Before a request is sent, `with_images` swaps each
deferred part for the real one. A clip's parts are made once, in a worker thread, by whichever of its
questions needs them first; the others wait for the same result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from kinegraph.agents.protocol import GenerateRequest, ImagePart


class FramesUnavailable(Exception):
    """A clip's images could not be made (an unreadable or short video): the question's input failed."""


class DeferredImages:
    """One clip's encoded frames, made by `make` (run in a thread) the first time a request needs them."""

    def __init__(
        self, make: Callable[[], list[ImagePart]], on_make: Callable[[], None] | None = None
    ) -> None:
        self._make = make
        self._on_make = on_make
        self._task: asyncio.Future[list[ImagePart]] | None = None

    def placeholders(
        self, sources: Sequence[str], width: int | None, height: int | None, mime_type: str = "image/jpeg"
    ) -> list[ImagePart]:
        """One bytes-less part per source, in order; `make` must return the parts in the same order."""
        parts = []
        for position, source in enumerate(sources):
            part = ImagePart(data=b"", mime_type=mime_type, width=width, height=height, source=source)
            part._deferred = (self, position)
            parts.append(part)
        return parts

    async def parts(self) -> list[ImagePart]:
        """The made parts; a cancelled waiter does not cancel the making others wait for. A failure to
        make them is `FramesUnavailable` for every waiter."""
        if self._task is None:
            if self._on_make is not None:
                self._on_make()
            self._task = asyncio.ensure_future(asyncio.to_thread(self._make))
        try:
            return await asyncio.shield(self._task)
        except (OSError, ValueError) as exc:
            raise FramesUnavailable(str(exc)) from exc


def has_deferred(request: GenerateRequest) -> bool:
    """Whether any image of the request still lacks its bytes."""
    return any(
        isinstance(part, ImagePart) and part._deferred is not None
        for message in request.messages
        if not isinstance(message.content, str)
        for part in message.content
    )


async def with_images(request: GenerateRequest) -> GenerateRequest:
    """The request with every deferred image replaced by its made part (same `source`, so same cache key)."""
    made: dict[int, list[ImagePart]] = {}
    messages = []
    for message in request.messages:
        if isinstance(message.content, str):
            messages.append(message)
            continue
        content = []
        for part in message.content:
            if isinstance(part, ImagePart) and part._deferred is not None:
                images, position = part._deferred
                if id(images) not in made:
                    made[id(images)] = await images.parts()
                part = made[id(images)][position]
            content.append(part)
        messages.append(message.model_copy(update={"content": content}))
    return request.model_copy(update={"messages": messages})


def release(parts: Iterable[Any]) -> None:
    """Let go of the clips behind deferred parts (and the images made for them) once their group is done.

    The graph runtime's reference cycles keep a finished group's state until the next garbage collection,
    which a fast run makes rare; without this, every clip's encodings would wait for it.
    """
    for part in parts:
        if isinstance(part, ImagePart):
            part._deferred = None

"""The prompt-reading stand-in VLMs of `suite_readers` as answer functions of the `scripted` provider, so
a command line reaches them by import path: `--model scripted:reader --model-option fn=MODULE:NAME`.

QuantiPhy's reads the world's ground truth from `$SCRIPTED_QUANTIPHY_WORLD` (the world's folder).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kinegraph.agents.protocol import GenerateRequest
from tests.support import suite_readers
from tests.support.suite_runs import _quantiphy_reader
from tests.support.text_reader_model import text_reader

QUANTIPHY_WORLD_ENV = "SCRIPTED_QUANTIPHY_WORLD"


def _on_request(reader: Callable[[dict[str, Any]], str]) -> Callable[[GenerateRequest], str]:
    """`reader` (of a wire body) as a function of the request: it reads the messages' text only."""

    def answer(request: GenerateRequest) -> str:
        return reader({"messages": [{"content": m.text} for m in request.messages]})

    return answer


egodyn = _on_request(text_reader)
tad = _on_request(suite_readers.tad_reader)
stsbench = _on_request(suite_readers.stsbench_reader)
dsi = _on_request(suite_readers.dsi_reader)
autodridm = _on_request(suite_readers.autodridm_reader)


def quantiphy(request: GenerateRequest) -> str:
    return _quantiphy(os.environ[QUANTIPHY_WORLD_ENV])(request)


@functools.cache
def _quantiphy(world: str) -> Callable[[GenerateRequest], str]:
    return _on_request(_quantiphy_reader(Path(world)))

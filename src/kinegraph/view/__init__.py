"""`kinegraph view RUN [RUN...]`: a local page to browse samples of one or more runs side by side.

Everything the page needs ships in `view/static/` and is served from loopback; frames are thumbnails the
server decodes from the media a prediction records (`frames.source` + `frames.indices`).
"""

from __future__ import annotations

from kinegraph.view.samples import RunView, load_views, samples_payload
from kinegraph.view.server import ViewServer

__all__ = ["RunView", "ViewServer", "load_views", "samples_payload"]

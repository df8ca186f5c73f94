"""Where the upstream golden files live: `$KINEGRAPH_FIXTURES`, else `../shared/fixtures`."""

from __future__ import annotations

import os
from pathlib import Path


def fixtures_dir() -> Path | None:
    """The golden-file directory if it exists (tests skip, and the demo leaves them out, when it does not)."""
    env = os.environ.get("KINEGRAPH_FIXTURES")
    candidates = [Path(env)] if env else []
    here = Path(__file__).resolve()
    candidates += [parent / "shared" / "fixtures" for parent in here.parents[2:5]]
    candidates.append(Path.cwd().parent / "shared" / "fixtures")
    return next((c for c in candidates if c.is_dir()), None)

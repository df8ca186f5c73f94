"""An EgoDyn clip's ground-truth kinematics arrays, read by the trajectory encoders and the oracle.

Its own module so that the VLM graphs (`egodyn`) and the VLM-free ones (`egodyn_tools`) both read it
without importing each other.
"""

from __future__ import annotations

import numpy as np

from kinegraph.types import Sample


def load_arrays(sample: Sample) -> dict[str, np.ndarray] | None:
    """The clip's 31-sample kinematics arrays (`arrays/<clip_id>.npz`), when the layout has them."""
    path = sample.context.get("arrays_path")
    if not path:
        return None
    with np.load(path) as npz:
        return {key: npz[key] for key in npz.files}

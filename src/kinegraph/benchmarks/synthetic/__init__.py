"""Synthetic worlds with known physics, written in the benchmarks' own on-disk formats.

`generators` maps a name to `generate(out_dir, n, seed) -> Path`, used by `kinegraph synth NAME`.
"""

from kinegraph.registry import Registry

generators: Registry = Registry("synthetic world")
generators.register("quantiphy", "kinegraph.benchmarks.synthetic.quantiphy_world:generate")

__all__ = ["generators"]

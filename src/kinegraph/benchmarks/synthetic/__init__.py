"""Synthetic worlds with known physics, written in the benchmarks' own on-disk formats.

`generators` maps a name to `generate(out_dir, n, seed) -> Path`, used by `kinegraph synth NAME`.
"""

from kinegraph.registry import Registry

generators: Registry = Registry("synthetic world")
generators.register("nuscenes", "kinegraph.benchmarks.synthetic.nuscenes_world:generate")
generators.register("dsi", "kinegraph.benchmarks.synthetic.dsi_world:generate")
generators.register("autodridm", "kinegraph.benchmarks.synthetic.autodridm_world:generate")
generators.register("egodyn", "kinegraph.benchmarks.synthetic.egodyn_world:generate")
generators.register("quantiphy", "kinegraph.benchmarks.synthetic.quantiphy_world:generate")

__all__ = ["generators"]

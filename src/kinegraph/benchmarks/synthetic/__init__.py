"""Synthetic worlds with known physics, written in the benchmarks' own on-disk formats.

Each benchmark's generator is named by its suite (`Suite.generate`, in `kinegraph.suites`); `generators`
holds the worlds that are no benchmark of their own (raw nuScenes tables). `kinegraph synth NAME` reads both.
"""

from kinegraph.registry import Registry

generators: Registry = Registry("synthetic world")
generators.register("nuscenes", "kinegraph.benchmarks.synthetic.nuscenes_world:generate")

__all__ = ["generators"]

"""Shared machinery of the synthetic worlds (roads, cameras, conditions, manoeuvres, road users).

Each benchmark's world lives in its home (`benchmarks/<name>/world.py`), written in its own on-disk format.

Each benchmark's generator is named by its suite (`Suite.generate`, in `kinegraph.suites`); `generators`
holds the worlds that are no benchmark of their own (raw nuScenes tables). `kinegraph synth NAME` reads both.
"""

from kinegraph.registry import Registry

generators: Registry = Registry("synthetic world")
generators.register("nuscenes", "kinegraph.benchmarks.nuscenes.world:generate")

__all__ = ["generators"]

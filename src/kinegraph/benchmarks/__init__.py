"""Benchmark loaders (official on-disk formats -> Samples), one module per benchmark."""

from kinegraph.registry import Registry

loaders: Registry = Registry("benchmark")
loaders.register("egodyn", "kinegraph.benchmarks.egodyn:load")
loaders.register("quantiphy", "kinegraph.benchmarks.quantiphy:load")
loaders.register("tad", "kinegraph.benchmarks.tad:load")
loaders.register("stsbench", "kinegraph.benchmarks.stsbench:load")
loaders.register("dsi", "kinegraph.benchmarks.dsi:load")
loaders.register("autodridm", "kinegraph.benchmarks.autodridm:load")

__all__ = ["loaders"]

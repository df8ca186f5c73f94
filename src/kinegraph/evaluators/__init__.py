"""Answer parsers and official-parity scorers, one module per benchmark."""

from kinegraph.registry import Registry

scorers: Registry = Registry("scorer")
scorers.register("egodyn", "kinegraph.evaluators.egodyn:score")
scorers.register("quantiphy", "kinegraph.evaluators.quantiphy:score_file")
scorers.register("tad", "kinegraph.evaluators.tad:score")
scorers.register("stsbench", "kinegraph.evaluators.stsbench:score")
scorers.register("dsi", "kinegraph.evaluators.dsi:score")
scorers.register("autodridm", "kinegraph.evaluators.autodridm:score")

__all__ = ["scorers"]

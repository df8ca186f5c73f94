"""Benchmark loaders (official on-disk formats -> Samples) and their vocabulary, one module per benchmark.

The benchmark registry is `kinegraph.suites.suites`; a loader imports nothing from `evaluators/` or `graphs/`.
"""

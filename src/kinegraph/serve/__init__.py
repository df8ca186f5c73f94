"""kinegraph.serve."""

"""kinegraph.graphs."""

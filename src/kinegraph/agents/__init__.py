"""kinegraph.agents."""

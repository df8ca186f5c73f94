"""kinegraph.tools."""

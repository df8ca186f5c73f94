"""EgoDyn-Bench's graphs and prompts: vision, trajectory, probes, ablations, tool calls, measured."""

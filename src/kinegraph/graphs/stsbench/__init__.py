"""STSBench's graphs: baseline, TCogMap, Scene-CoT and agent."""

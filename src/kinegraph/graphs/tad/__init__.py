"""TAD's graphs and prompts: baseline, blind, ego pose, TCogMap, Scene-CoT and agent."""

"""QuantiPhy's graphs and prompts: zero-shot, prior-only, CoT, counterfactual, tools and agent."""

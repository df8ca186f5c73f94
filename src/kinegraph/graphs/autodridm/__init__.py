"""AutoDriDM's graphs: baseline, explained (error-mode analyzer), few-shot, tools and agent."""

"""DSI-Bench's graphs: baseline, free-form reasoning, tools and agent."""

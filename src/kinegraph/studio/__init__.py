"""LangGraph Studio's door: each shipped graph as the module attribute `langgraph.json` names."""

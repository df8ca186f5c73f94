"""The MCP door: the tool registry served over the Model Context Protocol (stdio or streamable HTTP)."""

"""The stdio MCP server: a thin layer mapping protocol requests onto the libraries."""

"""kite-skills sandbox: a local Kite MCP server over a simulated account (issue 18)."""

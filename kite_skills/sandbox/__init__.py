"""`kite-skills sandbox`: a local Kite MCP server over a simulated account.

Two parts (see docs/sandbox.md and docs/sandbox-scenarios.md):

- ``sim/``: a pure simulation of Kite Connect (the REST API the Kite MCP server calls): the
  account, the market, the order engine. No MCP, no transport.
- the adapter (this package outside ``sim/``): the Kite MCP server's tool schemas per
  generation (``tools/*.json``, each with its Go source), handlers doing what its Go handlers
  do with Kite Connect's answers (:mod:`.handlers`, :mod:`.gotypes`), the journal
  (:mod:`.journal`), the MCP server on stdio and HTTP (:mod:`.server`) and the command
  (:mod:`.cli`).

Import-light on purpose: the main server never imports this package, and this package never
imports the user-skill store.
"""

"""``kite-skills guard``: the person's limits between an agent and their Kite MCP server
(issue 44).

Pure modules: :mod:`.writes` (which calls write), :mod:`.limits` (the file and its rule rows),
:mod:`.judge` (one write's verdict), :mod:`.journal`. The MCP side: :mod:`.account` (live
reads through the upstream), :mod:`.upstream` (the SDK client), :mod:`.server`, :mod:`.serve`;
:mod:`.oauth` signs the guard in to a Streamable HTTP upstream that asks for OAuth 2.1
(Zerodha's hosted server).

Import-light on purpose, as the sandbox's package: each module loads the MCP stack itself.
"""

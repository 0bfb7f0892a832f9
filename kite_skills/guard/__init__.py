"""``kite-skills guard``: the person's limits between an agent and a Kite MCP server.

Pure modules: :mod:`writes` (which calls write), :mod:`limits` (the file and its rule rows),
:mod:`judge` (one write's verdict), :mod:`journal`. The MCP side: :mod:`account` (live reads
through the upstream), :mod:`upstream` (the SDK client), :mod:`server`, :mod:`serve`.
"""

"""``kite-skills dashboard``: the person's page at /skills, on 127.0.0.1 only.

Never imported by the MCP server (a test checks it in a fresh process): it loads Starlette,
Jinja2 and markdown-it only when a person asks for the dashboard.
"""

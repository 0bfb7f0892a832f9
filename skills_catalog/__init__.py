"""The built-in catalog of Markdown workflow recipes (package data only)."""

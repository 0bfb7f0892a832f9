"""kite-skills: trusted procedures for AI agents on a Zerodha Kite account."""

__version__ = "0.1.0"

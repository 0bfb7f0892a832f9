"""Content tests for the built-in catalog. Helpers live in content_helpers.py next to this file."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:  # works under any pytest import mode
    sys.path.insert(0, _HERE)

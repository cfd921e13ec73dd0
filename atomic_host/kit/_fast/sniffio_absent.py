"""A missing sniffio marked missing once, not searched for on every lock httpcore sets up (agent-latency bar).

httpcore runs ``import sniffio`` for every lock it sets up (about eight per request) and uses
asyncio when that fails; a module that is not installed is searched for again each time, a stat of
every ``sys.path`` entry. ``None`` in ``sys.modules`` makes that import fail at once (the
documented way to mark a module missing); an installed sniffio is left alone.
"""

from __future__ import annotations

import importlib.util
import sys


def note_missing_sniffio() -> None:
    """Mark sniffio as not installed in ``sys.modules`` when it is not."""
    if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
        sys.modules["sniffio"] = None  # type: ignore[assignment]

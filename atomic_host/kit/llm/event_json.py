"""Decoding the JSON of a stream event: :func:`loads` is ``json.loads`` (the same values, the same
errors), on a faster engine where it answers the same (``atomic_host.kit._fast.event_json``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from atomic_host.kit import _fast

__all__ = ["loads"]

loads: Callable[[str], Any]
"""``json.loads(text)`` for one event's ``data``."""
if _fast.PLAIN:
    loads = json.loads
else:
    from atomic_host.kit._fast.event_json import loads

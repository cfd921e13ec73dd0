"""Copies of JSON-shaped data (model dicts from the catalog files, models.json or a plugin's
``ProviderInfo.models``): :func:`json_copy` is ``copy.deepcopy``, on a path specialised for dicts,
lists and scalars (``atomic_host.kit._fast.json_copy``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atomic_host.kit import _fast

__all__ = ["json_copy"]

json_copy: Callable[[Any], Any]
"""A deep copy of a JSON-shaped value (``copy.deepcopy``'s result)."""
if _fast.PLAIN:
    from copy import deepcopy as json_copy
else:
    from atomic_host.kit._fast.json_copy import json_copy

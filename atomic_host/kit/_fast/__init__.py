"""The host's speed tactics, in one private place: one module per tactic, none of them plugin API.

Each module's docstring says, in its first line, why it exists and which bar it serves; its
figures, its benchmark and its test are in docs/performance.md. A tactic replaces a library's own
way of doing the same thing (httpx's transport, argparse, stdlib json, pluggy's registration, the
collector left running) and is held equal to it by a differential test, so deleting one whose bar
no longer needs it touches no plugin: only the call sites that check :data:`PLAIN`.

``ATOMIC_PLAIN=1`` in the environment (read once, when this package is first imported) turns every
switchable tactic off, so the host runs on the libraries' own paths: httpx's transport, argparse,
the standard library's json, the collector never paused, pluggy's registration and
``importlib.metadata``'s entry-point scan, httpx's own ``httpx._main``. The suite's differential
and conformance tests run on both paths (.ci/run). The kit's public modules never say which path
they are on.
"""

from __future__ import annotations

import os

PLAIN: bool = os.environ.get("ATOMIC_PLAIN", "") not in ("", "0")
"""True when ``ATOMIC_PLAIN`` is set (to anything but ``0``): the plain path, no tactic."""

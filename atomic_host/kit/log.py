"""The ``atomic`` logger: every diagnostic the host (and a plugin that wants to) writes goes to
stderr through it, as ``atomic: <message>`` lines. Never stdout: that is the protocol's.

    from atomic_host.kit.log import log
    log.warning("fallback model %s is not available; skipped", ref)

Plugins may log under a child name (``logging.getLogger("atomic.myplugin")``): same handler.
``ATOMIC_LOG_LEVEL`` (``DEBUG``, ``INFO`` (default), ``WARNING``, ``ERROR``) sets the threshold.
"""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["log", "plugin_log"]


class _StderrHandler(logging.Handler):
    """Writes to the current ``sys.stderr`` (looked up per record: tests and frontends replace it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:  # a closed stderr must not break the host
            pass


log = logging.getLogger("atomic")
"""The host's logger (``atomic: …`` on stderr)."""

plugin_log = log.getChild("plugins")
"""The stderr line that goes with each ``extension_error`` (a plugin failed). Print mode shows the
events on stderr itself and silences this logger, so each error is printed once."""

if not log.handlers:
    _handler = _StderrHandler()
    _handler.setFormatter(logging.Formatter("atomic: %(message)s"))
    log.addHandler(_handler)
    _level = logging.getLevelName(os.environ.get("ATOMIC_LOG_LEVEL", "INFO").upper())
    log.setLevel(_level if isinstance(_level, int) else logging.INFO)  # an unknown name: INFO, not a crash
    log.propagate = False  # the root logger's handlers (a plugin's basicConfig) must not print it twice

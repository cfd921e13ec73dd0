"""Installed dist-infos read for `[atomic_host]` before importlib_metadata is imported (startup bar).

Importing ``importlib_metadata`` and building its entry points costs tens of ms of a start (figures:
docs/performance.md), and most hosts have no plugin package installed. :func:`group_declared` reads
the ``entry_points.txt`` files itself; only when one declares the group does the manager ask
``importlib_metadata``. ``tests/perf/tactics/test_unit_group_declared.py`` holds it to importlib_metadata.
"""

from __future__ import annotations

import os
import sys


def group_declared(group: str) -> bool:
    """Cheap pre-check: does any ``*.dist-info``/``*.egg-info`` on ``sys.path`` declare ``[group]``?

    A false positive only costs the full importlib_metadata scan; unreadable entries (zip files)
    are treated as "maybe", so no installed plugin is ever missed.
    """
    header = f"[{group}]".encode()
    for entry in sys.path:
        directory = entry or "."
        try:
            names = os.listdir(directory)
        except NotADirectoryError:
            return True  # a zip/egg on sys.path: let importlib_metadata look inside
        except OSError:
            continue
        listing = "/".join(names)  # one search in C: most of sys.path (the stdlib) holds no distribution
        if ".dist-info" not in listing and ".egg-info" not in listing:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            path = f"{directory}/{name}/entry_points.txt"
            # os.access first: most distributions have no entry_points.txt, and a failed open
            # raises (an exception per distribution costs more than the check)
            if os.access(path, os.F_OK) and header in _read_bytes(path):
                return True
    return False


def _read_bytes(path: str) -> bytes:
    """The file's bytes, b"" when it cannot be read. Bare ``os`` calls: most distributions have no
    entry_points.txt, and ``open()`` costs twice as much per file."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return b""
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)

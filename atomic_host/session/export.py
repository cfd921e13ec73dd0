"""Writing a session through a registered exporter (``export_html``, ``atomic --export``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from atomic_host.contract.errors import HostError
from atomic_host.contract.tools import resolve
from atomic_host.kit.fsio import atomic_write

if TYPE_CHECKING:
    from atomic_host.contract.registrations import Exporter
    from atomic_host.kit.sessions.tree import Session


def export_session(exporter: Exporter, session: Session, output_path: str | None, base_dir: str) -> str:
    """Render ``session`` with ``exporter`` and write it atomically (UTF-8) to ``output_path``, or to
    the exporter's default path; a relative path is taken from ``base_dir``. Returns the absolute
    path. An exporter that raises or returns no text is a :class:`HostError` naming its plugin."""
    try:
        out = output_path or resolve(exporter.default_path)(session)
        text = resolve(exporter.render)(session.header, session.entries, session.leaf_id)
    except Exception as exc:
        raise HostError(f'Exporter "{exporter.name}" of {exporter.plugin} failed: {type(exc).__name__}: {exc}') from exc
    if not isinstance(text, str) or not isinstance(out, str):
        raise HostError(f'Exporter "{exporter.name}" of {exporter.plugin} returned no text or no path')
    path = os.path.abspath(os.path.join(base_dir, os.path.expanduser(out)))
    atomic_write(Path(path), text)
    return path

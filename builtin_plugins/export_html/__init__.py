"""The built-in ``html`` exporter (``export_html``, ``atomic --export``), via ``register_exporters``.

The page itself is built by :mod:`builtin_plugins.export_html.page`, imported on the first export
only (``html.entities`` and friends stay off the startup path).
"""

from __future__ import annotations

from collections.abc import Callable

from atomic_host import hookimpl
from atomic_host.contract.registrations import Exporter


@hookimpl
def register_exporters(register: Callable[[Exporter], None]) -> None:
    register(
        Exporter(
            "html",
            "builtin_plugins.export_html.page:render_html",
            "builtin_plugins.export_html.page:default_export_path",
        )
    )

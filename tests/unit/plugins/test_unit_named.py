"""plugins/named.py: store kinds and exporters filed by name, a later registration replacing."""

from __future__ import annotations

import pytest

from atomic_host.contract.registrations import Exporter, SessionStoreFactory
from atomic_host.plugins.named import NamedTable


def _opener(options):
    return None


def test_register_files_by_name_and_sets_the_owner() -> None:
    table = NamedTable("store kind", SessionStoreFactory, "kind")
    table.register_for("builtin_plugins.stores")(SessionStoreFactory("jsonl", _opener))
    table.register_for("builtin_plugins.stores")(SessionStoreFactory("sqlite", _opener))
    assert table.names() == ["jsonl", "sqlite"] and "jsonl" in table
    assert table.get("jsonl").plugin == "builtin_plugins.stores"
    assert table.get("postgres") is None


def test_a_later_plugin_replaces_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    table = NamedTable("exporter", Exporter, "name")
    table.register_for("builtin_plugins.export_html")(Exporter("html", "m:render", "m:path"))
    table.register_for("builtin_plugins.export_html")(Exporter("html", "m:render2", "m:path"))  # its own: quiet
    assert capsys.readouterr().err == ""
    mine = Exporter("html", "x:render", "x:path")
    table.register_for("local:/x.py")(mine)
    assert table.get("html") is mine
    assert capsys.readouterr().err == "atomic: exporter 'html' of builtin_plugins.export_html replaced by local:/x.py\n"
    table.remove_plugin("local:/x.py")
    assert table.names() == []  # the replaced built-in is not restored: reload re-collects it


def test_a_wrong_type_is_refused() -> None:
    table = NamedTable("exporter", Exporter, "name")
    with pytest.raises(TypeError, match="expected Exporter, got dict"):
        table.register_for("p")({"name": "html"})

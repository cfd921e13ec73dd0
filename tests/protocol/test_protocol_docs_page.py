"""docs/protocol.md names every command of the protocol union and no command that is not in it,
with the required fields in bold, so the page cannot drift from the host's models."""

from __future__ import annotations

import re
from pathlib import Path

from atomic_host.core.protocol.commands import COMMANDS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def _rows() -> dict[str, str]:
    rows = {}
    for line in PAGE.read_text().splitlines():
        if line.startswith("| `"):
            names_cell, fields_cell = line.split("|")[1:3]
            for name in re.findall(r"`([a-z_]+)`", names_cell):
                rows[name] = fields_cell
    return rows


def test_every_command_is_on_the_page_with_its_required_fields() -> None:
    rows = _rows()
    assert set(rows) == set(COMMANDS)
    for name, model in COMMANDS.items():
        required = {f.alias or k for k, f in model.model_fields.items() if k not in ("type", "id") and f.is_required()}
        assert set(re.findall(r"\*\*([A-Za-z]+)\*\*", rows[name])) == required, name


def test_the_client_page_points_inside_the_repository() -> None:
    client = (PAGE.parent / "client.md").read_text()
    assert "/work/" not in client and "../shared" not in client
    assert "protocol.md" in client and "protocol.schema.json" in client

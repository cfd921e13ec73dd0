"""docs/protocol.md's command index is the one generated from the declarations, so the page names
every command, and only those, with its required fields in bold and its lane."""

from __future__ import annotations

import re
from pathlib import Path

from suite_paths import DOCS

from atomic_host.core.protocol.commands import COMMANDS
from atomic_host.core.protocol.generate import INDEX_END, INDEX_START, command_index, write_index

PAGE = DOCS / "protocol.md"


def _rows() -> dict[str, list[str]]:
    block = PAGE.read_text().split(INDEX_START, 1)[1].split(INDEX_END, 1)[0]
    rows = {}
    for line in block.splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.split("|")[1:-1]]
            rows[re.fullmatch(r"`([a-z_]+)`", cells[0]).group(1)] = cells  # type: ignore[union-attr]
    return rows


def test_the_index_is_current() -> None:
    block = PAGE.read_text().split(INDEX_START, 1)[1].split(INDEX_END, 1)[0]
    assert block == "\n" + command_index(), "stale: run python -m atomic_host.core.protocol.generate"


def test_every_command_is_on_the_page_with_its_required_fields() -> None:
    rows = _rows()
    assert list(rows) == list(COMMANDS)
    for name, model in COMMANDS.items():
        wire = {f.alias or k: f for k, f in model.model_fields.items() if k != "type"}
        required = {key for key, f in wire.items() if f.is_required()}
        assert set(re.findall(r"\*\*([A-Za-z]+)\*\*", rows[name][2])) == required, name


def test_write_index_replaces_only_the_block(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text(f"intro\n{INDEX_START}\nold rows\n{INDEX_END}\nrest\n")
    assert write_index(page) is True
    assert page.read_text() == f"intro\n{INDEX_START}\n{command_index()}{INDEX_END}\nrest\n"
    assert write_index(page) is False


def test_the_client_page_points_inside_the_repository() -> None:
    client = (PAGE.parent / "client.md").read_text()
    assert "/work/" not in client and "../shared" not in client
    assert "protocol.md" in client and "protocol.schema.json" in client

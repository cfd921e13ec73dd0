"""Write what is derived from the protocol's declarations and models: the JSON Schema, docs/protocol.md's
command index and the client's typed records and command methods (``client_codegen``).
``python -m atomic_host.core.protocol.generate [ROOT]`` rewrites them in the checkout (tests/rpc/protocol
and tests/frontends/client check they are current)."""

from __future__ import annotations

import sys
from pathlib import Path

from atomic_host.core.protocol.client_codegen import commands_source, types_source
from atomic_host.core.protocol.commands import COMMANDS
from atomic_host.core.protocol.declarations import ANY, DECLARATIONS, Declaration
from atomic_host.core.protocol.responses import RESPONSE_DATA
from atomic_host.core.protocol.schema import write_schema

INDEX_START = "<!-- commands: generated from core/protocol/declarations.py; do not edit -->"
INDEX_END = "<!-- /commands -->"


def command_index() -> str:
    """The command table of docs/protocol.md, one row per declared command."""
    rows = [
        "| command | lane | fields (required in bold) | data | what it does |",
        "|---|---|---|---|---|",
    ]
    for name, decl in DECLARATIONS.items():
        fields = []
        for key, field in COMMANDS[name].model_fields.items():
            if key in ("type", "id") and not (key == "id" and "id" in decl.fields):
                continue
            wire = field.alias or key
            fields.append(f"**{wire}**" if field.is_required() else wire)
        lane = "concurrent" if decl.lane == "concurrent" else ""
        rows.append(f"| `{name}` | {lane} | {', '.join(fields) or '—'} | {_data(decl)} | {decl.summary} |")
    return "\n".join(rows) + "\n"


def _data(decl: Declaration) -> str:
    if decl.data is None:
        return "—"
    if decl.data == ANY:
        return "any"
    model = RESPONSE_DATA[decl.type].model
    assert model is not None
    names = [(f.alias or k) + ("" if f.is_required() else "?") for k, f in model.model_fields.items()]
    shown = "{" + ", ".join(names[:5]) + (", …" if len(names) > 5 else "") + "}"
    text = f"`{shown}`"
    if decl.nullable:
        text += " or `null`"
    if decl.optional:
        text += " or absent"
    return text


def write_index(page: Path) -> bool:
    """Replace the index between the markers of ``page``; True when the text changed."""
    text = page.read_text(encoding="utf-8")
    head, start, rest = text.partition(INDEX_START)
    _old, end, tail = rest.partition(INDEX_END)
    if not start or not end:
        raise ValueError(f"{page}: the command index markers are missing")
    new = f"{head}{INDEX_START}\n{command_index()}{INDEX_END}{tail}"
    if new != text:
        page.write_text(new, encoding="utf-8")
    return new != text


def client_sources() -> dict[str, str]:
    """The generated client modules: path under the checkout -> text."""
    return {
        "atomic_host/client/types.py": types_source(),
        "atomic_host/client/commands.py": commands_source(),
    }


def main(root: Path) -> None:
    """Rewrite the schema, the command index and the client's generated modules under ``root``."""
    write_schema(root / "docs" / "protocol.schema.json")
    write_index(root / "docs" / "protocol.md")
    for path, text in client_sources().items():
        target = root / path
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[3])

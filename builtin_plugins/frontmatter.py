"""Markdown frontmatter for prompt templates and skills.

Parsed with a YAML parser (PyYAML's safe loader), so lists and nested maps keep their structure;
dates and other non-JSON scalars become strings. A header that is not valid YAML (hand-written
files often have an unquoted ``: `` in a description) or not a mapping falls back to the lenient
subset parser below: ``key: value`` lines, single/double-quoted strings, ``true``/``false`` (also
``yes``/``no``), ``#`` comment lines, indented continuation lines (folded with a space) and
``|`` / ``>`` block scalars; anything fancier is kept as raw text there.
"""

from __future__ import annotations

import re
from typing import Any

_KEY = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?:\s+(.*))?$")
_BOOLS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "r": "\r", "0": "\0"}


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """``(frontmatter, body)``; a file without a leading ``---`` block has an empty frontmatter."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    if not text.startswith("---\n") and text.strip() != "---":
        return {}, text
    end = re.search(r"^---[ \t]*$", text[4:], re.MULTILINE)
    if end is None:
        return {}, text
    header = text[4 : 4 + end.start()]
    body = text[4 + end.end() :]
    return parse_frontmatter(header), body.removeprefix("\n")


def parse_frontmatter(header: str) -> dict[str, Any]:
    """The header as YAML when it is a valid YAML mapping, else by the lenient subset."""
    if not header.strip():
        return {}
    try:
        data = _load_yaml(header)
    except Exception:  # not YAML (or PyYAML missing): the lenient parser reads what it can
        return parse_yaml_subset(header)
    if not isinstance(data, dict):
        return parse_yaml_subset(header)
    return {str(k): _jsonable(v) for k, v in data.items()}


_loader: Any = None


def _load_yaml(text: str) -> Any:
    """``yaml.safe_load`` with every mapping key read as its text (YAML 1.1 would make a key
    ``off`` the boolean False and ``1`` an integer); PyYAML is imported on first use."""
    global _loader
    if _loader is None:
        # lazy: PyYAML (~12 ms) only for a file with frontmatter
        import yaml

        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

        class TextKeyLoader(base):  # type: ignore[misc, valid-type]
            def construct_mapping(self, node: Any, deep: bool = False) -> Any:
                for key_node, _value in node.value:
                    if isinstance(key_node, yaml.ScalarNode):
                        key_node.tag = "tag:yaml.org,2002:str"
                return super().construct_mapping(node, deep)

        _loader = TextKeyLoader
    # the module, imported on the first call above
    import yaml

    return yaml.load(text, Loader=_loader)  # a safe loader: no arbitrary objects


def _jsonable(value: Any) -> Any:
    """YAML values as JSON values: dates, times and other scalars as text; block scalars without
    their final newline (as the subset parser reads them)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, str):
        return value.rstrip("\n")
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def strip_frontmatter(text: str) -> str:
    return split_frontmatter(text)[1]


def parse_yaml_subset(header: str) -> dict[str, Any]:
    """Parse ``key: value`` lines; see the module docstring for what is understood."""
    result: dict[str, Any] = {}
    key: str | None = None
    block: str | None = None  # "|" or ">" while collecting a block scalar
    parts: list[str] = []

    def finish() -> None:
        if key is None:
            return
        if block is None:
            result[key] = _scalar(" ".join(parts).strip())
        elif block == "|":
            result[key] = "\n".join(parts).rstrip("\n")
        else:
            result[key] = " ".join(p for p in parts if p).strip()

    for line in header.split("\n"):
        indented = line[:1] in (" ", "\t")
        if key is not None and (indented or (block is not None and not line.strip())):
            parts.append(line.strip())
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _KEY.match(line)
        if m is None:
            continue  # not a subset line (e.g. a list item at column 0): ignored
        finish()
        key, value = m.group(1), (m.group(2) or "").strip()
        block = value[0] if value[:1] in ("|", ">") and len(value.rstrip("+-")) == 1 else None
        parts = [] if block is not None or not value else [value]
    finish()
    return result


def _scalar(value: str) -> Any:
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), value[1:-1])
    if " #" in value:  # trailing comment on an unquoted value
        value = value.split(" #", 1)[0].rstrip()
    lowered = value.lower()
    if lowered in _BOOLS:
        return _BOOLS[lowered]
    return value

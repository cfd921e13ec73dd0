"""settings.json: global (agent dir) and project (``.atomic/settings.json``), deep-merged.

Settings stay a plain dict (cheap to load at startup, unknown keys kept) behind typed accessors.
A corrupt file is reported on stderr and ignored. Host-initiated writes go to the global file,
atomically.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atomic_host.kit.fsio import atomic_write, read_json_object


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Objects merge recursively; arrays and scalars in ``over`` replace."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


class Settings:
    """Merged settings with typed accessors; ``save_global`` persists host-initiated changes."""

    def __init__(self, global_path: Path, project_path: Path | None = None) -> None:
        self.global_path = global_path
        self.project_path = project_path
        self.reload()

    def reload(self) -> None:
        self._global = read_json_object(self.global_path, "settings")
        project = read_json_object(self.project_path, "project settings") if self.project_path else {}
        self.data = deep_merge(self._global, project)

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    def _typed(self, dotted: str, kind: type | tuple[type, ...], default: Any) -> Any:
        value = self.get(dotted, default)
        if isinstance(value, bool) and kind in (int, float):
            return default
        return value if isinstance(value, kind) else default

    def bool(self, dotted: str, default: bool) -> bool:
        return self._typed(dotted, bool, default)

    def int(self, dotted: str, default: int) -> int:
        return self._typed(dotted, int, default)

    def str(self, dotted: str, default: str | None = None) -> str | None:
        return self._typed(dotted, str, default)

    def list(self, dotted: str, default: list[Any] | None = None) -> list[Any] | None:
        return self._typed(dotted, list, default)

    # Named accessors for the keys the host itself reads.
    @property
    def steering_mode(self) -> str:
        mode = self.str("steeringMode", "one-at-a-time")
        return mode if mode in ("all", "one-at-a-time") else "one-at-a-time"

    @property
    def follow_up_mode(self) -> str:
        mode = self.str("followUpMode", "one-at-a-time")
        return mode if mode in ("all", "one-at-a-time") else "one-at-a-time"

    @property
    def retry_enabled(self) -> bool:
        return self.bool("retry.enabled", True)

    @property
    def retry_max(self) -> int:
        return max(0, self.int("retry.maxRetries", 3))

    @property
    def retry_base_delay_ms(self) -> int:
        return max(0, self.int("retry.baseDelayMs", 2000))

    @property
    def compaction_enabled(self) -> bool:
        return self.bool("compaction.enabled", True)

    def save_global_item(self, key: str, item: str, value: Any) -> None:
        """Set ``item`` of the object ``key`` in the global settings.json (``item`` may hold dots,
        as model ids do; the object's other items stay)."""
        current = read_json_object(self.global_path, "settings")
        table = current.get(key)
        current[key] = {**(table if isinstance(table, dict) else {}), item: value}
        atomic_write(self.global_path, json.dumps(current, indent=2) + "\n")
        self.reload()

    def save_global(self, dotted: str, value: Any) -> None:
        """Set one key in the global settings.json (re-read first so concurrent edits survive)."""
        current = read_json_object(self.global_path, "settings")
        node = current
        parts = dotted.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = value
        atomic_write(self.global_path, json.dumps(current, indent=2) + "\n")
        self.reload()

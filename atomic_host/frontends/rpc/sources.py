"""Where a command or tool came from, as upstream's ``SourceInfo`` (``get_commands[].sourceInfo``,
``get_state.resourceOverlaps``): ``{path, source, scope, origin, baseDir?}``.

- ``path``: the resource's file (a prompt template, a skill, an extension file), else the plugin's
  path (``builtin:<module>``, ``entrypoint:<name>``);
- ``source``: ``builtin`` (shipped with the host), ``local`` (a file: an extension, a template, a
  skill), or ``package:<plugin>`` (an installed package's entry point);
- ``scope``: ``user`` (the agent dir, or installed for the user), ``project`` (``<cwd>/.atomic``,
  ``.agents``), ``temporary`` (given on the command line: ``-e``, ``--prompt-template``, ``--skill``);
- ``origin``: ``package`` for an entry point, else ``top-level``;
- ``baseDir``: the directory of a file resource.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atomic_host.plugins.registry import Overlap, Owner
    from atomic_host.runtime import Runtime

SCOPES = {"user": "user", "project": "project", "path": "temporary"}


def source_info(rt: Runtime, plugin: str, path: str | None, location: str | None = None) -> dict[str, Any]:
    """The ``SourceInfo`` of a resource contributed by ``plugin`` (its file ``path``, its ``location``)."""
    record = rt.plugins.records.get(plugin)
    kind = record.source if record is not None else "local"
    plugin_path = record.path if record is not None else plugin
    is_file = bool(path) and os.path.isabs(path or "")
    info: dict[str, Any] = {"path": path or plugin_path}
    if kind == "entrypoint":
        info.update(source=f"package:{plugin}", scope="user", origin="package")
    else:
        info.update(source="local" if is_file else "builtin", scope=_scope(rt, path if is_file else None, location))
        info["origin"] = "top-level"
    if is_file:
        info["baseDir"] = os.path.dirname(path or "")
    return info


def _scope(rt: Runtime, path: str | None, location: str | None) -> str:
    if location in SCOPES:
        return SCOPES[location]
    if path is None:
        return "user"  # built into the host
    if _under(path, str(rt.agent_dir)):
        return "user"
    if _under(path, os.path.join(rt.cwd, ".atomic")) or _under(path, os.path.join(rt.cwd, ".agents")):
        return "project"
    return "temporary"


def _under(path: str, root: str) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base + os.sep)


def owner_info(rt: Runtime, owner: Owner) -> dict[str, Any]:
    return source_info(rt, owner.plugin, owner.path, owner.location)


def overlaps(rt: Runtime) -> list[dict[str, Any]]:
    """``get_state.resourceOverlaps``: every name two contributions claimed. ``bundled`` is the one
    that holds the name, ``inherited`` the one skipped (a tool) or renamed ``name:N`` (a command)."""
    found: list[Overlap] = [*rt.tools.overlaps, *rt.commands.overlaps]
    return [
        {
            "resourceType": o.kind,
            "name": o.name,
            "bundled": owner_info(rt, o.kept),
            "inherited": owner_info(rt, o.other),
        }
        for o in found
    ]

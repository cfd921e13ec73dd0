"""Which tools are active, and why (``get_tools``): defaultTools, --tools, --no-tools,
--no-builtin-tools, --exclude-tools (semantics §5.2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from atomic_host.contract.records import field, record

if TYPE_CHECKING:
    from atomic_host.contract.tools import Tool
    from atomic_host.core.options import Options
    from atomic_host.core.settings import Settings
    from atomic_host.plugins.manager import PluginHost
    from atomic_host.plugins.registry import ToolRegistry


class ToolHost(Protocol):
    """What the selection reads: the options, the settings, the tool registry and the plugin records."""

    options: Options
    settings: Settings
    tools: ToolRegistry
    plugins: PluginHost


@record
class Selection:
    source: str
    description: str
    names: list[str]
    modifiers: list[str] = field(default_factory=list)
    allowlist: bool = False
    excluded: list[dict[str, str]] = field(default_factory=list)


def _apply_modifiers(names: list[str], entries: list[str]) -> None:
    for entry in entries:
        if entry.startswith("+") and entry[1:] not in names:
            names.append(entry[1:])
        elif entry.startswith("-") and entry[1:] in names:
            names.remove(entry[1:])


def _split(entries: list[str]) -> tuple[list[str], list[str]]:
    plain = [e for e in entries if e and not e.startswith(("+", "-"))]
    mods = [e for e in entries if e.startswith(("+", "-")) and len(e) > 1]
    return plain, mods


def builtin_defaults(tools: ToolRegistry) -> list[str]:
    """The built-in tools that are not opt-in, in registration order."""
    return [t.name for t in tools.all() if tools.is_builtin(t) and not t.opt_in]


def compute(rt: ToolHost) -> Selection:
    opts = rt.options
    builtin = {t.name for t in rt.tools.all() if rt.tools.is_builtin(t)}
    sel = Selection("built-in-defaults", "the built-in defaults", builtin_defaults(rt.tools))
    setting = rt.settings.get("defaultTools")
    if isinstance(setting, list):
        entries = [str(x) for x in setting]
        plain, mods = _split(entries)
        sel.source, sel.description = "default-tools-setting", "the defaultTools setting"
        if plain or not entries:
            sel.names = plain
        _apply_modifiers(sel.names, mods)
    if opts.tools is not None:
        plain, mods = _split(opts.tools)
        if plain:
            sel.source, sel.description, sel.names, sel.allowlist = "tools-allowlist", "--tools", plain, True
        _apply_modifiers(sel.names, mods)
        sel.modifiers = mods
    if opts.no_builtin_tools:
        sel.source, sel.description = "no-built-in-tools", "--no-builtin-tools"
        sel.names = [n for n in sel.names if n not in builtin]
    if opts.no_tools:
        sel.source, sel.description, sel.names = "no-tools", "--no-tools", []
    for name in opts.exclude_tools:
        if name in sel.names:
            sel.names.remove(name)
            sel.excluded.append({"name": name, "reason": "excluded by --exclude-tools"})
    if opts.mode != "rpc":
        for name in [t.name for t in rt.tools.all() if t.needs_ui and t.name in sel.names]:
            sel.names.remove(name)
            sel.excluded.append({"name": name, "reason": f"needs user input, which --mode {opts.mode} lacks"})
    return sel


def apply_selection(rt: ToolHost) -> Selection:
    """Compute the selection and make it the registry's active set."""
    sel = compute(rt)
    active = set(sel.names)
    if not sel.allowlist and not rt.options.no_tools:
        # Extension tools stay active whatever defaultTools says (unless opt-in).
        active |= {t.name for t in rt.tools.all() if not rt.tools.is_builtin(t) and not t.opt_in}
    if rt.options.mode != "rpc":
        # Extension tools that need a user are left out too (the selected ones were excluded by compute).
        for tool in rt.tools.all():
            if tool.needs_ui and tool.name in active and not any(e["name"] == tool.name for e in sel.excluded):
                sel.excluded.append(
                    {"name": tool.name, "reason": f"needs user input, which --mode {rt.options.mode} lacks"}
                )
    # The denylist is applied last, so it also removes extension tools kept active above.
    for name in rt.options.exclude_tools:
        if name in active and not any(e["name"] == name for e in sel.excluded):
            sel.excluded.append({"name": name, "reason": "excluded by --exclude-tools"})
    active -= {e["name"] for e in sel.excluded}
    rt.tools.selection = active
    return sel


def _did_you_mean(name: str, known: list[str]) -> str:
    variants = {name.replace("-", "_"), name.replace("_", "-")}
    for v in variants:
        if v in known and v != name:
            return f'; did you mean "{v}"?'
    # lazy: difflib only for a misspelt name
    from difflib import get_close_matches

    close = get_close_matches(name, known, n=1, cutoff=0.75)
    return f'; did you mean "{close[0]}"?' if close else ""


def _source_path(rt: ToolHost, tool: Tool) -> str:
    if tool.source_path:
        return tool.source_path
    record = rt.plugins.records.get(tool.plugin)
    if record is not None and record.source != "builtin" and record.path:
        return str(record.path)  # an extension tool that set its own ``source`` but no path
    return f"<builtin:{tool.name}>"


def _deferred_reason(loader: Tool | None, visible: set[str]) -> str:
    """Why a deferred tool is not active, naming the tool that would load it (``Tool.loads_deferred``)."""
    if loader is None:
        return "deferred; no registered tool loads deferred tools"
    reason = f"deferred; {loader.name} loads it when a search matches"
    if loader.name not in visible:
        reason += f' (add "+{loader.name}" to defaultTools or --tools to enable it)'
    return reason


def _entry(rt: ToolHost, tool: Tool, sel: Selection, visible: set[str], loader: Tool | None) -> dict[str, Any]:
    # "Active" means the model sees it now: a deferred tool only counts once its loader (tool_search) loaded it.
    active = tool.name in visible
    item: dict[str, Any] = {
        "name": tool.name,
        "active": active,
        "exposure": tool.exposure,
        "source": tool.source,
        "sourcePath": _source_path(rt, tool),
        "summary": tool.one_line_summary(),
    }
    if not active:
        if rt.tools.is_active(tool) and tool.deferred:
            item["inactiveReason"] = _deferred_reason(loader, visible)
        elif any(e["name"] == tool.name for e in sel.excluded):
            item["inactiveReason"] = next(e["reason"] for e in sel.excluded if e["name"] == tool.name)
        elif tool.opt_in:
            item["inactiveReason"] = f'opt-in; add "+{tool.name}" to defaultTools or --tools to enable it'
        else:
            item["inactiveReason"] = f"not selected by {sel.description}"
    return item


def report(rt: ToolHost) -> dict[str, Any]:
    """The ``get_tools`` response data."""
    sel = apply_selection(rt)
    tools = list(rt.tools.all())
    known = [t.name for t in tools]
    visible = {t.name for t in rt.tools.for_model()}
    # The deferred-tool loader the model would get: an active one first, else any registered one.
    loaders = sorted((t for t in tools if t.loads_deferred), key=lambda t: t.name not in visible)
    loader = loaders[0] if loaders else None
    entries = [_entry(rt, t, sel, visible, loader) for t in tools]
    entries.sort(key=lambda e: not e["active"])
    missing = [
        {
            "name": n,
            "reason": f"selected by {sel.description}, but no built-in, extension, SDK custom tool, or MCP "
            f'server has registered a tool named "{n}"' + _did_you_mean(n, known),
        }
        for n in sel.names
        if n not in known
    ]
    return {
        "selection": {
            "source": sel.source,
            "description": sel.description,
            "names": sel.names,
            "modifiers": sel.modifiers,
        },
        "tools": entries,
        "missing": missing,
        "excluded": sel.excluded,
    }

"""Which MCP servers are configured, read the way Claude Code users already write them.

Sources, later wins per server name (an entry is replaced whole, except that the project's
``.atomic/settings.json`` deep-merges into the global ``settings.json`` as every setting does):

1. ``<agentDir>/mcp.json``
2. ``mcpServers`` in settings (global, then the trusted project's ``.atomic/settings.json``)
3. ``<cwd>/.mcp.json``, only in a trusted project

Standard library only: this runs at every start, with or without servers.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from atomic_host.contract.records import field, record
from atomic_host.kit.fsio import read_json_object
from atomic_host.kit.log import log

# Patterns as strings: ``re`` compiles (and caches) them on first use, not at every host start.
NAME_UNSAFE = r"[^A-Za-z0-9_-]"
MAX_TOOL_NAME = 64
"""OpenAI's limit on function names (Anthropic allows 128): the stricter one wins."""

DEFAULT_STARTUP_TIMEOUT_MS = 30_000
DEFAULT_TOOL_TIMEOUT_MS = 600_000

_VAR = r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))"
_SECRET_NAME = r"(?i)KEY|TOKEN|SECRET|PASS|AUTH|CRED|COOKIE|SESSION|PRIVATE|(^|_)PAT($|_)"


class ConfigError(ValueError):
    """A server entry that cannot be used; the message names what is wrong (never a secret value)."""


@record
class ServerConfig:
    """One server, after ``$VAR`` expansion. ``env`` and ``headers`` may hold credentials: they are
    never printed, and the ones that look like credentials are masked in everything the host writes."""

    name: str
    transport: str
    """stdio | http | sse"""
    source: str
    """The file the entry came from (shown by ``/mcp`` and in get_tools' sourcePath)."""
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_MS / 1000
    tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_MS / 1000
    error: str | None = None
    """Set when the entry is unusable: the server is listed by ``/mcp`` as failed, never started."""

    def secret_values(self) -> list[tuple[str, str]]:
        """``(label, value)`` of the env and header values whose names look like credentials
        (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASS*``, ``*AUTH*`` (so ``Authorization``), …), and
        such parameters of the URL's query string."""
        found = [(f"mcp:{self.name}:{k}", v) for k, v in self.env.items() if re.search(_SECRET_NAME, k)]
        found += [(f"mcp:{self.name}:{k}", v) for k, v in self.headers.items() if re.search(_SECRET_NAME, k)]
        if "?" in self.url:
            query = parse_qsl(urlsplit(self.url).query)
            found += [(f"mcp:{self.name}:{k}", v) for k, v in query if re.search(_SECRET_NAME, k)]
        return [(label, v) for label, v in found if v]


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, with characters providers refuse replaced by ``_`` and names
    longer than :data:`MAX_TOOL_NAME` cut and given a short hash so they stay unique."""
    name = f"mcp__{re.sub(NAME_UNSAFE, '_', server)}__{re.sub(NAME_UNSAFE, '_', tool)}"
    if len(name) <= MAX_TOOL_NAME:
        return name
    # lazy: hashlib only for an over-long tool name
    import hashlib

    digest = hashlib.sha1(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_TOOL_NAME - 9]}_{digest}"


def expand(value: str, environ: dict[str, str] | os._Environ[str], where: str) -> str:
    """``$VAR``, ``${VAR}`` and ``${VAR:-default}``; an unset variable without a default is an error."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(3)
        if name in environ:
            return environ[name]
        if m.group(2) is not None:
            return m.group(2)
        raise ConfigError(f"{where}: environment variable {name} is not set")

    return re.sub(_VAR, sub, value) if "$" in value else value


def _read(path: Path) -> dict[str, Any]:
    """The ``mcpServers`` object of an ``mcp.json``-shaped file; {} when absent or unreadable."""
    servers = read_json_object(path, "MCP configuration").get("mcpServers")
    if servers is None:
        return {}
    if not isinstance(servers, dict):
        log.warning(f"mcp: ignoring {path}: mcpServers is not an object")
        return {}
    return servers


def _timeout_s(raw: Any, default_ms: float) -> float:
    if isinstance(raw, (int, float)) and not isinstance(raw, bool) and raw > 0:
        return float(raw) / 1000
    return default_ms / 1000


def parse_entry(
    name: str, raw: Any, source: str, settings: dict[str, Any], environ: dict[str, str] | os._Environ[str]
) -> ServerConfig | None:
    """One ``mcpServers`` entry; None when it is disabled. A bad entry comes back with ``error``."""
    mcp_settings = settings.get("mcp") if isinstance(settings.get("mcp"), dict) else {}
    startup_default = _timeout_s(mcp_settings.get("startupTimeoutMs"), DEFAULT_STARTUP_TIMEOUT_MS) * 1000
    tool_default = _timeout_s(mcp_settings.get("toolTimeoutMs"), DEFAULT_TOOL_TIMEOUT_MS) * 1000
    cfg = ServerConfig(name=name, transport="stdio", source=source)
    if not isinstance(raw, dict):
        cfg.error = "the entry is not an object"
        return cfg
    if raw.get("disabled") is True or raw.get("enabled") is False:
        return None
    cfg.startup_timeout_s = _timeout_s(raw.get("startupTimeoutMs"), startup_default)
    cfg.tool_timeout_s = _timeout_s(raw.get("toolTimeoutMs"), tool_default)
    kind = raw.get("type", raw.get("transport"))
    try:
        if kind in (None, "stdio") and "command" in raw:
            cfg.transport = "stdio"
            command = raw.get("command")
            args = raw.get("args", [])
            env = raw.get("env", {})
            if not isinstance(command, str) or not command.strip():
                raise ConfigError("command must be a non-empty string")
            if not isinstance(args, list) or not all(isinstance(a, (str, int, float)) for a in args):
                raise ConfigError("args must be a list of strings")
            if not isinstance(env, dict):
                raise ConfigError("env must be an object")
            cfg.command = expand(command, environ, "command")
            cfg.args = [expand(str(a), environ, "args") for a in args]
            cfg.env = {str(k): expand(str(v), environ, f"env.{k}") for k, v in env.items() if v is not None}
            cwd = raw.get("cwd")
            if cwd is not None:
                if not isinstance(cwd, str):
                    raise ConfigError("cwd must be a string")
                cfg.cwd = expand(cwd, environ, "cwd")
        elif kind in (None, "http", "streamable-http", "streamableHttp", "sse") and "url" in raw:
            cfg.transport = "sse" if kind == "sse" else "http"
            url, headers = raw.get("url"), raw.get("headers", {})
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                raise ConfigError("url must be an http:// or https:// URL")
            if not isinstance(headers, dict):
                raise ConfigError("headers must be an object")
            cfg.url = expand(url, environ, "url")
            cfg.headers = {str(k): expand(str(v), environ, f"headers.{k}") for k, v in headers.items()}
        elif kind not in (None, "stdio", "http", "streamable-http", "streamableHttp", "sse"):
            raise ConfigError(f"unknown transport type {kind!r} (stdio, http or sse)")
        else:
            raise ConfigError('needs "command" (stdio) or "url" (http, sse)')
    except ConfigError as exc:
        cfg.error = str(exc)
    return cfg


def load_servers(
    agent_dir: str, cwd: str, trusted: bool, settings: dict[str, Any], environ: dict[str, str] | None = None
) -> dict[str, ServerConfig]:
    """Every configured, enabled server by name, in the order they were first named."""
    env = os.environ if environ is None else environ
    sources: list[tuple[str, dict[str, Any]]] = [
        (str(Path(agent_dir) / "mcp.json"), _read(Path(agent_dir) / "mcp.json"))
    ]
    in_settings = settings.get("mcpServers")
    if isinstance(in_settings, dict):
        sources.append(("settings.json", in_settings))
    elif in_settings is not None:
        log.warning("mcp: ignoring the mcpServers setting: not an object")
    project_file = Path(cwd) / ".mcp.json"
    if trusted:
        sources.append((str(project_file), _read(project_file)))
    elif project_file.is_file():
        print(
            f"atomic: mcp: ignoring {project_file}: the project is not trusted (--approve, trust.json)",
            file=sys.stderr,
        )
    merged: dict[str, tuple[str, Any]] = {}
    for source, servers in sources:
        for name, raw in servers.items():
            merged[str(name)] = (source, raw)
    out: dict[str, ServerConfig] = {}
    for name, (source, raw) in merged.items():
        cfg = parse_entry(name, raw, source, settings, env)
        if cfg is not None:
            out[name] = cfg
    return out

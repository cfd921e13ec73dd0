"""What ``atomic --mode rpc`` has imported by the time it answers its first ``get_state``.

The host runs with ``python -X importtime`` and its stdout and stderr on one pipe: the interpreter
writes a line to stderr as each import finishes, so every line before the ``get_state`` response is
an import made before the answer (the warm-up thread the first response starts comes after it).

None of these libraries may be on that path; each is loaded when first used:

- the workflows engine (DBOS), ACP, MCP and OAuth libraries (issue 12: "must not be on the import
  path of ``atomic --mode rpc`` until used");
- pydantic (protocol validation models), httpx and its stack (the providers' HTTP client) and
  orjson (the fast encoder): loaded by the warm-up thread after the first response;
- rich (terminal rendering, not used by RPC).

Nor these modules (issue 12, startup: each was on the path once and is loaded when first used):

- ``argparse`` and ``gettext`` (an RPC command line is read without them), ``shutil`` with
  ``bz2``/``lzma`` (argparse's help formatter pulled them in);
- ``uuid`` and ``platform`` (compaction's request id);
- the agent loop, tool execution and the compaction driver (the first prompt, or the warm-up
  thread, imports them);
- the session listing (the JSONL store's list and list_all import it, in a worker thread) and the
  JSONL line format (the first write of a session comes with the first reply; the warm-up thread
  imports it before).

The rule is on the libraries, by top-level package: the host's own stdlib-only parts of those
features may load at start (``builtin_plugins.mcp.config`` reads which servers are configured,
``builtin_plugins.workflows.engine`` is the facade that imports DBOS when a workflow runs).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

TOP_LEVEL = {
    "dbos": "DBOS (workflows engine)",
    "psycopg": "psycopg (the postgres session store)",
    "psycopg_binary": "psycopg (the postgres session store)",
    "acp": "ACP (agent-client-protocol)",
    "agent_client_protocol": "ACP (agent-client-protocol)",
    "mcp": "MCP SDK",
    "authlib": "OAuth",
    "oauthlib": "OAuth",
    "pydantic": "pydantic (validation models)",
    "pydantic_core": "pydantic (validation models)",
    "httpx": "httpx (HTTP client)",
    "httpcore": "httpx (HTTP client)",
    "httpx_sse": "httpx (HTTP client)",
    "h11": "HTTP/1.1 parser of provider streams (kit/_fast/http1.py)",
    "orjson": "orjson (fast encoder, warm-up thread)",
    "rich": "rich (terminal rendering)",
}
LAZY_MODULES = {
    "argparse": "read only for command lines the quick parser declines",
    "gettext": "argparse's",
    "shutil": "argparse's help formatter's",
    "bz2": "shutil's",
    "lzma": "shutil's",
    "uuid": "compaction's request id",
    "platform": "uuid's",
    "atomic_host.agent.loop": "the first prompt's",
    "atomic_host.agent.tool_exec": "the first tool call's",
    "atomic_host.agent.oversized": "the first tool call's",
    "atomic_host.engine.compaction": "the first prompt's",
    "atomic_host.kit.llm.stream": "the first prompt's",
    "atomic_host.engine.navigation": "the first new_session/switch_session/fork's (or the warm-up thread's)",
    "atomic_host.engine.branch_summary": "navigate_tree's",
    "dataclasses": "plugins' and the host's own dataclasses (records need no dataclasses import)",
    "atomic_host.kit.sessions.listing": "the first session listing's (list_sessions, in a worker thread)",
    "atomic_host.kit.sessions.jsonl": "the first session file read or write's (or the warm-up thread's)",
}
"""Modules the first get_state must not wait for → who needs them."""
PREFIXES = [("dbos_", "DBOS (workflows engine)"), ("acp_", "ACP"), ("mcp_", "MCP SDK")]
"""Sibling distributions' packages, e.g. ``mcp_types``."""


def forbidden_reason(module: str) -> str | None:
    top = module.split(".", 1)[0]
    if top in TOP_LEVEL:
        return TOP_LEVEL[top]
    if "oauth" in top:
        return "OAuth"
    return next((reason for prefix, reason in PREFIXES if top.startswith(prefix)), None)


def imports_before_first_response(args: list[str], tmp_path: Path) -> list[str]:
    """Modules imported (in import-completion order) before the first ``get_state`` response."""
    agent_dir, work, home = tmp_path / "agent", tmp_path / "work", tmp_path / "home"
    for d in (agent_dir, work, home):
        d.mkdir()
    providers = {"local": {"baseUrl": "http://127.0.0.1:9", "api": "openai-completions", "apiKey": "dummy",
                           "models": [{"id": "m1"}]}}  # fmt: skip
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATOMIC_", "PI_")) and not k.endswith("_API_KEY")}
    env.update(ATOMIC_CODING_AGENT_DIR=str(agent_dir), HOME=str(home))
    proc = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "atomic_host", "--mode", "rpc", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=work,
        env=env,
    )
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    assert proc.stdin and proc.stdout
    modules: list[str] = []
    response = None
    other: list[str] = []
    try:
        proc.stdin.write(b'{"type":"get_state","id":"s"}\n')
        proc.stdin.flush()
        for raw in proc.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            if line.startswith("import time:"):
                name = line.rsplit("|", 1)[-1].strip()
                if name != "imported package":  # the header line
                    modules.append(name)
            elif line.startswith("{"):
                response = json.loads(line)
                break
            else:
                other.append(line)
    finally:
        proc.stdin.close()
        proc.stdout.close()
        proc.wait()
        watchdog.cancel()
    assert response is not None, f"no response; output: {other[-20:]}"
    assert response.get("command") == "get_state" and response.get("success"), response
    assert any(m.startswith("atomic_host.frontends.rpc") for m in modules), "no -X importtime lines seen"
    return modules


@pytest.mark.parametrize(
    "args",
    [["--provider", "faux"], ["--model", "local/m1"]],
    ids=["faux", "models-json-provider"],
)
def test_first_get_state_imports_none_of_the_optional_stacks(args: list[str], tmp_path: Path) -> None:
    modules = imports_before_first_response(args, tmp_path)
    found = {m: reason for m in modules if (reason := forbidden_reason(m))}
    listing = "\n".join(f"  {m}  ({reason})" for m, reason in sorted(found.items()))
    assert not found, f"imported before the first get_state response ({len(modules)} imports in all):\n{listing}"


@pytest.mark.parametrize(
    "args",
    [["--provider", "faux"], ["--model", "local/m1", "--no-session"]],
    ids=["faux", "models-json-provider-no-session"],
)
def test_first_get_state_waits_for_none_of_the_lazy_modules(args: list[str], tmp_path: Path) -> None:
    modules = imports_before_first_response(args, tmp_path)
    found = sorted(m for m in modules if m in LAZY_MODULES)
    listing = "\n".join(f"  {m}  ({LAZY_MODULES[m]})" for m in found)
    assert not found, f"imported before the first get_state response:\n{listing}"


def test_the_rule_matches_what_it_names() -> None:
    for module in ("dbos", "dbos._core", "psycopg", "psycopg.pq", "acp", "acp.schema", "agent_client_protocol",
                   "mcp.client", "mcp_types", "authlib.oauth2", "requests_oauthlib", "pydantic",
                   "pydantic_core._pydantic_core", "httpx", "httpcore._sync", "orjson", "rich.console"):  # fmt: skip
        assert forbidden_reason(module), module
    for module in ("asyncio", "atomic_host.frontends.rpc.server", "builtin_plugins.mcp.config",
                   "builtin_plugins.workflows.engine", "json", "jiter", "pluggy", "email.mime"):  # fmt: skip
        assert forbidden_reason(module) is None, module


def test_the_warm_up_thread_loads_the_session_file_format_before_a_first_reply_writes() -> None:
    # kit.sessions.jsonl is not on the start path (LAZY_MODULES): the first session write would
    # import it on the event loop unless the RPC warm-up (_prewarm) has
    code = (
        "import sys\n"
        "from atomic_host.frontends.rpc.main import _prewarm\n"
        "before = 'atomic_host.kit.sessions.jsonl' in sys.modules\n"
        "_prewarm([])\n"
        "print(before, 'atomic_host.kit.sessions.jsonl' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["False", "True"]

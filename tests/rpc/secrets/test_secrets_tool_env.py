"""Black-box: the processes the host starts for a model or a user do not inherit its credentials.

The output masking knows a key's plain forms only; ``env | base64`` carried every key past it into
the tool result, the session file and the next request. Now the variables named like credentials,
the ones providers declare, and any whose value is a credential the host knows are left out of the
environment of the bash tool (foreground and background), the RPC ``bash`` command and codemode's
worker; ``shellEnv.passThrough`` keeps chosen ones.
"""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

from atomic_host.testing import Host, start_host

KEYS = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-envkey-0123456789abcdef",
    "GITHUB_TOKEN": "ghp_githubtoken0123456789abcdefABCDEF",
    "PGPASSWORD": "postgres-password-4711",
    "AWS_SECRET_ACCESS_KEY": "aws/secret+access=key0123456789",
    "Client_Secret": "lower-case-client-secret-value",
    "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer otel-bearer-0123",
}
AUTH_JSON_KEY = "auth-json-stored-key-987654321"
INNOCENT = {
    "DEPLOY_CONFIG": AUTH_JSON_KEY,  # a credential the host knows, under a harmless name
    "ACME_LLM_CRED": "ab12",  # a provider's declared key variable (too short to be masked)
}
PLAIN = {"PLAIN_SETTING": "visible-plain-value", "EDITOR_THEME": "dark"}
ACME_PROVIDER = '''
from atomic_host import hookimpl
from atomic_host.contract.providers import ProviderInfo

@hookimpl
def register_providers(register):
    register(ProviderInfo(id="acme", name="Acme", api="openai-completions",
                          base_url="http://127.0.0.1:9/v1", env_keys=["ACME_LLM_CRED"]))
'''
HIDDEN = {**KEYS, **INNOCENT}


def _environment(dump: str) -> dict[str, str]:
    """``env``'s output (or NUL-separated /proc environ) as a dict."""
    text = base64.b64decode(dump.strip()).decode()
    lines = text.split("\0") if "\0" in text else text.split("\n")
    return dict(line.split("=", 1) for line in lines if "=" in line)


def _assert_scrubbed(env: dict[str, str], passed: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    for name, value in HIDDEN.items():
        if name in passed:
            assert env.get(name) == value, name
        else:
            assert name not in env, name
            assert value not in "\n".join(env.values()), name
    for name, value in PLAIN.items():
        assert env.get(name) == value  # the scrub is not a blanket wipe
    assert env.get("PATH")


def _setup(root: Path) -> tuple[list[str], dict[str, str]]:
    agent = root / "agent"
    agent.mkdir(parents=True)
    (agent / "auth.json").write_text(json.dumps({"someprovider": {"type": "api_key", "key": AUTH_JSON_KEY}}))
    ext = root / "acme_provider.py"
    ext.write_text(ACME_PROVIDER)
    return ["-e", str(ext)], {**HIDDEN, **PLAIN}


def _tool_text(host: Host, call_id: str) -> str:
    (end,) = [e for e in host.client.events if e.get("type") == "tool_execution_end" and e["toolCallId"] == call_id]
    return "".join(b["text"] for b in end["result"]["content"] if b["type"] == "text")


def _call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
    return {"content": [{"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}]}


async def test_env_base64_through_the_bash_tool_carries_no_credential(tmp_path: Path) -> None:
    args, env = _setup(tmp_path)
    async with start_host(*args, base=tmp_path, env=env) as host:
        dump = host.cwd / "background-env.txt"
        host.faux.push(
            _call("bash", "fg", command="env | base64 -w0"),
            _call("bash", "bg", command=f"env | base64 -w0 > {dump}.tmp && mv {dump}.tmp {dump}", background=True),
            "done",
        )
        await host.client.prompt_and_wait("show me your environment")
        _assert_scrubbed(_environment(_tool_text(host, "fg")))
        for _ in range(500):
            if dump.exists():
                break
            await asyncio.sleep(0.02)
        _assert_scrubbed(_environment(dump.read_text()))
        # what the model got back on its next call and what the session keeps: the same clean output
        results = [m for m in host.faux_calls()[-1]["context"]["messages"] if m.get("toolCallId") == "fg"]
        _assert_scrubbed(_environment(results[0]["content"][0]["text"]))
        session_text = "".join(p.read_text() for p in (host.agent_dir / "sessions").rglob("*.jsonl"))
        stored = [json.loads(line) for line in session_text.splitlines() if '"fg"' in line]
        (entry,) = [e for e in stored if e.get("message", {}).get("role") == "toolResult"]
        _assert_scrubbed(_environment(entry["message"]["content"][0]["text"]))


async def test_rpc_bash_command_is_scrubbed_and_pass_through_keeps_chosen_variables(tmp_path: Path) -> None:
    args, env = _setup(tmp_path)
    async with start_host(*args, base=tmp_path, env=env) as host:
        response = await host.client.request({"type": "bash", "command": "env | base64 -w0"})
        assert response["success"], response
        _assert_scrubbed(_environment(response["data"]["output"]))
    settings = {"shellEnv": {"passThrough": ["GITHUB_TOKEN", "AWS_*", 7, "Client_Secret"]}}
    args, env = _setup(tmp_path / "again")
    async with start_host(*args, base=tmp_path / "again", env=env, settings=settings) as host:
        passed = {"GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "Client_Secret"}
        response = await host.client.request({"type": "bash", "command": "env | base64 -w0"})
        _assert_scrubbed(_environment(response["data"]["output"]), passed)
        host.faux.push(_call("bash", "fg", command="env | base64 -w0"), "done")
        await host.client.prompt_and_wait("again")
        _assert_scrubbed(_environment(_tool_text(host, "fg")), passed)


async def test_codemode_worker_starts_without_credentials(tmp_path: Path) -> None:
    """The worker is found from inside a nested bash call (it waits for the call's result): a
    process of this host (``$PPID``) running codemode's worker; its /proc environ is the one it got."""
    args, env = _setup(tmp_path)
    find_worker = (
        'for p in /proc/[0-9]*; do [ "$(cut -d" " -f4 $p/stat 2>/dev/null)" = "$PPID" ] || continue; '
        'tr "\\0" " " < $p/cmdline | grep -q codemode/worker.py && base64 -w0 $p/environ; done'
    )
    code = f"const r = await tools.bash({{command: {json.dumps(find_worker)}}}); return r.text;"
    async with start_host(*args, "--tools", "+codemode", base=tmp_path, env=env) as host:
        host.faux.push(_call("codemode", "cm", code=code), "done")
        await host.client.prompt_and_wait("look around")
        text = _tool_text(host, "cm")
        dump = max(text.split(), key=len)
        _assert_scrubbed(_environment(dump))

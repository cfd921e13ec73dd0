"""Black-box: a credential the host knows never appears in anything it writes.

A local server answers 401 with a body quoting the request headers (as gateways and proxies do),
the model runs ``env`` / ``cat auth.json`` through the bash tool and streams the key back split
across deltas; the key is supplied each way the host learns one. Every stdout line, stderr, the
session store (JSONL and SQLite), the compaction backup, the HTML export, get_messages and what
is sent back to the model must show the marker and never the key.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from secrets_helpers import BASH, ECHO_401, TEXT, EchoServer, assert_nowhere, sqlite_rows, written_files

from atomic_host.testing import start_host

LONG_PROMPT = "\n".join(f"requirement {i}: keep widget {i} working" for i in range(1, 31))
NO_SUMMARIES = {"sessionSummary": {"enabled": False}}
LEAK_EXTENSION = '''
import os, sys
from atomic_host import hookimpl

@hookimpl
def on_event(event, api):
    if event.get("type") == "agent_end":
        key = open(os.environ["LEAK_FILE"]).read().strip()
        print("extension print:", key)
        sys.stderr.write(f"extension stderr: {key}\\n")
'''


@dataclass
class Setup:
    args: list[str]
    api: str
    marker: str
    env: dict[str, str] = field(default_factory=dict)
    inputs: set[Path] = field(default_factory=set)
    extra_secrets: dict[str, str] = field(default_factory=dict)
    """Other credentials that must be masked too (value → marker)."""


def _write(path: Path, data: Any, inputs: set[Path]) -> None:
    path.write_text(json.dumps(data))
    inputs.add(path.resolve())


def configure(source: str, root: Path, url: str, key: str) -> Setup:
    """Files, env and flags that hand ``key`` to the host the way ``source`` says."""
    agent = root / "agent"
    agent.mkdir()
    inputs: set[Path] = set()

    def local(**extra: Any) -> dict[str, Any]:
        provider = {"baseUrl": url, "api": "openai-completions", "models": [{"id": "m1"}], **extra}
        return {"providers": {"local": provider}}

    local_model = ["--model", "local/m1"]
    anthropic_model = ["--model", "anthropic/claude-sonnet-4-5"]
    rerouted = {"providers": {"anthropic": {"baseUrl": url}}}
    if source == "env":
        _write(agent / "models.json", rerouted, inputs)
        return Setup(anthropic_model, "anthropic-messages", "[REDACTED:ANTHROPIC_API_KEY]",
                     env={"ANTHROPIC_API_KEY": key}, inputs=inputs)
    if source == "auth.json":
        _write(agent / "models.json", local(), inputs)
        _write(agent / "auth.json", {"local": {"type": "api_key", "key": key}}, inputs)
        return Setup(local_model, "openai-completions", "[REDACTED:auth.json:local]", inputs=inputs)
    if source == "oauth":
        refresh = "refresh-token-" + key[::-1]
        _write(agent / "models.json", rerouted, inputs)
        record = {"type": "oauth", "access": key, "refresh": refresh, "expires": 4_102_444_800_000}
        _write(agent / "auth.json", {"anthropic": record}, inputs)
        return Setup(anthropic_model, "anthropic-messages", "[REDACTED:auth.json:anthropic:access]", inputs=inputs,
                     extra_secrets={refresh: "[REDACTED:auth.json:anthropic:refresh]"})
    if source == "models.json $VAR":
        _write(agent / "models.json", local(apiKey="$LOCAL_GATEWAY_KEY"), inputs)
        return Setup(local_model, "openai-completions", "[REDACTED:LOCAL_GATEWAY_KEY]",
                     env={"LOCAL_GATEWAY_KEY": key}, inputs=inputs)
    if source == "models.json !command":
        _write(agent / "models.json", local(apiKey=f"!cat {root / 'keyfile'}"), inputs)
        return Setup(local_model, "openai-completions", "[REDACTED:models.json:local]", inputs=inputs)
    if source == "models.json headers":
        tenant = "tenant-literal-0042"
        headers = {"x-gateway-token": "$GATEWAY_TOKEN", "x-tenant": tenant}
        _write(agent / "models.json", local(apiKey="dummy", headers=headers), inputs)
        return Setup(local_model, "openai-completions", "[REDACTED:GATEWAY_TOKEN]", env={"GATEWAY_TOKEN": key},
                     inputs=inputs, extra_secrets={tenant: "[REDACTED:models.json:local:x-tenant]"})
    assert source == "--api-key"
    _write(agent / "models.json", local(), inputs)
    return Setup([*local_model, "--api-key", key], "openai-completions", "[REDACTED:--api-key]", inputs=inputs)


SOURCES = ["env", "auth.json", "oauth", "models.json $VAR", "models.json !command", "models.json headers",
           "--api-key"]
CASES = [(s, "jsonl") for s in SOURCES] + [("env", "sqlite"), ("models.json !command", "sqlite")]


def _key(source: str) -> str:
    body = "".join(c for c in source if c.isalnum())[:10]
    prefix = "sk-ant-oat01-" if source == "oauth" else "sk-proj-"
    return f"{prefix}{body}-Zq81xW3vT9kLm2Pn7Rs4"


@pytest.mark.parametrize(("source", "store"), CASES)
async def test_echoed_credential_is_masked_in_everything_the_host_writes(
    tmp_path: Path, source: str, store: str
) -> None:
    key = _key(source)
    with EchoServer() as server:
        setup = configure(source, tmp_path, server.base_url, key)
        keyfile = tmp_path / "keyfile"
        keyfile.write_text(key + "\n")
        ext = tmp_path / "leak_ext.py"
        ext.write_text(LEAK_EXTENSION)
        setup.inputs |= {keyfile.resolve(), ext.resolve()}
        args = [*setup.args, "-e", str(ext), *(["--session-store", "sqlite"] if store == "sqlite" else [])]
        env = {**setup.env, "LEAK_FILE": str(keyfile)}
        secrets = {key: setup.marker, **setup.extra_secrets}
        stderr_path = tmp_path / "stderr.log"
        command = f'env; cat "$ATOMIC_CODING_AGENT_DIR"/*.json {keyfile}; tr "\\0" "\\n" < /proc/$PPID/cmdline'
        split = ["I saw ", key[:5], key[5:17], key[17:] + " in the output."]
        with stderr_path.open("wb") as err:
            async with start_host(*args, base=tmp_path, env=env, settings=NO_SUMMARIES,
                                  stderr=err.fileno()) as host:
                c = host.client
                # 1. the model runs bash that prints every credential, then repeats the key split in 4 deltas
                server.enqueue(BASH[setup.api](command))
                server.enqueue(TEXT[setup.api](split))
                first = await c.prompt_and_wait(LONG_PROMPT)
                [tool_end] = [e for e in first if e["type"] == "tool_execution_end"]
                tool_text = tool_end["result"]["content"][0]["text"]
                for mark in secrets.values():
                    assert mark in tool_text, (mark, tool_text)  # printed, and masked
                sent_back = json.dumps(server.requests[1].body)
                assert setup.marker in sent_back  # the tool result the model got is the masked one
                deltas = [e["assistantMessageEvent"]["delta"] for e in first if e["type"] == "message_update"
                          and e["assistantMessageEvent"]["type"] == "text_delta"]
                ends = [e["message"] for e in first if e["type"] == "message_end"
                        and e["message"]["role"] == "assistant"]
                assert "".join(deltas) == f"I saw {setup.marker} in the output." == ends[-1]["content"][0]["text"]

                # 2. the gateway's 401 quotes the request headers
                server.enqueue(ECHO_401)
                second = await c.prompt_and_wait("second")
                [failed] = [e["message"] for e in second if e["type"] == "message_end"
                            and e["message"]["role"] == "assistant"]
                assert failed["stopReason"] == "error" and failed["errorMessage"].startswith("401 ")
                assert setup.marker in failed["errorMessage"]
                assert "invalid credentials" in failed["errorMessage"]  # the error itself is still reported
                [turn_end] = [e for e in second if e["type"] == "turn_end"]
                assert setup.marker in turn_end["message"]["errorMessage"]

                # 3. compaction (its backup), the export, get_messages, a direct bash command
                server.enqueue(TEXT[setup.api](["1,5"]))
                compacted = await c.call("compact")
                export = await c.export_html()
                messages = json.dumps((await c.get_messages()).messages)
                bash = await c.bash(f"cat {keyfile}")
        host.assert_protocol_lines()

        assert setup.marker in messages and setup.marker in bash["output"]
        html = Path(export["path"]).read_text()
        assert setup.marker in html
        stdout = "\n".join(c.lines)
        stderr = stderr_path.read_text()
        assert f"extension print: {setup.marker}" in stderr and f"extension stderr: {setup.marker}" in stderr
        files = written_files(tmp_path, setup.inputs)
        if store == "jsonl":
            [session] = [p for p in files if p.endswith(".jsonl") and "/sessions/" in p]
            assert setup.marker in Path(session).read_text()
            backup = compacted["backupPath"]
            assert backup in files and setup.marker in Path(backup).read_text()
        else:
            db = tmp_path / "agent" / "sessions.db"
            rows = sqlite_rows(db)
            assert setup.marker in rows
        bodies = "\n".join(json.dumps(r.body) for r in server.requests)
        for value in secrets:
            assert_nowhere(value, stdout=stdout, stderr=stderr, html=html, messages=messages, model_bodies=bodies,
                           **{f"file {p}": data for p, data in files.items()},
                           **({"sqlite rows": sqlite_rows(tmp_path / "agent" / "sessions.db")}
                              if store == "sqlite" else {}))


async def test_login_and_refreshed_models_json_keys_are_masked_from_then_on(tmp_path: Path) -> None:
    stored, refreshed = "sk-login-Jf83kd0Wq2mZ7xLp", "sk-refresh-Hq2Lx9Vb4Nm8Kc1Z"
    async with start_host(base=tmp_path, settings=NO_SUMMARIES) as host:
        c = host.client
        await c.login_provider("anthropic", stored)
        out = (await c.bash('cat "$ATOMIC_CODING_AGENT_DIR/auth.json"'))["output"]
        assert "[REDACTED:auth.json:anthropic]" in out
        models = {"providers": {"late": {"baseUrl": "http://127.0.0.1:9", "api": "openai-completions",
                                         "apiKey": refreshed, "models": [{"id": "m1"}]}}}
        (host.agent_dir / "models.json").write_text(json.dumps(models))
        await c.refresh_models()
        out = (await c.bash('cat "$ATOMIC_CODING_AGENT_DIR/models.json"'))["output"]
        assert "[REDACTED:models.json:late]" in out
        host.faux.push("fine")
        await c.prompt_and_wait("hello")
    host.assert_protocol_lines()
    session = "".join(p.read_text() for p in (host.agent_dir / "sessions").rglob("*.jsonl"))
    assert "[REDACTED:auth.json:anthropic]" in session
    for secret in (stored, refreshed):
        assert_nowhere(secret, stdout="\n".join(c.lines), session=session)


async def test_a_key_split_across_pipe_reads_is_masked_in_deltas_result_and_session(tmp_path: Path) -> None:
    key = "sk-ant-api03-Pipe7Split4Kx9Lm2Qw"
    split = f"printf '%s' '{key[:9]}'; sleep 0.3; printf '%s\\n' '{key[9:]}'"
    async with start_host(base=tmp_path, env={"ANTHROPIC_API_KEY": key}, settings=NO_SUMMARIES) as host:
        c = host.client
        n0 = len(c.events)
        result = await c.bash(split)
        deltas = [e["delta"] for e in c.events[n0:] if e["type"] == "bash_execution_update"]
        assert result["output"] == "[REDACTED:ANTHROPIC_API_KEY]\n" == "".join(deltas)
        # the same through the bash tool: partial updates, the result, what the model is sent next
        host.faux.tool_call("bash", {"command": split})
        host.faux.push("done")
        events = await c.prompt_and_wait("run it")
        [end] = [e for e in events if e["type"] == "tool_execution_end"]
        assert end["result"]["content"][0]["text"] == "[REDACTED:ANTHROPIC_API_KEY]\n"
        assert "[REDACTED:ANTHROPIC_API_KEY]" in json.dumps(host.faux_calls()[-1]["context"])
    host.assert_protocol_lines()
    session = "".join(p.read_text() for p in (host.agent_dir / "sessions").rglob("*.jsonl"))
    assert session.count("[REDACTED:ANTHROPIC_API_KEY]") >= 2
    assert_nowhere(key, stdout="\n".join(c.lines), session=session,
                   model_calls=host.faux_log.read_text(), partial="".join(deltas))


async def test_plugin_prints_at_import_are_masked_on_stderr(tmp_path: Path) -> None:
    env_key, stored = "sk-import-Env4Lp9Qz2Xw7", "sk-import-Stored8Hb3Mv6Kt"
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "auth.json").write_text(json.dumps({"openai": {"type": "api_key", "key": stored}}))
    ext = tmp_path / "prints.py"
    ext.write_text(
        "import os, sys, json\n"
        "print('import', os.environ['OPENAI_API_KEY'])\n"
        "sys.stderr.write('auth ' + open(os.environ['ATOMIC_CODING_AGENT_DIR'] + '/auth.json').read())\n"
    )
    log = tmp_path / "stderr.log"
    with log.open("wb") as err:
        async with start_host("-e", str(ext), base=tmp_path, env={"OPENAI_API_KEY": env_key},
                              stderr=err.fileno()) as host:
            await host.client.get_state()
    stderr = log.read_text()
    assert "import [REDACTED:OPENAI_API_KEY]" in stderr and "[REDACTED:auth.json:openai]" in stderr
    assert_nowhere(env_key, stderr=stderr)
    assert_nowhere(stored, stderr=stderr)


async def test_a_session_written_before_its_key_was_known_is_masked_on_export_and_backup(tmp_path: Path) -> None:
    key = "sk-legacy-Old5Leak8Qm3Zx1"
    # A first host, which does not know the key, records it (a user pasted it into a prompt).
    async with start_host(base=tmp_path, settings=NO_SUMMARIES) as host:
        host.faux.push("first answer")
        await host.client.prompt_and_wait(f"{LONG_PROMPT}\nmy key is {key}")
        host.faux.push("second answer")
        await host.client.prompt_and_wait("now the second thing")
    [session] = list((tmp_path / "agent" / "sessions").rglob("*.jsonl"))
    assert key in session.read_text()  # written before the key was known: the old file keeps it
    (tmp_path / "faux.jsonl").unlink()  # the second host's faux script starts empty
    async with start_host("--session", str(session), base=tmp_path, env={"OPENAI_API_KEY": key},
                          settings=NO_SUMMARIES) as host:
        c = host.client
        messages = json.dumps((await c.get_messages()).messages)
        export = await c.export_html()
        host.faux.push("1,5")
        compacted = await c.call("compact")
    host.assert_protocol_lines()
    html, backup = Path(export["path"]).read_text(), Path(compacted["backupPath"]).read_text()
    for text in (messages, html, backup):
        assert "my key is [REDACTED:OPENAI_API_KEY]" in text
    assert_nowhere(key, stdout="\n".join(c.lines), html=html, backup=backup)


async def test_json_mode_stdout_is_masked(tmp_path: Path) -> None:
    key = "sk-jsonmode-Pq7Wx2Lk9Vm4"
    with EchoServer() as server:
        setup = configure("--api-key", tmp_path, server.base_url, key)
        server.enqueue(ECHO_401)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "atomic_host", "--mode", "json", "--no-session", *setup.args, "-p", "hi",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=str(tmp_path),
            env={**os.environ, "ATOMIC_CODING_AGENT_DIR": str(tmp_path / "agent")},
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 1
    lines = [json.loads(line) for line in out.decode().splitlines()]
    [end] = [e for e in lines if e.get("type") == "message_end" and e["message"]["role"] == "assistant"]
    assert setup.marker in end["message"]["errorMessage"]
    assert_nowhere(key, stdout=out, stderr=err)


def test_sqlite_rows_helper_reads_every_table(tmp_path: Path) -> None:
    """Guard for the helper itself: sqlite_rows really reads every table."""
    db = tmp_path / "x.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (a TEXT)")
    con.execute("INSERT INTO t VALUES ('needle-value')")
    con.commit()
    con.close()
    assert "needle-value" in sqlite_rows(db)

"""Every Python example of docs/client.md and docs/sdk-comparison.md runs: each ``<!-- run: NAME -->``
block is executed as a script (with the default host command, the installed ``atomic``) against a
local server speaking Anthropic's stream format, where the built-in ``anthropic`` provider is
rerouted, and prints what it should; the other SDKs' snippets (``<!-- other-sdk: NAME -->``) are
compiled. A Python block with neither marker fails the test."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from client_sse import stalled_reply, text_reply, tool_reply
from suite_paths import ROOT as ROOT_DIR

from atomic_host.testing_sse import Chunk, Reply, SSEServer

DOCS = ROOT_DIR / "docs"
PAGES = ["client.md", "sdk-comparison.md"]
BLOCK = re.compile(r"(?:<!-- (run|other-sdk): ([\w-]+) -->\n)?```python\n(.*?)```", re.S)
HAS_APPROVALS = (DOCS.parent / "builtin_plugins" / "approvals").is_dir()

SUMMARY = "This project is a Python host for the Atomic RPC protocol."
SCRIPTS: dict[str, tuple[list[Reply | list[Chunk]], list[str]]] = {
    # name: (the model server's replies, in order; lines the example must print)
    "quickstart": ([text_reply(SUMMARY)], [SUMMARY, "1000 in, 200 out, $0.0060", "stop 1 True"]),
    "query": ([text_reply("Bytes flow through the pipe")], ["Bytes flow through the pipe"]),
    "stream": (
        [tool_reply("bash", {"command": "echo hi"}), text_reply("It is a host.")],
        ["Let me check.", "[bash: ok]", "(toolUse)", "It is a host.", "(stop)"],
    ),
    "leaving": ([stalled_reply(), text_reply("hi")], ["hi"]),
    "commands": ([text_reply("Noted.")], ["anthropic claude-sonnet-4-5", "1000 True", "42 0", "user\nassistant"]),
    "approvals": (
        [tool_reply("bash", {"command": "rm -rf build"}), text_reply("I listed the files instead.")],
        ["I listed the files instead."],
    ),
    "sync": ([text_reply("2 3 5"), text_reply("7 11 13")], ["2 3 5 200", "7 11 13"]),
    "compare-run": ([text_reply("Four files.")], ["Four files.", "$0.0060"]),
    "compare-approvals": (
        [tool_reply("bash", {"command": "rm -rf /tmp/x"}), text_reply("Refused.")],
        ["Refused."],
    ),
}


def _blocks() -> list[tuple[str, str, str, str]]:
    found = []
    for page in PAGES:
        text = (DOCS / page).read_text(encoding="utf-8")
        for kind, name, code in BLOCK.findall(text):
            found.append((page, kind, name, code))
    return found


def test_every_python_block_is_marked_and_every_script_is_run() -> None:
    blocks = _blocks()
    unmarked = [(page, code[:60]) for page, kind, _, code in blocks if not kind]
    assert unmarked == [], "mark each python block <!-- run: NAME --> or <!-- other-sdk: NAME -->"
    assert sorted(name for _, kind, name, _ in blocks if kind == "run") == sorted(SCRIPTS)


@pytest.mark.parametrize("page,name,code", [(p, n, c) for p, k, n, c in _blocks() if k == "other-sdk"])
def test_other_sdk_snippets_compile(page: str, name: str, code: str) -> None:
    compile(code, f"{page}:{name}", "exec")


@pytest.mark.parametrize("page,name,code", [(p, n, c) for p, k, n, c in _blocks() if k == "run"])
def test_the_example_runs(page: str, name: str, code: str, tmp_path: Path) -> None:
    if name in ("approvals", "compare-approvals") and not HAS_APPROVALS:
        pytest.skip("needs the approvals plugin (--permission-mode), not on this branch yet")
    replies, expected = SCRIPTS[name]
    agent, work = tmp_path / "agent", tmp_path / "work"
    agent.mkdir()
    work.mkdir()
    (work / "README.md").write_text("# a project\n")
    (agent / "settings.json").write_text(json.dumps({"sessionSummary": {"enabled": False}}))
    with SSEServer() as server:
        for reply in replies:
            server.enqueue(reply)
        (agent / "models.json").write_text(json.dumps({"providers": {"anthropic": {"baseUrl": server.base_url}}}))
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("ATOMIC_")}
        env.update(ATOMIC_CODING_AGENT_DIR=str(agent), ANTHROPIC_API_KEY="sk-ant-docs-example")
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, f"{page}:{name} failed:\n{proc.stdout}\n{proc.stderr[-3000:]}"
        for line in expected:
            assert line in proc.stdout, f"{page}:{name} did not print {line!r}:\n{proc.stdout}"
        if name == "leaving":
            assert server.cancelled == [0]

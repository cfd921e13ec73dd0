"""Messages that tell the person reading them what to do: no key or model, an empty model list, the
RPC host on a terminal, an opt-in tool that is off, the faux provider without a script, a broken
extension, ``--help``, ``atomic sessions list`` and ``atomic login``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pm_helpers import PLUGINS, Sandbox

from atomic_host.frontends.cli import SUBCOMMANDS, build_parser

NO_MODEL = "No model selected. Use set_model, --model or configure an API key."
ANY_KEY = (
    "No provider has an API key. Set GEMINI_API_KEY / GOOGLE_API_KEY (google) or ANTHROPIC_API_KEY / "
    "ANTHROPIC_OAUTH_TOKEN (anthropic) or OPENAI_API_KEY (openai) — or the key of openrouter, groq, xai, "
    "mistral, cerebras, deepseek or github-copilot — in the environment, pass --provider NAME "
    "--api-key KEY, or "
)
ANTHROPIC_KEY = "anthropic has no API key. Set ANTHROPIC_API_KEY (or ANTHROPIC_OAUTH_TOKEN), pass --api-key KEY, or "


def rpc_lines(proc_stdout: str) -> list[dict]:
    return [json.loads(line) for line in proc_stdout.splitlines()]


def test_print_mode_without_a_key_names_the_variables(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, script=False)
    proc = box.run("-p", "hi", faux=False)
    assert proc.returncode == 2
    assert proc.stderr == f"atomic: {NO_MODEL} {ANY_KEY}run `atomic login NAME`.\n"
    proc = box.run("-p", "hi", "--provider", "anthropic", faux=False)
    assert proc.returncode == 2
    assert proc.stderr == f"atomic: {NO_MODEL} {ANTHROPIC_KEY}run `atomic login anthropic`.\n"


def test_an_unknown_provider_lists_the_real_ones_never_the_scripted_faux(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, script=False)
    proc = box.run("-p", "hi", "--provider", "nosuch", faux=False)
    assert proc.returncode == 2
    [line] = [x for x in proc.stderr.splitlines() if "Unknown provider" in x]
    known = line.split("known providers: ", 1)[1].rstrip(".").split(", ")
    assert {"anthropic", "openai", "google", "openrouter", "github-copilot"} <= set(known), line
    assert "faux" not in known


def test_rpc_error_keeps_its_text_and_says_how(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, script=False)
    line = b'{"id":"1","type":"prompt","message":"hi"}\n'
    [response] = rpc_lines(box.run("--mode", "rpc", stdin=line, faux=False).stdout)
    login = '{"type":"login_provider","provider":"NAME","apiKey":"KEY"}'
    assert response["error"] == f"{NO_MODEL} {ANY_KEY}send {login}."
    [response] = rpc_lines(box.run("--mode", "rpc", "--provider", "anthropic", stdin=line, faux=False).stdout)
    login = '{"type":"login_provider","provider":"anthropic","apiKey":"KEY"}'
    assert response["error"] == f"{NO_MODEL} {ANTHROPIC_KEY}send {login}."


def test_list_models_with_nothing_configured_says_why(tmp_path: Path) -> None:
    proc = Sandbox(tmp_path, script=False).run("--list-models", faux=False)
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr == f"atomic: no models available. {ANY_KEY}run `atomic login NAME`.\n"


def test_login_stores_a_key_that_list_models_then_uses(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, script=False)
    proc = box.run("login", "anthropic", stdin=b"sk-ant-test-123\n", faux=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((box.agent / "auth.json").read_text())["anthropic"]["key"] == "sk-ant-test-123"
    models = box.run("--list-models", faux=False).stdout.splitlines()
    assert models and all(m.startswith("anthropic/") for m in models)
    nope = box.run("login", "nope", stdin=b"k\n", faux=False)
    assert nope.returncode == 2
    known = nope.stderr.split("known providers: ", 1)[1].strip().split(", ")
    assert "anthropic" in known and "github-copilot" in known and "faux" not in known, nope.stderr


def test_rpc_host_on_a_terminal_prints_one_hint(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    for args in ((), ("--mode", "rpc")):
        term = box.pty(*args)
        term.wait_for("Ctrl-D quits.")
        term.send(b"\x04")  # EOF
        assert term.finish() == 0
        assert term.text() == (
            "atomic: this is the JSON-lines RPC host; it reads one JSON command per line, e.g.\n"
            '  {"type":"prompt","message":"hello"}\n'
            'For an answer in the terminal, run: atomic -p "your question"\n'
            "More: atomic --help. Ctrl-D quits."
        )
    proc = box.run(stdin=b'{"type":"get_state"}\n')  # a pipe: no hint
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_opt_in_tool_that_is_off_says_how_to_enable_it(tmp_path: Path) -> None:
    call = {"type": "toolCall", "id": "l1", "name": "ls", "arguments": {}}
    box = Sandbox(tmp_path, {"content": [call]}, "ok", {"content": [call]}, "ok")
    proc = box.run("-p", "list", "--output-format", "stream-json")
    [result] = [json.loads(x)["message"] for x in proc.stdout.splitlines() if json.loads(x)["type"] == "user"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        'Tool ls is off: it is opt-in. Enable it with --tools +ls or add "+ls" to the defaultTools setting.'
    )
    (box.work / "a.txt").write_text("x")
    proc = box.run("-p", "list", "--tools", "+ls", "--output-format", "stream-json")
    [result] = [json.loads(x)["message"] for x in proc.stdout.splitlines() if json.loads(x)["type"] == "user"]
    assert result["isError"] is False and "a.txt" in result["content"][0]["text"]


def test_faux_without_a_script_names_the_variable(tmp_path: Path) -> None:
    proc = Sandbox(tmp_path, script=False).run("-p", "hi", "-q")
    assert proc.returncode == 1
    assert proc.stderr == (
        "error: No more faux responses queued: ATOMIC_FAUX_SCRIPT is not set "
        '(point it at a JSONL file with one reply per line, e.g. "hello")\n'
    )


def test_extension_import_error_gives_file_and_line(tmp_path: Path) -> None:
    path = (PLUGINS / "pm_broken_import.py").resolve()
    proc = Sandbox(tmp_path).run("-e", str(path), stdin=b'{"type":"get_state"}\n')
    [error] = [r for r in rpc_lines(proc.stdout) if r["type"] == "extension_error"]
    assert error["event"] == "import" and error["extensionPath"] == str(path)
    assert error["error"] == f"{path}:5: KeyError: 'missing'"
    assert f"atomic: plugin local:{path} failed (import): {path}:5: KeyError: 'missing'\n" in proc.stderr
    # the whole traceback, down to the raising line
    assert "Traceback (most recent call last):" in proc.stderr
    assert f'File "{path}", line 8, in <module>' in proc.stderr
    assert f'File "{path}", line 5, in helper' in proc.stderr


def test_extension_syntax_error_gives_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad_ext.py"
    bad.write_text("x = 1\ndef f(:\n    pass\n")
    proc = Sandbox(tmp_path).run("-e", str(bad), stdin=b'{"type":"get_state"}\n')
    [error] = [r for r in rpc_lines(proc.stdout) if r["type"] == "extension_error"]
    assert error["error"] == f"{bad.resolve()}:2: SyntaxError: invalid syntax"


def _flags_without_help(help_text: str) -> list[str]:
    """Option lines of an argparse help whose help text is missing."""
    lines = help_text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("options:"))
    missing = []
    for i, line in enumerate(lines[start + 1 :], start + 1):
        if not line.startswith("  -"):
            if line and not line.startswith(" "):
                break
            continue
        has_inline = re.search(r"\S\s{2,}\S", line.strip())
        following = lines[i + 1] if i + 1 < len(lines) else ""
        has_next = following.startswith(" " * 8) and not following.strip().startswith("-")
        if not (has_inline or has_next):
            missing.append(line.strip())
    return missing


HELP_COMMANDS = [
    ("--help",),
    ("schema", "--help"),
    ("plugins", "--help"),
    ("sessions", "--help"),
    ("sessions", "list", "--help"),
    ("sessions", "import", "--help"),
    ("sessions", "export", "--help"),
    ("login", "--help"),
    ("worker", "--help"),
]


def test_help_texts(tmp_path: Path) -> None:
    for action in build_parser()._actions:
        assert action.help, action.option_strings
    box = Sandbox(tmp_path)
    for args in HELP_COMMANDS:
        proc = box.run(*args, faux=False)
        assert proc.returncode == 0, (args, proc.stderr)
        assert _flags_without_help(proc.stdout) == [], args
        for markup in ("``", ":func:", ":class:", ":mod:", ".. "):
            assert markup not in proc.stdout, (args, markup)
    main = box.run("--help", faux=False).stdout
    section = main.split("subcommands:\n", 1)[1].split("\n\n", 1)[0]
    for name, text in SUBCOMMANDS.items():
        assert re.search(rf"^    {name}\s+{re.escape(text)}", section, re.M), (name, section)
    sessions = box.run("sessions", "--help", faux=False).stdout
    for name in ("list", "import", "export"):
        assert re.search(rf"^    {name}\s+\S", sessions, re.M), sessions


def test_sessions_list_shows_this_projects_sessions(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, "first answer", "second answer", keep=True)
    assert box.run("-p", "remember the milk", "--output-format", "json").returncode == 0
    listed = json.loads(box.run("sessions", "list", "--json").stdout)
    assert [(s["firstMessage"], s["messageCount"]) for s in listed] == [("remember the milk", 2)]
    [line] = box.run("sessions", "list").stdout.splitlines()
    assert re.fullmatch(rf"\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d  {listed[0]['id']}     2 msgs  remember the milk", line)
    other = tmp_path / "elsewhere"
    other.mkdir()
    box.work = other
    proc = box.run("sessions", "list")
    assert proc.stdout == "" and proc.stderr.startswith(f"No sessions for {other}")

"""``atomic login NAME`` in a terminal, as a real subprocess against the local OAuth server: the
device code and the authorize URL are printed to stderr, answers come from piped stdin or a pty,
the browser's redirect or a pasted code finishes the sign-in, and the token lands in auth.json
(0600) and nowhere else. A browser is opened only where one can be (a pty, a desktop session, an
opener on PATH) and never with ``--no-browser``."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import stat
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from oauth_helpers import browser_get, oauth_env, query_of
from oauth_server import OAuthServer

URL = re.compile(r"^  (http://127\.0\.0\.1:\d+/authorize\?\S+)$", re.M)


def login_env(tmp_path: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("ATOMIC_")
           and k not in ("DISPLAY", "WAYLAND_DISPLAY", "SSH_CONNECTION", "SSH_TTY")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(ATOMIC_CODING_AGENT_DIR=str(tmp_path / "agent"), **extra)
    return env


class Login:
    """``atomic login ...`` with piped stdin, stdout and stderr."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.stderr = ""
        self.stdout = b""

    async def wait_for(self, pattern: re.Pattern[str] | str, timeout: float = 20) -> re.Match[str]:
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        assert self.proc.stderr is not None
        while not (match := regex.search(self.stderr)):
            left = deadline - time.monotonic()
            assert left > 0, f"{regex.pattern!r} not in stderr: {self.stderr!r}"
            chunk = await asyncio.wait_for(self.proc.stderr.read(4096), left)
            assert chunk, f"stderr ended without {regex.pattern!r}: {self.stderr!r}"
            self.stderr += chunk.decode()
        return match

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode())

    async def finish(self, timeout: float = 30) -> int:
        assert self.proc.stdout is not None and self.proc.stderr is not None
        out, err = await asyncio.wait_for(asyncio.gather(self.proc.stdout.read(), self.proc.stderr.read()), timeout)
        self.stdout += out
        self.stderr += err.decode()
        return await self.proc.wait()


@contextlib.asynccontextmanager
async def atomic_login(tmp_path: Path, *args: str, env: dict[str, str], stdin: bool = True) -> AsyncIterator[Login]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "atomic_host", "login", *args, cwd=tmp_path, env=login_env(tmp_path, env),
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        yield Login(proc)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def stored(tmp_path: Path) -> dict[str, Any]:
    import json

    path = tmp_path / "agent" / "auth.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    return json.loads(path.read_text())


def assert_clean(login: Login, secrets: list[str]) -> None:
    assert login.stdout == b""  # nothing but the user's terminal on stderr
    for secret in filter(None, secrets):
        assert secret not in login.stderr


async def test_github_copilot_device_flow_in_a_terminal(tmp_path: Path) -> None:
    with OAuthServer(device_polls=["authorization_pending", "ok"]) as oauth:
        async with atomic_login(tmp_path, "github-copilot", "--oauth", env=oauth_env(oauth, "github-copilot")) as login:
            await login.wait_for("Enterprise")
            login.send("\n")  # github.com
            await login.wait_for(r"Open https://github\.example/login/device and enter the code: WDJB-MJHT")
            assert await login.finish() == 0, login.stderr
        assert "Signed in to GitHub Copilot" in login.stderr
        record = stored(tmp_path)["github-copilot"]
        assert record["type"] == "oauth" and record["refresh"] == oauth.github_tokens[0]
        assert record["access"] == oauth.issued_access[-1]
        assert len(oauth.seen("/device/token")) == 2
        assert_clean(login, oauth.all_tokens())


async def test_chatgpt_sign_in_by_browser_redirect_is_the_default_for_an_oauth_only_provider(tmp_path: Path) -> None:
    with OAuthServer(account_id="acct-term-1") as oauth:
        async with atomic_login(tmp_path, "openai-codex", env=oauth_env(oauth, "openai-codex")) as login:
            url = (await login.wait_for(URL)).group(1)
            await login.wait_for("Paste")
            assert "opened in your browser" not in login.stderr  # piped: no browser is started
            status, page = await asyncio.to_thread(browser_get, url)
            assert status == 200 and "Signed in" in page
            assert await login.finish() == 0, login.stderr
        record = stored(tmp_path)["openai-codex"]
        assert record["accountId"] == "acct-term-1" and record["access"] == oauth.issued_access[0]
        assert_clean(login, oauth.all_tokens())


async def test_anthropic_with_oauth_takes_a_pasted_code(tmp_path: Path) -> None:
    with OAuthServer(access_prefix="sk-ant-oat01-") as oauth:
        async with atomic_login(tmp_path, "anthropic", "--oauth", env=oauth_env(oauth, "anthropic")) as login:
            q = query_of((await login.wait_for(URL)).group(1))
            await login.wait_for("Paste")
            code = oauth.add_code(q["code_challenge"], q["redirect_uri"], q["client_id"], q["state"])
            login.send(f"{code}#{q['state']}\n")
            assert await login.finish() == 0, login.stderr
        assert stored(tmp_path)["anthropic"]["access"] == oauth.issued_access[0]
        assert_clean(login, [*oauth.all_tokens(), code])


async def test_a_denied_sign_in_and_an_ended_stdin_fail_with_a_message_and_store_nothing(tmp_path: Path) -> None:
    with OAuthServer(account_id="acct-term-2") as oauth:
        async with atomic_login(tmp_path, "openai-codex", env=oauth_env(oauth, "openai-codex")) as login:
            url = (await login.wait_for(URL)).group(1)
            await asyncio.to_thread(browser_get, url + "&deny=1")
            assert await login.finish() == 1
        assert login.stderr.endswith(
            "atomic: login to openai-codex failed: Authorization failed: access_denied: The user said no\n")
        # the Copilot flow asks a question first; with stdin at its end nobody can answer it
        async with atomic_login(tmp_path, "github-copilot", "--oauth", env=oauth_env(oauth, "github-copilot"),
                                stdin=False) as login:
            assert await login.finish() == 1
        assert login.stderr.endswith("atomic: login cancelled\n")
        assert not (tmp_path / "agent" / "auth.json").exists()
        assert oauth.seen("/device/code") == []


async def test_a_key_is_still_read_from_piped_stdin_for_a_provider_that_takes_both(tmp_path: Path) -> None:
    async with atomic_login(tmp_path, "anthropic", env={}) as login:
        login.send("sk-ant-api03-piped-key-0123456789\n")
        assert await login.finish() == 0, login.stderr
    assert stored(tmp_path)["anthropic"] == {"type": "api_key", "key": "sk-ant-api03-piped-key-0123456789"}
    async with atomic_login(tmp_path, "groq", "--oauth", env={}) as login:
        assert await login.finish() == 2
    assert "groq has no OAuth sign-in" in login.stderr


class Pty:
    """``atomic login ...`` with stdin and stderr on a pty (stdout piped, to check it stays empty)."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        master, slave = os.openpty()
        self.master = master
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=slave, stdout=subprocess.PIPE, stderr=slave,
                                     start_new_session=True)
        os.close(slave)
        self.screen = ""
        self._lock = threading.Lock()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        while True:
            try:
                data = os.read(self.master, 4096)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self.screen += data.decode(errors="replace")

    async def wait_for(self, pattern: str, timeout: float = 20) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while not (match := re.search(pattern, self.screen, re.M)):
            assert time.monotonic() < deadline, f"{pattern!r} not on screen: {self.screen!r}"
            await asyncio.sleep(0.05)
        return match

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    async def finish(self, timeout: float = 30) -> int:
        code = await asyncio.to_thread(self.proc.wait, timeout)
        with contextlib.suppress(OSError):
            os.close(self.master)
        return code


async def test_on_a_terminal_the_user_chooses_and_a_browser_opens_only_where_one_can(tmp_path: Path) -> None:
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    opened = tmp_path / "opened.txt"
    opener = fake_bin / "xdg-open"
    opener.write_text(f"#!/bin/sh\necho \"$1\" >> {opened}\n")
    opener.chmod(0o755)
    argv = [sys.executable, "-m", "atomic_host", "login", "anthropic"]
    with OAuthServer(access_prefix="sk-ant-oat01-") as oauth:
        for index, (desktop, flags) in enumerate([({}, ()), ({"DISPLAY": ":99"}, ()),
                                                  ({"DISPLAY": ":99"}, ("--no-browser",))]):
            env = login_env(tmp_path, {**oauth_env(oauth, "anthropic"), **desktop,
                                       "PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}"})
            term = Pty([*argv, *flags], tmp_path, env)
            try:
                await term.wait_for(r"Choose \[1\]:")
                term.send("1\n")  # the subscription sign-in, not an API key
                url = (await term.wait_for(r"^  (http://127\.0\.0\.1:\d+/authorize\?\S+)\r?$")).group(1)
                await term.wait_for("Paste")
                q = query_of(url)
                code = oauth.add_code(q["code_challenge"], q["redirect_uri"], q["client_id"], q["state"])
                term.send(f"{code}#{q['state']}\n")
                assert await term.finish() == 0, term.screen
            finally:
                if term.proc.poll() is None:
                    term.proc.kill()
            assert term.proc.stdout is not None and term.proc.stdout.read() == b""
            record = stored(tmp_path)["anthropic"]
            assert record["type"] == "oauth" and record["access"] == oauth.issued_access[-1]
            for secret in oauth.all_tokens():
                assert secret not in term.screen.replace(code, "")  # the terminal echoes what was typed
            for _ in range(100 if index == 1 else 0):  # the opener runs detached: give it time to write
                if opened.exists():
                    break
                await asyncio.sleep(0.05)
            was_opened = opened.read_text().splitlines() if opened.exists() else []
            if index == 1:  # a desktop session with an opener: the URL is opened
                assert was_opened == [url] and "opened in your browser" in term.screen
            else:  # no desktop, or --no-browser: only printed
                assert url not in was_opened and "opened in your browser" not in term.screen


async def test_ctrl_c_ends_a_waiting_sign_in_with_130_and_stores_nothing(tmp_path: Path) -> None:
    import signal

    with OAuthServer(device_polls=["authorization_pending"]) as oauth:
        async with atomic_login(tmp_path, "github-copilot", "--oauth", env=oauth_env(oauth, "github-copilot")) as login:
            await login.wait_for("Enterprise")
            login.send("\n")
            await login.wait_for("enter the code: WDJB-MJHT")
            while len(oauth.seen("/device/token")) < 1:  # polling is under way
                await asyncio.sleep(0.05)
            login.proc.send_signal(signal.SIGINT)
            assert await login.finish() == 130
        assert login.stderr.endswith("atomic: login cancelled\n")
        assert "Traceback" not in login.stderr
        assert not (tmp_path / "agent" / "auth.json").exists()

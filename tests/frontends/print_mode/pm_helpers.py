"""Run the real ``atomic`` process for print-mode tests: through pipes, or on a pseudo-terminal
whose output feeds a terminal emulator (pyte) so a test can read the screen a person would see."""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pyte

from atomic_host.testing import inherited_env, read_jsonl

HERE = Path(__file__).parent
PLUGINS = HERE / "pm_plugins"
ROWS, COLS = 40, 100


class Sandbox:
    """An agent dir, a working dir and a faux script, all under ``tmp_path``."""

    def __init__(self, tmp_path: Path, *steps: Any, script: bool = True, keep: bool = False) -> None:
        self.keep = keep
        """Keep sessions on disk (the default is --no-session)."""
        self.root = tmp_path
        self.agent = tmp_path / "agent"
        self.work = tmp_path / "work"
        self.agent.mkdir(exist_ok=True)
        self.work.mkdir(exist_ok=True)
        # The loop-stall watchdog would report a slow machine on stderr, which these tests read exactly.
        (self.agent / "settings.json").write_text(json.dumps({"loopStallMs": 0}))
        self.script = tmp_path / "faux.jsonl"
        self.log = tmp_path / "faux-log.jsonl"
        self.script.write_text("".join(json.dumps(s) + "\n" for s in steps))
        env = inherited_env()
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(ATOMIC_CODING_AGENT_DIR=str(self.agent), ATOMIC_FAUX_LOG=str(self.log), TERM="xterm-256color")
        env.pop("COLUMNS", None)
        env.pop("LINES", None)
        if script:
            env["ATOMIC_FAUX_SCRIPT"] = str(self.script)
        self.env = env

    def argv(self, *args: str, faux: bool = True) -> list[str]:
        """``atomic ARGS`` with the faux provider and, unless ``self.keep`` is set, ``--no-session``
        (a slow disk's fsync makes the loop watchdog talk on stderr)."""
        if args and args[0] in ("sessions", "login", "plugins", "schema"):  # subcommands: their own flags
            return [sys.executable, "-m", "atomic_host", *args]
        extra = ["--provider", "faux"] if faux and "--provider" not in args and "--model" not in args else []
        if not self.keep:
            extra.append("--no-session")
        return [sys.executable, "-m", "atomic_host", *args, *extra]

    def run(
        self, *args: str, stdin: bytes | None = b"", faux: bool = True, timeout: float = 15
    ) -> subprocess.CompletedProcess[str]:
        """Pipes all round; ``stdin`` bytes are piped in (``None``: /dev/null)."""
        proc = subprocess.run(
            self.argv(*args, faux=faux),
            cwd=self.work,
            env=self.env,
            input=stdin,
            stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True,
            timeout=timeout,
        )
        return subprocess.CompletedProcess(
            proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
        )

    def popen(self, *args: str, faux: bool = True, **kw: Any) -> subprocess.Popen[bytes]:
        kw.setdefault("stdin", subprocess.DEVNULL)
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        return subprocess.Popen(self.argv(*args, faux=faux), cwd=self.work, env=self.env, **kw)

    def pty(self, *args: str, faux: bool = True, stdin_tty: bool = True) -> Pty:
        return Pty(self.argv(*args, faux=faux), self.work, self.env, stdin_tty=stdin_tty)

    def prompts(self) -> list[str]:
        """The last user message of each model call the faux provider got."""
        out = []
        for call in read_jsonl(self.log) if self.log.exists() else []:
            user = [m for m in call["context"]["messages"] if m["role"] == "user"][-1]
            content = user["content"]
            out.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))
        return out

    def sessions(self) -> list[list[dict[str, Any]]]:
        return [read_jsonl(p) for p in sorted((self.agent / "sessions").rglob("*.jsonl"))]


class Pty:
    """``atomic`` with stdout and stderr (and stdin, unless ``stdin_tty`` is false) on a pseudo-terminal
    that is its controlling terminal, so Ctrl-C typed into it is a real SIGINT."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], stdin_tty: bool = True) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.master = master
        self.raw = b""
        self.chunks: list[tuple[float, bytes]] = []
        self.screen = pyte.HistoryScreen(COLS, ROWS, history=2000)
        self.screen.set_mode(pyte.modes.LNM)
        self.stream = pyte.ByteStream(self.screen)
        self.started = time.monotonic()

        def controlling_tty() -> None:  # runs in the child after setsid(); fd 1 is the terminal
            fcntl.ioctl(1, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=slave if stdin_tty else subprocess.DEVNULL,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            preexec_fn=controlling_tty,
        )
        os.close(slave)

    def _pump(self, timeout: float) -> bool:
        """Read what is there within ``timeout``; False at EOF."""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: every slave end is closed
            return False
        if not data:
            return False
        self.raw += data
        self.chunks.append((time.monotonic() - self.started, data))
        self.stream.feed(data)
        return True

    def text(self) -> str:
        """The screen: the scrolled-off history, then the visible lines, right-stripped."""
        history = ["".join(ch.data for ch in line.values()).rstrip() for line in self.screen.history.top]
        visible = [line.rstrip() for line in self.screen.display]
        lines = history + visible
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines)

    def wait_for(self, needle: str, timeout: float = 5) -> float:
        """Pump until ``needle`` is on the screen; returns when (seconds since start)."""
        deadline = time.monotonic() + timeout
        while needle not in self.text():
            if time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} not on the screen after {timeout}s:\n{self.text()}")
            if not self._pump(0.02):
                raise AssertionError(f"{needle!r} never came; the process ended:\n{self.text()}")
        return time.monotonic() - self.started

    def echo(self) -> bool:
        """Whether the terminal echoes typed keys now."""
        return bool(termios.tcgetattr(self.master)[3] & termios.ECHO)

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def interrupt(self) -> None:
        """Type Ctrl-C."""
        self.send(b"\x03")

    def finish(self, timeout: float = 10) -> int:
        """Read to EOF and wait; returns the exit code."""
        deadline = time.monotonic() + timeout
        while self._pump(0.05):
            if time.monotonic() > deadline:
                self.proc.send_signal(signal.SIGKILL)
                raise AssertionError(f"still running after {timeout}s:\n{self.text()}")
        code = self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        self.echo_after = self.echo()
        os.close(self.master)
        self.ended = time.monotonic() - self.started
        return code


def read_until(stream: Any, needle: bytes, timeout: float = 5) -> tuple[bytes, float]:
    """Read a pipe until ``needle`` shows up; returns what was read and when (monotonic)."""
    fd = stream.fileno()
    got = b""
    deadline = time.monotonic() + timeout
    while needle not in got:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"{needle!r} not read after {timeout}s; got {got!r}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            data = os.read(fd, 65536)
            if not data:
                raise AssertionError(f"EOF before {needle!r}; got {got!r}")
            got += data
    return got, time.monotonic()


SUMMARY_RE = r"faux/faux-1 · [\d,]+ in · [\d,]+ out · \$0\.0000 · \d+\.\ds"
"""The final stderr line of a faux run."""

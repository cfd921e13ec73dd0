"""An OAuth sign-in in a terminal (``atomic login NAME``): the provider's flow talks to the user on
stderr and reads answers from stdin.

What pi's login dialog shows, as text: the authorize URL (or the device code and where to enter it),
progress lines, and prompts read one line at a time. pi also runs ``open``/``xdg-open`` on the URL;
here a browser is opened only when one can be (both ends a terminal, not over SSH, a desktop
session with an opener on PATH) and ``--no-browser`` was not given. Nothing secret is printed:
tokens go to auth.json only.

stdin is read by a daemon thread, so a pending read never blocks the event loop nor keeps the
process alive after the login ended (the browser callback may win over a paste the user never
typed).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import TextIO

from atomic_host.contract.providers import LoginCancelled


class StdinLines:
    """Lines of a text stream, read on a daemon thread and handed to the event loop; None at EOF."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.queue: asyncio.Queue[str | None] | None = None
        self.eof = False

    def _start(self) -> asyncio.Queue[str | None]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | None] = asyncio.Queue()

        def pump() -> None:
            try:
                for line in self.stream:
                    loop.call_soon_threadsafe(queue.put_nowait, line.rstrip("\r\n"))
            except (OSError, ValueError, RuntimeError):  # closed stream, or the loop already closed
                pass
            try:
                loop.call_soon_threadsafe(queue.put_nowait, None)
            except RuntimeError:
                pass

        threading.Thread(target=pump, name="atomic-login-stdin", daemon=True).start()
        return queue

    async def next(self) -> str | None:
        """The next line, or None once the stream has ended."""
        if self.eof:
            return None
        if self.queue is None:
            self.queue = self._start()
        line = await self.queue.get()
        if line is None:
            self.eof = True
        return line


def browser_opener() -> list[str] | None:
    """The command that opens a URL in the user's browser, or None when there is no usable one here."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()) or os.environ.get("SSH_CONNECTION") or os.environ.get(
            "SSH_TTY"):
        return None
    if sys.platform == "darwin":
        opener = shutil.which("open")
        return [opener] if opener else None
    if sys.platform == "win32":
        return ["cmd", "/c", "start", ""]
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return None  # a console without a desktop: xdg-open would start a text browser in our terminal
    opener = shutil.which("xdg-open")
    return [opener] if opener else None


class TerminalLoginUI:
    """:class:`~atomic_host.contract.providers.LoginUI` on stderr and stdin."""

    def __init__(self, err: TextIO, lines: StdinLines, opener: list[str] | None) -> None:
        self.err, self.lines, self.opener = err, lines, opener

    def _say(self, text: str = "") -> None:
        self.err.write(text + "\n")
        self.err.flush()

    def _open(self, url: str) -> None:
        if self.opener is None or not url.startswith(("http://", "https://")):
            return
        try:
            subprocess.Popen([*self.opener, url], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
            self._say("(opened in your browser)")
        except OSError:
            pass

    def auth_url(self, url: str, instructions: str | None = None) -> None:
        self._say("Open this URL in a browser to sign in:")
        self._say()
        self._say(f"  {url}")
        self._say()
        if instructions:
            self._say(instructions)
        self._open(url)

    def device_code(self, user_code: str, verification_uri: str, interval_s: float | None = None,
                    expires_in_s: float | None = None) -> None:
        self._say(f"Open {verification_uri} and enter the code: {user_code}")
        if expires_in_s:
            self._say(f"(the code expires in {int(expires_in_s // 60) or 1} min; Ctrl-C cancels)")
        self._open(verification_uri)

    def progress(self, message: str) -> None:
        self._say(message)

    def info(self, message: str, links: Sequence[tuple[str, str | None]] = ()) -> None:
        self._say(message)
        for url, label in links:
            self._say(f"  {label}: {url}" if label else f"  {url}")

    async def _line(self) -> str:
        line = await self.lines.next()
        if line is None:
            raise LoginCancelled  # stdin ended: nobody is left to answer
        return line

    async def prompt(self, message: str, placeholder: str | None = None) -> str:
        self._say(message + (f" (e.g. {placeholder})" if placeholder else ""))
        return (await self._line()).strip()

    async def select(self, message: str, options: Sequence[tuple[str, str]]) -> str:
        self._say(message)
        for number, (_id, label) in enumerate(options, 1):
            self._say(f"  {number}) {label}")
        while True:
            answer = (await self._line()).strip()
            ids = [option_id for option_id, _label in options]
            if answer.isdigit() and 1 <= int(answer) <= len(options):
                return ids[int(answer) - 1]
            if answer in ids:
                return answer
            if not answer and options:
                return ids[0]
            self._say(f"Type a number from 1 to {len(options)}:")

    async def manual_code(self, message: str | None = None) -> str:
        self._say(message or "Paste the authorization code:")
        line = await self.lines.next()
        if line is None:
            # stdin is gone, but the browser may still call back: wait for it (Ctrl-C cancels)
            await asyncio.Event().wait()
        return line or ""

    def manual_code_cancel(self) -> None:
        pass

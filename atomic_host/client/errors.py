"""The errors the client raises: every one derives from :class:`ClientError`."""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atomic_host.client.run import RunResult


class ClientError(Exception):
    """Base of every error this client raises about the host and its answers."""


class RunFailed(ClientError):
    """``prompt_and_wait(..., check=True)`` for a run that ended in error."""

    def __init__(self, result: RunResult) -> None:
        super().__init__(result.error or "the run produced no reply")
        self.result = result


class RpcError(ClientError):
    """A ``success:false`` response."""

    def __init__(self, response: dict[str, Any]) -> None:
        super().__init__(response.get("error", "unknown error"))
        self.response = response


class HostExited(ClientError, ConnectionError):
    """The host's output ended (it exited, was killed, or closed stdout) while something waited for it.

    Raised at once, to every waiter (a request, ``wait_for_event``, ``stream``, ``prompt_and_wait``)
    and by every call made after it. ``status`` is the exit status as ``Popen.returncode`` gives it
    (negative: killed by that signal; None: the process had not exited a moment after closing its
    output); ``stderr_tail`` is the end of what the host wrote on stderr, when the client could read
    it (see :class:`RpcClient`'s ``stderr``)."""

    def __init__(self, status: int | None, stderr_tail: str = "") -> None:
        self.status = status
        self.stderr_tail = stderr_tail
        super().__init__(_exit_text(status) + (f"; its stderr ended with:\n{stderr_tail}" if stderr_tail else ""))


class ClientTimeout(ClientError, TimeoutError):
    """Nothing the caller waited for arrived within its timeout (the host is still running)."""


def _exit_text(status: int | None) -> str:
    if status is None:
        return "the host closed its output (still running)"
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"the host was killed by {name} (status {status})"
    return f"the host exited with status {status}"

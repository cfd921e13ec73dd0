"""The errors of sessions and their stores: raised by every store, caught by the host by type."""

from __future__ import annotations

NOT_SAVED_MESSAGE = (
    "This session has not been saved yet. Wait for the first assistant response before cloning or forking it."
)


class SessionNotFound(LookupError):
    """No session with that id (or location) in the store that was asked."""


class SessionNotSaved(RuntimeError):
    """fork/clone of a session that was never written (§2.5)."""

    def __init__(self, message: str = NOT_SAVED_MESSAGE) -> None:
        super().__init__(message)


class SessionLocked(OSError):
    """Another process holds the session's write lock: this one may read it, not append to it."""


class InvalidSessionFile(ValueError):
    """The first parsed record is not a ``session`` header with a string id."""


class EntryNotFound(KeyError):
    """An entry id that is not in the session; ``str()`` is the protocol error message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class SessionFileGone(OSError):
    """A writer's file was removed while the session was open: the session writes it again whole."""


__all__ = [
    "NOT_SAVED_MESSAGE",
    "EntryNotFound",
    "InvalidSessionFile",
    "SessionFileGone",
    "SessionLocked",
    "SessionNotFound",
    "SessionNotSaved",
]

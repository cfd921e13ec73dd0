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
    """The session was removed from its store while open here (its file deleted or replaced, its
    rows deleted): every write to it fails with this error, never recreating what was deleted."""


class SessionWriteFailed(OSError):
    """A store's own error on a write (a database driver's, which is no ``OSError``), raised as an
    ``OSError`` so the host reports it as it reports a full disk: ``Could not save the session: …``."""


def locked_message(location: str, holder: str = "") -> str:
    """The error of a write refused because another process holds the session's write lock
    (``holder``: who, when the store can tell, e.g. `` (pid 12 on box)``)."""
    return (
        f"Session is open for writing in another atomic process: {location}{holder}. "
        "Close it there (or open a fork of it) to continue it here."
    )


def delete_locked_message(session_id: str, location: str, holder: str = "") -> str:
    """The error of a ``delete_session`` refused because another process holds the session."""
    return (
        f"Cannot delete session {session_id}: it is open for writing in another atomic process "
        f"({location}{holder}). Close it there first."
    )


def gone_message(location: str | None) -> str:
    """The error of a write to a session that was deleted while open here."""
    return (
        f"Session was deleted while open here: {location}. Nothing more is saved to it; "
        "clone it to keep this conversation in a new session."
    )


__all__ = [
    "NOT_SAVED_MESSAGE",
    "EntryNotFound",
    "InvalidSessionFile",
    "SessionFileGone",
    "SessionLocked",
    "SessionNotFound",
    "SessionNotSaved",
    "SessionWriteFailed",
    "delete_locked_message",
    "gone_message",
    "locked_message",
]

"""The SessionStore interface, the fork/clone logic every backend shares, and the memory store.

A store kind is contributed by a plugin (``register_session_stores``); the built-in ``stores``
plugin contributes ``jsonl`` (the default; Atomic's file format, one file per session), ``sqlite``
(one database) and ``memory``. :class:`MemoryStore` is also what ``--no-session`` uses directly:
sessions live in this process only, nothing is ever written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from atomic_host.kit.log import log
from atomic_host.kit.sessions.errors import InvalidSessionFile, SessionNotFound, SessionNotSaved
from atomic_host.kit.sessions.ids import now_iso, uuid7, validate_session_id
from atomic_host.kit.sessions.repair import repair_entries, report_repairs
from atomic_host.kit.sessions.tree import Session, is_assistant_entry

FsyncPolicy = Literal["always", "never"]


@runtime_checkable
class SessionStore(Protocol):
    """Where sessions live. ``location`` strings are display text and ``open_path`` input."""

    kind: str

    def new_session(
        self, cwd: str, parent_session: str | None = None, session_id: str | None = None
    ) -> Session: ...
    def open(self, session_id: str, directory: str | Path | None = None) -> Session: ...
    def open_path(self, path: str | Path) -> Session: ...
    def most_recent(self, cwd: str) -> Session | None: ...
    def list(self, cwd: str) -> list[dict[str, Any]]: ...
    def list_all(self) -> list[dict[str, Any]]: ...
    def delete(self, session_id: str) -> None: ...
    def fork(self, session: Session, entry_id: str) -> Session: ...
    def clone(self, session: Session) -> Session: ...
    def import_file(self, path: str | Path, cwd_override: str | None = None) -> Session: ...
    def put(
        self, header: dict[str, Any], entries: list[dict[str, Any]], *, overwrite: bool = False
    ) -> Session: ...
    def has(self, session_id: str, cwd: str | None = None) -> bool: ...
    def close(self) -> None: ...


def new_header(cwd: str, session_id: str | None = None, parent_session: str | None = None) -> dict[str, Any]:
    """A v3 ``session`` header record (a new UUIDv7 id unless ``session_id`` is given)."""
    header: dict[str, Any] = {
        "type": "session",
        "version": 3,
        "id": validate_session_id(session_id) if session_id is not None else uuid7(),
        "timestamp": now_iso(),
        "cwd": cwd,
    }
    if parent_session:
        header["parentSession"] = parent_session
    return header


def default_session_dir(agent_dir: str | Path, cwd: str) -> Path:
    """``<agentDir>/sessions/--<cwd without leading slash, / \\ : → ->--``."""
    stripped = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    safe = stripped.replace("/", "-").replace("\\", "-").replace(":", "-")
    return Path(agent_dir) / "sessions" / f"--{safe}--"


def copy_without_labels(path: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The branch with label entries dropped; children of a dropped label are re-parented past it."""
    replaced: dict[str, Any] = {}
    result = []
    for entry in path:
        if entry.get("type") == "label":
            parent = entry.get("parentId")
            replaced[entry["id"]] = replaced.get(parent, parent) if isinstance(parent, str) else parent
            continue
        parent = entry.get("parentId")
        if isinstance(parent, str) and parent in replaced:
            entry = {**entry, "parentId": replaced[parent]}
        result.append(entry)
    return result


class BaseStore:
    """fork/clone/list helpers shared by every backend; subclasses provide ``_create``."""

    kind: str = "base"

    def _create(self, header: dict[str, Any], entries: list[dict[str, Any]]) -> Session:
        """A new session holding ``entries``; written now if they contain an assistant message."""
        raise NotImplementedError

    def new_session(
        self, cwd: str, parent_session: str | None = None, session_id: str | None = None
    ) -> Session:
        return self._create(new_header(cwd, session_id, parent_session), [])

    def fork(self, session: Session, entry_id: str) -> Session:
        """New session holding root→parent of the user message ``entry_id`` (§2.5)."""
        entry = session.get_entry(entry_id)
        message = entry.get("message") if entry else None
        if (
            not entry
            or entry.get("type") != "message"
            or not isinstance(message, dict)
            or message.get("role") != "user"
        ):
            raise ValueError("Invalid entry ID for forking")
        self._require_saved(session)
        parent = entry.get("parentId")
        return self._branch_copy(session, parent if isinstance(parent, str) and parent in session else None)

    def clone(self, session: Session) -> Session:
        """New session holding the current branch, at the current leaf."""
        if session.leaf_id is None:
            raise ValueError("Cannot clone session: no current entry selected")
        self._require_saved(session)
        return self._branch_copy(session, session.leaf_id)

    def _require_saved(self, session: Session) -> None:
        if session.writer is not None and not session.persisted:
            raise SessionNotSaved()

    def _branch_copy(self, session: Session, leaf_id: str | None) -> Session:
        path = session.branch(leaf_id) if leaf_id is not None else []
        header = new_header(session.cwd, parent_session=session.location)
        created = self._create(header, copy_without_labels(path))
        labels = session.labels()
        for entry in created.entries[:]:
            label = labels.get(entry["id"])
            if label:
                created.append_label(entry["id"], label)
        return created

    # -- importing ------------------------------------------------------------------------------
    def import_file(self, path: str | Path, cwd_override: str | None = None) -> Session:
        """Copy a JSONL session file into this store and open it, never losing an entry of either
        (docs/protocol.md, import_session):

        - a session this store does not hold is copied in under its own id (:meth:`_import_new`);
        - the same session, holding exactly what the file holds, is opened: nothing is written;
        - the same session, which the file continues (every stored entry, in order, then more),
          gets the file's newer entries appended: a write, so refused (:class:`SessionLocked`)
          while another process holds the session;
        - anything else (the store's copy has entries the file lacks, an older copy, or another
          session with the same id) is imported as a new session: a new id, ``parentSession``
          naming the stored one; the stored one is left as it is.
        """
        from atomic_host.kit.sessions.jsonl import load_jsonl  # the line format: not needed at start

        source = Path(path)
        header, entries, _ = load_jsonl(source)
        entries, problems = repair_entries(entries)  # as the stored session holds them when loaded
        report_repairs(str(source), problems, "repaired as it was imported; the file is unchanged")
        stored = self._import_target(header)
        if stored is None and not self.has(header["id"]):  # type: ignore[attr-defined]
            session = self._import_new(source, header, entries)
        else:
            session = _continue(stored, entries) if stored is not None else None
            if session is None:
                parent = stored.location if stored is not None else None
                copy = {**header, "id": uuid7(), "timestamp": now_iso()}
                if parent:
                    copy["parentSession"] = parent
                log.warning(
                    f"{source} holds session {header['id']}, which this store holds with other entries "
                    f"({_difference(stored, entries)}): imported as a new session {copy['id']}"
                )
                if stored is not None:
                    stored.close()
                session = self._import_new(None, copy, entries)
        session.cwd_override = cwd_override
        return session

    def _import_target(self, header: dict[str, Any]) -> Session | None:
        """The stored session an import of ``header``'s id meets in this project, opened; None
        when there is none (then an id held elsewhere in the store still makes a new id)."""
        try:
            return self.open(header["id"])  # type: ignore[attr-defined]
        except SessionNotFound:
            return None

    def _import_new(self, source: Path | None, header: dict[str, Any], entries: list[dict[str, Any]]) -> Session:
        """Store and open an imported session whose id this store does not hold: the file
        ``source`` as it is, or (``source`` None) ``header`` and ``entries`` (a copy under a new id)."""
        session = self._create(header, entries)
        session.flush()
        return session

    def most_recent(self, cwd: str) -> Session | None:
        for info in self.list(cwd):  # type: ignore[attr-defined]
            try:
                return self.open_path(info["path"])  # type: ignore[attr-defined]
            except (SessionNotFound, InvalidSessionFile, OSError):
                continue
        return None

    def close(self) -> None:
        pass


class MemoryStore(BaseStore):
    """``--no-session``: sessions exist only in this process, nothing is listed or written."""

    kind = "memory"

    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}

    def _create(self, header: dict[str, Any], entries: list[dict[str, Any]]) -> Session:
        session = Session(header, entries)
        self._sessions[session.id] = session
        return session

    def open(self, session_id: str, directory: str | Path | None = None) -> Session:
        raise SessionNotFound(f"Session not found: {session_id}")

    def open_path(self, path: str | Path) -> Session:
        raise SessionNotFound(f"Session not found: {path}")

    def list(self, cwd: str) -> list[dict[str, Any]]:
        return []

    def list_all(self) -> list[dict[str, Any]]:
        return []

    def delete(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def has(self, session_id: str, cwd: str | None = None) -> bool:
        return False

    def put(
        self, header: dict[str, Any], entries: list[dict[str, Any]], *, overwrite: bool = False
    ) -> Session:
        return self._create(header, entries)


def _continue(stored: Session, entries: list[dict[str, Any]]) -> Session | None:
    """``stored`` brought up to ``entries`` when they hold every stored entry, in order, then
    maybe more (appended now: a write); None when they do not (an import would lose entries)."""
    held = stored.entries
    if entries[: len(held)] != held:
        return None
    newer = entries[len(held) :]
    ids = [e.get("id") for e in newer]
    if len(set(ids)) != len(ids) or any(i in stored for i in ids):  # ids a session cannot hold twice
        return None
    try:
        for entry in newer:  # each durable before the next: a failure leaves a prefix of the file
            stored.append_entry(entry)
    except BaseException:
        stored.close()
        raise
    return stored


def _difference(stored: Session | None, entries: list[dict[str, Any]]) -> str:
    """What the stored session holds that the imported file lacks, in words."""
    if stored is None:
        return "in another project"
    ids = {e.get("id") for e in entries}
    missing = [e for e in stored.entries if e.get("id") not in ids]
    if not missing:
        return "the same ids with other contents"
    newest = missing[-1]
    return f"{len(missing)} entries the file does not have, the newest {newest.get('id')} of {newest.get('timestamp')}"


def session_info(session: Session, path: str) -> dict[str, Any]:
    """RpcSessionInfo of an open session (used by tests and the memory store)."""
    from atomic_host.kit.sessions.listing import ListingState, finish_listing  # listings only: not at start

    state = ListingState()
    for entry in session.entries:
        state.apply(entry)
    return finish_listing([state.info(session.header, path)])[0]


def has_assistant(entries: list[dict[str, Any]]) -> bool:
    """Whether any entry is an assistant message (a session is saved from its first reply on)."""
    return any(is_assistant_entry(e) for e in entries)


__all__ = [
    "BaseStore",
    "FsyncPolicy",
    "MemoryStore",
    "SessionStore",
    "copy_without_labels",
    "default_session_dir",
    "has_assistant",
    "new_header",
    "session_info",
]

"""The default session store (``jsonl``): Atomic's JSONL session files (§2.1, §2.2), byte-compatible with the reference.

Durability policy: every append is a single ``os.write`` of one whole line on an ``O_APPEND`` fd,
followed by ``os.fsync`` when ``sessionFsync`` is ``always`` (the default). An entry is
acknowledged only after that returns, so a SIGKILL or power loss never loses an acknowledged
entry; a crash mid-write leaves at most one torn last line, which loading skips and the next
append steps over (it starts with a newline). On a failed write the file is truncated back.
With ``never`` the line still reaches the kernel before the append returns (safe against a
process crash, not against power loss).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import stat
from functools import cache
from pathlib import Path
from typing import Any

from atomic_host.kit.fsio import atomic_write, ensure_private_dir, fsync_dir, write_all
from atomic_host.kit.log import log
from atomic_host.kit.messages import message_text
from atomic_host.kit.sessions.errors import (
    InvalidSessionFile,
    SessionFileGone,
    SessionLocked,
    SessionNotFound,
    delete_locked_message,
    gone_message,
    locked_message,
)
from atomic_host.kit.sessions.ids import filename_timestamp, ms_from_iso, validate_session_id
from atomic_host.kit.sessions.repair import report_unreadable
from atomic_host.kit.sessions.store import BaseStore, default_session_dir, has_assistant
from atomic_host.kit.sessions.tree import Session, is_internal_header

# atomic_host.kit.sessions.jsonl (the line format) and .listing are imported by the functions that
# read, write or list: a start only creates a session, whose first write comes with the first
# reply (the RPC warm-up thread has imported the format by then).

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@cache
def _line_patterns() -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """(entry type, message role) at the start of a line as the reference writer produces it.
    Compiled by the first listing, not at import: the two compilations are ~0.9M instructions,
    and every start imports this module."""
    return re.compile(rb'^\{"type":"([A-Za-z_]+)"'), re.compile(rb'"message":\{"role":"([A-Za-z]+)"')


class _FileLocks:
    """Advisory write locks on session files, one per file per process (``flock``).

    ``flock`` locks belong to an open file description, so two descriptors in one process would
    lock each other out (switching to the session already open does that for a moment): the
    process keeps one read-only descriptor per locked file, shared by its writers and counted.
    Another process gets :class:`SessionLocked` until the holder closes the session or exits
    (the kernel drops the lock of a killed process, so a crash never leaves a stale lock).
    """

    def __init__(self) -> None:
        self._held: dict[tuple[int, int], list[int]] = {}  # (dev, ino) -> [fd, writers]

    def acquire(self, path: Path) -> tuple[int, int]:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        if key in self._held:
            os.close(fd)
            self._held[key][1] += 1
            return key
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionLocked(locked_message(str(path))) from None
        self._held[key] = [fd, 1]
        return key

    def release(self, key: tuple[int, int]) -> None:
        held = self._held.get(key)
        if held is None:
            return
        held[1] -= 1
        if held[1] <= 0:
            del self._held[key]
            with contextlib.suppress(OSError):
                os.close(held[0])


_LOCKS = _FileLocks()


class JsonlWriter:
    """Owns one session file: lazy first write, then one durable line per append, under the
    file's advisory lock so two processes never interleave appends (docs/host.md).

    ``identity`` is the (device, inode) of the file the session was read from: a file deleted or
    replaced since (another process's import, a hand edit) is not the one this session continues,
    so every write then fails with :class:`SessionFileGone` instead of writing into it or
    recreating it."""

    def __init__(
        self,
        path: Path,
        *,
        fsync: bool,
        exists: bool = False,
        needs_newline: bool = False,
        identity: tuple[int, int] | None = None,
    ) -> None:
        self.path = path
        self.fsync = fsync
        self._exists = exists
        self._needs_newline = needs_newline
        self._identity = identity
        self._fd: int | None = None
        self._lock: tuple[int, int] | None = None

    def _gone(self) -> SessionFileGone:
        return SessionFileGone(gone_message(str(self.path)))

    def lock(self) -> None:
        """Take the write lock now (raises :class:`SessionLocked` if another process has it, and
        :class:`SessionFileGone` if the file is not the one this session was read from)."""
        if self._lock is None:
            try:
                key = _LOCKS.acquire(self.path)
            except FileNotFoundError:
                raise self._gone() from None
            if self._identity is not None and key != self._identity:
                _LOCKS.release(key)
                raise self._gone()
            self._lock = key

    def write_all(self, header: dict[str, Any], entries: list[dict[str, Any]]) -> None:
        # lazy: the line format (kit.sessions.jsonl) loads with the first write or read, not at start (see the top)
        from atomic_host.kit.sessions.jsonl import encode_line

        ensure_private_dir(self.path.parent)
        data = b"".join(encode_line(r) for r in (header, *entries))
        self._close_fd()
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | _NOFOLLOW, 0o600)
        try:
            self._release()
            self._identity = None  # the file just created is this session's
            self.lock()
            write_all(fd, data)
            if self.fsync:
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            raise
        self._fd, self._exists, self._needs_newline = fd, True, False
        self._identity = self._lock
        if self.fsync:
            fsync_dir(self.path.parent)

    @property
    def locked(self) -> bool:
        """Whether this process holds the file's write lock."""
        return self._lock is not None

    def replace(self, data: bytes) -> None:
        """Replace the whole file with ``data`` (a migration) atomically, then lock the new file.
        Called only while this process holds the lock, so no other one wrote in between."""
        atomic_write(self.path, data, 0o600, fsync=self.fsync)
        st = os.stat(self.path, follow_symlinks=False)
        self._close_fd()
        self._release()
        self._identity, self._needs_newline = (st.st_dev, st.st_ino), False
        with contextlib.suppress(OSError):  # taken by another process in the instant between: read-only here
            self.lock()

    def _open(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | _NOFOLLOW)
        return self._fd

    def append(self, entry: dict[str, Any]) -> None:
        # lazy: the line format (kit.sessions.jsonl) loads with the first write or read, not at start (see the top)
        from atomic_host.kit.sessions.jsonl import encode_line

        line = encode_line(entry)
        self.lock()
        try:
            fd = self._open()
        except FileNotFoundError:
            raise self._gone() from None
        st = os.fstat(fd)
        # removed underneath (appending would write into a file nobody can read), or another file
        # in its place (one whose entries this session does not hold)
        if st.st_nlink == 0 or (st.st_dev, st.st_ino) != self._lock:
            raise self._gone()
        # A torn (or newline-less) last line must not swallow this entry.
        data = b"\n" + line if self._needs_newline else line
        try:
            write_all(fd, data)
            if self.fsync:
                os.fsync(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, st.st_size)
            raise
        self._needs_newline = False

    def _close_fd(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def _release(self) -> None:
        if self._lock is not None:
            _LOCKS.release(self._lock)
            self._lock = None

    def close(self) -> None:
        self._close_fd()
        self._release()


class JsonlStore(BaseStore):
    """Sessions as ``<dir>/<ISO-with-dashes>_<id>.jsonl`` files, one project directory per cwd."""

    kind = "jsonl"

    def __init__(
        self,
        agent_dir: Path,
        session_dir: Path | None = None,
        *,
        fsync: str = "always",
        cwd: str | None = None,
    ) -> None:
        self.agent_dir = Path(agent_dir)
        self.cwd = cwd if cwd is not None else os.getcwd()
        self.custom_dir = Path(session_dir) if session_dir is not None else None
        self.fsync = fsync != "never"

    # -- locations ------------------------------------------------------------------------------
    def dir_for(self, cwd: str) -> Path:
        return self.custom_dir if self.custom_dir is not None else default_session_dir(self.agent_dir, cwd)

    def _filters_cwd(self, cwd: str) -> bool:
        return self.custom_dir is not None and self.custom_dir != default_session_dir(self.agent_dir, cwd)

    def path_for(self, header: dict[str, Any]) -> Path:
        name = f"{filename_timestamp(str(header['timestamp']))}_{validate_session_id(header['id'])}.jsonl"
        return self.dir_for(str(header.get("cwd", ""))) / name

    # -- creating / opening ---------------------------------------------------------------------
    def _create(self, header: dict[str, Any], entries: list[dict[str, Any]]) -> Session:
        path = self.path_for(header)
        session = Session(header, entries, writer=JsonlWriter(path, fsync=self.fsync), location=str(path))
        if has_assistant(entries):
            session.flush()
        return session

    def open_path(self, path: str | Path) -> Session:
        """Open a session file anywhere (``--session PATH``); migrates v1/v2 files in place."""
        # lazy: the line format (kit.sessions.jsonl) loads with the first write or read, not at start (see the top)
        from atomic_host.kit.sessions.jsonl import (
            encode_line,
            keyed_entries,
            migrate,
            parse_records,
            read_bytes_nofollow,
        )

        path = Path(path)
        try:
            # the file's identity before its bytes: a file replaced in between makes the first
            # write fail (the session may hold the old one's entries), never write into the new one
            st = os.stat(path, follow_symlinks=False)
            data = read_bytes_nofollow(path)
        except FileNotFoundError:
            raise SessionNotFound(f"Session not found: {path}") from None
        except OSError as exc:  # ELOOP: a symlink
            raise SessionNotFound(f"Session not found: {path} ({exc.strerror})") from None
        skipped: list[str] = []
        records = parse_records(data, skipped)
        if not records or records[0].get("type") != "session" or not isinstance(records[0].get("id"), str):
            raise InvalidSessionFile(f"Not a session file: {path}")
        header = records[0]
        needs_newline = bool(data) and not data.endswith(b"\n")
        writer = JsonlWriter(
            path, fsync=self.fsync, exists=True, needs_newline=needs_newline, identity=(st.st_dev, st.st_ino)
        )
        try:
            writer.lock()  # held while the session is open here, so no other process appends
        except SessionLocked as exc:  # readable here; appends fail with this message until it frees
            log.warning(f"{exc}")
        except OSError:
            pass
        if migrate(records) and writer.locked:  # rewritten only by the process that may write it
            writer.replace(b"".join(encode_line(r) for r in records))
        entries = keyed_entries(records)
        if len(entries) < len(records) - 1:
            skipped.append(f"{len(records) - 1 - len(entries)} record(s) without an id")
        report_unreadable(str(path), skipped)
        return Session(header, entries, writer=writer, location=str(path), persisted=True)

    def _safe_files(self, directory: Path) -> list[Path]:
        """Regular ``*.jsonl`` files directly in ``directory``; symlinks are never followed."""
        try:
            names = os.listdir(directory)
        except OSError:
            return []
        files = []
        for name in names:
            if not name.endswith(".jsonl") or name.startswith("."):
                continue
            path = directory / name
            try:
                if stat.S_ISREG(os.lstat(path).st_mode):
                    files.append(path)
            except OSError:
                continue
        return files

    def _find(self, directory: Path, session_id: str) -> Path | None:
        validate_session_id(session_id)
        try:
            names = os.listdir(directory)
        except OSError:
            return None
        # lstat only the names that match: a project dir may hold thousands of sessions
        suffix = f"_{session_id}.jsonl"
        for name in sorted((n for n in names if n.endswith(suffix) and not n.startswith(".")), reverse=True):
            try:
                if stat.S_ISREG(os.lstat(directory / name).st_mode):
                    return directory / name
            except OSError:
                continue
        for path in sorted(self._safe_files(directory)):  # imported files may keep any basename: check headers
            header = _read_header(path)
            if header is not None and header.get("id") == session_id:
                return path
        return None

    def open(self, session_id: str, directory: str | Path | None = None) -> Session:
        """Open by id in this project's directory, or only in ``directory`` when given.

        Never another project's: an id is looked up where ``list_sessions`` would show it, so a
        client cannot reach another project's session by guessing its id (semantics §4)."""
        validate_session_id(session_id)
        search = Path(directory) if directory is not None else self.dir_for(self.cwd)
        path = self._find(search, session_id)
        if path is None or (directory is None and self._filters_cwd(self.cwd) and not self._of_project(path)):
            raise SessionNotFound(f"Session not found: {session_id}")
        return self.open_path(path)

    def _of_project(self, path: Path) -> bool:
        """In a flat ``--session-dir`` shared by projects: does the file belong to this cwd?"""
        header = _read_header(path)
        return header is not None and header.get("cwd") == self.cwd

    def _project_dirs(self) -> list[Path]:
        if self.custom_dir is not None:
            return [self.custom_dir]
        root = self.agent_dir / "sessions"
        try:
            return [root / n for n in sorted(os.listdir(root)) if stat.S_ISDIR(os.lstat(root / n).st_mode)]
        except OSError:
            return []

    def has(self, session_id: str, cwd: str | None = None) -> bool:
        dirs = [self.dir_for(cwd)] if cwd is not None else self._project_dirs()
        return any(self._find(d, session_id) is not None for d in dirs)

    # -- listing (kit.sessions.listing is imported by the first one: in a worker thread, not at start)
    def list(self, cwd: str) -> list[dict[str, Any]]:
        # lazy: the session listing loads with the first list, in a worker thread, not at start
        from atomic_host.kit.sessions.listing import finish_listing

        filter_cwd = self._filters_cwd(cwd)
        infos = []
        for path in self._safe_files(self.dir_for(cwd)):
            info = scan_info(path)
            if info is None or info.pop("_internal", False):
                continue
            if filter_cwd and info["cwd"] != cwd:
                continue
            infos.append(info)
        return finish_listing(infos)

    def list_all(self) -> list[dict[str, Any]]:
        # lazy: the session listing loads with the first list, in a worker thread, not at start
        from atomic_host.kit.sessions.listing import finish_listing

        infos = []
        for directory in self._project_dirs():
            for path in self._safe_files(directory):
                info = scan_info(path)
                if info is not None and not info.pop("_internal", False):
                    infos.append(info)
        return finish_listing(infos)

    # -- deleting / importing -------------------------------------------------------------------
    def delete(self, session_id: str) -> None:
        """Remove the session's file and its compaction backups from this project's directory only;
        an unknown id (or one of another project) is a no-op. A delete is a write: it takes the
        file's write lock, so a session another process holds is refused (:class:`SessionLocked`)."""
        validate_session_id(session_id)
        directory = self.dir_for(self.cwd)
        path = self._find(directory, session_id)
        if path is None or (self._filters_cwd(self.cwd) and not self._of_project(path)):
            return
        try:
            key = _LOCKS.acquire(path)
        except FileNotFoundError:
            return
        except SessionLocked:
            raise SessionLocked(delete_locked_message(session_id, str(path))) from None
        try:
            for other in os.listdir(directory):
                if other.startswith(path.name + ".") and other.endswith(".bak"):
                    with contextlib.suppress(OSError):
                        os.unlink(directory / other)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        finally:
            _LOCKS.release(key)

    def _import_new(self, source: Path | None, header: dict[str, Any], entries: list[dict[str, Any]]) -> Session:
        """Into this project's directory: the file byte for byte under its own name (as the
        reference does), else under the store's name; a name another file holds is never replaced."""
        # lazy: the line format (kit.sessions.jsonl) loads with the first write or read, not at start (see the top)
        from atomic_host.kit.sessions.jsonl import encode_line, read_bytes_nofollow

        directory = self.dir_for(self.cwd)
        ensure_private_dir(directory)
        if source is not None:
            data = read_bytes_nofollow(source)
            if atomic_write(directory / source.name, data, 0o600, fsync=self.fsync, exclusive=True):
                return self.open_path(directory / source.name)
        else:
            data = b"".join(encode_line(r) for r in (header, *entries))
        target = directory / self.path_for(header).name
        if not atomic_write(target, data, 0o600, fsync=self.fsync, exclusive=True):
            raise FileExistsError(f"Session file already exists: {target}")
        return self.open_path(target)

    def put(
        self, header: dict[str, Any], entries: list[dict[str, Any]], *, overwrite: bool = False
    ) -> Session:
        """Store a complete session (transfer/import). Existing id: kept unless ``overwrite``;
        replacing it is a write, refused (:class:`SessionLocked`) while another process holds it."""
        # lazy: the line format (kit.sessions.jsonl) loads with the first write or read, not at start (see the top)
        from atomic_host.kit.sessions.jsonl import encode_line

        validate_session_id(header["id"])
        directory = self.dir_for(str(header.get("cwd", "")))
        existing = self._find(directory, header["id"])
        if existing is not None and not overwrite:
            return self.open_path(existing)
        ensure_private_dir(directory)
        path = existing or self.path_for(header)
        key = _LOCKS.acquire(path) if existing is not None else None
        try:
            atomic_write(path, b"".join(encode_line(r) for r in (header, *entries)), 0o600, fsync=self.fsync)
        finally:
            if key is not None:
                _LOCKS.release(key)
        return self.open_path(path)


def _read_header(path: Path) -> dict[str, Any] | None:
    # lazy: the line format (kit.sessions.jsonl) loads with the first write or read, not at start (see the top)
    from atomic_host.kit.sessions.jsonl import parse_line

    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except OSError:
        return None
    try:
        head = os.read(fd, 65536)
    finally:
        os.close(fd)
    obj = parse_line(head.split(b"\n", 1)[0])
    if isinstance(obj, dict) and obj.get("type") == "session" and isinstance(obj.get("id"), str):
        return obj
    return None


def scan_info(path: Path) -> dict[str, Any] | None:
    """RpcSessionInfo of a file without parsing every line (§2.6).

    Entry types and message roles are read from the line prefix the reference writer produces;
    only the header, the first user message, the newest user/assistant message, the latest
    ``session_info`` and the latest summary line are JSON-parsed. Lines in another key order fall
    back to a full parse.
    """
    # lazy: the line format and the listing load with the first list, in a worker thread
    from atomic_host.kit.sessions.jsonl import parse_line, parse_records, read_bytes_nofollow
    from atomic_host.kit.sessions.listing import build_info

    try:
        data = read_bytes_nofollow(path)
        mtime_ms = os.stat(path, follow_symlinks=False).st_mtime * 1000
    except (OSError, InvalidSessionFile):
        return None
    lines = data.split(b"\n")
    header = parse_line(lines[0])
    if (
        not isinstance(header, dict)
        or header.get("type") != "session"
        or not isinstance(header.get("id"), str)
    ):
        records = parse_records(data)  # a leading junk line: take the slow, exact path
        if not records or records[0].get("type") != "session" or not isinstance(records[0].get("id"), str):
            return None
        return _info_from_records(path, records, mtime_ms)
    if not isinstance(header.get("version"), int) or header["version"] < 3:
        return _info_from_records(path, parse_records(data), mtime_ms)
    if lines and lines[-1] and parse_line(lines[-1]) is None:
        lines.pop()  # torn last line
    type_re, role_re = _line_patterns()
    count = 0
    first_user: dict[str, Any] | None = None
    last_conv = last_info = last_summary = last_branch = -1
    parsed: dict[int, Any] = {}
    for index in range(1, len(lines)):
        line = lines[index]
        if not line:
            continue
        match = type_re.match(line)
        if match:
            kind = match.group(1).decode()
        else:
            obj = parse_line(line)
            if not isinstance(obj, dict):
                continue
            parsed[index] = obj
            kind = obj.get("type")
        if kind == "message":
            role_match = role_re.search(line)
            if role_match:
                role = role_match.group(1).decode()
            else:
                obj = parsed.get(index) or parse_line(line)
                if not isinstance(obj, dict):
                    continue
                parsed[index] = obj
                message = obj.get("message")
                role = message.get("role") if isinstance(message, dict) else None
            count += 1
            if role in ("user", "assistant"):
                last_conv = index
                if role == "user" and first_user is None:
                    obj = parsed.get(index) or parse_line(line)
                    if isinstance(obj, dict) and message_text(obj.get("message"), " "):
                        first_user = obj
        elif kind == "session_info":
            last_info = index
        elif kind == "session_summary":
            last_summary = index
        elif kind == "branch_summary":
            last_branch = index

    def load(index: int) -> dict[str, Any] | None:
        if index < 0:
            return None
        obj = parsed.get(index) or parse_line(lines[index])
        return obj if isinstance(obj, dict) else None

    modified_ms = None
    conv = load(last_conv)
    if conv is not None:
        stamp = (conv.get("message") or {}).get("timestamp")
        if isinstance(stamp, int | float) and stamp > 0:
            modified_ms = float(stamp)
        else:
            modified_ms = ms_from_iso(conv.get("timestamp"))
    info_entry = load(last_info)
    name = info_entry.get("name") if info_entry else None
    summary = load(last_summary) if last_summary > last_branch else None
    info = build_info(
        header,
        str(path),
        message_count=count,
        first_message=message_text(first_user.get("message"), " ") if first_user else None,
        modified_ms=modified_ms,
        name=(name.strip() or None) if isinstance(name, str) else None,
        has_name=info_entry is not None,
        summary=summary,
        fallback_mtime_ms=mtime_ms,
    )
    info["_internal"] = is_internal_header(header)
    return info


def _info_from_records(path: Path, records: list[dict[str, Any]], mtime_ms: float) -> dict[str, Any]:
    # lazy: the session listing loads with the first list, in a worker thread, not at start
    from atomic_host.kit.sessions.listing import ListingState

    state = ListingState()
    for record in records[1:]:
        state.apply(record)
    info = state.info(records[0], str(path), mtime_ms)
    info["_internal"] = is_internal_header(records[0])
    return info


__all__ = ["JsonlStore", "JsonlWriter", "scan_info"]

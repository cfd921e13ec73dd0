"""Plugin files and a CLI runner for the store and exporter tests (real files, real host)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from atomic_host.testing import Host, host_env

ONEFILE_STORE = '''
"""A third-party session store: every session of every project in one JSON file."""

import json
from pathlib import Path

from atomic_host import hookimpl
from atomic_host.contract.registrations import SessionStoreFactory
from atomic_host.kit.fsio import atomic_write
from atomic_host.kit.sessions.errors import SessionNotFound
from atomic_host.kit.sessions.listing import ListingState, finish_listing
from atomic_host.kit.sessions.store import BaseStore, has_assistant
from atomic_host.kit.sessions.tree import Session


class Writer:
    def __init__(self, store, session_id):
        self.store, self.session_id = store, session_id

    def write_all(self, header, entries):
        self.store.data[self.session_id] = [header, *entries]
        self.store.save()

    def append(self, entry):
        self.store.data[self.session_id].append(entry)
        self.store.save()

    def close(self):
        pass


class OneFileStore(BaseStore):
    kind = "onefile"

    def __init__(self, path, cwd):
        self.path, self.cwd = path, cwd
        self.data = json.loads(path.read_text()) if path.exists() else {}

    def save(self):
        atomic_write(self.path, json.dumps(self.data), 0o600)

    def _session(self, header, entries, persisted):
        location = "onefile:" + header["id"]
        return Session(header, entries, writer=Writer(self, header["id"]), location=location, persisted=persisted)

    def _create(self, header, entries):
        session = self._session(header, entries, False)
        if has_assistant(entries):
            session.flush()
        return session

    def open(self, session_id, directory=None):
        records = self.data.get(session_id)
        if records is None or records[0].get("cwd") != self.cwd:
            raise SessionNotFound("Session not found: " + session_id)
        return self._session(records[0], records[1:], True)

    def open_path(self, path):
        return self.open(str(path).removeprefix("onefile:"))

    def _infos(self, cwd):
        infos = []
        for header, *entries in self.data.values():
            if cwd is None or header.get("cwd") == cwd:
                state = ListingState()
                for entry in entries:
                    state.apply(entry)
                infos.append(state.info(header, "onefile:" + header["id"]))
        return finish_listing(infos)

    def list(self, cwd):
        return self._infos(cwd)

    def list_all(self):
        return self._infos(None)

    def delete(self, session_id):
        if self.data.pop(session_id, None) is not None:
            self.save()

    def has(self, session_id, cwd=None):
        records = self.data.get(session_id)
        return records is not None and (cwd is None or records[0].get("cwd") == cwd)

    def import_file(self, path, cwd_override=None):
        raise NotImplementedError

    def put(self, header, entries, *, overwrite=False):
        if header["id"] not in self.data or overwrite:
            self.data[header["id"]] = [header, *entries]
            self.save()
        return self.open(header["id"])


def open_onefile(options):
    return OneFileStore(Path(options.session_dir or options.agent_dir) / "onefile.json", options.cwd)


@hookimpl
def register_session_stores(register):
    register(SessionStoreFactory(KIND, open_onefile, "one JSON file"))
'''


def store_plugin(directory: Path, kind: str = "onefile") -> Path:
    """Write the one-file store plugin, registering ``kind``; returns its path."""
    path = directory / f"store_{kind}.py"
    path.write_text(ONEFILE_STORE + f"\nKIND = {kind!r}\n")
    return path


MARKDOWN_EXPORTER = '''
"""A third-party exporter: the active branch's messages as Markdown, registered as NAMES."""

from pathlib import Path

from atomic_host import hookimpl
from atomic_host.contract.registrations import Exporter
from atomic_host.kit.messages import message_text


def render(header, entries, leaf_id):
    by_id = {e["id"]: e for e in entries}
    branch, current = [], by_id.get(leaf_id)
    while current is not None:
        branch.append(current)
        current = by_id.get(current.get("parentId"))
    lines = ["# Session " + header["id"], ""]
    for entry in reversed(branch):
        if entry.get("type") == "message":
            lines.append("- **" + entry["message"]["role"] + "**: " + message_text(entry["message"], " "))
    return "\\n".join(lines) + "\\n"


def default_path(session):
    return str(Path.cwd() / (session.id + ".md"))


@hookimpl
def register_exporters(register):
    for name in NAMES:
        register(Exporter(name, render, default_path))
'''


def exporter_plugin(directory: Path, *names: str) -> Path:
    """Write the Markdown exporter plugin, registering it under each of ``names``."""
    path = directory / f"export_{'_'.join(names)}.py"
    path.write_text(MARKDOWN_EXPORTER + f"\nNAMES = {list(names)!r}\n")
    return path


def atomic(base: Path, *args: str, settings: dict[str, Any] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the ``atomic`` CLI once (not RPC mode) in the sandbox of ``base``."""
    if settings is not None:
        (base / "agent" / "settings.json").write_text(json.dumps(settings))
    env = host_env(base / "agent", base / "faux.jsonl", base / "faux-log.jsonl")
    return subprocess.run(
        [sys.executable, "-m", "atomic_host", *args],
        cwd=base / "work",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def chat(host: Host, *texts: str) -> None:
    """One prompt/reply turn per text (faux answers ``re: <text>``)."""
    for text in texts:
        host.faux.push(f"re: {text}")
        await host.client.prompt_and_wait(text)


def texts(messages: list[dict[str, Any]]) -> list[str]:
    """The text of each message, in order."""
    out = []
    for message in messages:
        content = message.get("content")
        out.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))
    return out

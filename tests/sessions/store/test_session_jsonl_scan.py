"""The JSONL store lists a session file by reading line prefixes (``scan_info``; the patterns are
compiled on the first listing): the same RpcSessionInfo as parsing every line, for files the
writer produced and for lines in another key order (which take the full parse)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from atomic_host.kit.sessions.jsonl import parse_records
from builtin_plugins.stores.jsonl import JsonlStore, _info_from_records, scan_info


def _message(role: str, text: str, stamp: int) -> dict:
    return {"role": role, "content": [{"type": "text", "text": text}], "timestamp": stamp}


def _exact(path: Path) -> dict:
    mtime_ms = os.stat(path).st_mtime * 1000
    return _info_from_records(path, parse_records(path.read_bytes()), mtime_ms)


def test_scan_info_reads_prefixes_to_the_same_answer_as_a_full_parse(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path / "agent", fsync="never", cwd=str(tmp_path))
    session = store.new_session(str(tmp_path))
    session.append_message(_message("user", "first question", 1_700_000_000_000))
    session.append_message(_message("assistant", "an answer", 1_700_000_001_000))
    session.append_session_info("named")
    session.append_message(_message("user", "second", 1_700_000_002_000))
    session.flush()
    path = Path(session.location)
    lines = path.read_bytes().splitlines()
    assert any(line.startswith(b'{"type":"message"') for line in lines)  # the prefixes scan_info reads
    info = scan_info(path)
    assert info == _exact(path)
    assert (info["messageCount"], info["firstMessage"], info["name"]) == (3, "first question", "named")

    # the same entries with their keys in another order: no prefix to read, the full parse decides
    reordered = [lines[0], *(json.dumps(dict(reversed(json.loads(line).items()))).encode() for line in lines[1:])]
    path.write_bytes(b"\n".join(reordered) + b"\n")
    assert scan_info(path) == _exact(path) and scan_info(path)["messageCount"] == 3

"""Moving sessions between JSONL and SQLite, through the library and the CLI entry point."""

from __future__ import annotations

from session_helpers import CWD, chat

from atomic_host.session.transfer import export_sessions
from atomic_host.session.transfer import main as transfer_main
from builtin_plugins.stores import STORES
from builtin_plugins.stores import open_builtin_store as open_store

KINDS = {f.kind: f for f in STORES}


def main(argv: list[str]) -> int:
    return transfer_main(argv, KINDS)


def test_round_trip_jsonl_sqlite_jsonl(agent_dir, tmp_path):
    src = open_store("jsonl", agent_dir, None, CWD)
    sessions = [chat(src, 2), chat(src, 1)]
    sessions[0].append_label(sessions[0].entries[2]["id"], "x")
    db = open_store("sqlite", agent_dir, None, CWD)
    assert export_sessions(src, db) == 2
    assert export_sessions(src, db) == 0  # already there
    for s in sessions:
        copy = db.open(s.id)
        assert copy.entries == s.entries and copy.header == s.header and copy.labels() == s.labels()
    out = open_store("jsonl", agent_dir, tmp_path / "out", CWD)
    assert export_sessions(db, out, CWD) == 2
    assert {i["id"] for i in out.list(CWD)} == {s.id for s in sessions}
    db.close()


def test_cli(agent_dir, tmp_path, capsys):
    src = open_store("jsonl", agent_dir, None, CWD)
    s = chat(src, 1)
    assert main(["sessions", "import", "--agent-dir", str(agent_dir)]) == 0
    assert "1 session(s)" in capsys.readouterr().out
    assert main(["export", "--agent-dir", str(agent_dir), "--out", str(tmp_path / "o"), "--cwd", CWD]) == 0
    assert open_store("jsonl", agent_dir, tmp_path / "o", CWD).open(s.id).entries == s.entries
    assert main(["import", "--agent-dir", str(agent_dir), "--from", "sqlite", "--to", "sqlite"]) == 2

from __future__ import annotations

import base64
import os
import sqlite3
import stat
from pathlib import Path

from tools_helpers import call, call_err, text_of

from atomic_host.contract.tools import ToolContext


def reps(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"oldText": a, "newText": b} for a, b in pairs]


PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


# ---- read -----------------------------------------------------------------------------------


async def test_read_plain_text_is_copyable_into_edit(ctx: ToolContext, work: Path) -> None:
    (work / "a.py").write_text("def f():\n\treturn 1  \n")
    r = await call("read", ctx, path="a.py")
    text = text_of(r)
    assert text.splitlines()[0] == "[a.py]"
    body = text.split("\n", 1)[1]
    assert body == "def f():\n\treturn 1  "
    await call("edit", ctx, path="a.py", edits=[{"oldText": body.splitlines()[1], "newText": "\treturn 2"}])
    assert (work / "a.py").read_text() == "def f():\n\treturn 2\n"


async def test_read_head_truncation_and_continue(ctx: ToolContext, work: Path) -> None:
    (work / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 5001)))
    text = text_of(await call("read", ctx, path="big.txt"))
    assert "line 3000" in text and "line 3001" not in text
    assert text.endswith("[Showing lines 1-3000 of 5000. Continue with offset=3001.]")
    text = text_of(await call("read", ctx, path="big.txt", offset=3001))
    assert text.split("\n")[1] == "line 3001" and text.endswith("line 5000")


async def test_read_offset_limit_and_selectors(ctx: ToolContext, work: Path) -> None:
    (work / "f.txt").write_text("".join(f"{i}\n" for i in range(1, 101)))
    assert text_of(await call("read", ctx, path="f.txt", offset=10, limit=2)).startswith("[f.txt]\n10\n11\n\n[Showing")
    assert text_of(await call("read", ctx, path="f.txt:5-7")).split("\n")[1:4] == ["5", "6", "7"]
    assert text_of(await call("read", ctx, path="f.txt:5+2")).split("\n")[1:3] == ["5", "6"]
    t = text_of(await call("read", ctx, path="f.txt:99"))
    assert t == "[f.txt]\n99\n100"
    t = text_of(await call("read", ctx, path="f.txt:1-2,50-51"))
    assert "1\n2" in t and "50\n51" in t
    assert "beyond the end" in await call_err("read", ctx, path="f.txt", offset=500)


async def test_read_errors(ctx: ToolContext, work: Path) -> None:
    (work / "config.yaml").write_text("x")
    err = await call_err("read", ctx, path="config.yml")
    assert "File not found: config.yml" in err and "config.yaml" in err
    (work / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    assert "binary" in await call_err("read", ctx, path="blob.bin")
    (work / "long.txt").write_text("a" * 60_000 + "\nshort\n")
    err = await call_err("read", ctx, path="long.txt")
    assert "Line 1" in err and "sed -n" in err
    assert text_of(await call("read", ctx, path="long.txt", offset=2)).startswith("[long.txt]\nshort")


async def test_read_empty_and_crlf(ctx: ToolContext, work: Path) -> None:
    (work / "e.txt").write_text("")
    assert "(empty file)" in text_of(await call("read", ctx, path="e.txt"))
    (work / "w.txt").write_bytes(b"a\r\nb\r\n")
    assert text_of(await call("read", ctx, path="w.txt")) == "[w.txt]\na\nb"


async def test_read_directory_tree(ctx: ToolContext, work: Path) -> None:
    (work / "src" / "pkg" / "deep").mkdir(parents=True)
    (work / "src" / "pkg" / "deep" / "hidden.py").write_text("")
    (work / "src" / "main.py").write_text("")
    (work / "node_modules" / "x").mkdir(parents=True)
    text = text_of(await call("read", ctx, path="."))
    assert "src/" in text and "main.py" in text and "pkg/" in text
    assert "hidden.py" not in text and "node_modules" not in text


async def test_read_image_and_sqlite(ctx: ToolContext, work: Path) -> None:
    (work / "pic.dat").write_bytes(PNG)
    r = await call("read", ctx, path="pic.dat")
    assert r.content[1] == {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}
    con = sqlite3.connect(work / "db.sqlite")
    con.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    con.executemany("INSERT INTO users (name) VALUES (?)", [("a",), ("b",)])
    con.commit()
    con.close()
    text = text_of(await call("read", ctx, path="db.sqlite"))
    assert "table users (2 rows): id INTEGER PK, name TEXT" in text


async def test_read_expands_home(ctx: ToolContext, work: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(work))
    (work / "h.txt").write_text("home\n")
    assert "home" in text_of(await call("read", ctx, path="~/h.txt"))


# ---- write ----------------------------------------------------------------------------------


async def test_write_creates_parents_and_reports(ctx: ToolContext, work: Path) -> None:
    r = await call("write", ctx, path="a/b/c.txt", content="one\ntwo\n")
    assert text_of(r) == "Created a/b/c.txt (8 bytes, 2 lines)"
    assert (work / "a/b/c.txt").read_text() == "one\ntwo\n"
    r = await call("write", ctx, path="a/b/c.txt", content="x")
    assert text_of(r).startswith("Overwrote") and (work / "a/b/c.txt").read_text() == "x"
    assert not [p for p in (work / "a/b").iterdir() if p.name.endswith(".tmp")]


async def test_write_keeps_mode_and_refuses_dir(ctx: ToolContext, work: Path) -> None:
    script = work / "run.sh"
    script.write_text("old")
    script.chmod(0o750)
    await call("write", ctx, path="run.sh", content="#!/bin/sh\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert "directory" in await call_err("write", ctx, path=".", content="x")


# ---- edit -----------------------------------------------------------------------------------


async def test_edit_multiple_and_diff(ctx: ToolContext, work: Path) -> None:
    f = work / "m.py"
    f.write_text("a = 1\nb = 2\nc = 3\n")
    f.chmod(0o640)
    r = await call(
        "edit",
        ctx,
        path="m.py",
        edits=reps(("c = 3", "c = 30"), ("a = 1", "a = 10")),
    )
    assert f.read_text() == "a = 10\nb = 2\nc = 30\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o640
    text = text_of(r)
    assert "2 replacements" in text and "-a = 1" in text and "+c = 30" in text
    assert r.details and r.details["firstChangedLine"] == 1


async def test_edit_all_or_nothing(ctx: ToolContext, work: Path) -> None:
    f = work / "m.txt"
    f.write_text("x\ny\nx\n")
    before = f.read_bytes()
    err = await call_err("edit", ctx, path="m.txt", edits=reps(("y", "Y"), ("x", "X")))
    assert "matches 2 times (at lines 1, 3)" in err and err.startswith("No changes made")
    assert f.read_bytes() == before
    err = await call_err("edit", ctx, path="m.txt", edits=reps(("y", "Y"), ("zzz", "")))
    assert "Edit 2: oldText not found" in err
    assert f.read_bytes() == before


async def test_edit_overlap_rejected(ctx: ToolContext, work: Path) -> None:
    f = work / "o.txt"
    f.write_text("hello world\n")
    err = await call_err(
        "edit",
        ctx,
        path="o.txt",
        edits=reps(("hello wo", "a"), ("world", "b")),
    )
    assert "overlap" in err and f.read_text() == "hello world\n"


async def test_edit_whitespace_hint(ctx: ToolContext, work: Path) -> None:
    (work / "w.py").write_text("def f():\n    return  1\n")
    err = await call_err("edit", ctx, path="w.py", edits=[{"oldText": "\treturn 1", "newText": "x"}])
    assert "not found" in err and "whitespace-insensitive match exists at line 2" in err


async def test_edit_crlf_and_bom_preserved(ctx: ToolContext, work: Path) -> None:
    f = work / "win.txt"
    f.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    await call("edit", ctx, path="win.txt", edits=[{"oldText": "one\ntwo", "newText": "uno\ndos"}])
    assert f.read_bytes() == b"\xef\xbb\xbfuno\r\ndos\r\n"


async def test_edit_errors(ctx: ToolContext, work: Path) -> None:
    assert "File not found" in await call_err("edit", ctx, path="none.txt", edits=reps(("a", "b")))
    (work / "same.txt").write_text("a\n")
    assert "identical" in await call_err("edit", ctx, path="same.txt", edits=reps(("a", "a")))
    assert "empty" in await call_err("edit", ctx, path="same.txt", edits=[{"oldText": "", "newText": "a"}])


async def test_paths_outside_cwd_absolute(ctx: ToolContext, tmp_path: Path) -> None:
    other = tmp_path / "other.txt"
    other.write_text("abs\n")
    assert text_of(await call("read", ctx, path=str(other))).endswith("abs")
    assert os.path.isabs(text_of(await call("read", ctx, path=str(other))).split("\n")[0][1:-1])

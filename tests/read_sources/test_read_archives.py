"""read and search/find on archives, through the real host: zip, tarballs, .gz, and hostile ones.

The hostile archives are made cheaply: a gzip file may hold many members one after the other,
so a stream of a gigabyte of zeros is one small compressed megabyte repeated.
"""

from __future__ import annotations

import asyncio
import gzip
import io
import os
import struct
import tarfile
import time
import zipfile
from pathlib import Path

from read_helpers import abort_while_reading, model_sees, read

from atomic_host.testing import start_host

MiB = 1024 * 1024
ZEROS_GZ = gzip.compress(b"\0" * MiB, compresslevel=1)


def make_tree(root: Path) -> None:
    (root / "inner").mkdir(parents=True)
    (root / "inner" / "notes.txt").write_text("first line\nsecond line\nthird line\n")
    (root / "inner" / "deep").mkdir()
    (root / "inner" / "deep" / "todo.md").write_text("# TODO\n- ship the archive reader\n")
    (root / "top.txt").write_text("top level\n")


def make_archives(work: Path) -> None:
    src = work.parent / "src"
    make_tree(src)
    with zipfile.ZipFile(work / "arch.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(src.rglob("*")):
            zf.write(p, p.relative_to(src).as_posix())
    for mode, name in (("w:gz", "arch.tar.gz"), ("w:bz2", "arch.tar.bz2"), ("w:xz", "arch.tar.xz"), ("w", "arch.tar")):
        with tarfile.open(work / name, mode) as tf:
            tf.add(src / "inner", "inner")
            tf.add(src / "top.txt", "top.txt")
    (work / "lib.jar").write_bytes((work / "arch.zip").read_bytes())
    (work / "notes.txt.gz").write_bytes(gzip.compress(b"gz line 1\ngz line 2\n"))


def tar_header(name: str, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = size
    return info.tobuf(format=tarfile.GNU_FORMAT)


def big_tar_gz(path: Path, zeros_mib: int, last: bytes = b"found me\n") -> None:
    """A tar.gz: ``zero.bin`` of ``zeros_mib`` MiB of zeros, then ``last.txt`` (gzip members in a row)."""
    with path.open("wb") as f:
        f.write(gzip.compress(tar_header("zero.bin", zeros_mib * MiB), compresslevel=1))
        for _ in range(zeros_mib):
            f.write(ZEROS_GZ)
        tail = tar_header("last.txt", len(last)) + last + b"\0" * (-len(last) % 512) + b"\0" * 1024
        f.write(gzip.compress(tail, compresslevel=1))


async def test_members_listings_and_selectors_of_every_archive_kind(tmp_path: Path) -> None:
    async with start_host(base=tmp_path / "h") as host:
        make_archives(host.cwd)
        r = await read(
            host,
            "arch.zip:inner/notes.txt",
            "arch.zip/inner/notes.txt",
            "arch.tar.gz:inner/notes.txt",
            "arch.tar.bz2:inner/deep/todo.md",
            "arch.tar.xz:top.txt",
            "arch.tar:inner/notes.txt:2-3",
            "lib.jar:inner/notes.txt:2",
            "notes.txt.gz",
            "notes.txt.gz:notes.txt",
            "arch.zip",
            "arch.tar.gz:inner",
            "arch.zip:inner/nope.txt",
            "arch.zip:inner/notes.txt:9-10",
        )
        host.assert_protocol_lines()
    notes = "first line\nsecond line\nthird line"
    assert r[0] == {"text": f"[arch.zip:inner/notes.txt]\n{notes}", "images": [], "isError": False}
    assert r[1]["text"] == r[0]["text"]
    assert r[2]["text"] == f"[arch.tar.gz:inner/notes.txt]\n{notes}"
    assert r[3]["text"] == "[arch.tar.bz2:inner/deep/todo.md]\n# TODO\n- ship the archive reader"
    assert r[4]["text"] == "[arch.tar.xz:top.txt]\ntop level"
    assert r[5]["text"] == "[arch.tar:inner/notes.txt]\nsecond line\nthird line"
    assert r[6]["text"] == "[lib.jar:inner/notes.txt]\nsecond line\nthird line"
    assert r[7]["text"] == "[notes.txt.gz]\n1 files. Read a member with notes.txt.gz:<member>.\nnotes.txt"
    assert r[8]["text"] == "[notes.txt.gz:notes.txt]\ngz line 1\ngz line 2"
    listing = r[9]["text"].split("\n")
    assert listing[:2] == ["[arch.zip]", "3 files. Read a member with arch.zip:<member>."]
    assert "inner/notes.txt  (34 bytes)" in listing and "inner/deep/todo.md  (33 bytes)" in listing
    assert "top.txt  (10 bytes)" in listing
    folder = r[10]["text"].split("\n")
    assert folder[:2] == ["[arch.tar.gz:inner]", "2 files in inner/. Read a member with arch.tar.gz:<member>."]
    assert "top.txt  (10 bytes)" not in folder and "inner/notes.txt  (34 bytes)" in folder
    assert (
        r[11]["isError"]
        and r[11]["text"]
        == (
            "arch.zip has no member inner/nope.txt. Did you mean: inner/notes.txt, inner/deep/todo.md? "
            "Read arch.zip to list it."
        )
    ) or "Did you mean: inner/notes.txt" in r[11]["text"]
    assert r[12]["isError"] and "Offset 9 is beyond the end of arch.zip:inner/notes.txt (3 lines)" in r[12]["text"]


async def test_search_and_find_reach_into_archives(tmp_path: Path) -> None:
    async with start_host(base=tmp_path / "h") as host:
        make_archives(host.cwd)
        (host.cwd / "plain.txt").write_text("second line outside\n")
        (host.cwd / "docs" / "sub").mkdir(parents=True)
        (host.cwd / "docs" / "sub" / "a.md").write_text("# a\n")
        r = await model_sees(
            host,
            ("search", {"pattern": "second", "paths": ["arch.zip", "arch.tar.gz", "plain.txt"]}),
            ("find", {"pattern": "*.md", "paths": ["arch.tar.bz2", "arch.zip"]}),
            ("search", {"pattern": "SHIP", "paths": "arch.tar.xz", "case": "insensitive"}),
            ("find", {"paths": ["docs/**/*.md"]}),
            ("find", {"pattern": "*.TXT", "paths": ["arch.zip"], "case": "smart", "limit": 1, "skip": 1}),
            ("search", {"pattern": "SHIP", "paths": "arch.tar.xz", "case": "smart"}),
            ("find", {"pattern": "*.txt", "paths": ["arch.zip"], "case": "smart", "limit": 1, "skip": 1}),
        )
    assert r[0]["text"] == (
        "arch.zip:inner/notes.txt\n  1- first line\n  2: second line\n  3- third line\n\n"
        "arch.tar.gz:inner/notes.txt\n  1- first line\n  2: second line\n  3- third line\n\n"
        "plain.txt\n  1: second line outside"
    )
    assert r[1]["text"] == "arch.tar.bz2:inner/deep/todo.md\narch.zip:inner/deep/todo.md"
    assert r[2]["text"] == "arch.tar.xz:inner/deep/todo.md\n  1- # TODO\n  2: - ship the archive reader"
    assert r[3]["text"] == "docs/sub/a.md"
    assert r[4]["text"] == "No files found matching '*.TXT' after skipping 1"  # smart: upper case, so sensitive
    assert r[5]["text"] == "No matches for 'SHIP'"
    assert r[6]["text"] == "arch.zip:top.txt"  # the second of two: nothing more to page to


def zip_declaring(path: Path, name: str, data: bytes, declared: int) -> None:
    """A zip whose one member holds ``data`` but says (local and central headers) it is ``declared`` bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        zf.writestr(name, data)
    raw = bytearray(buf.getvalue())
    struct.pack_into("<I", raw, 22, declared)  # local header: uncompressed size
    central = raw.rfind(b"PK\x01\x02")
    struct.pack_into("<I", raw, central + 24, declared)
    path.write_bytes(bytes(raw))


def tree_snapshot(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


async def test_hostile_archives_end_with_clear_errors_within_bounds(tmp_path: Path) -> None:
    work_base = tmp_path / "h"
    async with start_host(base=work_base) as host:
        work = host.cwd
        # a zip bomb: 80 MiB of zeros in a few hundred KiB
        with (
            zipfile.ZipFile(work / "bomb.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf,
            zf.open("zeros.txt", "w") as member,
        ):
            for _ in range(80):
                member.write(b"\0" * MiB)
        # the same member lying about its size (declares 1000 bytes)
        zip_declaring(work / "liar.zip", "zeros.txt", b"\0" * (8 * MiB), 1000)
        # a member that says 2 GiB (its data is not even there)
        with (work / "huge.tar").open("wb") as f:
            f.write(tar_header("huge.bin", 2 * 1024 * MiB) + b"x" * 512)
        zip_declaring(work / "huge.zip", "huge.bin", b"x" * 100, 2 * 1024 * MiB)
        # a .gz that never seems to end: 70 MiB of zeros
        (work / "endless.txt.gz").write_bytes(ZEROS_GZ * 70)
        # members that try to escape
        with zipfile.ZipFile(work / "evil.zip", "w") as zf:
            zf.writestr("../../escaped.txt", "I am out\n")
            zf.writestr("/etc/evil.conf", "absolute\n")
            zf.writestr("ctl\x1b[31mred.txt", "colour\n")
        with tarfile.open(work / "evil.tar", "w") as tf:
            for name, target in (("link-out", "/etc/passwd"), ("link-up", "../../../outside.txt")):
                info = tarfile.TarInfo(name)
                info.type = tarfile.SYMTYPE
                info.linkname = target
                tf.addfile(info)
        before = tree_snapshot(work)
        started = time.monotonic()
        r = await read(
            host,
            "bomb.zip:zeros.txt",
            "liar.zip:zeros.txt",
            "huge.tar:huge.bin",
            "huge.zip:huge.bin",
            "endless.txt.gz:endless.txt",
            "evil.zip",
            "evil.zip:../../escaped.txt",
            "evil.zip:/etc/evil.conf",
            "evil.tar:link-out",
            "evil.tar:link-up",
        )
        elapsed = time.monotonic() - started
        host.assert_protocol_lines()
        assert tree_snapshot(work) == before  # nothing extracted anywhere
        assert not [p for p in tmp_path.rglob("*") if p.name in ("escaped.txt", "evil.conf", "outside.txt")]
    assert r[0]["isError"] and r[0]["text"] == (
        "bomb.zip:zeros.txt is 80 MiB, over the 64 MiB read limit. "
        "Extract part of it with bash (e.g. unzip -p / tar -xOf … | head -c 100000)."
    )
    assert r[1]["isError"] and r[1]["text"].startswith("Cannot read liar.zip:zeros.txt: Bad CRC-32"), r[1]
    assert r[2]["isError"] and r[2]["text"].startswith("huge.tar:huge.bin is 2 GiB, over the 64 MiB read limit.")
    assert r[3]["isError"] and r[3]["text"].startswith("huge.zip:huge.bin is 2 GiB, over the 64 MiB read limit.")
    assert r[4]["isError"] and r[4]["text"].startswith(
        "endless.txt.gz:endless.txt decompresses to more than 64 MiB, over the read limit."
    )
    assert r[5]["text"].split("\n")[2:] == [
        "../../escaped.txt  (9 bytes)",
        "etc/evil.conf  (9 bytes)",
        "ctl\\x1b[31mred.txt  (7 bytes)",
    ]
    assert r[6]["text"] == "[evil.zip:../../escaped.txt]\nI am out"
    assert r[7]["text"] == "[evil.zip:etc/evil.conf]\nabsolute"
    assert r[8]["isError"] and r[8]["text"] == "evil.tar:link-out is a link to /etc/passwd, which is not in the archive"
    assert r[9]["isError"] and "which is not in the archive" in r[9]["text"]
    assert elapsed < 30


async def test_slow_archive_read_stops_at_the_time_bound_and_on_abort(tmp_path: Path) -> None:
    settings = {"read": {"timeoutSeconds": 0.3}}
    async with start_host(base=tmp_path / "h", settings=settings) as host:
        big_tar_gz(host.cwd / "big.tar.gz", 1024)  # 1 GiB of zeros before last.txt
        started = time.monotonic()
        r = await read(host, "big.tar.gz:last.txt", "big.tar.gz")
        elapsed = time.monotonic() - started
    assert r[0]["isError"] and r[0]["text"] == "Reading big.tar.gz took longer than 0.3 s; stopped"
    # the listing shows what it reached, and says why it stopped
    assert r[1]["text"].startswith("[big.tar.gz]\n1 files.") and "zero.bin  (1,073,741,824 bytes)" in r[1]["text"]
    assert "[Listing stopped early: Reading big.tar.gz took longer than 0.3 s; stopped]" in r[1]["text"]
    assert elapsed < 20

    async with start_host(base=tmp_path / "h2") as host:
        big_tar_gz(host.cwd / "big.tar.gz", 4096)
        end, answered = await abort_while_reading(host, "big.tar.gz:last.txt")
        assert end["isError"] and end["result"]["content"][0]["text"] == "Read aborted"
        assert answered < 5  # the read alone would take far longer; a loaded machine adds seconds
        # the worker thread stopped too: the host's CPU time stops growing
        await asyncio.sleep(1.0)
        pid = host.client.proc.pid  # type: ignore[union-attr]
        ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[11])
        await asyncio.sleep(1.0)
        later = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[11])
        assert later - ticks < os.sysconf("SC_CLK_TCK") // 2

"""read on documents through the real host: PDF (compressed streams, pages), DOCX, PPTX, XLSX, EPUB,
notebooks, HTML as markdown; hostile PDFs end with a clear error, in time, and the child is gone."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from docmakers import make_docx, make_epub, make_notebook, make_pptx, make_xlsx, pdf_bytes
from read_helpers import abort_while_reading, model_sees, read

from atomic_host.testing import start_host

pytestmark = pytest.mark.slow  # documents built with the document libraries


async def test_every_document_kind_as_text(tmp_path: Path) -> None:
    # 17 conversions in parallel, a child each: on a loaded CI machine they need more than the default 30 s
    async with start_host(base=tmp_path / "h", settings={"read": {"timeoutSeconds": 180}}) as host:
        w = host.cwd
        (w / "two.pdf").write_bytes(pdf_bytes(["Hello page one\nsecond line (with parens)", "Page two text"]))
        (w / "scan").write_bytes(pdf_bytes(["no suffix, found by its magic bytes"]))
        make_docx(w / "report.docx")
        make_pptx(w / "deck.pptx")
        make_xlsx(w / "book.xlsx")
        make_epub(w / "novel.epub")
        make_notebook(w / "analysis.ipynb")
        (w / "page.html").write_text(
            "<html><head><title>T</title></head><body><h2>Hi</h2><p>x &amp; y</p></body></html>"
        )
        (w / "loop.pdf").write_bytes(pdf_bytes(["looping"], loop_kids=True))
        (w / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >>\ntrailer garbage")
        r = await read(
            host,
            "two.pdf",
            "two.pdf:2",
            "two.pdf:3",
            "scan",
            "report.docx",
            "deck.pptx:1",
            "deck.pptx:3",
            "book.xlsx",
            "book.xlsx:Notes",
            "novel.epub:2",
            "analysis.ipynb",
            "analysis.ipynb:raw",
            "page.html",
            "page.html:md",
            "report.docx:inner",
            "loop.pdf",
            "broken.pdf",
        )
        host.assert_protocol_lines()
    assert r[0]["text"] == (
        "[two.pdf] (PDF, 2 pages)\n--- page 1 ---\nHello page one\nsecond line (with parens)\n\n"
        "--- page 2 ---\nPage two text"
    )
    assert r[1]["text"] == "[two.pdf] (PDF, 2 pages)\n--- page 2 ---\nPage two text"
    assert r[2] == {"text": "Cannot read two.pdf: it has 2 pages; 3 is past the end", "images": [], "isError": True}
    assert r[3]["text"] == "[scan] (PDF, 1 pages)\n--- page 1 ---\nno suffix, found by its magic bytes"
    assert r[4]["text"] == (
        "[report.docx] (Word document)\n# Quarterly report\n\nRevenue grew in every region.\n\n## Details\n\n"
        "- North\n- South\n\n| Region | Revenue |\n| --- | --- |\n| North | 120 |\n\nThe end."
    )
    assert r[5]["text"] == (
        "[deck.pptx] (PowerPoint presentation, 3 slides)\n--- slide 1 ---\n# Welcome\nFirst slide body\n"
        "Notes: Say hello"
    )
    assert r[6]["text"] == (
        "[deck.pptx] (PowerPoint presentation, 3 slides)\n--- slide 3 ---\n# Numbers\n| k | v |\n| --- | --- |\n"
        "| pages | 3 |"
    )
    assert r[7]["text"] == (
        "[book.xlsx] (Excel workbook, 2 sheets)\n## Sheet Sales\n| Region | Q1 | Q2 |  |\n| --- | --- | --- | --- |\n"
        "| North | 10 | 12 |  |\n| South | 7 |  |  |\n\n## Sheet Notes\n| checked by | ann |\n| --- | --- |"
    )
    assert (
        r[8]["text"]
        == "[book.xlsx:Notes] (Excel workbook, 2 sheets)\n## Sheet Notes\n| checked by | ann |\n| --- | --- |"
    )
    assert r[9]["text"] == (
        "[novel.epub] (EPUB book, 2 chapters)\n--- chapter 2: OEBPS/text/one.xhtml ---\n# Later chapter\n\n"
        "The *end* of it."
    )
    notebook = r[10]["text"]
    assert notebook.startswith("[analysis.ipynb] (Jupyter notebook, 4 cells)\n--- cell 1 [markdown] ---\n# Analysis\n")
    assert "--- cell 2 [code, In [1]] ---\n```python\nx = 40 + 2\nprint(x)\n```\nOutput:\n42" in notebook
    assert "Output:\nZeroDivisionError: division by zero" in notebook and "[image/png output]" in notebook
    assert r[11]["text"].startswith('[analysis.ipynb]\n{"nbformat": 4')
    assert r[12]["text"].startswith("[page.html]\n<html><head>")  # source, editable
    assert r[13]["text"] == "[page.html] (HTML page)\n# T\n\n## Hi\n\nx & y"
    assert r[14]["isError"] and r[14]["text"] == "report.docx is a Word document: cannot select 'inner' in it"
    assert r[15]["isError"] and r[15]["text"].startswith("Cannot read loop.pdf: not a readable PDF")
    assert r[16]["isError"] and r[16]["text"].startswith("Cannot read broken.pdf: not a readable PDF")


async def test_slow_pdf_stops_at_the_time_bound(tmp_path: Path) -> None:
    async with start_host(base=tmp_path / "h", settings={"read": {"timeoutSeconds": 1}}) as host:
        (host.cwd / "huge.pdf").write_bytes(pdf_bytes([f"page {i}" for i in range(40_000)]))
        started = time.monotonic()
        r = await read(host, "huge.pdf")
        assert time.monotonic() - started < 20
        assert (await host.client.get_state())["isStreaming"] is False
    assert r[0]["isError"] and r[0]["text"] in (
        "Reading huge.pdf took longer than 1 s; stopped",
        "Reading huge.pdf took longer than 2 s of CPU; stopped",
    )


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                pass
    return out


async def test_abort_kills_the_conversion(tmp_path: Path) -> None:
    async with start_host(base=tmp_path / "h") as host:
        (host.cwd / "huge.pdf").write_bytes(pdf_bytes([f"page {i}" for i in range(40_000)]))
        pid = host.client.proc.pid  # type: ignore[union-attr]
        seen: list[int] = []
        end, answered = await abort_while_reading(host, "huge.pdf", lambda: bool(seen.extend(_children(pid)) or seen))
        assert seen, "no conversion child process"
        assert answered < 5  # the read alone would take far longer; a loaded machine adds seconds
        assert end["isError"] and end["result"]["content"][0]["text"] == "Reading huge.pdf aborted"
        await asyncio.sleep(0.3)
        assert _children(pid) == []


async def test_get_tools_summary_and_a_device_file(tmp_path: Path) -> None:
    async with start_host(base=tmp_path / "h") as host:
        tools = await host.client.call("get_tools")
        r = await model_sees(host, ("read", {"path": os.devnull}))
    read_tool = next(t for t in tools["tools"] if t["name"] == "read")
    assert read_tool["summary"] == (
        "Read files, directories, archives, SQLite databases, internal resources, images, documents, and URLs "
        "through one path string."
    )
    assert r[0]["isError"] and r[0]["text"] == "Not a regular file: /dev/null"


async def test_a_missing_library_names_the_extra_and_the_project_cannot_shadow_one(tmp_path: Path) -> None:
    fake = tmp_path / "fake"
    (fake / "pypdfium2").mkdir(parents=True)
    (fake / "pypdfium2" / "__init__.py").write_text("raise ImportError('not installed here')\n")
    async with start_host(base=tmp_path / "h", env={"PYTHONPATH": str(fake)}) as host:
        (host.cwd / "two.pdf").write_bytes(pdf_bytes(["one", "two"]))
        make_docx(host.cwd / "report.docx")
        (host.cwd / "docx.py").write_text("raise SystemExit('the project shadowed python-docx')\n")
        r = await read(host, "two.pdf", "report.docx")
    assert r[0]["isError"]
    assert r[0]["text"] == (
        "Cannot read two.pdf: reading PDFs needs pypdfium2: pip install pypdfium2, or the documents extra "
        "(in the atomic-host checkout: pip install -e '.[documents]')"
    )
    assert r[1]["text"].startswith("[report.docx] (Word document)\n# Quarterly report")


async def test_documents_inside_an_archive(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import zipfile

    tmp_root = tmp_path / "tmp"
    tmp_root.mkdir()
    async with start_host(base=tmp_path / "h", env={"TMPDIR": str(tmp_root)}) as host:
        make_docx(host.cwd / "report.docx")
        with zipfile.ZipFile(host.cwd / "docs.zip", "w") as zf:
            zf.writestr("pdfs/two.pdf", pdf_bytes(["one", "the second page"]))
            zf.write(host.cwd / "report.docx", "report.docx")
        r = await read(host, "docs.zip:pdfs/two.pdf:2", "docs.zip:report.docx")
    assert r[0]["text"] == "[docs.zip:pdfs/two.pdf] (PDF, 2 pages)\n--- page 2 ---\nthe second page"
    assert r[1]["text"].startswith("[docs.zip:report.docx] (Word document)\n# Quarterly report")
    assert not [p for p in tmp_root.rglob("atomic-read-*")]  # the private copies are gone

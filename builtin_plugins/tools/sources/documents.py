"""Documents to text: PDF, DOCX, PPTX, XLSX, EPUB, Jupyter notebooks, HTML (to markdown).

The host side (:func:`document_kind`, :func:`convert`) picks the kind and runs the conversion in a
child process (``_worker``, with the host's packages, an address-space cap and a CPU-time cap),
killed on abort or when the read's deadline passes: a PDF whose page tree loops, or a
decompression bomb inside an Office file, ends there. The child side (:func:`convert_file`)
imports the libraries, each only when its kind is read:

- PDF: pypdfium2 (PDFium, as in Chrome: text in reading order, fast; 10 MB wheel);
- DOCX: python-docx; PPTX: python-pptx; XLSX: openpyxl (read-only, cached values);
- EPUB: the standard library's zipfile (container.xml → OPF spine) + HTML → markdown;
- notebooks: plain JSON (cells and their outputs); HTML: BeautifulSoup + markdownify.

The libraries are the ``documents`` extra; a missing one gives a message naming the extra.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from atomic_host.contract.tools import ToolContext, ToolResult
    from builtin_plugins.tools.sources.selector import Located

EXTRA_HINT = "the documents extra (in the atomic-host checkout: pip install -e '.[documents]')"
MEMORY_LIMIT = 2 * 1024 * 1024 * 1024
MAX_TEXT_CHARS = 20_000_000
"""A conversion stops adding units past this (the model sees at most 50 KiB per read anyway)."""
MAX_SHEET_ROWS = 10_000
_SUFFIXES = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".pptx": "pptx",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".epub": "epub",
    ".ipynb": "ipynb",
}
_HTML_SUFFIXES = (".html", ".htm", ".xhtml")
_NEEDS = {
    "pdf": ("pypdfium2", "pypdfium2"),
    "docx": ("docx", "python-docx"),
    "pptx": ("pptx", "python-pptx"),
    "xlsx": ("openpyxl", "openpyxl"),
    "epub": ("markdownify", "markdownify"),
    "html": ("markdownify", "markdownify"),
}
UNIT_NAMES = {"pdf": "page", "pptx": "slide", "epub": "chapter", "ipynb": "cell", "xlsx": "sheet"}
"""Kinds whose ``:A-B`` selector picks these units instead of lines."""
KIND_NAMES = {
    "pdf": "PDF",
    "docx": "Word document",
    "pptx": "PowerPoint presentation",
    "xlsx": "Excel workbook",
    "epub": "EPUB book",
    "ipynb": "Jupyter notebook",
    "html": "HTML page",
}


@dataclass
class DocumentJob:
    """A document to convert in the child process, and which part of it to show."""

    path: Path
    label: str
    kind: str
    located: Located
    offset: int | None = None
    limit: int | None = None
    temporary: bool = False
    """``path`` is a private copy (an archive member, a download) to delete once converted."""


def document_kind(name: str, head: bytes, selector: str | None) -> str | None:
    """The kind of document ``name`` is (None: not one, or ``:raw`` asked for its own text)."""
    lower = name.lower()
    if selector == "md" and lower.endswith(_HTML_SUFFIXES):
        return "html"
    if selector == "raw":
        return None
    kind = _SUFFIXES.get(os.path.splitext(lower)[1])
    if kind is None and head.startswith(b"%PDF-"):
        kind = "pdf"
    return kind


async def convert(job: DocumentJob, ctx: ToolContext, seconds: float) -> ToolResult:
    """Convert ``job`` in a child process and present the part its selector asks for (a temporary
    copy is deleted after)."""
    try:
        return await _convert(job, ctx, seconds)
    finally:
        if job.temporary:
            with contextlib.suppress(OSError):
                job.path.unlink()


def private_copy(ctx: ToolContext, data: bytes, suffix: str, what: str) -> Path:
    """``data`` in a new 0600 file of the session's private temp dir (to convert it like a local file)."""
    from pathlib import Path

    from atomic_host.contract.tools import ToolError
    from atomic_host.kit.tempdirs import new_private_file

    directory = ctx.temp_dir()
    created = new_private_file(Path(directory), "atomic-read-", suffix) if directory else None
    if created is None:
        raise ToolError(f"{what} is a document, and the private temp dir to convert it in was refused")
    path, fd = created
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    return path


async def _convert(job: DocumentJob, ctx: ToolContext, seconds: float) -> ToolResult:
    from atomic_host.contract.tools import ToolError
    from builtin_plugins.tools.sources.text import select_lines

    units = UNIT_NAMES.get(job.kind)
    ranges = job.located.ranges if units and job.kind != "xlsx" else None
    if ranges:  # doc.pdf:2 is page 2 (a text file's :2 reads from line 2 on)
        ranges = [(first, first if last is None else last) for first, last in ranges]
    request = {
        "kind": job.kind,
        "path": str(job.path),
        "ranges": ranges,
        "sheet": job.located.inner if job.kind == "xlsx" else None,
    }
    if job.located.inner is not None and job.kind != "xlsx":
        raise ToolError(f"{job.label} is a {KIND_NAMES[job.kind]}: cannot select {job.located.inner!r} in it")
    result = await _in_child(ctx, request, job.label, seconds)
    located = job.located
    if ranges:  # the units are picked: offset/limit still page through their lines
        located = replace(located, selector=None)
    note = f"({KIND_NAMES[job.kind]}" + (f", {result['total']} {units}s)" if units else ")")
    text = result["text"]
    details = {"path": str(job.path), "document": job.kind, **({f"{units}s": result["total"]} if units else {})}
    label = job.label + (f":{job.located.inner}" if job.located.inner else "")
    return await ctx.run_blocking(
        lambda: select_lines(label, text, located, job.offset, job.limit, details, note), label="Read"
    )


async def convert_html(ctx: ToolContext, html: str, label: str, seconds: float) -> str:
    """``html`` as markdown (with its title as a heading), converted in the child process."""
    return (await _in_child(ctx, {"kind": "html", "data": html, "path": None}, label, seconds))["text"]


async def _in_child(ctx: ToolContext, request: dict[str, Any], label: str, seconds: float) -> dict[str, Any]:
    """:func:`convert_file` in the child process (bounded, killed on abort); its error as a ToolError."""
    from atomic_host.contract.tools import ToolError
    from builtin_plugins.tools._worker import run_in_worker

    result = await run_in_worker(
        ctx,
        "builtin_plugins.tools.sources.documents",
        "convert_file",
        request,
        label=f"Reading {label}",
        timeout=seconds,
        site=True,
        memory=MEMORY_LIMIT,
    )
    if "error" in result:
        raise ToolError(f"Cannot read {label}: {result['error']}")
    return result


# --- the child process side (standard library + the document libraries) ---


def convert_file(request: dict[str, Any]) -> dict[str, Any]:
    """``{"text", "total"}`` for ``request`` (kind, path, ranges, sheet), or ``{"error"}``."""
    kind = request["kind"]
    module, package = _NEEDS.get(kind, (None, None))
    try:
        if module:
            __import__(module)
    except ImportError:
        return {"error": f"reading {KIND_NAMES[kind]}s needs {package}: pip install {package}, or {EXTRA_HINT}"}
    try:
        units, total = _CONVERTERS[kind](request)
    except DocumentError as e:
        return {"error": str(e)}
    except Exception as e:  # a broken file: each library raises its own types
        return {"error": f"not a readable {KIND_NAMES[kind]} ({type(e).__name__}: {e})"}
    return {"text": "\n\n".join(units), "total": total}


class DocumentError(Exception):
    pass


def _wanted(request: dict[str, Any], total: int) -> list[int]:
    """0-based indexes of the units the request's ranges pick (all when it has none)."""
    ranges = request.get("ranges")
    if not ranges:
        return list(range(total))
    picked: list[int] = []
    for first, last in ranges:
        assert first is not None
        stop = total if last is None else min(last, total)
        if first > total:
            raise DocumentError(f"it has {total} {UNIT_NAMES[request['kind']]}s; {first} is past the end")
        picked.extend(range(first - 1, stop))
    return picked


def _bounded(units: list[str]) -> list[str]:
    size, out = 0, []
    for unit in units:
        size += len(unit)
        out.append(unit)
        if size > MAX_TEXT_CHARS:
            out.append(f"[Stopped after {MAX_TEXT_CHARS:,} characters.]")
            break
    return out


def _pdf(request: dict[str, Any]) -> tuple[list[str], int]:
    import pypdfium2 as pdfium

    try:
        doc = pdfium.PdfDocument(request["path"])
    except pdfium.PdfiumError as e:
        raise DocumentError(f"not a readable PDF ({e})") from None
    total = len(doc)
    units = []
    size = 0
    for i in _wanted(request, total):
        page = doc[i]
        textpage = page.get_textpage()
        # PDFium marks a hyphen that joins a word broken over two lines with U+FFFE
        text = textpage.get_text_range().replace("\r\n", "\n").replace("\r", "\n").replace("\ufffe", "")
        units.append(f"--- page {i + 1} ---\n{text.strip()}")
        size += len(text)
        if size > MAX_TEXT_CHARS:
            break
    return _bounded(units), total


def _docx(request: dict[str, Any]) -> tuple[list[str], int]:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = docx.Document(request["path"])
    out: list[str] = []  # blocks, joined by blank lines; a list's items stay together
    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            text = block.text.strip()
            if not text:
                continue
            style = (block.style.name if block.style is not None else "") or ""
            m = re.match(r"Heading (\d)", style)
            if m:
                out.append("#" * int(m.group(1)) + " " + text)
            elif style == "Title":
                out.append("# " + text)
            elif style.startswith("List"):
                if out and out[-1].startswith("- "):
                    out[-1] += "\n- " + text
                else:
                    out.append("- " + text)
            else:
                out.append(text)
        elif isinstance(block, Table):
            out.append(_markdown_table([[cell.text for cell in row.cells] for row in block.rows]))
    return ["\n\n".join(out)], 1


def _markdown_table(rows: list[list[Any]]) -> str:
    from builtin_plugins.tools.sources.sqlite import table_text

    cells = [["" if v is None else v for v in row] for row in rows]  # an empty cell, not SQL's NULL
    return table_text(cells[0], cells[1:]) if cells else ""


def _pptx(request: dict[str, Any]) -> tuple[list[str], int]:
    from pptx import Presentation

    slides = list(Presentation(request["path"]).slides)
    units = []
    for i in _wanted(request, len(slides)):
        slide = slides[i]
        parts = [f"--- slide {i + 1} ---"]
        title = slide.shapes.title
        if title is not None and title.text.strip():
            parts.append("# " + title.text.strip())
        for shape in slide.shapes:
            if title is not None and shape.shape_id == title.shape_id:
                continue
            if shape.has_text_frame and shape.text_frame.text.strip():
                parts.append(shape.text_frame.text.strip())
            elif getattr(shape, "has_table", False) and shape.has_table:
                parts.append(_markdown_table([[c.text for c in row.cells] for row in shape.table.rows]))
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = slide.notes_slide.notes_text_frame.text.strip()
            if notes:
                parts.append("Notes: " + notes)
        units.append("\n".join(parts))
    return _bounded(units), len(slides)


def _xlsx(request: dict[str, Any]) -> tuple[list[str], int]:
    import openpyxl

    book = openpyxl.load_workbook(request["path"], read_only=True, data_only=True)
    try:
        names = book.sheetnames
        wanted = request.get("sheet")
        if wanted is not None and wanted not in names:
            raise DocumentError(f"no sheet {wanted!r}; sheets: {', '.join(names)}")
        units = []
        for name in [wanted] if wanted is not None else names:
            rows = []
            more = False
            for row in book[name].iter_rows(values_only=True):
                if len(rows) >= MAX_SHEET_ROWS:
                    more = True
                    break
                rows.append(list(row))
            while rows and all(v is None for v in rows[-1]):
                rows.pop()
            body = _markdown_table(rows) if rows else "(empty sheet)"
            if more:
                body += f"\n[First {MAX_SHEET_ROWS} rows only.]"
            units.append(f"## Sheet {name}\n{body}")
    finally:
        book.close()
    return _bounded(units), len(names)


def html_to_markdown(html: str | bytes) -> tuple[str, str | None]:
    """``(markdown, title)``: scripts, styles and other non-content elements dropped."""
    from bs4 import BeautifulSoup, Comment, Declaration, Doctype, ProcessingInstruction
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else None
    for tag in soup(["script", "style", "noscript", "template", "iframe", "svg", "head"]):
        tag.decompose()
    for node in soup.find_all(string=lambda s: isinstance(s, Comment | Declaration | Doctype | ProcessingInstruction)):
        node.extract()
    text = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text, title


def _html(request: dict[str, Any]) -> tuple[list[str], int]:
    if request.get("data") is not None:
        text, title = html_to_markdown(request["data"])
    else:
        with open(request["path"], "rb") as f:
            text, title = html_to_markdown(f.read())
    return [f"# {title}\n\n{text}" if title else text], 1


def _epub(request: dict[str, Any]) -> tuple[list[str], int]:
    import posixpath
    import zipfile
    from xml.etree import ElementTree

    with zipfile.ZipFile(request["path"]) as zf:
        container = ElementTree.fromstring(zf.read("META-INF/container.xml"))
        rootfile = next((e.get("full-path") for e in container.iter() if e.tag.endswith("rootfile")), None)
        if not rootfile:
            raise DocumentError("no rootfile in META-INF/container.xml")
        opf = ElementTree.fromstring(zf.read(rootfile))
        base = posixpath.dirname(rootfile)
        manifest = {e.get("id"): e.get("href") for e in opf.iter() if e.tag.endswith("}item") or e.tag == "item"}
        spine = [e.get("idref") for e in opf.iter() if e.tag.endswith("itemref")]
        hrefs = [posixpath.normpath(posixpath.join(base, manifest[i])) for i in spine if manifest.get(i)]
        units = []
        for i in _wanted(request, len(hrefs)):
            text, _title = html_to_markdown(zf.read(hrefs[i]))
            units.append(f"--- chapter {i + 1}: {hrefs[i]} ---\n{text}")
    return _bounded(units), len(hrefs)


def _ipynb(request: dict[str, Any]) -> tuple[list[str], int]:
    with open(request["path"], "rb") as f:
        try:
            nb = json.loads(f.read())
        except ValueError as e:
            raise DocumentError(f"not valid notebook JSON ({e})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise DocumentError("no cells list: not a Jupyter notebook")
    language = (nb.get("metadata") or {}).get("kernelspec", {}).get("language") or "python"
    cells = nb["cells"]
    units = []
    for i in _wanted(request, len(cells)):
        cell = cells[i] if isinstance(cells[i], dict) else {}
        kind = cell.get("cell_type", "?")
        source = _joined(cell.get("source"))
        if kind == "code":
            count = cell.get("execution_count")
            head = f"--- cell {i + 1} [code" + (f", In [{count}]" if count else "") + "] ---"
            parts = [head, f"```{language}\n{source}\n```"]
            outputs = [_output(o) for o in cell.get("outputs") or [] if isinstance(o, dict)]
            outputs = [o for o in outputs if o]
            if outputs:
                parts.append("Output:\n" + "\n".join(outputs))
        else:
            parts = [f"--- cell {i + 1} [{kind}] ---", source]
        units.append("\n".join(parts))
    return _bounded(units), len(cells)


def _joined(value: Any) -> str:
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return "" if value is None else str(value)


def _output(out: dict[str, Any]) -> str:
    kind = out.get("output_type")
    if kind == "stream":
        return _joined(out.get("text")).rstrip("\n")
    if kind == "error":
        return f"{out.get('ename')}: {out.get('evalue')}"
    data = out.get("data") or {}
    if "text/plain" in data:
        return _joined(data["text/plain"]).rstrip("\n")
    others = [k for k in data if not k.startswith("text/")]
    return f"[{', '.join(others)} output]" if others else ""


_CONVERTERS = {
    "pdf": _pdf,
    "docx": _docx,
    "pptx": _pptx,
    "xlsx": _xlsx,
    "epub": _epub,
    "ipynb": _ipynb,
    "html": _html,
}

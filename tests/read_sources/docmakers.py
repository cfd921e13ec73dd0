"""Real documents made by the tests: PDFs written byte by byte (zlib-compressed content streams),
Office files with their own libraries, an EPUB with zipfile, a notebook as JSON."""

from __future__ import annotations

import json
import zipfile
import zlib
from pathlib import Path


def pdf_bytes(pages: list[str], *, compress: bool = True, loop_kids: bool = False) -> bytes:
    """A PDF with one page per string (Helvetica, 12 pt, one line per ``\\n``).

    ``loop_kids``: the page tree's Kids array also names the tree itself (a cycle, as hostile files have).
    """
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in below
    pages_obj = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    kids = []
    for text in pages:
        ops = [b"BT /F1 12 Tf 72 720 Td 14 TL"]
        for line in text.split("\n"):
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode("latin-1")
            ops.append(b"(" + escaped + b") Tj T*")
        ops.append(b"ET")
        stream = b"\n".join(ops)
        if compress:
            data = zlib.compress(stream)
            content = add(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream")
        else:
            content = add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        kids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (pages_obj, content, font)
            )
        )
    refs = [b"%d 0 R" % k for k in kids] + ([b"%d 0 R" % pages_obj] if loop_kids else [])
    count = len(kids) + (1 if loop_kids else 0)
    objects[pages_obj - 1] = b"<< /Type /Pages /Kids [" + b" ".join(refs) + b"] /Count %d >>" % count
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_obj
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, catalog, xref)
    return bytes(out)


def make_docx(path: Path) -> None:
    import docx

    d = docx.Document()
    d.add_heading("Quarterly report", level=1)
    d.add_paragraph("Revenue grew in every region.")
    d.add_heading("Details", level=2)
    d.add_paragraph("North", style="List Bullet")
    d.add_paragraph("South", style="List Bullet")
    table = d.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Region", "Revenue"
    table.cell(1, 0).text, table.cell(1, 1).text = "North", "120"
    d.add_paragraph("The end.")
    d.save(str(path))


def make_pptx(path: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    p = Presentation()
    for title, body, notes in (("Welcome", "First slide body", "Say hello"), ("Plan", "Ship the reader", "")):
        slide = p.slides.add_slide(p.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    slide = p.slides.add_slide(p.slide_layouts[5])
    slide.shapes.title.text = "Numbers"
    table = slide.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
    table.cell(0, 0).text, table.cell(0, 1).text = "k", "v"
    table.cell(1, 0).text, table.cell(1, 1).text = "pages", "3"
    p.save(str(path))


def make_xlsx(path: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Sales"
    sheet.append(["Region", "Q1", "Q2"])
    sheet.append(["North", 10, 12])
    sheet.append(["South", 7, None])
    sheet["D2"] = "=B2+C2"
    other = book.create_sheet("Notes")
    other.append(["checked by", "ann"])
    book.save(str(path))


def make_epub(path: Path) -> None:
    chapter = (
        '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>{t}</title>'
        "</head><body><h1>{t}</h1><p>{p}</p></body></html>"
    )
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        zf.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        zf.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            "<metadata/><manifest>"
            '<item id="c1" href="text/one.xhtml" media-type="application/xhtml+xml"/>'
            '<item id="c2" href="text/two.xhtml" media-type="application/xhtml+xml"/>'
            '</manifest><spine><itemref idref="c2"/><itemref idref="c1"/></spine></package>',
        )
        zf.writestr("OEBPS/text/one.xhtml", chapter.format(t="Later chapter", p="The <em>end</em> of it."))
        zf.writestr("OEBPS/text/two.xhtml", chapter.format(t="Opening", p="It was a dark night."))


def make_notebook(path: Path) -> None:
    nb = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "language": "python"}},
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Analysis\n", "Load the data."]},
            {
                "cell_type": "code",
                "execution_count": 1,
                "metadata": {},
                "source": ["x = 40 + 2\n", "print(x)"],
                "outputs": [{"output_type": "stream", "name": "stdout", "text": ["42\n"]}],
            },
            {
                "cell_type": "code",
                "execution_count": 2,
                "metadata": {},
                "source": "1 / 0",
                "outputs": [
                    {
                        "output_type": "error",
                        "ename": "ZeroDivisionError",
                        "evalue": "division by zero",
                        "traceback": [],
                    }
                ],
            },
            {
                "cell_type": "code",
                "execution_count": 3,
                "metadata": {},
                "source": "plot()",
                "outputs": [{"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo="}, "metadata": {}}],
            },
        ],
    }
    path.write_text(json.dumps(nb))

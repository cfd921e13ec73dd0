"""The path-string grammar of ``read``: which source, which part of it, which lines/pages/rows.

::

    scheme://rest                      a URL (http, https) or an internal resource (skill, artifact)
    FILE                               the file (or directory) as it is
    FILE(:|/)INNER                     an archive member or folder, a SQLite table, a workbook sheet
    FILE?q=QUERY                       a read-only SQL query on a SQLite database (QUERY to the end)
    ...:SEL                            SEL = raw | md | N | A-B | A+C, comma-separated (A-B,C-D)

A file whose whole name matches is always read as it is (a file named ``notes:3`` exists: that
file). Otherwise a trailing ``:SEL`` is split off, then the longest prefix ending at a ``:`` or
``/`` that names an existing regular file is the file and the rest its ``INNER`` part. ``SEL``
selects lines of text, pages of a PDF, slides of a presentation, rows of a table; ``raw`` is
the file's own text (a notebook's JSON), ``md`` an HTML file rendered as markdown.

Standard library only, and pure: :func:`locate` asks a ``kind_of`` callable what exists, so the
grammar can be tested without a file system. Work is linear in the length of the string: only
prefixes up to :data:`MAX_FILE_CHARS` characters are looked up.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

MAX_FILE_CHARS = 4096
"""No file name is longer (PATH_MAX): prefixes beyond it are not looked up."""
MAX_RANGES = 64
_NUM = r"\d{1,9}"
_RANGE = rf"{_NUM}(?:[-+]{_NUM})?"
_TAIL = re.compile(rf"(?s)^(?P<base>.+):(?P<sel>raw|md|{_RANGE}(?:,{_RANGE}){{0,{MAX_RANGES - 1}}})$")
_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{0,31})://(?P<rest>.*)$", re.S)

Range = tuple[int, int | None]
"""(first, last) 1-based and inclusive; last None = to the end."""


class SelectorError(ValueError):
    """A path string that names no source, or a selector that does not fit it."""


@dataclass(frozen=True)
class Located:
    """A local path string split into its parts (each as written; resolving is the caller's)."""

    file: str
    inner: str | None = None
    """The part after the file: a member path, a table or sheet name (None: the file itself)."""
    query: str | None = None
    """The SQL after ``?q=``."""
    selector: str | None = None
    """``raw``, ``md`` or the range text."""

    @property
    def ranges(self) -> list[Range] | None:
        return parse_ranges(self.selector) if self.selector not in (None, "raw", "md") else None


def scheme_of(text: str) -> tuple[str, str] | None:
    """``(scheme lower-cased, rest)`` for ``scheme://rest``, else None."""
    m = _SCHEME.match(text)
    return (m["scheme"].lower(), m["rest"]) if m else None


def parse_ranges(sel: str) -> list[Range]:
    """``5``, ``5-9``, ``5+3``, ``1-2,40-45`` → ranges; raises :class:`SelectorError` when reversed."""
    ranges: list[Range] = []
    for part in sel.split(","):
        if "+" in part:
            a, c = (int(x) for x in part.split("+"))
            a = max(a, 1)
            ranges.append((a, a + max(c, 1) - 1))
        elif "-" in part:
            a, b = (int(x) for x in part.split("-"))
            if b < a:
                raise SelectorError(f"Invalid range {part}: end before start")
            ranges.append((max(a, 1), b))
        else:
            ranges.append((max(int(part), 1), None))
    return ranges


def split_tail(text: str) -> tuple[str, str | None]:
    """``(base, selector)``: a trailing ``:raw``/``:md``/``:A-B`` split off, or ``(text, None)``."""
    m = _TAIL.match(text)
    return (m["base"], m["sel"]) if m else (text, None)


def locate(text: str, kind_of: Callable[[str], str | None]) -> Located | None:
    """Split a local path string; ``kind_of(path)`` is ``"file"``, ``"dir"`` or None (missing).

    None when no prefix names an existing file or directory.
    """
    if kind_of(text):
        return Located(text)
    base, query = text, None
    q = text.find("?q=")
    if q > 0:
        base, query = text[:q], text[q + 3 :]
    selector = None
    if query is None:
        base, selector = split_tail(base)
        if selector is not None and kind_of(base):
            return Located(base, None, None, selector)
    elif kind_of(base) == "file":
        return Located(base, None, query, None)
    limit = min(len(base), MAX_FILE_CHARS + 1)
    for i in range(limit - 1, 0, -1):
        if base[i] in ":/" and kind_of(base[:i]) == "file":
            return Located(base[:i], base[i + 1 :], query, selector)
    return None

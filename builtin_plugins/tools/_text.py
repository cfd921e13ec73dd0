"""Text helpers shared by the file tools and the search worker (standard library only)."""

from __future__ import annotations


def display_name(name: str) -> str:
    """A file name or path as text for the model: bytes that are not UTF-8 shown as ``\\xNN``.

    ``os`` hands such names over as lone surrogates (``surrogateescape``), which no JSON encoder
    to UTF-8 accepts: one such name in a tool result would break every later provider request.
    """
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def looks_binary(sample: bytes) -> bool:
    """A NUL byte, or text that is not UTF-8 and mostly non-printable, means binary."""
    if b"\x00" in sample:
        return True
    try:
        sample.decode("utf-8")
        return False
    except UnicodeDecodeError as e:
        if e.start >= len(sample) - 4:  # a character cut by the sample boundary
            return False
    printable = sum(1 for b in sample if b >= 32 or b in (9, 10, 13))
    return printable < len(sample) * 0.9


def decode_text(data: bytes) -> str | None:
    """File bytes as text for searching, or None for a binary file (as ripgrep decides).

    A UTF-16 byte order mark means UTF-16 text; a UTF-8 one is dropped; any other NUL byte,
    or mostly non-printable bytes at the start, mean binary. Bad UTF-8 becomes U+FFFD.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            return None
    if b"\x00" in data or looks_binary(data[:8192]):
        return None
    text = data.decode("utf-8", errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def split_lines(text: str) -> list[str]:
    """Lines as grep and ripgrep count them: split on ``\\n`` only, one trailing ``\\r`` dropped.

    (``str.splitlines`` also splits on form feeds, ``\\x1c``-``\\x1e``, U+2028…, which shifts every
    later line number.)
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    return lines

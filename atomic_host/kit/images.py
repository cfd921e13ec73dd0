"""Images for a model: checked (real base64, a real picture of a supported type) and shrunk to fit.

Shared by the ``read`` tool and the host's prompt path (``images`` of prompt/steer/follow_up). The
checks use the standard library (magic bytes and the size fields of each format's header);
shrinking (``images.autoResize``, default on: at most 2000×2000 pixels and :data:`MAX_BYTES`) uses
Pillow, imported on first use, from the ``images`` (or ``documents``) extra. Without Pillow an
image is sent as it is, and one over the byte limit is refused with a message naming the extra.
"""

from __future__ import annotations

import base64
import binascii
import io
import struct

MAX_SIDE = 2000
MAX_BYTES = 3_750_000
"""Decoded bytes: 5 MB once base64-encoded, the smallest per-image limit of the providers."""
MAX_INPUT_BYTES = 50 * 1024 * 1024
"""Pictures bigger than this are refused before decoding (a 30 MB screenshot is fine)."""
SUPPORTED = ("image/png", "image/jpeg", "image/gif", "image/webp")
PILLOW_HINT = "pip install pillow (in the atomic-host checkout: pip install -e '.[images]')"


class ImageProblem(ValueError):
    """An image that cannot go to a model; the message says why."""


def sniff_mime(head: bytes) -> str | None:
    """MIME type from magic bytes for the image formats models accept."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return w, h
        i += 2 + length
    return None


def dimensions(data: bytes, mime: str) -> tuple[int, int] | None:
    """``(width, height)`` read from the header, or None when the header is broken."""
    try:
        if mime == "image/png" and data[12:16] == b"IHDR":
            w, h = struct.unpack(">II", data[16:24])
        elif mime == "image/gif":
            w, h = struct.unpack("<HH", data[6:10])
        elif mime == "image/jpeg":
            size = _jpeg_size(data)
            if size is None:
                return None
            w, h = size
        elif mime == "image/webp":
            chunk = data[12:16]
            if chunk == b"VP8 ":
                w, h = (v & 0x3FFF for v in struct.unpack("<HH", data[26:30]))
            elif chunk == b"VP8L":
                bits = int.from_bytes(data[21:25], "little")
                w, h = (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
            elif chunk == b"VP8X":
                w = int.from_bytes(data[24:27], "little") + 1
                h = int.from_bytes(data[27:30], "little") + 1
            else:
                return None
        else:
            return None
    except struct.error:
        return None
    return (w, h) if w > 0 and h > 0 else None


def decode_base64(data: object) -> bytes:
    """Strictly decoded base64 (whitespace allowed), or :class:`ImageProblem`."""
    if not isinstance(data, str) or not data:
        raise ImageProblem("image data must be a non-empty base64 string")
    if len(data) > MAX_INPUT_BYTES * 4 // 3 + 4:
        raise ImageProblem(f"image data is over {MAX_INPUT_BYTES // (1024 * 1024)} MiB")
    try:
        return base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError) as e:
        raise ImageProblem(f"image data is not valid base64 ({e})") from None


def check(data: bytes, declared: str | None = None) -> tuple[str, tuple[int, int]]:
    """The real MIME type (whatever ``declared`` says) and size of ``data``, or :class:`ImageProblem`
    (not an image of a supported type, or a broken header)."""
    mime = sniff_mime(data[:16])
    if mime is None:
        raise ImageProblem(f"not a supported image (PNG, JPEG, GIF or WebP){_declared(declared)}")
    size = dimensions(data, mime)
    if size is None:
        raise ImageProblem(f"broken {mime} image: its header cannot be read")
    return mime, size


def _declared(declared: str | None) -> str:
    return f"; declared {declared}" if declared else ""


def fit(data: bytes, mime: str, size: tuple[int, int], *, auto_resize: bool = True) -> tuple[bytes, str, str | None]:
    """``(data, mime, note)``: ``data`` as is when it fits, else shrunk with Pillow.

    ``note`` says what was done (``resized from 4000x3000 to 2000x1500``), or None. Raises
    :class:`ImageProblem` for an image Pillow cannot decode, or one over :data:`MAX_BYTES` when
    Pillow is missing. With ``auto_resize`` off an image that decodes is returned as it is.
    """
    w, h = size
    try:
        from PIL import Image
    except ImportError:
        Image = None
    if Image is not None:
        try:  # a whole decode when shrinking; else verify (chunk checksums, structure), much cheaper
            with Image.open(io.BytesIO(data)) as img:
                img.verify()
        except Exception as e:  # Pillow raises many types for broken data (OSError, SyntaxError, ...)
            raise ImageProblem(f"broken {mime} image: {e}") from None
    if w <= MAX_SIDE and h <= MAX_SIDE and len(data) <= MAX_BYTES:
        return data, mime, None
    if not auto_resize:  # the user's choice: sent as it is
        return data, mime, None
    if Image is None:
        if len(data) > MAX_BYTES:
            raise ImageProblem(f"image is {len(data):,} bytes, over {MAX_BYTES:,}; to shrink it, {PILLOW_HINT}")
        return data, mime, None
    try:
        with Image.open(io.BytesIO(data)) as img:
            img.load()
            frame = img.convert("RGBA" if img.mode in ("RGBA", "LA", "P") else "RGB")
    except Exception as e:  # DecompressionBombError, truncated data...
        raise ImageProblem(f"broken {mime} image: {e}") from None
    frame.thumbnail((MAX_SIDE, MAX_SIDE))
    out, out_mime = _encode(frame, mime)
    quality = 85
    while len(out) > MAX_BYTES and quality > 30:
        frame = frame.convert("RGB")
        out, out_mime = _encode(frame, "image/jpeg", quality)
        quality -= 15
    while len(out) > MAX_BYTES and min(frame.size) > 64:
        frame = frame.resize((max(1, frame.width * 3 // 4), max(1, frame.height * 3 // 4)))
        out, out_mime = _encode(frame.convert("RGB"), "image/jpeg", 70)
    note = f"resized from {w}x{h} to {frame.width}x{frame.height}"
    return out, out_mime, note


def _encode(frame: object, mime: str, quality: int = 90) -> tuple[bytes, str]:
    buf = io.BytesIO()
    if mime == "image/jpeg":
        frame.convert("RGB").save(buf, "JPEG", quality=quality, optimize=True)  # type: ignore[attr-defined]
        return buf.getvalue(), "image/jpeg"
    if mime == "image/webp":
        frame.save(buf, "WEBP", quality=quality)  # type: ignore[attr-defined]
        return buf.getvalue(), "image/webp"
    frame.save(buf, "PNG", optimize=False)  # type: ignore[attr-defined]  # GIF: its first frame as PNG
    return buf.getvalue(), "image/png"


def prepare(data: bytes, declared: str | None = None, *, auto_resize: bool = True) -> tuple[bytes, str, str | None]:
    """:func:`check` then :func:`fit`: ``(data, mime, note)`` ready for a model."""
    if len(data) > MAX_INPUT_BYTES:
        raise ImageProblem(f"image is {len(data):,} bytes, over the {MAX_INPUT_BYTES // (1024 * 1024)} MiB limit")
    mime, size = check(data, declared)
    return fit(data, mime, size, auto_resize=auto_resize)

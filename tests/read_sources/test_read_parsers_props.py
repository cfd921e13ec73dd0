"""The other parsers read added, with hypothesis: image headers (kit/images.py), notebook JSON and
archive listings. Hostile bytes give a clear error, never another exception; work is linear."""

from __future__ import annotations

import base64
import io
import json
import struct
import tempfile
import time
import zipfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_host.kit.images import ImageProblem, check, decode_base64, dimensions, sniff_mime
from builtin_plugins.tools.sources.archives import iter_members, read_member
from builtin_plugins.tools.sources.documents import convert_file
from builtin_plugins.tools.sources.limits import Budget, SourceError

MAGIC = [b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF89a", b"RIFF\0\0\0\0WEBP", b""]


@settings(max_examples=300)
@given(st.sampled_from(MAGIC), st.binary(max_size=200))
def test_image_headers_never_raise_anything_but_image_problem(magic: bytes, rest: bytes) -> None:
    data = magic + rest
    try:
        mime, (w, h) = check(data)
    except ImageProblem:
        return
    assert mime == sniff_mime(data) and w > 0 and h > 0


@given(st.text(max_size=200))
def test_base64_is_strict(text: str) -> None:
    try:
        data = decode_base64(text)
    except ImageProblem as e:
        assert "base64" in str(e) or "non-empty" in str(e)
        return
    assert base64.b64encode(data).decode() == "".join(text.split())


def _jpeg_with_markers(n: int) -> bytes:
    """A JPEG whose size frame comes after ``n`` application segments."""
    segment = b"\xff\xe1" + struct.pack(">H", 18) + b"x" * 16
    sof = b"\xff\xc0" + struct.pack(">HBHH", 17, 8, 480, 640) + b"\0" * 10
    return b"\xff\xd8" + segment * n + sof


def test_jpeg_header_walk_is_linear() -> None:
    def cost(n: int) -> float:
        data = _jpeg_with_markers(n)
        t0 = time.process_time()
        assert dimensions(data, "image/jpeg") == (640, 480)
        return time.process_time() - t0

    small, big = max(cost(1000), 1e-4), cost(100_000)
    assert big < 300 * small and big < 2, (small, big)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
cells = st.lists(
    st.fixed_dictionaries(
        {"cell_type": st.sampled_from(["code", "markdown", "raw", 3]), "source": json_values},
        optional={"outputs": json_values, "execution_count": json_values},
    )
    | json_values,
    max_size=6,
)


@settings(max_examples=100, deadline=None)
@given(st.one_of(json_values, st.fixed_dictionaries({"cells": cells}, optional={"metadata": json_values})))
def test_notebooks_of_any_shape_give_text_or_an_error(nb: object) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".ipynb", delete=False) as f:
        json.dump(nb, f)
    try:
        result = convert_file({"kind": "ipynb", "path": f.name, "ranges": None})
    finally:
        Path(f.name).unlink()
    assert ("error" in result) != ("text" in result)
    if "text" in result:
        assert isinstance(result["text"], str) and result["total"] == len(nb["cells"])  # type: ignore[index]


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400), st.sampled_from(["zip", "tar", "gz"]))
def test_broken_archives_give_a_source_error(data: bytes, kind: str) -> None:
    with tempfile.NamedTemporaryFile(suffix={"zip": ".zip", "tar": ".tar.gz", "gz": ".gz"}[kind], delete=False) as f:
        f.write(b"PK\x03\x04" + data if kind == "zip" else b"\x1f\x8b" + data if kind != "tar" else data)
    try:
        try:
            list(iter_members(f.name, kind, Budget("x", 5)))
        except SourceError:
            pass
        try:
            read_member(f.name, kind, "a", Budget("x", 5))
        except SourceError:
            pass
    finally:
        Path(f.name).unlink()


def test_archive_listing_is_linear_in_members(tmp_path: Path) -> None:
    def cost(n: int) -> float:
        path = tmp_path / f"{n}.zip"
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            for i in range(n):
                zf.writestr(f"d/{i}.txt", "")
        path.write_bytes(buf.getvalue())
        t0 = time.process_time()
        assert len(list(iter_members(str(path), "zip", Budget("x", 60)))) == n
        return time.process_time() - t0

    small, big = max(cost(200), 1e-3), cost(20_000)
    assert big < 300 * small, (small, big)


def test_searching_a_tarball_reads_it_once(tmp_path: Path) -> None:
    """x100 the members, about x100 the CPU: the members are read in one pass (one read_member per
    member would scan the compressed stream from its start each time: quadratic)."""
    import tarfile

    from builtin_plugins.tools._search_core import search

    def cost(n: int) -> float:
        path = tmp_path / f"{n}.tar.gz"
        with tarfile.open(path, "w:gz") as tf:
            for i in range(n):
                data = f"line {i}\n".encode() + (b"needle\n" if i == n - 1 else b"")
                info = tarfile.TarInfo(f"d/{i}.txt")
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
        request = {"pattern": "needle", "roots": [str(path)], "cwd": str(tmp_path), "before": 0, "after": 0}
        t0 = time.process_time()
        page = search(request)
        seconds = time.process_time() - t0
        assert page["text"] == f"{n}.tar.gz:d/{n - 1}.txt\n  2: needle"
        return seconds

    small, big = max(cost(100), 1e-3), cost(10_000)
    assert big < 300 * small, (small, big)

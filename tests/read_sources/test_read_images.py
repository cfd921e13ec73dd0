"""Images through the real host: read of a broken and an oversized picture, and the images of a prompt
(checked before anything reaches the provider, a 30 MB screenshot shrunk to fit 2000x2000)."""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path

from PIL import Image
from read_helpers import read

from atomic_host.client import RpcError
from atomic_host.testing import start_host


def png(width: int, height: int, noise: bool = False) -> bytes:
    if noise:
        img = Image.frombytes("RGB", (width, height), os.urandom(width * height * 3))
    else:
        img = Image.new("RGB", (width, height), (200, 30, 30))
    buf = io.BytesIO()
    img.save(buf, "PNG", compress_level=1)
    return buf.getvalue()


def size_of(data_b64: str) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(data_b64))) as img:
        return img.size


async def test_read_checks_and_shrinks_images(tmp_path: Path) -> None:
    async with start_host(base=tmp_path / "h") as host:
        w = host.cwd
        small = png(40, 30)
        (w / "small.png").write_bytes(small)
        (w / "wide.png").write_bytes(png(5000, 1000))
        (w / "broken.png").write_bytes(small[:60] + b"\0" * 200)  # a real header, then garbage
        (w / "cut.jpg").write_bytes(b"\xff\xd8\xff\xe0" + b"\0" * 20)
        (w / "shot.zip").write_bytes(b"")
        import zipfile

        with zipfile.ZipFile(w / "shot.zip", "w") as zf:
            zf.writestr("img/small.png", small)
        r = await read(host, "small.png", "wide.png", "broken.png", "cut.jpg", "shot.zip:img/small.png")
        host.assert_protocol_lines()
    assert r[0]["text"] == "Read image file small.png [image/png]"
    assert r[0]["images"] == [{"type": "image", "data": base64.b64encode(small).decode(), "mimeType": "image/png"}]
    assert r[1]["text"] == "Read image file wide.png [image/png] (resized from 5000x1000 to 2000x400)"
    assert size_of(r[1]["images"][0]["data"]) == (2000, 400)
    assert r[2]["isError"] and r[2]["text"].startswith("Cannot read image broken.png: broken image/png image")
    assert r[2]["images"] == []
    assert r[3]["isError"] and r[3]["text"].startswith("Cannot read image cut.jpg: broken image/jpeg image")
    assert r[4]["text"] == "Read image file shot.zip:img/small.png [image/png]" and len(r[4]["images"]) == 1


async def test_prompt_images_are_checked_and_shrunk(tmp_path: Path) -> None:
    screenshot = png(4000, 2600, noise=True)
    assert len(screenshot) > 30_000_000
    async with start_host(base=tmp_path / "h") as host:
        bad = [
            (
                {"type": "image", "data": "!!!notb64", "mimeType": "image/png"},
                "images[0]: image data is not valid base64",
            ),
            (
                {"type": "image", "data": base64.b64encode(b"hello, not a picture").decode(), "mimeType": "image/png"},
                "images[0]: not a supported image (PNG, JPEG, GIF or WebP); declared image/png",
            ),
            (
                {"type": "image", "data": base64.b64encode(png(10, 10)[:40]).decode(), "mimeType": "image/png"},
                "images[0]: broken image/png image",
            ),
        ]
        for image, message in bad:
            try:
                await host.client.call("prompt", message="look", images=[image])
            except RpcError as e:
                assert str(e).startswith(message), str(e)
            else:
                raise AssertionError(f"accepted {image['data'][:20]!r}")
        try:
            await host.client.call("steer", message="look", images=[bad[0][0]])
        except RpcError as e:
            assert str(e).startswith("images[0]: image data is not valid base64")
        assert host.faux_calls() == []  # nothing reached the provider
        small = png(20, 20)
        host.faux.push("seen", "seen")
        images = [
            {"type": "image", "data": base64.b64encode(screenshot).decode(), "mimeType": "image/png"},
            {"type": "image", "data": base64.b64encode(small).decode(), "mimeType": "image/jpeg"},  # mislabelled
        ]
        run = await host.client.prompt_and_wait("what is on my screen?", images=images, timeout=120)
        assert run.ok
        sent = host.faux_calls()[-1]["context"]["messages"][0]["content"]
        state = await host.client.get_state()
    assert sent[0] == {"type": "text", "text": "what is on my screen?"}
    width, height = size_of(sent[1]["data"])
    assert (width, height) == (2000, 1300)
    assert len(base64.b64decode(sent[1]["data"])) <= 3_750_000
    assert sent[2] == {"type": "image", "data": base64.b64encode(small).decode(), "mimeType": "image/png"}
    assert state["isStreaming"] is False


async def test_auto_resize_off_sends_images_as_they_are(tmp_path: Path) -> None:
    wide = png(3000, 100)
    async with start_host(base=tmp_path / "h", settings={"images": {"autoResize": False}}) as host:
        host.faux.push("seen")
        image = {"type": "image", "data": base64.b64encode(wide).decode(), "mimeType": "image/png"}
        await host.client.prompt_and_wait("look", images=[image])
        sent = host.faux_calls()[-1]["context"]["messages"][0]["content"]
    assert sent[1] == image

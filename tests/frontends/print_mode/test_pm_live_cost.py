"""The terminal renderer of ``atomic -p`` (``LiveRenderer``, in process on a forced-terminal rich
console): leaving a streamed block's settled start out of each frame's render draws the same bytes
as rendering the whole block every frame, and a long answer costs time linear in its length."""

from __future__ import annotations

import asyncio
import io
import re
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from atomic_host.frontends import print_render

pytestmark = pytest.mark.slow  # long answers rendered frame by frame, x10 and x100


async def _draw(text: str, kind: str, delta: int, frame_every: int) -> tuple[str, str]:
    """Stream ``text`` in ``delta``-character pieces with a frame every ``frame_every`` pieces (the
    10 fps timer of a steady stream); the bytes written to the terminal and to stderr."""
    renderer = print_render.LiveRenderer()
    out, err = io.StringIO(), io.StringIO()
    renderer.console = Console(file=out, force_terminal=True, width=72, height=24, color_system="truecolor")
    renderer.err = Console(file=err, force_terminal=True, width=72)
    send = renderer.text if kind == "text" else renderer.thinking
    for n, start in enumerate(range(0, len(text), delta), 1):
        send(text[start : start + delta])
        if renderer.timer is not None:
            renderer.timer.cancel()
            renderer.timer = None
        if n % frame_every == 0:
            renderer._tick()
    renderer.end_block()
    renderer.close()
    return _LINK_ID.sub("", out.getvalue()), err.getvalue()


_LINK_ID = re.compile(r"id=[0-9-]+")
"""rich draws each link with a new random id."""


def _render(text: str, kind: str, delta: int, frame_every: int, monkeypatch: pytest.MonkeyPatch, freeze: bool) -> Any:
    with monkeypatch.context() as patch:
        patch.setattr(print_render, "_echo_off", lambda: None)
        if freeze:  # small thresholds: cut as often as possible
            patch.setattr(print_render, "FREEZE_CHARS", 200)
            patch.setattr(print_render, "FREEZE_KEEP", 60)
        else:  # never cut: every frame renders the whole block, as before
            patch.setattr(print_render, "FREEZE_CHARS", 1 << 60)
        return asyncio.run(_draw(text, kind, delta, frame_every))


_WORDS = st.sampled_from(["word", "**bold**", "`code`", "*em*", "x" * 30, "1.", "-", "#", ">", "|", "[a]", "~~s~~"])
_LINE = st.lists(_WORDS, min_size=1, max_size=8).map(" ".join)
_BLOCK = st.one_of(
    _LINE,
    st.lists(_LINE, min_size=1, max_size=4).map("\n".join),  # a paragraph
    st.lists(_LINE, min_size=1, max_size=4).map(lambda ls: "\n".join("- " + line for line in ls)),
    st.lists(_LINE, min_size=1, max_size=4).map(lambda ls: "\n".join(f"{i}. {line}" for i, line in enumerate(ls, 3))),
    st.lists(_LINE, min_size=1, max_size=3).map(lambda ls: "\n".join("> " + line for line in ls)),
    _LINE.map(lambda line: "## " + line),
    st.lists(_LINE, max_size=4).map(lambda ls: "```python\n" + "\n".join(ls) + "\n```"),
    st.lists(_LINE, max_size=3).map(lambda ls: "```\n" + "\n".join(ls)),  # a fence left open
    st.just("| a | b |\n|---|---|\n| 1 | 2 |"),
    st.just("---"),
    st.just("    indented code"),
    st.just("[a]: /url"),
    st.just("setext\n==="),
)
_ANSWER = st.lists(_BLOCK, min_size=1, max_size=24).flatmap(
    lambda blocks: st.lists(st.sampled_from(["\n\n", "\n", "\n\n\n"]), min_size=len(blocks), max_size=len(blocks)).map(
        lambda seps: "".join(b + s for b, s in zip(blocks, seps, strict=True))
    )
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=_ANSWER,
    kind=st.sampled_from(["text", "text", "thinking"]),
    delta=st.integers(2, 40),
    frame_every=st.integers(2, 12),
)
def test_frames_draw_what_rendering_the_whole_block_draws(
    text: str, kind: str, delta: int, frame_every: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    ours = _render(text, kind, delta, frame_every, monkeypatch, freeze=True)
    assert ours == _render(text, kind, delta, frame_every, monkeypatch, freeze=False)


def _answer(size: int) -> str:
    block = "Some **bold** text and `code` in a paragraph that goes on for a while. " * 3 + "\n\n"
    block += "- item one\n- item two with *emphasis*\n\n"
    return (block * (size // len(block) + 1))[:size]


def _seconds(size: int, kind: str, monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setattr(print_render, "_echo_off", lambda: None)
    t0 = time.process_time()
    out, _ = asyncio.run(_draw(_answer(size), kind, 8, 50))  # a frame per 400 characters
    seconds = time.process_time() - t0
    assert out
    return seconds


@pytest.mark.parametrize("kind", ["text", "thinking"])
def test_a_long_answer_costs_linear_time_in_its_length(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """2 KB and ×100 (200 KB) in 8-character deltas, a frame per 400 characters: about ×100 the
    time, not ×10,000 (every frame rendered the whole answer so far: 200 KB took 112 s)."""
    small = max(_seconds(2_000, kind, monkeypatch), 0.002)
    big = _seconds(200_000, kind, monkeypatch)
    assert big < 20, f"200 KB took {big:.2f} s"  # ~3 s here
    assert big < 300 * small, (small, big)

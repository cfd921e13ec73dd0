"""plugins/faults.py: what any exception a plugin raises becomes, for hostile exceptions too
(messages of any text, exit codes of any type, a ``__str__``/``__repr__`` that raises, classes of
its own, deep tracebacks), and frontends/hints.py's reading of the stale-default message. Reporting
never raises and its cost grows with the traceback, not faster."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from atomic_host.plugins.faults import (
    HOST_SURVIVES,
    ExitRefused,
    PluginFault,
    contained,
    fault_place,
    fault_report,
    fault_text,
    original,
)


class Hostile:
    """An object whose str() raises (even SystemExit)."""

    def __str__(self) -> str:
        raise SystemExit("from __str__")

    def __repr__(self) -> str:
        return "Hostile()"


class HostileRepr:
    """An exit code whose repr() raises."""

    def __repr__(self) -> str:
        raise RuntimeError("from __repr__")


class OwnBase(BaseException):
    pass


class LoudError(Exception):
    def __str__(self) -> str:
        raise KeyboardInterrupt


codes = st.one_of(st.none(), st.integers(), st.text(), st.binary(), st.just(Hostile()), st.lists(st.integers()))
texts = st.text()
exceptions = st.one_of(
    codes.map(SystemExit),
    codes.map(ExitRefused),
    texts.map(lambda t: KeyboardInterrupt(t)),
    texts.map(lambda t: GeneratorExit(t)),
    texts.map(lambda t: OwnBase(t)),
    texts.map(lambda t: RuntimeError(t)),
    st.just(LoudError()),
    st.just(KeyboardInterrupt(Hostile())),
    texts.map(lambda t: BaseExceptionGroup(t or "g", [SystemExit(1)])),
)


def _raised(exc: BaseException, depth: int = 0) -> BaseException:
    def down(n: int) -> None:
        if n:
            down(n - 1)
        raise exc

    try:
        down(depth)
    except BaseException as caught:
        return caught
    raise AssertionError


@given(exceptions, st.integers(0, 30))
def test_any_exception_is_reported_in_one_piece(exc: BaseException, depth: int) -> None:
    raised = _raised(exc, depth)
    text, report = fault_text(raised), fault_report(raised, [Path(__file__).parent])
    assert isinstance(text, str) and isinstance(report, str)
    assert report == f"{fault_place(raised, [Path(__file__).parent])}: " + (
        f"{type(exc).__name__}: {text}" if isinstance(exc, Exception) else text
    )
    assert fault_place(raised, [Path(__file__).parent]).startswith(f"{__file__}:")
    if not isinstance(exc, Exception):
        assert text.endswith(HOST_SURVIVES)
    # carried across a task as PluginFault, it reads the same
    assert fault_text(PluginFault(raised)) == text and original(PluginFault(raised)) is raised


def test_the_words_for_each_exit() -> None:
    assert fault_text(SystemExit(3)) == f"SystemExit: sys.exit(3) called; {HOST_SURVIVES}"
    assert fault_text(SystemExit()) == f"SystemExit: sys.exit() called; {HOST_SURVIVES}"
    assert fault_text(ExitRefused(4)) == f"os._exit(4) called, refused; {HOST_SURVIVES}"
    assert fault_text(KeyboardInterrupt()) == f"KeyboardInterrupt: raised; {HOST_SURVIVES}"
    unprintable = f"SystemExit: sys.exit(<unprintable HostileRepr>) called; {HOST_SURVIVES}"
    assert fault_text(SystemExit(HostileRepr())) == unprintable
    assert fault_text(LoudError()) == "<unprintable LoudError>"
    assert fault_text(ValueError("")) == "ValueError" and fault_text(ValueError("x")) == "x"


def test_no_frame_no_place() -> None:
    assert fault_place(RuntimeError("never raised")) is None
    assert fault_report(RuntimeError("never raised")) == "never raised"


@pytest.mark.parametrize("exc", [SystemExit(2), KeyboardInterrupt(), GeneratorExit(), OwnBase("x")])
async def test_contained_turns_an_exit_in_a_task_into_an_ordinary_error(exc: BaseException) -> None:
    async def plugin() -> None:
        raise exc

    task = asyncio.ensure_future(contained(plugin()))
    await asyncio.wait({task})
    assert isinstance(task.exception(), PluginFault) and task.exception().original is exc


async def test_contained_lets_cancellation_through() -> None:
    task = asyncio.ensure_future(contained(asyncio.sleep(10)))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def _cpu(fn: Any) -> float:
    start = time.process_time()
    for _ in range(20):
        fn()
    return time.process_time() - start


def test_reporting_costs_grow_with_the_traceback_not_faster() -> None:
    """x10 and x100 frames: the cost of a report grows about linearly (CPU time, 20 reports each)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 5000))
    try:
        small, big, huge = (_raised(RuntimeError("deep"), n) for n in (20, 200, 2000))
        root = [Path(__file__).parent]
        t1, t10, t100 = (_cpu(lambda e=e: fault_report(e, root)) for e in (small, big, huge))
    finally:
        sys.setrecursionlimit(limit)
    assert t10 < 30 * max(t1, 1e-3) and t100 < 300 * max(t1, 1e-3), (t1, t10, t100)


@given(st.text(), st.text(), st.booleans())
def test_explain_reads_any_stale_default_message(provider: str, model: str, rpc: bool) -> None:
    """hints.explain on the engine's stale-default message with any provider/model text: never
    raises; the RPC keeps the message as it is; a person gets --model instead of set_model."""
    from atomic_host.core.options import Options
    from atomic_host.engine.model_choice import STALE_ADVICE, STALE_DEFAULT
    from atomic_host.frontends.hints import explain

    message = f"{STALE_DEFAULT.format(ref=f'{provider}/{model}')} {STALE_ADVICE}"
    said = explain(message, _Models(), Options(), rpc=rpc)
    if rpc:
        assert said == message
    else:
        assert "--model PROVIDER/ID" in said and "set_model" not in said.replace(message, "")


class _Models:
    """The registry calls explain makes: one keyless provider, ``anthropic``."""

    def provider_info(self, provider: str) -> Any:
        return object() if provider == "anthropic" else None

    def auth_status(self, provider: str) -> dict[str, Any]:
        return {"configured": False}

    def env_key_names(self, provider: str) -> list[str]:
        return ["ANTHROPIC_API_KEY"]

    def provider_ids(self) -> list[str]:
        return ["anthropic"]

    def available(self) -> list[dict[str, Any]]:
        return []

    def all_models(self) -> list[dict[str, Any]]:
        return []

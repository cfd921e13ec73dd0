"""engine/compaction.py's Compactor in process, on a small stand-in for ``CompactionPorts``: real
plugin files (and the built-in strategy) loaded by the real PluginHost, a real in-memory Session, no
subprocess."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from atomic_host.contract.errors import HostError
from atomic_host.core.settings import Settings
from atomic_host.engine import compaction
from atomic_host.kit.sessions.store import MemoryStore
from atomic_host.plugins.dispatch import Dispatcher
from atomic_host.plugins.manager import PluginHost
from atomic_host.session.context import build_session_context

MODEL = {"provider": "stub", "id": "stub-1", "api": "stub-api", "contextWindow": 100000, "reasoning": False}
HEADER = "from atomic_host import hookimpl\nfrom atomic_host.contract.results import *\nimport asyncio\n"


class Idle:
    """The run a manual compaction would abort: none is running."""

    is_streaming = False

    async def abort(self) -> None:
        raise AssertionError("nothing runs")


class Models:
    """The model registry as the driver uses it: no API implementation, so nothing streams."""

    def stream_fn(self, api: str) -> None:
        return None


class Ports:
    """Everything ``CompactionPorts`` promises, and nothing more."""

    def __init__(self, tmp_path: Path, plugins: PluginHost) -> None:
        self.settings = Settings(tmp_path / "settings.json")
        self.options = None
        api = SimpleNamespace(settings=self.settings.data)  # what the built-in strategy reads of the api
        self.hooks = Dispatcher(plugins, api=api)  # type: ignore[arg-type]
        self.registry = Models()
        self.session = MemoryStore().new_session("/tmp")
        self.model: dict[str, Any] | None = MODEL
        self.thinking_level = "off"
        self.auto_compaction = self.auto_retry = True
        self.events: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []

    def emit(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def require_model(self) -> dict[str, Any]:
        assert self.model is not None
        return self.model

    def stream_options(self, signal: Any = None) -> Any:
        raise AssertionError("no test here streams")

    def rebuild_context(self, restore_model: bool = True) -> None:
        self.messages = build_session_context(self.session.branch()).messages


def _ports(tmp_path: Path, *bodies: str, builtin: bool = True, timeout_s: float = 30.0) -> tuple[Ports, list[Any]]:
    errors: list[Any] = []
    plugins = PluginHost(lambda *e: errors.append(e))
    plugins.hook_timeout_s = timeout_s
    if builtin:
        assert plugins.load_module("builtin_plugins.compaction").status == "loaded"
    for i, body in enumerate(bodies):
        path = tmp_path / f"plugin_{i}.py"
        path.write_text(HEADER + textwrap.dedent(body))
        assert plugins.load_file(path).status == "loaded"
    ports = Ports(tmp_path, plugins)
    for text in ("\n".join(f"line {n} of the first request" for n in range(30)), "second"):
        ports.session.append("message", message={"role": "user", "content": text, "timestamp": 1})
        reply = {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "stopReason": "stop",
                 "provider": "stub", "model": "stub-1", "timestamp": 2}  # fmt: skip
        ports.session.append("message", message=reply)
    ports.rebuild_context()
    return ports, errors


def test_a_plugin_result_wins_without_the_builtin_and_is_not_time_bounded(tmp_path: Path) -> None:
    ports, errors = _ports(
        tmp_path,
        """
        @hookimpl
        async def compact(event):
            await asyncio.sleep(0.3)  # past the 0.05 s hook bound: compact is not bounded
            return Compaction("[User]: short", first_kept_entry_id=event.branch_entries[-1]["id"], rung="mine")
        """,
        timeout_s=0.05,
    )
    result = asyncio.run(compaction.Compactor(ports).manual(Idle()))
    assert not errors
    assert (result["compactedText"], result["rung"], result["promptVersion"]) == ("[User]: short", "mine", 0)
    assert result["stats"]["linesKept"] == 1 and result["parameters"]["compression_ratio"] == 0.5
    entry = ports.session.entries[-1]
    assert entry["type"] == "compaction" and entry["details"]["strategy"] == "verbatim-lines"
    assert [e["type"] for e in ports.events] == ["compaction_start", "compaction_end"]
    assert ports.messages[0]["customType"] == "compaction"  # the context was rebuilt from the boundary


def test_the_builtin_without_a_model_api_reports_the_planner_failure(tmp_path: Path) -> None:
    ports, errors = _ports(tmp_path)
    with pytest.raises(HostError, match=r"^Compaction failed: No API implementation registered for stub-api$"):
        asyncio.run(compaction.Compactor(ports).manual(Idle()))
    assert not errors  # an answer, not an exception inside the plugin
    assert not [e for e in ports.session.entries if e["type"] == "compaction"]


@pytest.mark.parametrize(
    ("decision", "expected"),
    [("Cancel('no')", None), ("CompactResult('[User]: from the hook')", "[User]: from the hook")],
)
def test_the_host_consults_session_before_compact_when_the_strategy_did_not(
    tmp_path: Path, decision: str, expected: str | None
) -> None:
    ports, errors = _ports(
        tmp_path,
        f"""
        @hookimpl
        def session_before_compact(event):
            assert event.lines == [] and event.reason == "manual"
            return {decision}
        """,
        """
        @hookimpl
        def compact(event):
            return Compaction("[User]: the strategy's text")
        """,
    )
    if expected is None:
        with pytest.raises(HostError, match=r"^Compaction cancelled$"):
            asyncio.run(compaction.Compactor(ports).manual(Idle()))
        assert not [e for e in ports.session.entries if e["type"] == "compaction"]
    else:
        result = asyncio.run(compaction.Compactor(ports).manual(Idle()))
        assert result["compactedText"] == expected
        assert ports.session.entries[-1]["fromHook"] is True
    assert not errors


def test_failure_and_nothing_to_do(tmp_path: Path) -> None:
    ports, _ = _ports(tmp_path, "@hookimpl\ndef compact(event):\n    return Failure('tiny', nothing_to_do=True)\n")
    with pytest.raises(HostError, match=r"^tiny$"):  # the bare message, as for the built-in's "too small"
        asyncio.run(compaction.Compactor(ports).manual(Idle()))
    assert ports.events[-1]["errorMessage"] == "Compaction failed: tiny"
    # automatic: a quiet end (null result, no error)
    outcome = asyncio.run(_threshold(ports))
    assert outcome.result is None and outcome.error is None


async def _threshold(ports: Ports) -> compaction.Outcome:
    return await compaction.Compactor(ports).start("threshold").task


def test_no_strategy_is_a_clear_error_and_automatic_compaction_skips(tmp_path: Path) -> None:
    ports, _ = _ports(tmp_path, builtin=False)
    with pytest.raises(HostError, match=r"^No compaction strategy: no plugin implements the compact hook"):
        asyncio.run(compaction.Compactor(ports).manual(Idle()))
    assert not ports.events
    assert asyncio.run(compaction.Compactor(ports).after_run(asyncio.Event())) is False and not ports.events

"""engine/summaries.py and engine/branch_summary.py in process, on a stand-in for ``SummaryPorts``:
when a background summary is due (the provider flag instead of a provider name), and what the
``summarize`` hook's answers become."""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from atomic_host.contract.providers import ProviderInfo
from atomic_host.core.settings import Settings
from atomic_host.engine import branch_summary, summaries
from atomic_host.kit.sessions.store import MemoryStore
from atomic_host.plugins.dispatch import Dispatcher
from atomic_host.plugins.manager import PluginHost

MODEL = {"provider": "scripted", "id": "s-1", "api": "none"}
HEADER = "from atomic_host import hookimpl\nfrom atomic_host.contract.results import *\n"


class Models:
    def __init__(self, background: bool) -> None:
        self.info = ProviderInfo(id="scripted", name="Scripted", api="none", background_summaries=background)

    def provider_info(self, provider: str) -> ProviderInfo | None:
        return self.info if provider == self.info.id else None

    def stream_fn(self, api: str) -> None:
        return None


class Writer:
    """A session store's writer that keeps nothing: the session counts as saved."""

    def write_all(self, header: dict[str, Any], entries: list[dict[str, Any]]) -> None:
        pass

    def append(self, entry: dict[str, Any]) -> None:
        pass


class Ports:
    def __init__(self, tmp_path: Path, settings: dict[str, Any], background: bool, *bodies: str) -> None:
        (tmp_path / "settings.json").write_text(json.dumps(settings))
        plugins = PluginHost(lambda *e: None)
        for i, body in enumerate(bodies):
            path = tmp_path / f"plugin_{i}.py"
            path.write_text(HEADER + textwrap.dedent(body))
            assert plugins.load_file(path).status == "loaded"
        self.settings = Settings(tmp_path / "settings.json")
        self.options = SimpleNamespace(mode="rpc")
        self.hooks = Dispatcher(plugins, api=object())  # type: ignore[arg-type]
        self.registry = Models(background)
        self.session = MemoryStore().new_session("/tmp")
        self.session.writer = Writer()  # a saved (listed) session
        for role, text in (("user", "fix it"), ("assistant", "fixed"), ("user", "thanks"), ("assistant", "ok")):
            content = [{"type": "text", "text": text}]
            self.session.append("message", message={"role": role, "content": content, "timestamp": 1})
        self.model: dict[str, Any] | None = MODEL

    def require_model(self) -> dict[str, Any]:
        assert self.model is not None
        return self.model

    def stream_options(self, signal: Any = None) -> Any:
        raise AssertionError("no test here streams")


PLUGIN = """
@hookimpl
def summarize(event):
    if event.kind == "session":
        return Summary(f"{event.kind}: {len(event.messages)} messages", usage={"input": 3})
    return Failure("branch summaries are off here")
"""


@pytest.mark.parametrize(
    ("enabled", "background", "due"),
    [(None, True, True), (None, False, False), (True, False, True), (False, True, False)],
)
def test_the_provider_flag_decides_when_the_setting_is_unset(
    tmp_path: Path, enabled: bool | None, background: bool, due: bool
) -> None:
    settings = {} if enabled is None else {"sessionSummary": {"enabled": enabled}}
    ports = Ports(tmp_path, settings, background, PLUGIN)
    through = summaries.should_summarize(ports)
    assert (through == ports.session.entries[-1]["id"]) if due else through is None


def test_no_summary_is_due_without_a_summarize_implementation(tmp_path: Path) -> None:
    assert summaries.should_summarize(Ports(tmp_path, {}, True)) is None


def test_answers_become_entries_or_errors(tmp_path: Path) -> None:
    ports = Ports(tmp_path, {}, True, PLUGIN)
    through = ports.session.entries[-1]["id"]
    asyncio.run(summaries.generate(ports, through, busy=lambda: False))
    entry = ports.session.entries[-1]
    assert entry["type"] == "session_summary" and entry["summary"] == "session: 4 messages"
    assert (entry["summarizedThroughId"], entry["usage"]) == (through, {"input": 3})
    with pytest.raises(RuntimeError, match=r"^branch summaries are off here$"):
        asyncio.run(branch_summary.summarize_entries(ports, ports.session.entries[:2], None))
    with pytest.raises(RuntimeError, match=r"^No summary strategy: no plugin implements the summarize hook"):
        asyncio.run(branch_summary.summarize_entries(Ports(_fresh(tmp_path), {}, True), [], None))


def _fresh(tmp_path: Path) -> Path:
    path = tmp_path / "no-plugins"
    path.mkdir()
    return path

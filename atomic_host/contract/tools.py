"""The tool contract: what a plugin registers and what a tool handler receives.

A tool is registered through the ``register_tools`` hook::

    @hookimpl
    def register_tools(register):
        register(Tool(name="search", description="Search file contents.",
                      params=SearchParams, handler="builtin_plugins.tools.search:run"))

``params`` is a pydantic model (or a ``"module:Class"`` string resolved on first use); the
JSON schema sent to the model comes from it and arguments are validated with it. ``handler``
is an async callable ``handler(params, ctx) -> ToolResult | str`` (or a ``"module:function"``
string). Raising :class:`ToolError` (or any exception) produces an error result for the
model; the host never crashes on a tool.

Handlers run on the host's event loop, which also answers ``get_state`` and ``abort``: blocking
file-system or CPU work belongs in :meth:`ToolContext.run_blocking`, which runs it in a worker
thread and stops waiting for it when the call is aborted (the work sees
:attr:`ToolContext.cancelled` and should return soon after). Work that must be killable
(a regular expression that can backtrack for minutes holds the GIL and cannot be interrupted)
belongs in a subprocess killed when :attr:`ToolContext.signal` is set.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from atomic_host.contract.records import field, record

if TYPE_CHECKING:
    from pydantic import BaseModel

Content = dict[str, Any]
"""A content block: ``{"type":"text","text":...}`` or ``{"type":"image","data":...,"mimeType":...}``."""


class ToolError(Exception):
    """Raise from a handler to return an error result with this message to the model."""


class ToolAborted(ToolError):
    """The call stopped because it was aborted; the model sees an error result ``<label> aborted``."""


T = TypeVar("T")

ABORT_GRACE_SECONDS = 0.5
"""How long :meth:`ToolContext.run_blocking` waits, after an abort, for the worker to notice it."""


@record
class ToolResult:
    """What a tool returns: content blocks for the model plus free-form details for clients."""

    content: list[Content]
    details: dict[str, Any] | None = None
    is_error: bool = False

    @classmethod
    def text(cls, text: str, details: dict[str, Any] | None = None, is_error: bool = False) -> ToolResult:
        return cls([{"type": "text", "text": text}], details, is_error)

    def to_wire(self) -> dict[str, Any]:
        """The ``{content, details}`` object used in tool_execution events."""
        return {"content": self.content, "details": self.details if self.details is not None else {}}


class UI(Protocol):
    """The extension UI sub-protocol, as seen by plugins (RPC: ``extension_ui_request``)."""

    has_ui: bool

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None: ...
    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None) -> bool: ...
    async def input(
        self, title: str, placeholder: str = "", *, timeout: float | None = None
    ) -> str | None: ...
    async def editor(self, title: str, prefill: str = "", *, timeout: float | None = None) -> str | None: ...
    def notify(self, message: str, notify_type: str = "info") -> None: ...
    def set_status(self, key: str, text: str | None) -> None: ...
    def set_widget(self, key: str, lines: list[str] | None, placement: str = "aboveEditor") -> None: ...
    def set_title(self, title: str) -> None: ...
    def set_editor_text(self, text: str) -> None: ...


@record
class ToolContext:
    """Everything a tool handler may use. Built by the host for each call."""

    cwd: str
    session_id: str
    tool_call_id: str
    signal: asyncio.Event
    """Set when the call is aborted; long-running handlers must watch it."""
    on_update: Callable[[ToolResult], None] = lambda _r: None
    """Report the accumulated partial result so far (becomes ``tool_execution_update``)."""
    ui: UI | None = None
    temp_dir: Callable[[], str | None] = lambda: None
    """Owner-only temp dir for this session (``<tmpdir>/atomic-<uid>/<session-id>``), or None if refused."""
    artifact_dirs: Callable[[], list[str]] = lambda: []
    """Directories that hold this session's saved full outputs (bash logs, cut tool results)."""
    call_tool: Callable[[str, dict[str, Any]], Awaitable[ToolResult]] | None = None
    """Call another active tool through the host (same tool_call hooks). Used by codemode."""
    list_tools: Callable[[], list[Tool]] | None = None
    """Tools currently active for the model (what codemode may call)."""
    deferred_tools: Callable[[], list[Tool]] | None = None
    """Deferred tools not yet loaded (what tool_search searches)."""
    load_tools: Callable[[list[str]], list[str]] | None = None
    """Make deferred tools visible from the next model call on; returns the names loaded."""
    settings: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    """Host-lifetime scratch space shared by tools of one plugin (e.g. background processes)."""
    cancelled: threading.Event = field(default_factory=threading.Event)
    """Thread-safe twin of ``signal`` for code running in a worker thread: set on abort while
    :meth:`run_blocking` waits. Check it in inner loops (a directory walk, a file scan) with
    :meth:`check_cancelled`; ``is_set()`` is a plain attribute read, cheap enough per item."""

    def check_cancelled(self) -> None:
        """Raise :class:`ToolAborted` if the call was aborted (callable from any thread)."""
        if self.cancelled.is_set() or self.signal.is_set():
            self.cancelled.set()
            raise ToolAborted("aborted")

    async def run_blocking(self, fn: Callable[[], T], *, label: str = "Tool call") -> T:
        """Run ``fn()`` in a worker thread and return its value without blocking the event loop.

        On abort, :attr:`cancelled` is set and ``fn`` gets :data:`ABORT_GRACE_SECONDS` to return:
        if it finishes (even normally: a write that completed is reported as done) its outcome
        stands; a :class:`ToolAborted` from it, or no answer in time, becomes
        ``ToolAborted("<label> aborted")``. A worker that never returns is left behind as a daemon
        thread, so it cannot hold up the host's exit. Exceptions from ``fn`` propagate.
        """
        if self.signal.is_set():
            self.cancelled.set()
            raise ToolAborted(f"{label} aborted")
        loop = asyncio.get_running_loop()
        outcome: asyncio.Future[T] = loop.create_future()

        def settle(value: Any, error: BaseException | None) -> None:
            if outcome.done():
                return
            if error is None:
                outcome.set_result(value)
            else:
                outcome.set_exception(error)

        def work() -> None:
            try:
                value, error = fn(), None
            except BaseException as exc:  # handed to the awaiting task, re-raised there
                value, error = None, exc
            with contextlib.suppress(RuntimeError):  # the loop is gone (host exiting)
                loop.call_soon_threadsafe(settle, value, error)

        threading.Thread(target=work, name=f"atomic-tool-{self.tool_call_id}", daemon=True).start()
        abort_wait = asyncio.ensure_future(self.signal.wait())
        try:
            await asyncio.wait({outcome, abort_wait}, return_when=asyncio.FIRST_COMPLETED)
            if not outcome.done():
                self.cancelled.set()
                await asyncio.wait({outcome}, timeout=ABORT_GRACE_SECONDS)
                if not outcome.done():
                    raise ToolAborted(f"{label} aborted")
            try:
                return outcome.result()
            except ToolAborted:
                raise ToolAborted(f"{label} aborted") from None
        except asyncio.CancelledError:
            self.cancelled.set()  # the task itself was cancelled (host shutdown): stop the worker too
            raise
        finally:
            abort_wait.cancel()
            if not outcome.done():
                outcome.cancel()


Handler = Callable[[Any, ToolContext], Awaitable["ToolResult | str"]]


def resolve(ref: Any) -> Any:
    """Resolve a ``"module:attr"`` string to the object it names; return anything else as is."""
    if isinstance(ref, str) and ":" in ref:
        module, _, attr = ref.partition(":")
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
        return obj
    return ref


@record
class Tool:
    """A tool the model can call."""

    name: str
    description: str
    params: type[BaseModel] | str | dict[str, Any]
    """Pydantic model class, ``"module:Class"``, or a raw JSON schema (arguments then pass unvalidated)."""
    handler: Handler | str
    label: str | None = None
    summary: str | None = None
    """One line for get_tools; defaults to the description's first sentence."""
    opt_in: bool = False
    """Not active unless selected (``+name`` in defaultTools or --tools). A built-in tool without it
    is one of the built-in defaults that ``defaultTools`` replaces."""
    needs_ui: bool = False
    """Needs a user to answer (extension UI dialogs): left out in modes without one (``--mode print``/``json``)."""
    read_only: bool = False
    """Known to have no side effects: it changes no file, runs no command, reaches nothing outside
    the host (tools it calls itself, as codemode does, are gated on their own). Permission gates
    read it: ACP's ``read_only`` mode runs only such tools, and its other modes ask before every
    tool without it. Leave it False when in doubt: a tool that is not known to be read-only is
    refused or asked about, never let through silently."""
    exposure: Literal["direct", "model-only"] = "direct"
    deferred: bool = False
    """Hidden from the model until a tool that ``loads_deferred`` (tool_search) loads it."""
    loads_deferred: bool = False
    """This tool makes deferred tools visible (tool_search does): get_tools names it in a deferred
    tool's ``inactiveReason``, with how to enable it when it is not active."""
    prompt_snippet: str | None = None
    source: str = "built-in"
    source_path: str = ""
    plugin: str = ""
    """Name of the plugin that registered it (set by the host)."""
    max_result_chars: int | None = None
    """Results with more text than this are saved to a file and the model gets a preview
    (None = the default, 50,000; ``0`` opts out, for tools that truncate and save their own output)."""
    _schema: dict[str, Any] | None = field(default=None, repr=False)

    def params_model(self) -> type[BaseModel] | None:
        if isinstance(self.params, dict):
            return None
        self.params = resolve(self.params)
        return self.params  # type: ignore[return-value]

    @property
    def schema_built(self) -> bool:
        """Whether json_schema() is cached: building it first imports the tool's module (pydantic)."""
        return self._schema is not None

    def json_schema(self) -> dict[str, Any]:
        """The parameters JSON schema sent to the model (cached)."""
        if self._schema is None:
            model = self.params_model()
            self._schema = dict(self.params) if model is None else model.model_json_schema()  # type: ignore[arg-type]
            self._schema.pop("title", None)
        return self._schema

    def get_handler(self) -> Handler:
        self.handler = resolve(self.handler)
        return self.handler  # type: ignore[return-value]

    def one_line_summary(self) -> str:
        if self.summary:
            return self.summary
        first = self.description.strip().split("\n", 1)[0]
        return first

    def to_llm(self) -> dict[str, Any]:
        """The neutral tool definition given to providers."""
        return {"name": self.name, "description": self.description, "parameters": self.json_schema()}

"""The command table: every RPC command is declared once, on its handler.

::

    @command(lane="concurrent")
    async def on_abort(self) -> Any: ...

    @command()
    async def on_set_model(self, cmd: SetModelCommand) -> Any: ...

A handler is named ``on_<type>`` after the command ``type`` it answers. What it takes says what
the command carries:

- ``(self)``: a command without fields (its protocol model has only ``type`` and ``id``). It is
  not validated, which keeps pydantic off the path of the first ``get_state``.
- ``(self, cmd: Model)``: the command validated against its protocol model
  (``core/protocol/commands.py``, looked up by ``type``; the annotation names it).
- ``(self, cmd: Model, sent: Cmd)``: the same, plus the command exactly as sent, for content the
  host keeps verbatim (prompt images) or hands on whole (bash, UI responses).
- ``@command(raw=True)``: validated, but the handler gets only the dict as sent.

``lane`` is ``ordinary`` (one at a time, in arrival order) or ``concurrent`` (at once: abort,
bash, UI responses, …; semantics §1). :class:`CommandTable` binds a handler object's declared
commands; the server takes its lanes from it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, Literal

from atomic_host.kit.lazy import loaded

Cmd = dict[str, Any]
"""A command as decoded from its JSON line."""
Handler = Callable[[Cmd], Awaitable[Any]]
"""What the server calls: the decoded command in, the response data out (raising → ``success:false``)."""
Lane = Literal["ordinary", "concurrent"]

_SPEC = "__atomic_command__"


class CommandSpec:
    """One declared command: its ``type``, lane, the shape of its handler and the model it is validated with."""

    __slots__ = ("fields", "function", "lane", "model_name", "name", "raw", "sent")

    def __init__(self, function: Callable[..., Awaitable[Any]], lane: Lane, raw: bool) -> None:
        if not function.__name__.startswith("on_"):
            raise TypeError(f"a command handler is named on_<type>: {function.__name__}")
        if lane not in ("ordinary", "concurrent"):
            raise ValueError(f"unknown lane {lane!r} for {function.__name__}")
        code = function.__code__
        params = code.co_varnames[: code.co_argcount]  # self, then what the handler takes
        self.function = function
        self.name = function.__name__[3:]
        self.lane: Lane = lane
        self.raw = raw
        self.fields = len(params) > 1
        """False: a command without fields, never validated."""
        self.sent = len(params) > 2
        annotation = function.__annotations__.get(params[1]) if self.fields else None
        self.model_name: str | None = annotation if isinstance(annotation, str) and not raw else None
        """The protocol model the handler's ``cmd`` is annotated with (a string: annotations are postponed)."""

    def bind(self, owner: object) -> Handler:
        """The server-facing handler of this command on ``owner`` (dict in, response data out)."""
        method = getattr(owner, self.function.__name__)
        if not self.fields:
            return lambda _cmd: method()
        if self.raw:

            async def raw(cmd: Cmd) -> Any:
                await _validate(cmd)
                return await method(cmd)

            return raw
        if self.sent:

            async def with_sent(cmd: Cmd) -> Any:
                return await method(await _validate(cmd), cmd)

            return with_sent

        async def validated(cmd: Cmd) -> Any:
            return await method(await _validate(cmd))

        return validated


async def _validate(cmd: Cmd) -> Any:
    # The protocol models (pydantic) load with the first command with fields, off the startup path,
    # and in a thread: on the loop, that import would stall it (and abort) for 0.1-1 s.
    validate = await loaded("atomic_host.core.protocol.validate")
    return validate.parse_command(cmd)


def command(*, lane: Lane = "ordinary", raw: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare the decorated ``on_<type>`` method as the handler of command ``<type>`` (module docstring)."""

    def mark(function: Callable[..., Any]) -> Callable[..., Any]:
        setattr(function, _SPEC, CommandSpec(function, lane, raw))
        return function

    return mark


def declared(cls: type) -> dict[str, CommandSpec]:
    """The commands ``cls`` declares, by ``type``; an ``on_*`` method without ``@command`` is an error."""
    specs: dict[str, CommandSpec] = {}
    for klass in reversed(cls.__mro__):
        for attr, value in vars(klass).items():
            spec = getattr(value, _SPEC, None)
            if spec is not None:
                specs[spec.name] = spec
            elif attr.startswith("on_") and callable(value):
                raise TypeError(f"{cls.__name__}.{attr} is not declared with @command")
    return specs


class CommandTable(Mapping[str, Handler]):
    """The declared commands of one handler object: ``type`` → server-facing handler, plus the lanes."""

    def __init__(self, owner: object) -> None:
        self.specs = declared(type(owner))
        self._handlers = {name: spec.bind(owner) for name, spec in self.specs.items()}
        self.concurrent = frozenset(name for name, spec in self.specs.items() if spec.lane == "concurrent")
        """Commands that run at once instead of waiting for the ordinary lane."""
        self.no_fields = frozenset(name for name, spec in self.specs.items() if not spec.fields)
        """Commands without fields: answered without validation."""

    def __getitem__(self, name: str) -> Handler:
        return self._handlers[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._handlers)

    def __len__(self) -> int:
        return len(self._handlers)

    def __contains__(self, name: object) -> bool:
        return name in self._handlers

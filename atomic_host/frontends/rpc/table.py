"""The command table: each declared command (``core/protocol/declarations.py``) bound to its handler.

A handler is a method named ``on_<type>`` after the command it answers; its lane comes from the
declaration, and its parameters say what it takes::

    async def on_abort(self) -> Any: ...                               # a command without fields
    async def on_set_model(self, cmd: SetModel) -> Any: ...           # validated (the declaration names the type)
    async def on_prompt(self, cmd: Prompt, sent: Cmd) -> Any: ...     # validated, plus the dict as sent
    async def on_login_provider(self, cmd: Cmd) -> Any: ...           # validated, handed the dict as sent

- ``(self)``: a command without fields (its declaration has none). It is not validated, which
  keeps pydantic off the path of the first ``get_state``.
- ``(self, cmd: <Declaration>)``: the command validated against its protocol model (built from the
  declaration in ``core/protocol/commands.py``); the object has the declaration's attributes.
- ``(self, cmd, sent: Cmd)``: the same, plus the command exactly as sent, for content the host
  keeps verbatim (prompt images) or hands on whole (bash, UI responses).
- ``(self, cmd: Cmd)``: validated, but the handler gets only the dict as sent.

:class:`CommandTable` binds a handler object's methods and checks that every declared command has
exactly one handler of the right shape and that no ``on_*`` method answers an undeclared command.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from atomic_host.core.protocol.declarations import DECLARATIONS, Declaration
from atomic_host.kit._fast.lazy import loaded

Cmd = dict[str, Any]
"""A command as decoded from its JSON line."""
Handler = Callable[[Cmd], Awaitable[Any]]
"""What the server calls: the decoded command in, the response data out (raising → ``success:false``)."""


class CommandSpec:
    """One command's binding: its declaration and the shape of its handler."""

    __slots__ = ("decl", "fields", "function", "name", "raw", "sent")

    def __init__(self, function: Callable[..., Awaitable[Any]], decl: Declaration) -> None:
        code = function.__code__
        params = code.co_varnames[: code.co_argcount]  # self, then what the handler takes
        self.function = function
        self.decl = decl
        self.name = decl.type
        self.fields = len(params) > 1
        """False: a command without fields, never validated."""
        self.sent = len(params) > 2
        self.raw = self.fields and not self.sent and function.__annotations__.get(params[1]) == "Cmd"
        """The handler takes the dict as sent (validated first)."""
        if self.fields == decl.bare:
            takes = "takes a command" if self.fields else "takes no command"
            declared = "without fields" if decl.bare else "with fields"
            raise TypeError(f"{function.__name__} {takes}, but {decl.type!r} is declared {declared}")

    @property
    def lane(self) -> str:
        return self.decl.lane

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


def declared(cls: type) -> dict[str, CommandSpec]:
    """The handlers of ``cls``, by command ``type``: one per declared command, and nothing else."""
    specs: dict[str, CommandSpec] = {}
    for klass in reversed(cls.__mro__):
        for attr, value in vars(klass).items():
            if not (attr.startswith("on_") and callable(value)):
                continue
            decl = DECLARATIONS.get(attr[3:])
            if decl is None:
                raise TypeError(f"{cls.__name__}.{attr} answers no declared command (core/protocol/declarations.py)")
            specs[decl.type] = CommandSpec(value, decl)
    missing = [name for name in DECLARATIONS if name not in specs]
    if missing:
        raise TypeError(f"{cls.__name__} has no handler for: {', '.join('on_' + name for name in missing)}")
    return {name: specs[name] for name in DECLARATIONS}


class CommandTable(Mapping[str, Handler]):
    """The commands of one handler object: ``type`` → server-facing handler, plus the lanes."""

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

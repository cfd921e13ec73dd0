"""The pydantic models of every command, built from their declarations (``declarations.py``).

Each command is a model with ``type: Literal[...]`` and an optional ``id`` (any JSON scalar,
echoed in the response). Unknown extra keys are allowed and kept. ``COMMANDS`` maps each
``type`` to its model (``<Declaration>Command``, e.g. ``SetModelCommand``); ``Command`` is the
discriminated union used for the JSON Schema. Models are built with ``defer_build``: importing this
module builds no validator.
"""

from __future__ import annotations

import typing
from typing import Annotated, Any, Literal, Union

from pydantic import Field, create_model, model_validator

from atomic_host.core.protocol import declarations
from atomic_host.core.protocol._base import AnswerFlag, AnswerText, JsonScalar, WireModel
from atomic_host.core.protocol.declarations import (
    DECLARATIONS,
    Declaration,
    QueueMode,
    StreamingBehavior,
    ThinkingLevel,
    WorkflowStatusFilter,
)
from atomic_host.core.protocol.messages import ImageContent

__all__ = [
    "COMMANDS",
    "Command",
    "CommandBase",
    "NavigateTreeOptions",
    "QueueMode",
    "StreamingBehavior",
    "ThinkingLevel",
    "WorkflowStatusFilter",
]


class CommandBase(WireModel):
    """Fields every command carries."""

    id: JsonScalar = None


_NAMES: dict[str, Any] = {
    "Any": Any,
    "ImageContent": ImageContent,
    "JsonScalar": JsonScalar,
    "Literal": Literal,
    "AnswerText": AnswerText,
    "AnswerFlag": AnswerFlag,
}
"""What the declarations' annotations may name besides their own module's globals."""


def _wire_model(cls: type, name: str, base: type[WireModel], **fields: Any) -> Any:
    """A model named ``name`` on ``base`` with the fields annotated on the plain class ``cls`` (and its
    ``check`` method as an after-validator), plus ``fields``."""
    hints = typing.get_type_hints(cls, localns=_NAMES, include_extras=True)
    for field, hint in hints.items():
        fields[field] = (hint, cls.__dict__.get(field, ...))
    validators: dict[str, Any] = {}
    check = cls.__dict__.get("check")
    if check is not None:

        def _checked(self: Any) -> Any:
            problem = check(self)
            if problem:
                raise ValueError(problem)
            return self

        validators["check"] = model_validator(mode="after")(_checked)
    return create_model(  # type: ignore[call-overload]
        name, __base__=base, __doc__=cls.__doc__, __module__=__name__, __validators__=validators, **fields
    )


NavigateTreeOptions: type[WireModel] = _wire_model(
    declarations.NavigateTreeOptions, "NavigateTreeOptions", WireModel
)
_NAMES["NavigateTreeOptions"] = NavigateTreeOptions


def _model(decl: Declaration) -> type[CommandBase]:
    return _wire_model(  # type: ignore[no-any-return]
        decl.cls, decl.model_name, CommandBase, type=(Literal[decl.type], decl.type)  # type: ignore[valid-type]
    )


COMMANDS: dict[str, type[CommandBase]] = {name: _model(decl) for name, decl in DECLARATIONS.items()}
"""Command ``type`` → its model."""

globals().update({cls.__name__: cls for cls in COMMANDS.values()})  # PromptCommand, …: for introspection

Command = Annotated[Union[tuple(COMMANDS.values())], Field(discriminator="type")]  # type: ignore[valid-type]  # noqa: UP007
"""Discriminated union of every command (used for the JSON Schema)."""

"""Shared pydantic configuration for every wire model.

Attributes are snake_case, the wire is camelCase (``alias_generator``). Validation is strict
(no ``"true"`` → ``True`` coercion) because clients must get a clear error for ill-typed fields.
``defer_build`` keeps import cheap: a model's validator is built on first use.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, PlainValidator, SerializerFunctionWrapHandler, model_serializer
from pydantic.alias_generators import to_camel


def _type_first(schema: dict[str, Any]) -> None:
    # Wire discriminators carry a default for convenient construction, yet are required on the wire.
    props = schema.get("properties", {})
    for key in ("type", "role"):
        if key in props:
            required = schema.setdefault("required", [])
            if key not in required:
                required.insert(0, key)


class WireModel(BaseModel):
    """Base of every protocol model: camelCase aliases, strict, extra keys kept."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        defer_build=True,
        strict=True,
        extra="allow",
        protected_namespaces=(),
        json_schema_extra=_type_first,
    )

    @model_serializer(mode="wrap")
    def _drop_absent(self, handler: SerializerFunctionWrapHandler) -> Any:
        # An optional field left at None is "undefined" in the TS host: absent, never null.
        # Required nullable fields (leafId, firstKeptEntryId, ...) keep their null.
        data = handler(self)
        if isinstance(data, dict):
            for name, field in type(self).model_fields.items():
                if field.is_required() or getattr(self, name, None) is not None:
                    continue
                for key in (name, field.alias):
                    if key in data and data[key] is None:
                        del data[key]
        return data

    def to_wire(self) -> dict[str, Any]:
        """The wire form: camelCase keys, optional fields that are None left out."""
        return self.model_dump(by_alias=True, mode="json")


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise ValueError("expected a string, number, boolean or null")


JsonScalar = Annotated[
    Any,
    PlainValidator(_scalar, json_schema_input_type=str | int | float | bool | None),
]
"""Any JSON scalar (request ids): one clear error instead of one per union member."""


def _as_sent(value: Any) -> Any:
    return value


# A dialog answer's fields (extension_ui_response): the schema says what is expected; any JSON value
# is taken, and the dialog treats one of another kind as cancelled (frontends/rpc/ui.py), so a wrong
# answer ends the dialog instead of leaving it open behind an error response no client expects.
AnswerText = Annotated[Any, PlainValidator(_as_sent, json_schema_input_type=str | None)]
AnswerFlag = Annotated[Any, PlainValidator(_as_sent, json_schema_input_type=bool | None)]

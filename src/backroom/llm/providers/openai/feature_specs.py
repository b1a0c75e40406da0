"""The pieces both OpenAI APIs spell the same way: a schema's and a function's spec."""

from __future__ import annotations

from typing import Any

from backroom.llm.features import FunctionTool, JsonSchema


def present(**fields: Any) -> dict[str, Any]:
    """`fields` without the unset ones (None, or an empty list or dict)."""
    return {key: value for key, value in fields.items() if value not in (None, [], {})}


def schema_spec(schema: JsonSchema) -> dict[str, Any]:
    """`{name, schema, strict?, description?}`."""
    return present(
        name=schema.name,
        schema=dict(schema.schema),
        strict=schema.strict,
        description=schema.description,
    )


def function_spec(tool: FunctionTool) -> dict[str, Any]:
    """`{name, description?, parameters?, strict?}`."""
    return present(
        name=tool.name,
        description=tool.description,
        parameters=None if tool.parameters is None else dict(tool.parameters),
        strict=tool.strict,
    )

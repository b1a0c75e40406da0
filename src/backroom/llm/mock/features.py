"""What the mock makes of a request's features: schemas, tools, reasoning, stops, images.

    json schema  the answer is a JSON document built from the schema (`json_for_schema`)
    tools        unless `tool_choice` is "none", the answer is a call to the first tool,
                 its arguments built from the tool's parameters schema
    reasoning    an effort adds a fixed count of reasoning tokens to the output tokens
    stop         the text ends before the first stop sequence it contains
    images       each image counts `IMAGE_TOKENS` input tokens
    top_p, metadata  echoed in a Responses API answer, as OpenAI does; seed is accepted

Bodies are read leniently: a field of an unexpected shape is ignored, as extra
fields are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

IMAGE_TOKENS = 85
"""Input tokens per image (OpenAI's count for a low-detail image)."""
REASONING_TOKENS = {"minimal": 0, "low": 16, "medium": 64, "high": 256}
"""Reasoning tokens the mock reports, by effort."""
_IMAGE_PART_TYPES = frozenset({"input_image", "image_url", "image"})


@dataclass(frozen=True, slots=True)
class MockTool:
    """A function tool as the mock needs it: its name and its arguments' schema."""

    name: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Features:
    """The features of one request, whichever endpoint it came to."""

    schema: dict[str, Any] | None = None
    tools: tuple[MockTool, ...] = ()
    tool_choice: str | None = None
    reasoning_effort: str | None = None
    stop: tuple[str, ...] = ()
    images: int = 0
    top_p: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def calls_tool(self) -> MockTool | None:
        """The tool the answer calls, or None when it answers in text."""
        return self.tools[0] if self.tools and self.tool_choice != "none" else None


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _tools(raw: object, *, nested: bool, schema: str = "parameters") -> tuple[MockTool, ...]:
    tools = []
    for item in raw if isinstance(raw, list) else []:
        spec = _dict(_dict(item).get("function")) if nested else _dict(item)
        if isinstance(spec.get("name"), str):
            tools.append(MockTool(spec["name"], _dict(spec.get(schema))))
    return tuple(tools)


def _stop(raw: object) -> tuple[str, ...]:
    if isinstance(raw, str):
        return (raw,)
    return tuple(item for item in raw if isinstance(item, str)) if isinstance(raw, list) else ()


def _images(messages: object) -> int:
    count = 0
    for message in messages if isinstance(messages, list) else []:
        content = _dict(message).get("content")
        for part in content if isinstance(content, list) else []:
            count += _dict(part).get("type") in _IMAGE_PART_TYPES
    return count


def _top_p(raw: object) -> float | None:
    return float(raw) if isinstance(raw, int | float) else None


def features_from_responses(body: dict[str, Any]) -> Features:
    """The features of a `/v1/responses` body."""
    text_format = _dict(_dict(body.get("text")).get("format"))
    schema = text_format.get("schema") if text_format.get("type") == "json_schema" else None
    choice = body.get("tool_choice")
    return Features(
        schema=_dict(schema) if schema is not None else None,
        tools=_tools(body.get("tools"), nested=False),
        tool_choice=choice if isinstance(choice, str) else None,
        reasoning_effort=_dict(body.get("reasoning")).get("effort"),
        stop=_stop(body.get("stop")),
        images=_images(body.get("input")),
        top_p=_top_p(body.get("top_p")),
        metadata=_dict(body.get("metadata")),
    )


def features_from_chat(body: dict[str, Any]) -> Features:
    """The features of a `/v1/chat/completions` body."""
    response_format = _dict(body.get("response_format"))
    spec = _dict(response_format.get("json_schema"))
    schema = spec.get("schema") if response_format.get("type") == "json_schema" else None
    choice = body.get("tool_choice")
    effort = body.get("reasoning_effort")
    return Features(
        schema=_dict(schema) if schema is not None else None,
        tools=_tools(body.get("tools"), nested=True),
        tool_choice=choice if isinstance(choice, str) else None,
        reasoning_effort=effort if isinstance(effort, str) else None,
        stop=_stop(body.get("stop")),
        images=_images(body.get("messages")),
        top_p=_top_p(body.get("top_p")),
        metadata=_dict(body.get("metadata")),
    )


def features_from_messages(body: dict[str, Any]) -> Features:
    """The features of a `/v1/messages` body (Anthropic's): `output_config.format`,
    tools with an `input_schema`, `tool_choice.type`, `output_config.effort`,
    `stop_sequences`, image blocks."""
    output_config = _dict(body.get("output_config"))
    output_format = _dict(output_config.get("format"))
    schema = output_format.get("schema") if output_format.get("type") == "json_schema" else None
    choice = _dict(body.get("tool_choice")).get("type")
    effort = output_config.get("effort")
    return Features(
        schema=_dict(schema) if schema is not None else None,
        tools=_tools(body.get("tools"), nested=False, schema="input_schema"),
        tool_choice=choice if isinstance(choice, str) else None,
        reasoning_effort=effort if isinstance(effort, str) else None,
        stop=_stop(body.get("stop_sequences")),
        images=_images(body.get("messages")),
        top_p=_top_p(body.get("top_p")),
    )


def _first_type(schema: dict[str, Any]) -> object:
    kind = schema.get("type")
    if isinstance(kind, list):
        return next((item for item in kind if item != "null"), "null")
    return kind


def json_for_schema(schema: dict[str, Any], name: str = "value") -> Any:
    """A JSON value that `schema` accepts, the same every time: the first enum or
    const value, every property of an object, one item of an array, `"mock <name>"`
    for a string, 1 for a number, true for a boolean.
    """
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for combinator in ("anyOf", "oneOf", "allOf"):
        options = schema.get(combinator)
        if isinstance(options, list) and options:
            return json_for_schema(_dict(options[0]), name)
    kind = _first_type(schema)
    if kind == "object" or (kind is None and "properties" in schema):
        properties = _dict(schema.get("properties"))
        return {key: json_for_schema(_dict(sub), key) for key, sub in properties.items()}
    if kind == "array":
        return [json_for_schema(_dict(schema.get("items")), name)]
    scalars: dict[object, Any] = {
        "string": f"mock {name}",
        "integer": 1,
        "number": 1,
        "boolean": True,
        "null": None,
    }
    return scalars.get(kind, {})

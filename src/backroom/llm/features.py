"""The request features beyond plain text, independent of the wire protocol.

Content parts (text and images), a JSON schema for structured output, function tools
and the calls a model makes to them, and how an answer finished.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

ImageDetail = Literal["auto", "low", "high"]
"""How closely the model looks at an image (and how many input tokens it costs)."""
ReasoningEffort = Literal["minimal", "low", "medium", "high"]
"""How hard a reasoning model thinks before it answers."""
ToolChoice = Literal["auto", "none", "required"]
"""Whether the model may, must not, or must call a tool."""


@dataclass(frozen=True, slots=True)
class TextPart:
    """Text inside a message made of parts."""

    text: str


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image inside a message: an `https://` URL or a `data:image/...;base64,` URL."""

    url: str
    detail: ImageDetail | None = None


ContentPart = TextPart | ImagePart
"""One piece of a message's content."""


@dataclass(frozen=True, slots=True)
class JsonSchema:
    """Structured output: the answer is a JSON document that `schema` describes."""

    name: str
    schema: Mapping[str, Any]
    strict: bool | None = None
    description: str | None = None


@dataclass(frozen=True, slots=True)
class FunctionTool:
    """A function the model may call; `parameters` is the JSON schema of its arguments."""

    name: str
    description: str | None = None
    parameters: Mapping[str, Any] | None = None
    strict: bool | None = None


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the model made to one of the request's tools.

    `arguments` is the JSON text the model wrote, kept as it came: a model may write
    JSON that does not parse, and the caller decides what to do with it.
    """

    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Finish:
    """How an answer ended, in both APIs' terms.

    `status` is the Responses API's (`completed` or `incomplete`); `finish_reason` is
    chat completions' (`stop`, `length`, `tool_calls`, `content_filter`); each API's
    answer is translated into the other's, so every result carries both.
    `incomplete_reason` (`max_output_tokens`, `content_filter`) says why an
    incomplete answer stopped.
    """

    status: str = "completed"
    finish_reason: str | None = "stop"
    incomplete_reason: str | None = None

    @property
    def truncated(self) -> bool:
        """True when the answer was cut off by the output token limit."""
        return self.incomplete_reason == "max_output_tokens" or self.finish_reason == "length"


@dataclass(frozen=True, slots=True)
class Sampling:
    """Generation settings passed through as they are; None leaves the provider's default."""

    top_p: float | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)


# How an incomplete Responses answer's reason reads as a chat finish_reason, and back.
_REASON_FOR_INCOMPLETE = {"max_output_tokens": "length", "content_filter": "content_filter"}
_INCOMPLETE_FOR_REASON = {reason: cause for cause, reason in _REASON_FOR_INCOMPLETE.items()}


def finish_from_status(status: str | None, incomplete_reason: str | None, *, calls: bool) -> Finish:
    """A Responses API answer's ending; `calls` says whether it called tools."""
    if status == "incomplete":
        return Finish(
            "incomplete", _REASON_FOR_INCOMPLETE.get(incomplete_reason or ""), incomplete_reason
        )
    return Finish(status or "completed", "tool_calls" if calls else "stop")


def finish_from_reason(finish_reason: str | None) -> Finish:
    """A chat completion's ending, from its choice's `finish_reason`."""
    cause = _INCOMPLETE_FOR_REASON.get(finish_reason or "")
    if cause is not None:
        return Finish("incomplete", finish_reason, cause)
    return Finish("completed", finish_reason)

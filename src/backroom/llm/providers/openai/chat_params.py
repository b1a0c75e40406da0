"""The request features in chat completions' terms, and what its answers say of them.

json_schema      response_format = {"type": "json_schema", "json_schema": {...}}
tools            tools = [{"type": "function", "function": {...}}]
reasoning_effort reasoning_effort
top_p, stop, seed, metadata  as they are
images           {"type": "image_url", "image_url": {"url", "detail"}} parts
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openai.types import CompletionUsage
from openai.types.chat import (
    ChatCompletionContentPartParam,
    ChatCompletionMessage,
    ChatCompletionMessageParam,
)
from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall

from backroom.llm.features import ImagePart, ToolCall
from backroom.llm.providers.openai.feature_specs import function_spec, present, schema_spec
from backroom.llm.request import LLMRequest, Message


def _user_content(turn: Message) -> str | list[ChatCompletionContentPartParam]:
    if isinstance(turn.content, str):
        return turn.content
    parts: list[ChatCompletionContentPartParam] = []
    for part in turn.content:
        if isinstance(part, ImagePart):
            image = {"url": part.url, "detail": part.detail or "auto"}
            parts.append({"type": "image_url", "image_url": image})  # type: ignore[typeddict-item]
        else:
            parts.append({"type": "text", "text": part.text})
    return parts


def chat_message(turn: Message) -> ChatCompletionMessageParam:
    """One turn as a chat message; only user messages carry parts (and images)."""
    # Each role is its own typed dict in the SDK, so the role picks the shape.
    if turn.role == "system":
        return {"role": "system", "content": turn.text}
    if turn.role == "developer":
        return {"role": "developer", "content": turn.text}
    if turn.role == "assistant":
        return {"role": "assistant", "content": turn.text}
    return {"role": "user", "content": _user_content(turn)}


def chat_options(request: LLMRequest) -> dict[str, Any]:
    """The features `request` uses, as keyword arguments of `chat.completions.create`."""
    schema, sampling = request.json_schema, request.sampling
    response_format = (
        None if schema is None else {"type": "json_schema", "json_schema": schema_spec(schema)}
    )
    return present(
        response_format=response_format,
        tools=[{"type": "function", "function": function_spec(tool)} for tool in request.tools],
        tool_choice=request.tool_choice,
        reasoning_effort=request.reasoning_effort,
        top_p=sampling.top_p,
        stop=list(sampling.stop),
        seed=sampling.seed,
        metadata=dict(sampling.metadata),
    )


def chat_tool_calls(message: ChatCompletionMessage) -> tuple[ToolCall, ...]:
    """The function calls of a finished completion's message."""
    return tuple(
        ToolCall(call.id, call.function.name, call.function.arguments)
        for call in message.tool_calls or ()
        if call.type == "function"
    )


def chat_reasoning_tokens(usage: CompletionUsage | None) -> int:
    """The reasoning tokens among the completion tokens (0 when not reported)."""
    details = usage.completion_tokens_details if usage is not None else None
    return (details.reasoning_tokens or 0) if details is not None else 0


@dataclass
class _PartialCall:
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class StreamedToolCalls:
    """Tool calls assembled from a stream's deltas: each arrives in pieces, by index."""

    def __init__(self) -> None:
        self._calls: dict[int, _PartialCall] = {}

    def add(self, deltas: list[ChoiceDeltaToolCall] | None) -> None:
        """Take one chunk's pieces of tool calls."""
        for delta in deltas or ():
            call = self._calls.setdefault(delta.index, _PartialCall())
            call.call_id = delta.id or call.call_id
            function = delta.function
            if function is not None:
                call.name = function.name or call.name
                call.arguments.append(function.arguments or "")

    def calls(self) -> tuple[ToolCall, ...]:
        """The calls assembled so far, in index order."""
        return tuple(
            ToolCall(call.call_id, call.name, "".join(call.arguments))
            for _, call in sorted(self._calls.items())
        )

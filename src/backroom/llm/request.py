"""What one LLM call asks for and what it returns, independent of the wire protocol."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from backroom.llm.features import (
    ContentPart,
    Finish,
    FunctionTool,
    ImagePart,
    JsonSchema,
    ReasoningEffort,
    Sampling,
    TextPart,
    ToolCall,
    ToolChoice,
)
from backroom.llm.pricing import Usage
from backroom.llm.ratelimit_headers import RateLimitSnapshot

Role = Literal["user", "assistant", "system", "developer"]
"""Who speaks in a conversation turn."""


@dataclass(frozen=True, slots=True)
class Message:
    """One turn of a conversation: text, or parts (text and images)."""

    role: Role
    content: str | tuple[ContentPart, ...]

    @property
    def text(self) -> str:
        """The turn's text: its text parts, one per line."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(part.text for part in self.content if isinstance(part, TextPart))

    @property
    def images(self) -> tuple[ImagePart, ...]:
        """The turn's images, in order."""
        if isinstance(self.content, str):
            return ()
        return tuple(part for part in self.content if isinstance(part, ImagePart))


@dataclass(frozen=True, slots=True)
class LLMRequest:
    """One call: a model, its input (a prompt or a conversation) and generation settings.

    The features (see `backroom.llm.features`) are passed through to the provider:
    `json_schema` for structured output, `tools` it may call, a `reasoning_effort`,
    and `sampling` settings.
    """

    model: str
    input: str | tuple[Message, ...]
    instructions: str | None = None
    max_output_tokens: int | None = None
    temperature: float | None = None
    stream: bool = False
    json_schema: JsonSchema | None = None
    tools: tuple[FunctionTool, ...] = ()
    tool_choice: ToolChoice | None = None
    reasoning_effort: ReasoningEffort | None = None
    sampling: Sampling = field(default_factory=Sampling)

    def messages(self) -> list[Message]:
        """The input as a conversation, with `instructions` first as a system message."""
        turns = [Message("user", self.input)] if isinstance(self.input, str) else list(self.input)
        if self.instructions is not None:
            turns.insert(0, Message("system", self.instructions))
        return turns


@dataclass(frozen=True, slots=True)
class LLMResult:
    """What a successful call produced, what it used, and the provider's rate-limit state.

    `finish` says how the answer ended (completed, or cut off and why); `tool_calls`
    are the calls the model made to the request's tools; `reasoning_tokens` is the
    part of the output tokens a reasoning model spent thinking.
    """

    output_text: str
    response_id: str
    model: str
    usage: Usage
    rate_limits: RateLimitSnapshot
    finish: Finish = field(default_factory=Finish)
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning_tokens: int = 0

"""What one LLM call asks for and what it returns, independent of the wire protocol."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from backroom.llm.pricing import Usage
from backroom.llm.ratelimit_headers import RateLimitSnapshot

Role = Literal["user", "assistant", "system", "developer"]
"""Who speaks in a conversation turn."""


@dataclass(frozen=True, slots=True)
class Message:
    """One turn of a conversation."""

    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class LLMRequest:
    """One call: a model, its input (a prompt or a conversation) and generation settings."""

    model: str
    input: str | tuple[Message, ...]
    instructions: str | None = None
    max_output_tokens: int | None = None
    temperature: float | None = None
    stream: bool = False

    def messages(self) -> list[Message]:
        """The input as a conversation, with `instructions` first as a system message."""
        turns = [Message("user", self.input)] if isinstance(self.input, str) else list(self.input)
        if self.instructions is not None:
            turns.insert(0, Message("system", self.instructions))
        return turns


@dataclass(frozen=True, slots=True)
class LLMResult:
    """What a successful call produced, what it used, and the provider's rate-limit state."""

    output_text: str
    response_id: str
    model: str
    usage: Usage
    rate_limits: RateLimitSnapshot

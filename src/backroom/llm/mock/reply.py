"""The mock's answer to a prompt: deterministic text, derived from the prompt alone.

The reply is `[mock <digest>] <last user message>`, where the digest is the first
eight hex digits of the SHA-256 of the model and the whole prompt, so distinct
requests get distinct answers and the same request always gets the same one. Tokens
are counted with `estimate_tokens`; `max_output_tokens` cuts the text short.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from backroom.llm.mock.prompt import Prompt
from backroom.llm.pricing import Usage
from backroom.llm.tokens import CHARS_PER_TOKEN, estimate_tokens

Pause = Callable[[], Awaitable[None]]
"""Awaited between two streamed deltas, to pace a stream."""

# A delta is one word with the spaces after it, or a run of leading spaces.
_DELTA = re.compile(r"\S+\s*|\s+")


def prompt_key(prompt: Prompt) -> str:
    """A digest naming the request's content: same model and text, same key."""
    return hashlib.sha256(f"{prompt.model}\n{prompt.text}".encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Reply:
    """One answer, ready to be rendered by either endpoint."""

    number: int
    """The answer's sequence number on this server, used to build ids."""
    model: str
    text: str
    usage: Usage
    incomplete: bool
    """True when `max_output_tokens` cut the text short."""
    created_s: int
    """Creation time, seconds since the epoch."""

    def deltas(self) -> list[str]:
        """The text in streaming pieces, one word each; joined they give `text`."""
        return _DELTA.findall(self.text)


def compose_reply(prompt: Prompt, *, number: int, created_s: int, cached: bool) -> Reply:
    """The answer to `prompt`; with `cached`, all its input tokens count as cached."""
    text = f"[mock {prompt_key(prompt)[:8]}] {prompt.last_user_text}"
    limit = prompt.max_output_tokens
    incomplete = limit is not None and estimate_tokens(text) > limit
    if limit is not None and incomplete:
        text = text[: limit * CHARS_PER_TOKEN]
    input_tokens = estimate_tokens(prompt.text)
    usage = Usage(
        input_tokens=input_tokens,
        cached_tokens=input_tokens if cached else 0,
        output_tokens=estimate_tokens(text),
    )
    return Reply(number, prompt.model, text, usage, incomplete, created_s)

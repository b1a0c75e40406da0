"""The mock's answer to a prompt: deterministic text, derived from the prompt alone.

The reply is `[mock <digest>] <last user message>`, where the digest is the first
eight hex digits of the SHA-256 of the model and the whole prompt, so distinct
requests get distinct answers and the same request always gets the same one. Tokens
are counted with `estimate_tokens`; `max_output_tokens` cuts the text short. With a
JSON schema the text is a JSON document instead, and with tools the answer is a call
(see `mock.features`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from backroom.llm.mock.features import IMAGE_TOKENS, REASONING_TOKENS, Features, json_for_schema
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
    tool_call: tuple[str, str] | None = None
    """The answer's call to a tool instead of text: its name and its arguments' JSON."""
    reasoning_tokens: int = 0
    """Reasoning tokens, counted among the output tokens."""
    features: Features = field(default_factory=Features)
    """The request's features, for the answer to echo."""

    @property
    def ids(self) -> tuple[str, str]:
        """The ids of the answer's function call item and of the call itself."""
        return f"fc_mock{self.number:08d}", f"call_mock{self.number:08d}"

    reports_usage: bool = True
    """False for the `no_usage` fault: the answer carries no usage at all."""

    def deltas(self) -> list[str]:
        """The text in streaming pieces, one word each; joined they give `text`."""
        return _DELTA.findall(self.text)


def _before_stop(text: str, stop: tuple[str, ...]) -> str:
    """`text` up to the first stop sequence in it, as a model stops there."""
    ends = [text.find(sequence) for sequence in stop if sequence in text]
    return text[: min(ends)] if ends else text


def _text(prompt: Prompt) -> str:
    features = prompt.features
    if features.schema is not None:
        return json.dumps(json_for_schema(features.schema))
    text = f"[mock {prompt_key(prompt)[:8]}] {prompt.last_user_text}"
    return _before_stop(text, features.stop)


def _tool_call(features: Features) -> tuple[str, str] | None:
    tool = features.calls_tool
    if tool is None:
        return None
    parameters = tool.parameters or {"type": "object"}
    return tool.name, json.dumps(json_for_schema(parameters))


def compose_reply(prompt: Prompt, *, number: int, created_s: int, cached: bool) -> Reply:
    """The answer to `prompt`; with `cached`, all its input tokens count as cached (read
    from the cache); else, for a prompt that marks a cache breakpoint, as written."""
    features = prompt.features
    call = _tool_call(features)
    text = "" if call is not None else _text(prompt)
    limit = prompt.max_output_tokens
    incomplete = limit is not None and estimate_tokens(text) > limit
    if limit is not None and incomplete:
        text = text[: limit * CHARS_PER_TOKEN]
    input_tokens = estimate_tokens(prompt.text) + IMAGE_TOKENS * features.images
    reasoning = REASONING_TOKENS.get(features.reasoning_effort or "", 0)
    arguments = estimate_tokens(call[1]) if call is not None else 0
    usage = Usage(
        input_tokens=input_tokens,
        cached_tokens=input_tokens if cached else 0,
        output_tokens=estimate_tokens(text) + arguments + reasoning,
        cache_write_tokens=input_tokens if prompt.cache_control and not cached else 0,
    )
    return Reply(
        number, prompt.model, text, usage, incomplete, created_s, call, reasoning, features
    )

"""The mock server's reading of a request: which model, what text, how to answer.

Every endpoint accepts the shapes its SDK sends (`openai`'s, and `anthropic`'s for
`/v1/messages`; extra fields are ignored), and reduces them to one `Prompt`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from backroom.llm.mock.features import (
    Features,
    features_from_chat,
    features_from_messages,
    features_from_responses,
)


class _Part(BaseModel):
    """A content part such as `{"type": "input_text", "text": "..."}`."""

    model_config = ConfigDict(extra="allow")

    text: str | None = None


class _Turn(BaseModel):
    """One message of a conversation."""

    model_config = ConfigDict(extra="allow")

    role: str = "user"
    content: str | list[_Part] | None = None

    def text(self) -> str:
        """Every piece of text in the message, joined."""
        if self.content is None or isinstance(self.content, str):
            return self.content or ""
        return "".join(part.text or "" for part in self.content)


class _ResponsesBody(BaseModel):
    """A `POST /v1/responses` body."""

    model_config = ConfigDict(extra="allow")

    model: str
    input: str | list[_Turn]
    instructions: str | None = None
    max_output_tokens: int | None = Field(default=None, gt=0)
    stream: bool = False
    background: bool = False


class _StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool = False


class _ChatBody(BaseModel):
    """A `POST /v1/chat/completions` body."""

    model_config = ConfigDict(extra="allow")

    model: str
    messages: list[_Turn] = Field(min_length=1)
    max_tokens: int | None = Field(default=None, gt=0)
    max_completion_tokens: int | None = Field(default=None, gt=0)
    stream: bool = False
    stream_options: _StreamOptions | None = None


class _MessagesBody(BaseModel):
    """A `POST /v1/messages` body (Anthropic's Messages API)."""

    model_config = ConfigDict(extra="allow")

    model: str
    max_tokens: int = Field(gt=0)
    messages: list[_Turn] = Field(min_length=1)
    system: str | list[_Part] | None = None
    stream: bool = False


@dataclass(frozen=True, slots=True)
class Prompt:
    """What the mock needs from a request, whichever endpoint it came to."""

    model: str
    text: str
    """All of the request's text: instructions and every message, one per line."""
    last_user_text: str
    max_output_tokens: int | None
    stream: bool
    stream_usage: bool = True
    """Whether a stream ends with usage (chat completions send it only when asked)."""
    background: bool = False
    """A Responses API call in background mode: answered at once, retrieved later."""
    features: Features = field(default_factory=Features)
    """Structured output, tools, reasoning, stop sequences, images (see `mock.features`)."""
    cache_control: bool = False
    """An Anthropic request that marks a prompt-cache breakpoint: its first answer
    writes its input to the cache."""


def _last_user_text(turns: list[_Turn]) -> str:
    user_turns = [turn for turn in turns if turn.role == "user"] or turns
    return user_turns[-1].text() if user_turns else ""


def prompt_from_responses(body: object) -> Prompt:
    """A `/v1/responses` body as a Prompt; pydantic's ValidationError if malformed."""
    request = _ResponsesBody.model_validate(body)
    turns = [_Turn(content=request.input)] if isinstance(request.input, str) else request.input
    texts = [turn.text() for turn in turns]
    if request.instructions is not None:
        texts.insert(0, request.instructions)
    return Prompt(
        model=request.model,
        text="\n".join(texts),
        last_user_text=_last_user_text(turns),
        max_output_tokens=request.max_output_tokens,
        stream=request.stream,
        features=features_from_responses(body if isinstance(body, dict) else {}),
        background=request.background,
    )


def prompt_from_chat(body: object) -> Prompt:
    """A `/v1/chat/completions` body as a Prompt; pydantic's ValidationError if malformed."""
    request = _ChatBody.model_validate(body)
    options = request.stream_options
    return Prompt(
        model=request.model,
        text="\n".join(turn.text() for turn in request.messages),
        last_user_text=_last_user_text(request.messages),
        max_output_tokens=request.max_completion_tokens or request.max_tokens,
        stream=request.stream,
        stream_usage=options is not None and options.include_usage,
        features=features_from_chat(body if isinstance(body, dict) else {}),
    )


def _mentions(value: object, key: str) -> bool:
    """Whether `key` is a key anywhere in the JSON `value`."""
    if isinstance(value, dict):
        return key in value or any(_mentions(item, key) for item in value.values())
    return isinstance(value, list) and any(_mentions(item, key) for item in value)


def prompt_from_messages(body: object) -> Prompt:
    """A `/v1/messages` body as a Prompt; pydantic's ValidationError if malformed."""
    request = _MessagesBody.model_validate(body)
    system = request.system
    if isinstance(system, list):
        system = "".join(part.text or "" for part in system)
    texts = ([system] if system else []) + [turn.text() for turn in request.messages]
    return Prompt(
        model=request.model,
        text="\n".join(texts),
        last_user_text=_last_user_text(request.messages),
        max_output_tokens=request.max_tokens,
        stream=request.stream,
        features=features_from_messages(body if isinstance(body, dict) else {}),
        cache_control=_mentions(body, "cache_control"),
    )

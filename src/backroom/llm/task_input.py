"""The input of an `llm.respond` job, as submitted, and the call it asks for."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import ErrorDetails

from backroom.core.errors import ConfigError, Permanent
from backroom.core.job import JSON
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.feature_input import (
    ImagePartInput,
    JsonSchemaInput,
    MetadataInput,
    PartInput,
    StopInput,
    ToolInput,
)
from backroom.llm.features import ReasoningEffort, Sampling, ToolChoice
from backroom.llm.request import LLMRequest, Message, Role


def _is_branch(part: str | int) -> bool:
    """Whether a location part names a union's branch (`str`, `list[MessageInput]`)."""
    return isinstance(part, str) and ("[" in part or part == "str")


def _describe(problem: ErrorDetails) -> str:
    """`field.path: message`, or just the message when the whole input is wrong."""
    where = ".".join(str(part) for part in problem["loc"] if not _is_branch(part))
    return f"{where}: {problem['msg']}" if where else problem["msg"]


def _problems(error: pydantic.ValidationError) -> str:
    """Every problem, but a union's "should be a string" when its value was another shape.

    `input` and `content` are a string or a list: a wrong list fails both branches,
    and only the list's problems say what to fix.
    """
    problems = error.errors()
    meaningful = [
        problem
        for problem in problems
        if not (problem["type"] == "string_type" and problem["loc"][-1:] == ("str",))
    ]
    return "; ".join(_describe(problem) for problem in meaningful or problems)


class MessageInput(BaseModel):
    """One conversation turn: `{"role": "user", "content": "..." or [parts]}`.

    Parts are text and, in user messages only, images (see `feature_input`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Role
    content: str | Annotated[list[PartInput], Field(min_length=1)]

    @model_validator(mode="after")
    def _images_only_from_users(self) -> MessageInput:
        parts = () if isinstance(self.content, str) else self.content
        if self.role != "user" and any(isinstance(part, ImagePartInput) for part in parts):
            raise ValueError("only user messages may carry images")
        return self

    def message(self) -> Message:
        """As the request's turn."""
        if isinstance(self.content, str):
            return Message(self.role, self.content)
        return Message(self.role, tuple(part.part() for part in self.content))


class FallbackInput(BaseModel):
    """One alternative a job moves to when its lane cannot serve it: `{provider?, model}`
    (the provider defaults to the job's own)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1)
    provider: str | None = Field(default=None, min_length=1)


class RespondInput(BaseModel):
    """`{model, input, instructions?, max_output_tokens?, temperature?, prompt_version?,
    provider?, stream?}`; `input` is a prompt or a list of messages.

    `provider` picks a configured provider (default: the configured default);
    `prompt_version` is not sent anywhere: it labels the call's usage records.
    The request features (`json_schema`, `tools`, `tool_choice`, `reasoning_effort`,
    `top_p`, `stop`, `seed`, `metadata`, image parts) are described in
    `backroom.llm.feature_input`; `fail_on_truncation` fails the job, for good, when
    the answer is cut off at the output token limit.
    `fallbacks` lists alternatives in order (see `backroom.llm.routes`), and
    `attempts_per_lane` how many failed attempts on one lane move the job to the next
    (default: the config's `fallback_after_attempts`).
    `max_cost_usd` caps what all the job's attempts may cost together (see
    `backroom.llm.spend`). `offload: "batch"` sends the job through the provider's
    batch API at its batch price (see `backroom.llm.batch.config`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1)
    input: str | list[MessageInput] = Field(min_length=1)
    instructions: str | None = None
    max_output_tokens: int | None = Field(default=None, gt=0)
    temperature: float | None = Field(default=None, ge=0, le=2)
    prompt_version: str | None = None
    provider: str | None = Field(default=None, min_length=1)
    stream: bool = False
    json_schema: JsonSchemaInput | None = None
    tools: Annotated[list[ToolInput], Field(min_length=1, max_length=128)] | None = None
    tool_choice: ToolChoice | None = None
    reasoning_effort: ReasoningEffort | None = None
    top_p: float | None = Field(default=None, ge=0, le=1)
    stop: StopInput | None = None
    seed: int | None = Field(default=None, strict=True)
    metadata: MetadataInput | None = None
    fail_on_truncation: bool = False
    fallbacks: list[FallbackInput] = Field(default_factory=list, max_length=8)
    attempts_per_lane: int | None = Field(default=None, gt=0)
    offload: Literal["batch"] | None = None

    @model_validator(mode="after")
    def _tools_fit(self) -> RespondInput:
        names = [tool.name for tool in self.tools or ()]
        if len(set(names)) != len(names):
            raise ValueError("tool names must be unique")
        if self.tool_choice == "required" and not names:
            raise ValueError("tool_choice 'required' needs tools")
        return self

    max_cost_usd: Decimal | None = Field(default=None, gt=0)

    @classmethod
    def parse(cls, payload: JSON) -> RespondInput:
        """Validate a job's input; `Permanent` naming every problem if it is invalid.

        No attempt can fix an invalid input, so the job fails at once.
        """
        try:
            return cls.model_validate(payload)
        except pydantic.ValidationError as error:
            problems = _problems(error)
            raise Permanent(f"invalid llm.respond input: {problems}") from None

    def request(self) -> LLMRequest:
        """The provider call this input asks for."""
        prompt = (
            self.input
            if isinstance(self.input, str)
            else tuple(turn.message() for turn in self.input)
        )
        return LLMRequest(
            model=self.model,
            input=prompt,
            instructions=self.instructions,
            max_output_tokens=self.max_output_tokens,
            temperature=self.temperature,
            stream=self.stream,
            json_schema=None if self.json_schema is None else self.json_schema.schema_spec(),
            tools=tuple(tool.tool() for tool in self.tools or ()),
            tool_choice=self.tool_choice,
            reasoning_effort=self.reasoning_effort,
            sampling=Sampling(self.top_p, self.stop or (), self.seed, self.metadata or {}),
        )

    def provider_in(self, config: LLMConfig) -> ProviderConfig:
        """The provider this input names, or the default; `Permanent` if there is none."""
        try:
            return config.provider(self.provider)
        except ConfigError as error:
            raise Permanent(str(error)) from None

    def model_in(self, provider: ProviderConfig) -> ModelConfig:
        """The model this input names on `provider`; `Permanent` if it may not be used
        there (not configured, and the provider does not take `any_model`)."""
        try:
            return provider.allowed_model(self.model)
        except ConfigError as error:
            raise Permanent(str(error)) from None

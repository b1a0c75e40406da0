"""The input of an `llm.respond` job, as submitted, and the call it asks for."""

from __future__ import annotations

import pydantic
from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import ErrorDetails

from backroom.core.errors import ConfigError, Permanent
from backroom.core.job import JSON
from backroom.llm.config import LLMConfig, ProviderConfig
from backroom.llm.request import LLMRequest, Message, Role


def _describe(problem: ErrorDetails) -> str:
    """`field.path: message`, or just the message when the whole input is wrong."""
    where = ".".join(str(part) for part in problem["loc"])
    return f"{where}: {problem['msg']}" if where else problem["msg"]


class MessageInput(BaseModel):
    """One conversation turn: `{"role": "user", "content": "..."}`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Role
    content: str


class RespondInput(BaseModel):
    """`{model, input, instructions?, max_output_tokens?, temperature?, prompt_version?,
    provider?, stream?}`; `input` is a prompt or a list of messages.

    `provider` picks a configured provider (default: the configured default);
    `prompt_version` is not sent anywhere: it labels the call's usage records.
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

    @classmethod
    def parse(cls, payload: JSON) -> RespondInput:
        """Validate a job's input; `Permanent` naming every problem if it is invalid.

        No attempt can fix an invalid input, so the job fails at once.
        """
        try:
            return cls.model_validate(payload)
        except pydantic.ValidationError as error:
            problems = "; ".join(_describe(problem) for problem in error.errors())
            raise Permanent(f"invalid llm.respond input: {problems}") from None

    def request(self) -> LLMRequest:
        """The provider call this input asks for."""
        prompt = (
            self.input
            if isinstance(self.input, str)
            else tuple(Message(turn.role, turn.content) for turn in self.input)
        )
        return LLMRequest(
            model=self.model,
            input=prompt,
            instructions=self.instructions,
            max_output_tokens=self.max_output_tokens,
            temperature=self.temperature,
            stream=self.stream,
        )

    def provider_in(self, config: LLMConfig) -> ProviderConfig:
        """The provider this input names, or the default; `Permanent` if there is none."""
        try:
            return config.provider(self.provider)
        except ConfigError as error:
            raise Permanent(str(error)) from None

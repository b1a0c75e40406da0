"""The parts of an `llm.respond` input beyond a plain prompt, validated.

    content     a message's content: a string, or a list of parts
                {"type": "text", "text": "..."} and, in user messages,
                {"type": "image", "url": "https://... | data:image/png;base64,...",
                 "detail": "auto|low|high"?}
    json_schema {"name", "schema", "strict"?, "description"?}: the answer is JSON that
                the schema describes, parsed into the result's `output_parsed`
    tools       [{"name", "description"?, "parameters"?, "strict"?}]: functions the
                model may call; its calls come back in the result's `tool_calls`
    metadata    up to 16 string pairs (keys up to 64 characters, values up to 512)
    stop        a string or up to 4 strings

The limits are OpenAI's, so an input that passes here is not refused there for them.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from backroom.llm.features import FunctionTool, ImageDetail, ImagePart, JsonSchema, TextPart

_NAME = r"^[a-zA-Z0-9_-]{1,64}$"
_IMAGE_URL = re.compile(r"^(https?://\S+|data:image/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=\s]+)$")
MAX_STOP_SEQUENCES = 4
MAX_METADATA_PAIRS = 16
MAX_METADATA_KEY = 64
MAX_METADATA_VALUE = 512


class TextPartInput(BaseModel):
    """`{"type": "text", "text": "..."}`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["text"]
    text: str

    def part(self) -> TextPart:
        """As the request's part."""
        return TextPart(self.text)


def _image_url(url: str) -> str:
    if not _IMAGE_URL.match(url):
        raise ValueError("must be an http(s) URL or a data:image/...;base64, URL")
    return url


class ImagePartInput(BaseModel):
    """`{"type": "image", "url": "...", "detail"?: "auto|low|high"}`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["image"]
    url: Annotated[str, AfterValidator(_image_url)]
    detail: ImageDetail | None = None

    def part(self) -> ImagePart:
        """As the request's part."""
        return ImagePart(self.url, self.detail)


PartInput = Annotated[TextPartInput | ImagePartInput, Field(discriminator="type")]
"""One part of a message's content."""


class JsonSchemaInput(BaseModel):
    """`{"name", "schema", "strict"?, "description"?}`: what shape the answer's JSON has."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    name: str = Field(pattern=_NAME)
    json_schema: dict[str, Any] = Field(alias="schema", min_length=1)
    strict: bool | None = None
    description: str | None = None

    def schema_spec(self) -> JsonSchema:
        """As the request's schema."""
        return JsonSchema(self.name, self.json_schema, self.strict, self.description)


class ToolInput(BaseModel):
    """`{"name", "description"?, "parameters"?, "strict"?}`: a function the model may call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["function"] = "function"
    name: str = Field(pattern=_NAME)
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None

    def tool(self) -> FunctionTool:
        """As the request's tool."""
        return FunctionTool(self.name, self.description, self.parameters, self.strict)


def _one_or_many(value: object) -> object:
    return [value] if isinstance(value, str) else value


def _stop(sequences: tuple[str, ...]) -> tuple[str, ...]:
    if not 1 <= len(sequences) <= MAX_STOP_SEQUENCES:
        raise ValueError(f"give 1 to {MAX_STOP_SEQUENCES} stop sequences")
    if any(not sequence for sequence in sequences):
        raise ValueError("a stop sequence must not be empty")
    return sequences


def _metadata(pairs: dict[str, str]) -> dict[str, str]:
    if len(pairs) > MAX_METADATA_PAIRS:
        raise ValueError(f"at most {MAX_METADATA_PAIRS} pairs")
    for key, value in pairs.items():
        if not 1 <= len(key) <= MAX_METADATA_KEY:
            raise ValueError(f"key {key[:80]!r} must be 1 to {MAX_METADATA_KEY} characters")
        if len(value) > MAX_METADATA_VALUE:
            raise ValueError(f"the value of {key!r} is over {MAX_METADATA_VALUE} characters")
    return pairs


StopInput = Annotated[tuple[str, ...], BeforeValidator(_one_or_many), AfterValidator(_stop)]
"""`stop`: one sequence or a list of up to 4, read as a tuple."""
MetadataInput = Annotated[dict[str, str], AfterValidator(_metadata)]
"""`metadata`: string pairs within OpenAI's limits."""

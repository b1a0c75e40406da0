"""An `LLMRequest` in the Messages API's terms (`client.messages.create` arguments).

instructions, system and developer turns   system (one text, in order)
user and assistant turns                   messages; text and image blocks
max_output_tokens                          max_tokens (required: `DEFAULT_MAX_TOKENS`)
temperature, top_p                         sent in the body as they are
stop                                       stop_sequences
json_schema                                output_config.format = {type: json_schema}
reasoning_effort                           output_config.effort (minimal reads as low)
tools, tool_choice                         tools [{name, description, input_schema}],
                                           tool_choice auto | any | none
images                                     {"type": "image", "source": url | base64}
(the provider's prompt_cache)              cache_control = {"type": "ephemeral"}

`seed` and `metadata` have no counterpart: a request that sets them is refused
(`Permanent`) rather than sent without them.
"""

from __future__ import annotations

import re
from typing import Any

from backroom.core.errors import Permanent
from backroom.llm.features import ImagePart, TextPart
from backroom.llm.request import LLMRequest, Message

DEFAULT_MAX_TOKENS = 4_096
"""`max_tokens` for a request that sets no `max_output_tokens` (Anthropic needs one)."""
_DATA_URL = re.compile(r"^data:(image/[a-z+.-]+);base64,(.*)$", re.DOTALL)
_TOOL_CHOICES = {"auto": "auto", "required": "any", "none": "none"}
_EFFORTS = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}


def _image(part: ImagePart) -> dict[str, Any]:
    data = _DATA_URL.match(part.url)
    if data is None:
        return {"type": "image", "source": {"type": "url", "url": part.url}}
    source = {"type": "base64", "media_type": data.group(1), "data": data.group(2)}
    return {"type": "image", "source": source}


def _content(turn: Message) -> str | list[dict[str, Any]]:
    if isinstance(turn.content, str):
        return turn.content
    return [
        {"type": "text", "text": part.text} if isinstance(part, TextPart) else _image(part)
        for part in turn.content
    ]


def _system(request: LLMRequest) -> str | None:
    texts = [turn.text for turn in request.messages() if turn.role in {"system", "developer"}]
    return "\n\n".join(texts) if texts else None


def _output_config(request: LLMRequest) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if request.json_schema is not None:
        config["format"] = {"type": "json_schema", "schema": dict(request.json_schema.schema)}
    if request.reasoning_effort is not None:
        config["effort"] = _EFFORTS[request.reasoning_effort]
    return config


def _tools(request: LLMRequest) -> dict[str, Any]:
    if not request.tools:
        return {}
    tools = [
        {"name": tool.name, "input_schema": dict(tool.parameters or {"type": "object"})}
        | ({} if tool.description is None else {"description": tool.description})
        for tool in request.tools
    ]
    arguments: dict[str, Any] = {"tools": tools}
    if request.tool_choice is not None:
        arguments["tool_choice"] = {"type": _TOOL_CHOICES[request.tool_choice]}
    return arguments


def _refuse_unmapped(request: LLMRequest) -> None:
    unmapped = [
        name
        for name, value in (
            ("seed", request.sampling.seed),
            ("metadata", request.sampling.metadata),
        )
        if value
    ]
    if unmapped:
        raise Permanent(
            f"{' and '.join(unmapped)}: Anthropic's Messages API has no such setting; "
            "leave it out for an anthropic provider"
        )


def message_arguments(request: LLMRequest, *, prompt_cache: bool = False) -> dict[str, Any]:
    """The keyword arguments of `client.messages.create` for `request`; `Permanent` for
    a setting the Messages API lacks. With `prompt_cache`, the prompt is marked for
    Anthropic's prompt cache (`cache_control`, five minutes)."""
    _refuse_unmapped(request)
    sampling = request.sampling
    arguments: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_output_tokens or DEFAULT_MAX_TOKENS,
        "messages": [
            {"role": turn.role, "content": _content(turn)}
            for turn in request.messages()
            if turn.role in {"user", "assistant"}
        ],
        "stream": request.stream,
        **_tools(request),
    }
    system, output_config = _system(request), _output_config(request)
    if system is not None:
        arguments["system"] = system
    if output_config:
        arguments["output_config"] = output_config
    if sampling.stop:
        arguments["stop_sequences"] = list(sampling.stop)
    if prompt_cache:
        arguments["cache_control"] = {"type": "ephemeral"}
    extra = {"temperature": request.temperature, "top_p": sampling.top_p}
    extra_body = {key: value for key, value in extra.items() if value is not None}
    if extra_body:
        # Not among this SDK's arguments any more; the API still takes them.
        arguments["extra_body"] = extra_body
    return arguments

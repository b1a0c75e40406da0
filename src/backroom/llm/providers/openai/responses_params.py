"""The request features in the Responses API's terms, and what its answers say of them.

json_schema      text.format = {"type": "json_schema", name, schema, strict}
tools            tools = [{"type": "function", name, description, parameters, strict}]
reasoning_effort reasoning = {"effort": ...}
top_p, metadata  as they are
stop, seed       not in the Responses API: sent in the body as they are, so a
                 compatible server that knows them uses them, and OpenAI's refusal
                 (a 400) names them
images           {"type": "input_image", "image_url", "detail"} parts
"""

from __future__ import annotations

from typing import Any

from openai.types.responses import (
    Response,
    ResponseFunctionToolCall,
    ResponseInputMessageContentListParam,
    ResponseInputParam,
)

from backroom.llm.features import ContentPart, Finish, ImagePart, ToolCall, finish_from_status
from backroom.llm.providers.openai.feature_specs import function_spec, present, schema_spec
from backroom.llm.request import LLMRequest, Message


def _parts(parts: tuple[ContentPart, ...]) -> ResponseInputMessageContentListParam:
    content: ResponseInputMessageContentListParam = []
    for part in parts:
        if isinstance(part, ImagePart):
            content.append(
                {"type": "input_image", "image_url": part.url, "detail": part.detail or "auto"}
            )
        else:
            content.append({"type": "input_text", "text": part.text})
    return content


def _turn(turn: Message) -> Any:
    # Only user messages carry images (the input checks), and only their parts are
    # input parts: other roles get their text as one string.
    if isinstance(turn.content, str) or turn.role != "user":
        return {"role": turn.role, "content": turn.text}
    return {"role": turn.role, "content": _parts(turn.content)}


def responses_input(request: LLMRequest) -> str | ResponseInputParam:
    """The request's prompt or conversation as the Responses API's `input`."""
    if isinstance(request.input, str):
        return request.input
    return [_turn(turn) for turn in request.input]


def responses_options(request: LLMRequest) -> dict[str, Any]:
    """The features `request` uses, as keyword arguments of `responses.create`."""
    schema, effort, sampling = request.json_schema, request.reasoning_effort, request.sampling
    return present(
        text=None if schema is None else {"format": {"type": "json_schema", **schema_spec(schema)}},
        tools=[{"type": "function", **function_spec(tool)} for tool in request.tools],
        tool_choice=request.tool_choice,
        reasoning=None if effort is None else {"effort": effort},
        top_p=sampling.top_p,
        metadata=dict(sampling.metadata),
        extra_body=present(stop=list(sampling.stop), seed=sampling.seed) or None,
    )


def responses_tool_calls(response: Response) -> tuple[ToolCall, ...]:
    """The function calls among the response's output items, in order."""
    return tuple(
        ToolCall(item.call_id, item.name, item.arguments)
        for item in response.output
        if isinstance(item, ResponseFunctionToolCall)
    )


def responses_finish(response: Response, *, calls: bool) -> Finish:
    """How the response ended."""
    details = response.incomplete_details
    reason = details.reason if details is not None else None
    return finish_from_status(response.status, reason, calls=calls)


def responses_reasoning_tokens(response: Response) -> int:
    """The reasoning tokens among the response's output tokens (0 when not reported)."""
    usage = response.usage
    details = usage.output_tokens_details if usage is not None else None
    return (details.reasoning_tokens or 0) if details is not None else 0

"""One line of a Batch API output or error file, read as plain JSON.

A batch's output file holds one Responses API body per line. Validating each into the
SDK's `Response` model took half of a batch's write-back (10,000 lines: pydantic
building every output item, content part and usage detail), for the few fields
backroom keeps: the output text, the function calls, how it ended, the id, the model
and the usage. `line_result` reads exactly those from the JSON (decoded by orjson,
`core.json_read`), the way the SDK's `Response` gives them (`output_text`: the text
parts of the message items, in order), and gives the same `LineResult` as
`response_result` would.

An error line is classified by the online error map, as an online call's error is.
"""

from __future__ import annotations

from typing import Any

from backroom.core.errors import Permanent, Retryable
from backroom.core.json_read import loads
from backroom.llm.batch.provider import LineOutcome, LineResult
from backroom.llm.features import ToolCall, finish_from_status
from backroom.llm.pricing import Usage
from backroom.llm.providers.openai.errors import error_for_response, error_for_stream_failure
from backroom.llm.ratelimit_headers import RateLimitSnapshot
from backroom.llm.request import LLMResult

_UNFINISHED_CODES = frozenset({"batch_expired", "batch_cancelled"})
_NO_LIMITS = RateLimitSnapshot()  # a batch line comes with no rate-limit headers


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _count(value: object) -> int:
    return value if isinstance(value, int) else 0


def _items(value: object) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _output_text(output: list[dict[str, Any]]) -> str:
    """The text parts of the message items, joined (the SDK's `Response.output_text`)."""
    return "".join(
        str(part.get("text") or "")
        for item in output
        if item.get("type") == "message"
        for part in _items(item.get("content"))
        if part.get("type") == "output_text"
    )


def _tool_calls(output: list[dict[str, Any]]) -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(str(item.get("call_id")), str(item.get("name")), str(item.get("arguments")))
        for item in output
        if item.get("type") == "function_call"
    )


def _usage(body: dict[str, Any]) -> tuple[Usage, int]:
    """The body's usage, and its reasoning tokens."""
    usage = body.get("usage")
    if not isinstance(usage, dict):
        return Usage(reported=False), 0
    cached = _count(_dict(usage.get("input_tokens_details")).get("cached_tokens"))
    reasoning = _count(_dict(usage.get("output_tokens_details")).get("reasoning_tokens"))
    counts = Usage(_count(usage.get("input_tokens")), cached, _count(usage.get("output_tokens")))
    return counts, reasoning


def body_result(body: dict[str, Any]) -> LLMResult:
    """A Responses API body (as JSON) as the call's result."""
    output = _items(body.get("output"))
    calls = _tool_calls(output)
    usage, reasoning = _usage(body)
    incomplete = _dict(body.get("incomplete_details")).get("reason")
    return LLMResult(
        output_text=_output_text(output),
        response_id=str(body.get("id")),
        model=str(body.get("model")),
        usage=usage,
        rate_limits=_NO_LIMITS,
        finish=finish_from_status(body.get("status"), incomplete, calls=bool(calls)),
        tool_calls=calls,
        reasoning_tokens=reasoning,
    )


def _line_error(line: dict[str, Any], now: int) -> Retryable | Permanent:
    response = _dict(line.get("response"))
    body = _dict(response.get("body"))
    error = _dict(body.get("error")) or _dict(line.get("error"))
    message = str(error.get("message") or "the batch line failed without a message")
    code = error.get("code") or error.get("type")
    status = response.get("status_code")
    if isinstance(status, int):
        return error_for_response(
            status, {}, error_class="BatchLineError", message=message, code=code, now=now
        )
    return error_for_stream_failure(code, message, error_class="BatchLineError")


def line_result(raw: str | bytes, now: int) -> LineResult:
    """One line of an output or error file as a `LineResult`."""
    line = _dict(loads(raw))
    custom = str(line.get("custom_id"))
    response = _dict(line.get("response"))
    body = response.get("body")
    if response.get("status_code") == 200 and isinstance(body, dict):
        return LineResult(custom, LineOutcome.SUCCEEDED, result=body_result(body))
    if not response and _dict(line.get("error")).get("code") in _UNFINISHED_CODES:
        return LineResult(custom, LineOutcome.UNFINISHED)
    return LineResult(custom, LineOutcome.ERRORED, error=_line_error(line, now))

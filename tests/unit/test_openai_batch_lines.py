"""A Batch API output line read as plain JSON gives the result the SDK's `Response`
model gives (`response_result`), for plain text, several parts and messages, function
calls, an incomplete answer, reasoning and cached tokens, and no usage; error lines
are classified as online errors are, and lines that never ran are unfinished."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.types.responses import Response

from backroom.core.errors import Permanent, Retryable
from backroom.llm.batch.provider import LineOutcome
from backroom.llm.providers.openai.batch_lines import line_result
from backroom.llm.providers.openai.responses import response_result


def _message(*texts: str) -> dict[str, Any]:
    parts = [{"type": "output_text", "text": text, "annotations": []} for text in texts]
    parts.append({"type": "refusal", "refusal": "not this part"})
    return {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed"} | {
        "content": parts
    }


def _call(number: int) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{number}", "call_id": f"call_{number}"} | {
        "name": "lookup",
        "arguments": json.dumps({"n": number}),
        "status": "completed",
    }


def _body(output: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    usage = {
        "input_tokens": 120,
        "input_tokens_details": {"cached_tokens": 64, "cache_write_tokens": 0},
        "output_tokens": 30,
        "output_tokens_details": {"reasoning_tokens": 12},
        "total_tokens": 150,
    }
    body = {"id": "resp_1", "object": "response", "created_at": 1, "model": "mini"}
    body |= {"status": "completed", "output": output, "usage": usage, "tool_choice": "auto"}
    body |= {"tools": [], "parallel_tool_calls": True, "incomplete_details": None}
    return body | fields


BODIES = {
    "text": _body([_message("Hello, world")]),
    "parts and messages": _body([_message("a", "b\nc"), _message("\u2028d")]),
    "function calls": _body([_message("calling"), _call(1), _call(2)]),
    "incomplete": _body(
        [_message("cut")], status="incomplete", incomplete_details={"reason": "max_output_tokens"}
    ),
    "no usage": _body([_message("x")], usage=None),
    "no details": _body(
        [_message("y")], usage={"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}
    ),
}


def _line(body: dict[str, Any], status: int = 200) -> str:
    response = {"status_code": status, "request_id": "req_1", "body": body}
    return json.dumps({"id": "batch_req_1", "custom_id": "job-7-1", "response": response})


@pytest.mark.parametrize("name", list(BODIES))
def test_a_line_reads_as_the_sdk_reads_its_response(name: str) -> None:
    body = BODIES[name]
    line = line_result(_line(body).encode(), now=0)
    assert line.custom_id == "job-7-1"
    assert line.outcome is LineOutcome.SUCCEEDED
    if name == "no details":
        # The SDK's model refuses a usage without its details; the line still reads.
        assert line.result is not None and line.result.usage.input_tokens == 3
        return
    assert line.result == response_result(Response.model_validate(body), {})


def test_an_error_line_is_classified_as_an_online_error() -> None:
    error = {"error": {"message": "bad model", "type": "invalid_request_error", "code": None}}
    permanent = line_result(_line(error, status=400), now=0)
    assert permanent.outcome is LineOutcome.ERRORED
    assert isinstance(permanent.error, Permanent) and "bad model" in str(permanent.error)
    busy = line_result(_line({"error": {"message": "overloaded"}}, status=503), now=0)
    assert isinstance(busy.error, Retryable)


def test_a_line_the_batch_never_ran_is_unfinished() -> None:
    for code in ("batch_expired", "batch_cancelled"):
        raw = {"custom_id": "job-1-1", "response": None, "error": {"code": code, "message": "m"}}
        assert line_result(json.dumps(raw), now=0).outcome is LineOutcome.UNFINISHED
    failed = {"custom_id": "job-1-1", "response": None, "error": {"code": "server_error"}}
    assert line_result(json.dumps(failed), now=0).outcome is LineOutcome.ERRORED

"""The chat completions wire format, as the mock sends it: one JSON object, or SSE chunks.

A stream sends a chunk with the assistant role, one chunk per word, a chunk with the
finish reason, a usage chunk if `stream_options.include_usage` asked for it, and
`data: [DONE]`. An answer that calls a tool sends the call's id and name, then its
arguments, in `tool_calls` deltas, and finishes with `tool_calls`. A broken stream
(see `broken`) goes wrong after the first word; with `stream_error` it sends an
`error` chunk.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from backroom.llm.mock.broken import broken_frames
from backroom.llm.mock.reply import Pause, Reply

JSON = dict[str, Any]
_STREAM_FAILURE = {
    "message": "The server had an error while streaming the completion (scripted fault).",
    "type": "server_error",
    "code": "server_error",
}


def _usage(reply: Reply) -> JSON:
    usage = reply.usage
    return {
        "prompt_tokens": usage.input_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        "completion_tokens": usage.output_tokens,
        "completion_tokens_details": {"reasoning_tokens": reply.reasoning_tokens},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def _finish_reason(reply: Reply) -> str:
    if reply.tool_call is not None:
        return "tool_calls"
    return "length" if reply.incomplete else "stop"


def _tool_calls(reply: Reply, arguments: str | None = None) -> list[JSON]:
    """The answer's tool call, with `arguments` in place of the real ones if given."""
    name, real = reply.tool_call or ("", "")
    function = {"name": name, "arguments": real if arguments is None else arguments}
    return [{"index": 0, "id": reply.ids[1], "type": "function", "function": function}]


def _envelope(reply: Reply, object_type: str, **fields: Any) -> JSON:
    return {
        "id": f"chatcmpl-mock{reply.number:08d}",
        "object": object_type,
        "created": reply.created_s,
        "model": reply.model,
        **fields,
    }


def _message(reply: Reply) -> JSON:
    if reply.tool_call is None:
        return {"role": "assistant", "content": reply.text}
    calls = [
        {key: value for key, value in call.items() if key != "index"} for call in _tool_calls(reply)
    ]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def completion_body(reply: Reply) -> JSON:
    """The finished completion, as a non-streaming call returns it."""
    choice = {
        "index": 0,
        "message": _message(reply),
        "finish_reason": _finish_reason(reply),
        "logprobs": None,
    }
    usage = _usage(reply) if reply.reports_usage else None
    return _envelope(reply, "chat.completion", choices=[choice], usage=usage)


def _chunk(reply: Reply, delta: JSON, finish_reason: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
    body = _envelope(reply, "chat.completion.chunk", choices=[choice])
    return f"data: {json.dumps(body)}\n\n"


async def completion_chunks(
    reply: Reply, pause: Pause, *, fault: str | None, include_usage: bool
) -> AsyncIterator[str]:
    """The SSE frames of a streamed completion; with a `fault`, it breaks after one word."""
    yield _chunk(reply, {"role": "assistant", "content": ""})
    if reply.tool_call is not None:
        yield _chunk(reply, {"tool_calls": _tool_calls(reply, arguments="")})
        arguments = {"index": 0, "function": {"arguments": reply.tool_call[1]}}
        yield _chunk(reply, {"tool_calls": [arguments]})
    for delta in reply.deltas():
        yield _chunk(reply, {"content": delta})
        if fault is not None:
            for frame in broken_frames(
                fault, f"data: {json.dumps({'error': _STREAM_FAILURE})}\n\n"
            ):
                yield frame
            if fault == "no_terminal":
                yield "data: [DONE]\n\n"
            return
        await pause()
    yield _chunk(reply, {}, _finish_reason(reply))
    if include_usage and reply.reports_usage:
        usage_chunk = _envelope(reply, "chat.completion.chunk", choices=[], usage=_usage(reply))
        yield f"data: {json.dumps(usage_chunk)}\n\n"
    yield "data: [DONE]\n\n"

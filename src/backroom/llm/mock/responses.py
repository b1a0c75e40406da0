"""The Responses API wire format, as the mock sends it: one JSON object, or SSE events.

A stream runs `response.created`, `response.output_item.added`,
`response.content_part.added`, one `response.output_text.delta` per word,
`response.output_text.done`, `response.content_part.done`, `response.output_item.done`
and `response.completed` (or `response.incomplete`). An answer that calls a tool has a
`function_call` item instead of the message, its arguments in one
`response.function_call_arguments.delta`. A broken stream (see `broken`) goes
wrong after the first delta; with `stream_error` it sends `response.failed`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from backroom.llm.mock.broken import broken_frames
from backroom.llm.mock.reply import Pause, Reply

JSON = dict[str, Any]
_STREAM_FAILURE_MESSAGE = "The server had an error while streaming the response (scripted fault)."


def _ids(reply: Reply) -> tuple[str, str]:
    return f"resp_mock{reply.number:08d}", f"msg_mock{reply.number:08d}"


def _text_part(text: str) -> JSON:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _message(reply: Reply, text: str, status: str) -> JSON:
    content = [_text_part(text)] if status == "completed" else []
    return {
        "type": "message",
        "id": _ids(reply)[1],
        "role": "assistant",
        "status": status,
        "content": content,
    }


def _usage(reply: Reply) -> JSON:
    usage = reply.usage
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens, "cache_write_tokens": 0},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": reply.reasoning_tokens},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def _function_call(reply: Reply, arguments: str, status: str) -> JSON:
    name = reply.tool_call[0] if reply.tool_call is not None else ""
    item_id, call_id = reply.ids
    return {
        "type": "function_call",
        "id": item_id,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    }


def _output(reply: Reply) -> list[JSON]:
    if reply.tool_call is not None:
        return [_function_call(reply, reply.tool_call[1], "completed")]
    return [_message(reply, reply.text, "completed")]


def _response(reply: Reply, status: str) -> JSON:
    """The response object in `status`: in_progress, completed, incomplete or failed."""
    finished = status in {"completed", "incomplete"}
    body: JSON = {
        "id": _ids(reply)[0],
        "object": "response",
        "created_at": reply.created_s,
        "status": status,
        "model": reply.model,
        "output": _output(reply) if finished else [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "usage": _usage(reply) if finished and reply.reports_usage else None,
        "top_p": reply.features.top_p,
        "metadata": reply.features.metadata,
    }
    if status == "incomplete":
        body["incomplete_details"] = {"reason": "max_output_tokens"}
    if status == "failed":
        body["error"] = {"code": "server_error", "message": _STREAM_FAILURE_MESSAGE}
    return body


def response_in(reply: Reply, status: str) -> JSON:
    """The response object in `status` (a background response's `queued` too)."""
    return _response(reply, status)


def response_body(reply: Reply) -> JSON:
    """The finished response, as a non-streaming call returns it."""
    return _response(reply, "incomplete" if reply.incomplete else "completed")


class _EventWriter:
    """Numbers events and frames them as SSE."""

    def __init__(self) -> None:
        self._sequence = 0

    def frame(self, event_type: str, **fields: Any) -> str:
        """One event of `event_type` with `fields`, numbered and framed."""
        event = {"type": event_type, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        return f"event: {event_type}\ndata: {json.dumps(event)}\n\n"


async def response_events(reply: Reply, pause: Pause, *, fault: str | None) -> AsyncIterator[str]:
    """The SSE frames of a streamed response; with a `fault`, it breaks after one delta."""
    writer = _EventWriter()
    yield writer.frame("response.created", response=_response(reply, "in_progress"))
    if reply.tool_call is not None:
        for frame in _function_call_events(writer, reply):
            yield frame
        return
    item_id = _ids(reply)[1]
    at = {"item_id": item_id, "output_index": 0, "content_index": 0}
    yield writer.frame(
        "response.output_item.added", output_index=0, item=_message(reply, "", "in_progress")
    )
    yield writer.frame("response.content_part.added", part=_text_part(""), **at)
    for delta in reply.deltas():
        yield writer.frame("response.output_text.delta", delta=delta, logprobs=[], **at)
        if fault is not None:
            failed = writer.frame("response.failed", response=_response(reply, "failed"))
            for frame in broken_frames(fault, failed):
                yield frame
            return
        await pause()
    yield writer.frame("response.output_text.done", text=reply.text, logprobs=[], **at)
    yield writer.frame("response.content_part.done", part=_text_part(reply.text), **at)
    yield writer.frame(
        "response.output_item.done", output_index=0, item=_message(reply, reply.text, "completed")
    )
    final = response_body(reply)
    yield writer.frame(f"response.{final['status']}", response=final)


def _function_call_events(writer: _EventWriter, reply: Reply) -> list[str]:
    """The frames of an answer that calls a tool, after `response.created`."""
    arguments = reply.tool_call[1] if reply.tool_call is not None else ""
    at = {"item_id": reply.ids[0], "output_index": 0}
    return [
        writer.frame(
            "response.output_item.added",
            output_index=0,
            item=_function_call(reply, "", "in_progress"),
        ),
        writer.frame("response.function_call_arguments.delta", delta=arguments, **at),
        writer.frame("response.function_call_arguments.done", arguments=arguments, **at),
        writer.frame(
            "response.output_item.done",
            output_index=0,
            item=_function_call(reply, arguments, "completed"),
        ),
        writer.frame("response.completed", response=response_body(reply)),
    ]

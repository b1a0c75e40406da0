"""Anthropic's Messages API wire format, as the mock sends it: one JSON object, or SSE.

A stream runs `message_start` (usage with the input counts), `content_block_start`,
`ping`, one `content_block_delta` (`text_delta`) per word, `content_block_stop`,
`message_delta` (stop reason, output tokens) and `message_stop`. An answer that calls
a tool has a `tool_use` block instead, its input in one `input_json_delta`. Usage
counts the prompt cache apart: `input_tokens` is only what neither read nor wrote it.
A broken stream (see `broken`) goes wrong after the first delta; with `stream_error`
it sends an `error` event (`overloaded_error`), as Anthropic does mid-stream.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from backroom.llm.mock.broken import broken_frames
from backroom.llm.mock.reply import Pause, Reply

JSON = dict[str, Any]
_OVERLOADED = {"type": "overloaded_error", "message": "Overloaded (scripted fault)."}


def _frame(event_type: str, **fields: Any) -> str:
    return f"event: {event_type}\ndata: {json.dumps({'type': event_type, **fields})}\n\n"


def _usage(reply: Reply) -> JSON:
    usage = reply.usage
    read, written = usage.cached_tokens, usage.cache_write_tokens
    counts: JSON = {
        "input_tokens": max(0, usage.input_tokens - read - written),
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": read,
        "output_tokens": usage.output_tokens,
    }
    if reply.reasoning_tokens:
        counts["output_tokens_details"] = {"thinking_tokens": reply.reasoning_tokens}
    return counts


def _tool_use(reply: Reply, arguments: JSON) -> JSON:
    name = reply.tool_call[0] if reply.tool_call is not None else ""
    return {
        "type": "tool_use",
        "id": f"toolu_mock{reply.number:08d}",
        "name": name,
        "input": arguments,
    }


def _stop_reason(reply: Reply) -> str:
    if reply.tool_call is not None:
        return "tool_use"
    return "max_tokens" if reply.incomplete else "end_turn"


def _message(reply: Reply, content: list[JSON], stop_reason: str | None, usage: JSON) -> JSON:
    return {
        "id": f"msg_mock{reply.number:08d}",
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }


def message_body(reply: Reply) -> JSON:
    """The finished message, as a non-streaming call returns it."""
    if reply.tool_call is not None:
        content = [_tool_use(reply, json.loads(reply.tool_call[1]))]
    else:
        content = [{"type": "text", "text": reply.text}]
    return _message(reply, content, _stop_reason(reply), _usage(reply))


def _frames_of_tool_use(reply: Reply) -> list[str]:
    arguments = reply.tool_call[1] if reply.tool_call is not None else "{}"
    delta = {"type": "input_json_delta", "partial_json": arguments}
    return [
        _frame("content_block_start", index=0, content_block=_tool_use(reply, {})),
        _frame("content_block_delta", index=0, delta=delta),
        _frame("content_block_stop", index=0),
    ]


def _broken(fault: str) -> list[str]:
    if fault == "malformed_chunk":
        return [
            'event: content_block_delta\ndata: {"type": "content_block_delta", "delta": "unf\n\n'
        ]
    return list(broken_frames(fault, _frame("error", error=_OVERLOADED)))


async def message_events(reply: Reply, pause: Pause, *, fault: str | None) -> AsyncIterator[str]:
    """The SSE frames of a streamed message; with a `fault`, it breaks after one delta."""
    usage = _usage(reply)
    started = usage | {"output_tokens": 1}
    yield _frame("message_start", message=_message(reply, [], None, started))
    if reply.tool_call is not None:
        for frame in _frames_of_tool_use(reply):
            yield frame
    else:
        yield _frame("content_block_start", index=0, content_block={"type": "text", "text": ""})
        yield _frame("ping")
        for delta in reply.deltas():
            yield _frame(
                "content_block_delta", index=0, delta={"type": "text_delta", "text": delta}
            )
            if fault is not None:
                for frame in _broken(fault):
                    yield frame
                return
            await pause()
        yield _frame("content_block_stop", index=0)
    stop = {"stop_reason": _stop_reason(reply), "stop_sequence": None}
    yield _frame("message_delta", delta=stop, usage={"output_tokens": usage["output_tokens"]})
    yield _frame("message_stop")

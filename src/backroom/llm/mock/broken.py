"""Answers that break on the wire: a stream that fails, garbles, stops or is cut off.

    stream_error     a stream fails after its first delta with the API's own failure event
    malformed_chunk  a stream sends a chunk that is not JSON after its first delta; a plain
                     call gets a 200 whose JSON body stops half-way
    cut_off          the connection closes mid-stream after the first delta (mid-body for
                     a plain call), without the end of the chunked encoding
    no_terminal      a stream ends cleanly after its first delta, without its last event
                     (`response.completed`, or a chunk with `finish_reason`)

A plain (unstreamed) call with `stream_error` or `no_terminal` gets a 500.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from starlette.responses import StreamingResponse
from starlette.types import Send

STREAM_FAULTS = frozenset({"stream_error", "malformed_chunk", "cut_off", "no_terminal"})
PLAIN_CALL_BREAKS = frozenset({"malformed_chunk", "cut_off"})
"""The stream faults that also break an unstreamed answer (the others get a 500)."""


class CutOff(Exception):
    """Raised by a body generator: the connection closes where it stands."""


class CuttableResponse(StreamingResponse):
    """A streamed body whose generator may raise `CutOff` to drop the connection.

    Returning without the last (empty) body message makes the server close the
    connection, so the client sees a chunked body that never ends, as when a proxy or
    the network cuts a call off.
    """

    async def stream_response(self, send: Send) -> None:
        """Send the body until the generator ends or raises `CutOff`."""
        try:
            await super().stream_response(send)
        except CutOff:
            return


def broken_frames(fault: str, failure_frame: str) -> Iterator[str]:
    """What a stream sends after its first delta under `fault`, instead of the rest.

    `failure_frame` is the API's own failure event, sent for `stream_error`.
    """
    if fault == "stream_error":
        yield failure_frame
    elif fault == "malformed_chunk":
        yield 'data: {"type": "response.output_text.delta", "delta": "unfini\n\n'
    elif fault == "cut_off":
        raise CutOff


def broken_body(fault: str, body: dict[str, Any]) -> CuttableResponse:
    """A plain call's answer under `fault` (one of `PLAIN_CALL_BREAKS`): half of `body`."""
    text = json.dumps(body)
    half = text[: len(text) // 2]

    async def chunks() -> AsyncIterator[str]:
        yield half
        if fault == "cut_off":
            raise CutOff

    return CuttableResponse(chunks(), media_type="application/json")

"""Reading a provider's answer: every way it can break on the wire becomes a `Retryable`.

    malformed_chunk     a chunk (or a plain answer's body) that is not JSON
    cut_off             the connection closed before the stream's end
    timeout             no data within the call's timeout, mid-stream
    no_terminal_event   the stream ended cleanly without its last event

All of these say nothing about the request itself, so another attempt may succeed.
Each message says how much output had arrived, since a retry starts over. Each
provider binds `reading` to its SDK's timeout and connection errors.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from backroom.core.errors import Retryable
from backroom.llm.progress import StreamProgress

_EXCERPT_CHARS = 200
ErrorTypes = type[Exception] | tuple[type[Exception], ...]
"""An exception class, or several, as `except` takes them."""


def _excerpt(text: str) -> str:
    """`text` shortened for an error message, quoted so its end is visible."""
    if len(text) > _EXCERPT_CHARS:
        return repr(text[:_EXCERPT_CHARS] + "...")
    return repr(text)


def malformed(error: json.JSONDecodeError, where: str) -> Retryable:
    """The error for JSON that does not parse, found in `where`."""
    return Retryable(
        f"StreamError (malformed_chunk): {where} is not valid JSON "
        f"({error.msg} at character {error.pos}): {_excerpt(error.doc)}"
    )


def _received(progress: StreamProgress) -> str:
    return f"after {len(progress.text)} characters of output"


def _cause(error: BaseException) -> str:
    cause = error.__cause__
    return f"{type(cause).__name__}: {cause}" if cause is not None else type(error).__name__


@asynccontextmanager
async def reading(
    stream: AbstractAsyncContextManager[Any],
    progress: StreamProgress,
    *,
    timeout_error: ErrorTypes,
    connection_error: ErrorTypes,
) -> AsyncIterator[None]:
    """Read `stream` (an SDK's stream) inside this block; it is closed however the block
    ends.

    A chunk that is not JSON, a connection cut off (`connection_error`) and a timeout
    mid-stream (`timeout_error`, checked first: SDKs derive it from the connection
    error) leave as a `Retryable` naming the failure; other errors pass unchanged.
    """
    try:
        async with stream:
            yield
    except json.JSONDecodeError as error:
        raise malformed(error, f"a chunk of the stream ({_received(progress)})") from error
    except timeout_error as error:
        raise Retryable(
            f"StreamError (timeout): no data within the call timeout, mid-stream "
            f"{_received(progress)}"
        ) from error
    except connection_error as error:
        raise Retryable(
            f"StreamError (cut_off): the connection closed mid-stream {_received(progress)} "
            f"({_cause(error)})"
        ) from error


def ended_early(terminal: str, progress: StreamProgress) -> Retryable:
    """The error for a stream that ended cleanly without `terminal`, its last event."""
    return Retryable(
        f"StreamError (no_terminal_event): the stream ended without {terminal}, "
        f"{_received(progress)}"
    )

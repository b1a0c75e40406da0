"""Reading an OpenAI SDK stream: `backroom.llm.stream_read` bound to its errors."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

import openai
from openai import AsyncStream

from backroom.llm.progress import StreamProgress
from backroom.llm.stream_read import ended_early, malformed
from backroom.llm.stream_read import reading as _reading

__all__ = ["ended_early", "malformed", "reading"]


def reading(
    stream: AsyncStream[Any], progress: StreamProgress
) -> AbstractAsyncContextManager[None]:
    """Read `stream` inside this block (see `backroom.llm.stream_read.reading`)."""
    return _reading(
        stream,
        progress,
        timeout_error=openai.APITimeoutError,
        connection_error=openai.APIConnectionError,
    )

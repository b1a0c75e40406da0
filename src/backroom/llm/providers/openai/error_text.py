"""What a provider said when it failed, in words a person can act on.

OpenAI-shaped bodies (`{"error": {"message": ...}}`) give their message; any other
body (a proxy's `{"detail": "Not Found"}`, an HTML error page, plain text) is kept
as it came, trimmed, rather than replaced by the SDK's bare `Error code: 404`. An
HTTP error also names the request it answered (`POST /v1/responses`), and a 404 from
the Responses API suggests `chat_only`, since many compatible servers lack that API.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import openai

BODY_CHARS = 500
"""How much of a provider's error body an error message keeps."""
_NO_RESPONSES_API_HINT = (
    "; if this server has no Responses API, set `chat_only = true` on its provider "
    "in the LLM config"
)
# A 404 with one of these codes is about the model, not the endpoint.
_MODEL_CODES = frozenset({"model_not_found"})


def _trimmed(text: str) -> str:
    text = " ".join(text.split())  # HTML and pretty-printed JSON span many lines
    return text if len(text) <= BODY_CHARS else text[:BODY_CHARS] + "..."


def _body_text(body: object) -> str | None:
    """The provider's words in `body` (the SDK's `error.body`), or None if it has none."""
    if isinstance(body, Mapping):
        message = body.get("message")
        if isinstance(message, str) and message:
            return message
    if isinstance(body, str):
        return body.strip() or None
    if body is None:
        return None
    return json.dumps(body, default=str)


def provider_message(error: openai.APIError) -> str:
    """The provider's own words for `error`, trimmed to `BODY_CHARS`.

    For an HTTP error, followed by the request's method and path, and by the
    `chat_only` hint for a 404 from the Responses API.
    """
    text = _trimmed(_body_text(error.body) or error.message)
    if not isinstance(error, openai.APIStatusError):
        return text
    request = error.request
    path = request.url.path
    text = f"{text} ({request.method} {path})"
    if error.status_code == 404 and path.endswith("/responses") and error.code not in _MODEL_CODES:
        text += _NO_RESPONSES_API_HINT
    return text


def connection_message(error: openai.APIConnectionError) -> str:
    """The SDK's words for a connection failure, with the transport's reason beside them."""
    cause = error.__cause__
    if cause is None or not str(cause):
        return error.message
    return f"{error.message} ({type(cause).__name__}: {_trimmed(str(cause))})"

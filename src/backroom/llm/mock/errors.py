"""Error answers in OpenAI's shape, for the mock server."""

from __future__ import annotations

from fastapi.responses import JSONResponse

_FIRST_SERVER_ERROR = 500


def _error_type(status: int) -> str:
    if status == 429:
        return "requests"
    return "server_error" if status >= _FIRST_SERVER_ERROR else "invalid_request_error"


def error_response(
    status: int,
    message: str,
    *,
    error_type: str | None = None,
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """`{"error": {message, type, param, code}}` with `status`; the type follows the status."""
    error = {
        "message": message,
        "type": error_type or _error_type(status),
        "param": None,
        "code": code,
    }
    return JSONResponse({"error": error}, status_code=status, headers=headers)

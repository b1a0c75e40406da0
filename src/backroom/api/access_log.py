"""Keep secrets that clients put in a URL out of the access log.

Keys belong in the `Authorization` header, but a client may send one as a query
parameter (`?api_key=...`, `?token=...`), and uvicorn's access log writes the whole
URL. `RedactSecrets`, on the `uvicorn.access` logger, replaces the value of every
query parameter whose name suggests a secret with `[REDACTED]` before any handler
sees the record.
"""

from __future__ import annotations

import logging
import re

ACCESS_LOGGER = "uvicorn.access"
REDACTED = "[REDACTED]"

_SECRET_PARAMETER = re.compile(
    r"([?&][^=&#]*(?:key|token|secret|password|passwd|auth|signature)[^=&#]*=)[^&#]*",
    re.IGNORECASE,
)


def redact_url(url: str) -> str:
    """`url` with the values of secret-looking query parameters replaced.

    >>> redact_url("/v1/jobs?api_key=br_x&limit=5&token=t")
    '/v1/jobs?api_key=[REDACTED]&limit=5&token=[REDACTED]'
    """
    return _SECRET_PARAMETER.sub(rf"\1{REDACTED}", url)


class RedactSecrets(logging.Filter):
    """Redacts the URL of uvicorn's access log records (their third argument)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record's URL; never drops a record."""
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], redact_url(args[2]), *args[3:])
        return True


def redact_access_log() -> None:
    """Install `RedactSecrets` on uvicorn's access logger (once)."""
    logger = logging.getLogger(ACCESS_LOGGER)
    if not any(isinstance(existing, RedactSecrets) for existing in logger.filters):
        logger.addFilter(RedactSecrets())

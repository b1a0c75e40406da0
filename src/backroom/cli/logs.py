"""Logging for `backroom worker` and `backroom serve`: the standard `logging` module,
to stderr, as text lines or one JSON object per line (`--log-json`).

Nothing logged carries a secret: API keys are printed once to stdout by `serve`, never
logged, and database URLs are logged through `redacted_url`.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Annotated, TextIO

import typer

LOG_LEVELS = ("debug", "info", "warning", "error")

LogLevelOption = Annotated[
    str,
    typer.Option(
        "--log-level",
        help=f"Least severe log lines shown: {', '.join(LOG_LEVELS)}.",
        case_sensitive=False,
    ),
]
LogJsonOption = Annotated[
    bool, typer.Option("--log-json", help="Log one JSON object per line (for collectors).")
]

_TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_OWN_LOGGERS = ("backroom", "uvicorn")


class JsonLines(logging.Formatter):
    """One JSON object per record: time, level, logger, message (and the traceback)."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as a single line of JSON."""
        entry = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


class _StderrLines(logging.StreamHandler[TextIO]):
    """Writes to whatever `sys.stderr` is when a record comes (a test may swap it)."""

    @property
    def stream(self) -> TextIO:
        """The current standard error."""
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        """Ignored: the stream is always the current standard error."""


def configure_logging(level: str, json_lines: bool) -> None:
    """Log backroom's and uvicorn's records at `level` and above to stderr; other
    libraries' (the HTTP client's request lines, say) from warnings up, or all at debug."""
    if level.lower() not in LOG_LEVELS:
        raise typer.BadParameter(
            f"{level!r} is not one of {', '.join(LOG_LEVELS)}", param_hint="'--log-level'"
        )
    handler = _StderrLines()
    handler.setFormatter(JsonLines() if json_lines else logging.Formatter(_TEXT_FORMAT))
    root = logging.getLogger()
    for earlier in [h for h in root.handlers if isinstance(h, _StderrLines)]:
        root.removeHandler(earlier)
    root.addHandler(handler)
    chosen = level.upper()
    root.setLevel(chosen if chosen == "DEBUG" else "WARNING")
    for name in _OWN_LOGGERS:
        logging.getLogger(name).setLevel(chosen)

"""Logging for `backroom worker` and `backroom serve`: the standard `logging` module,
to stderr, as text lines or one JSON object per line (`--log-json`).

Nothing logged carries a secret: API keys are printed once to stdout by `serve`, never
logged, database URLs are logged through `redacted_url`, and every line is passed
through `redact_secrets` besides, for what an error message may quote. A job's
transitions (`backroom.telemetry.job_log`) carry their facts as fields: `key=value`
after the text, or keys of the JSON object.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import sys
import threading
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any, TextIO

from backroom.config import environment
from backroom.telemetry.job_log import FIELDS
from backroom.telemetry.otel_setup import configure_from_environment

LOG_LEVELS = ("debug", "info", "warning", "error")

_TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_OWN_LOGGERS = ("backroom", "uvicorn")


# What looks like a secret is masked in every line, whatever wrote it (an error message
# may quote a header or a URL): backroom's API keys, OpenAI-style keys, bearer tokens,
# and the password of a URL. Each pattern runs only on a line holding its literal part
# (in lower case): a job's log line holds none, and four regex scans cost ~40 us a line.
_SECRETS = (
    ("br_", re.compile(r"\bbr_[A-Za-z0-9_-]{6,}"), "br_***"),
    ("sk-", re.compile(r"\bsk-[A-Za-z0-9_-]{6,}"), "sk-***"),
    ("bearer", re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]+"), r"\1 ***"),
    ("://", re.compile(r"(://[^:/@\s\"]+:)[^@\s\"]+@"), r"\1***@"),
)


def redact_secrets(text: str) -> str:
    """`text` with anything that looks like an API key, a token or a URL's password masked.

    >>> redact_secrets("key br_AbCdEf123456 at postgresql://u:pw@db/x")
    'key br_*** at postgresql://u:***@db/x'
    """
    lowered = text.lower()
    for literal, pattern, replacement in _SECRETS:
        if literal in lowered:
            text = pattern.sub(replacement, text)
    return text


class TextLines(logging.Formatter):
    """A readable line: time, level, logger, message, then the record's facts as
    `key=value` (secrets masked)."""

    def __init__(self) -> None:
        super().__init__(_TEXT_FORMAT)
        self._second: tuple[int, str] = (-1, "")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        """The record's local time as the standard format has it, the date and time to
        the second formatted once a second."""
        if datefmt is not None:
            return super().formatTime(record, datefmt)
        return self._time(int(record.created), int(record.msecs))

    def _time(self, second: int, msecs: int) -> str:
        if self._second[0] != second:  # the standard format's, to the second
            at = SimpleNamespace(created=second, msecs=0)
            self._second = (second, super().formatTime(at).rpartition(",")[0])  # type: ignore[arg-type]
        return f"{self._second[1]},{msecs:03d}"

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of text."""
        if record.exc_info or record.exc_text or record.stack_info:
            line = super().format(record)
        else:  # what the format above gives, without its per-record lookups
            line = f"{self.formatTime(record)} {record.levelname} {record.name}: "
            line += record.getMessage()
        return _with_facts(line, getattr(record, FIELDS, None))

    def fields_line(self, at_ms: int, level: int, logger: str, message: str, fields: Any) -> str:
        """What `format` makes of a record at `at_ms` (ms since the epoch) with `fields`
        and neither arguments nor an exception, without the record."""
        stamp = self._time(at_ms // 1000, at_ms % 1000)
        return _with_facts(f"{stamp} {logging.getLevelName(level)} {logger}: {message}", fields)


def _with_facts(line: str, fields: Any) -> str:
    """`line` and `fields` (but the event) as ` [key=value ...]`, secrets masked."""
    if isinstance(fields, dict):  # the message says what happened: no event
        facts = [f"{key}={value}" for key, value in fields.items() if key != "event"]
        if facts:
            line += " [" + " ".join(facts) + "]"
    return redact_secrets(line)


class JsonLines(logging.Formatter):
    """One JSON object per record: time, level, logger, message, the record's facts
    (event, job_id, tenant, ...) and the traceback, secrets masked."""

    def __init__(self) -> None:
        super().__init__()
        self._second: tuple[int, str] = (-1, "")

    def _time(self, second: int, msecs: int) -> str:
        """ISO 8601 in UTC to the millisecond, the date and time to the second
        formatted once a second."""
        if self._second[0] != second:
            stamp = datetime.fromtimestamp(second, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
            self._second = (second, stamp)
        return f"{self._second[1]}.{msecs:03d}+00:00"

    def format(self, record: logging.LogRecord) -> str:
        """The record as a single line of JSON."""
        entry = self._entry(
            self._time(int(record.created), int(record.msecs)),
            record.levelname,
            record.name,
            record.getMessage(),
            getattr(record, FIELDS, None),
        )
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return redact_secrets(json.dumps(entry, ensure_ascii=False))

    def fields_line(self, at_ms: int, level: int, logger: str, message: str, fields: Any) -> str:
        """What `format` makes of a record at `at_ms` (ms since the epoch) with `fields`
        and neither arguments nor an exception, without the record."""
        stamp = self._time(at_ms // 1000, at_ms % 1000)
        entry = self._entry(stamp, logging.getLevelName(level), logger, message, fields)
        return redact_secrets(json.dumps(entry, ensure_ascii=False))

    @staticmethod
    def _entry(stamp: str, level: str, logger: str, message: str, fields: Any) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "time": stamp,
            "level": level.lower(),
            "logger": logger,
            "message": message,
        }
        if isinstance(fields, dict):
            entry.update((key, value) for key, value in fields.items() if key not in entry)
        return entry


class _StderrLines(logging.StreamHandler[TextIO]):
    """Writes to whatever `sys.stderr` is when a record comes (a test may swap it).

    On an event loop, the lines of one pass of the loop are written together as the
    next pass begins: one write for the lines of a batch of jobs (two a job) instead of
    a write each. A warning or worse, a line off the loop, or a full buffer writes out
    everything pending at once.
    """

    _LIMIT = 1_000

    def __init__(self) -> None:
        super().__init__()
        self._pending: list[str] = []
        self._flush_on: asyncio.AbstractEventLoop | None = None
        self._flush_thread = 0

    def emit(self, record: logging.LogRecord) -> None:
        """Format `record` and write it out, now or at the loop's next pass."""
        try:
            line = self.format(record)
        except Exception:  # as logging's own handlers do: report it, never raise
            self.handleError(record)
            return
        self._add(line, record.levelno)

    def write_fields_line(
        self, at_ms: int, level: int, logger: str, message: str, fields: dict[str, Any]
    ) -> bool:
        """Write what a record of `logger` at `at_ms` would be written as, without making
        the record (`backroom.telemetry.job_log` asks, for every job transition's line,
        when it reaches this handler alone); False when this handler would not write it
        that way (a filter, its level, another formatter): make the record then."""
        formatter = self.formatter
        if self.filters or level < self.level or not isinstance(formatter, TextLines | JsonLines):
            return False
        try:
            line = formatter.fields_line(at_ms, level, logger, message, fields)
        except Exception:  # the record's way reports it
            return False
        self.acquire()
        try:
            self._add(line, level)
        finally:
            self.release()
        return True

    def _add(self, line: str, level: int) -> None:
        self._pending.append(line + self.terminator)
        if level >= logging.WARNING or len(self._pending) >= self._LIMIT:
            self.flush()
            return
        pending_on = self._flush_on
        if pending_on and self._flush_thread == threading.get_ident() and pending_on.is_running():
            return  # this thread's loop writes it out with the rest at its next pass
        try:
            loop = asyncio.get_running_loop()  # (a system call a record: not each time)
        except RuntimeError:
            self.flush()
            return
        if self._flush_on is not loop:
            self._flush_on, self._flush_thread = loop, threading.get_ident()
            loop.call_soon(self.flush)

    def flush(self) -> None:
        """Write out every pending line."""
        with self.lock or contextlib.nullcontext():
            self._flush_on = None
            if self._pending:
                lines, self._pending = "".join(self._pending), []
                self.stream.write(lines)
            self.stream.flush()

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
        # Imported here: a worker process starts without typer (`backroom.cli.launch`).
        import typer  # noqa: PLC0415

        raise typer.BadParameter(
            f"{level!r} is not one of {', '.join(LOG_LEVELS)}", param_hint="'--log-level'"
        )
    handler = _StderrLines()
    handler.setFormatter(JsonLines() if json_lines else TextLines())
    root = logging.getLogger()
    for earlier in [h for h in root.handlers if isinstance(h, _StderrLines)]:
        root.removeHandler(earlier)
    root.addHandler(handler)
    chosen = level.upper()
    root.setLevel(chosen if chosen == "DEBUG" else "WARNING")
    for name in _OWN_LOGGERS:
        logging.getLogger(name).setLevel(chosen)


def configure_telemetry(level: str, json_lines: bool) -> None:
    """What a worker or server process sets up first: its logging (`configure_logging`)
    and, when the OpenTelemetry SDK is installed and `OTEL_*` ask for it, its traces."""
    configure_logging(level, json_lines)
    configure_from_environment(environment())

"""`backroom worker`'s command line read without typer, when it is an ordinary one.

Typer builds a pydantic validator for each of the command's ~20 options as it reads
them: with typer and pydantic imported, ~90 ms of CPU before a worker process's first
claim, paid by each of several processes started together. A command line of known
options with plain values (`--app m:app --db URL --burst`) is read here instead; any
other (`--help`, an unknown option, a value out of range or not plainly written, an
option given twice) is left to typer, which says what is wrong as it always has. The
options here are the typer declaration's (`backroom.cli.worker`), a test keeps them so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from backroom.cli.logs import LOG_LEVELS
from backroom.cli.worker_run import WorkerOptions
from backroom.core.usage import OverBudget

Reader = Callable[[str], object]
"""A value's reader: the value, or None to leave the command line to typer."""

_WHOLE = re.compile(r"0|[1-9][0-9]{0,8}")
_DECIMAL = re.compile(r"(0|[1-9][0-9]{0,8})(\.[0-9]{1,9})?")


def _text(value: str) -> object:
    return value if value and not value.startswith("-") else None


def _path(value: str) -> object:
    return Path(value) if _text(value) is not None else None


def _whole(least: int, most: int | None = None) -> Reader:
    def read(value: str) -> object:
        if not _WHOLE.fullmatch(value):
            return None
        number = int(value)
        return number if least <= number and (most is None or number <= most) else None

    return read


def _decimal(least: float) -> Reader:
    def read(value: str) -> object:
        number = float(value) if _DECIMAL.fullmatch(value) else None
        return number if number is not None and number >= least else None

    return read


def _log_level(value: str) -> object:
    return value if value.lower() in LOG_LEVELS else None


def _over_budget(value: str) -> object:
    return OverBudget(value) if value in set(OverBudget) else None


FLAGS: dict[str, tuple[str, bool]] = {
    "--builtin-tasks": ("builtin_tasks", True),
    "--burst": ("burst", True),
    "--no-burst": ("burst", False),
    "--log-json": ("log_json", True),
}
"""Each flag: the option it sets, and to what."""

VALUES: dict[str, tuple[str, Reader]] = {
    "--app": ("app_ref", _text),
    "--db": ("db", _text),
    "--concurrency": ("concurrency", _whole(1)),
    "--claim-batch": ("claim_batch", _whole(1)),
    "--queues": ("queues", _text),
    "--lease": ("lease", _decimal(0.01)),
    "--over-budget": ("over_budget", _over_budget),
    "--config": ("llm_config", _path),
    "--listen-url": ("listen_url", _text),
    "--pool-min": ("pool_min", _whole(0)),
    "--pool-max": ("pool_max", _whole(1)),
    "--poll-interval": ("poll_interval", _decimal(0.001)),
    "--watch-interval": ("watch_interval", _decimal(0)),
    "--log-level": ("log_level", _log_level),
    "--metrics-port": ("metrics_port", _whole(0, 65535)),
    "--metrics-host": ("metrics_host", _text),
    "--processes": ("processes", _whole(1, 64)),
}
"""Each option that takes a value: the option it sets, and its value's reader."""

REPEATABLE = frozenset({"queues"})
"""The options given as many times as wanted (a list of every value)."""


def quick_options(args: Sequence[str]) -> WorkerOptions | None:
    """The options `args` (what follows `backroom worker`) give, or None to leave them to
    typer: anything but known options with plainly written values, each given once."""
    chosen: dict[str, object] = {}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        name, equals, inline = arg.partition("=")
        value: object
        if not equals and name in FLAGS:
            field, value = FLAGS[name]
        elif name in VALUES and (equals or rest):
            field, reader = VALUES[name]
            value = reader(inline if equals else rest.pop(0))
            if value is None:
                return None
        else:
            return None
        if field in REPEATABLE:
            values = chosen.setdefault(field, [])
            assert isinstance(values, list)
            values.append(value)
        elif field in chosen:
            return None
        else:
            chosen[field] = value
    return WorkerOptions(**chosen)  # type: ignore[arg-type]

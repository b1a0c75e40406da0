"""Batch offload settings: which jobs go through a provider's batch API, and how often.

In the LLM config file:

    [batch]
    default = "never"                      # never | always | batch-queue
    lanes = { "openai/gpt-4o-mini" = "batch-queue" }
    flush_jobs = 1000                      # a lane's batch is sent at this many jobs
    flush_after_s = 60                     # ... or when its oldest job has waited this long
    poll_first_s = 30                      # the first poll of a batch after it is sent
    poll_max_s = 600                       # polls back off, doubling up to this
    hold_s = 300                           # a submitter's hold on a batch it is sending

A lane's mode decides which of its jobs are offloaded: `always` every one, `batch-queue`
those submitted to the `batch` queue, `never` none, but a job may ask with
`"offload": "batch"` in its input whatever its lane says. Jobs of the `interactive`
queue, streamed jobs, and a job's last attempt are never offloaded (the last attempt
is called online, so a job whose batch lines keep failing still gets its answer).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from backroom.core.errors import ConfigError

BATCH_QUEUE = "batch"
INTERACTIVE_QUEUE = "interactive"


class BatchMode(enum.StrEnum):
    """Which of a lane's jobs are offloaded to the provider's batch API."""

    NEVER = "never"
    ALWAYS = "always"
    BATCH_QUEUE = "batch-queue"


@dataclass(frozen=True, slots=True)
class BatchSettings:
    """The `[batch]` table: modes per lane, and the batcher's and poller's timing."""

    default: BatchMode = BatchMode.NEVER
    lanes: Mapping[str, BatchMode] = field(default_factory=dict)
    flush_jobs: int = 1_000
    flush_after_ms: int = 60_000
    poll_first_ms: int = 30_000
    poll_max_ms: int = 600_000
    hold_ms: int = 300_000

    def mode(self, lane: str) -> BatchMode:
        """The lane's mode: its own, or the default."""
        return self.lanes.get(lane, self.default)

    def offloads(self, lane: str, queue: str, asked: bool) -> bool:
        """Whether a job of `queue` in `lane` goes to a batch (`asked`: its input says so).

        >>> settings = BatchSettings(lanes={"openai/m": BatchMode.BATCH_QUEUE})
        >>> settings.offloads("openai/m", "batch", False)
        True
        >>> settings.offloads("openai/m", "default", False)
        False
        >>> settings.offloads("openai/m", "interactive", True)
        False
        """
        if queue == INTERACTIVE_QUEUE:
            return False
        mode = self.mode(lane)
        in_queue = mode is BatchMode.BATCH_QUEUE and queue == BATCH_QUEUE
        return asked or mode is BatchMode.ALWAYS or in_queue


def _ms(seconds: Decimal) -> int:
    return int(seconds * 1000)


class _BatchTable(BaseModel):
    """The `[batch]` table as written in the file."""

    model_config = ConfigDict(extra="forbid")

    default: BatchMode = BatchMode.NEVER
    lanes: dict[str, BatchMode] = {}
    flush_jobs: int = Field(default=1_000, gt=0)
    flush_after_s: Decimal = Field(default=Decimal(60), ge=0)
    poll_first_s: Decimal = Field(default=Decimal(30), gt=0)
    poll_max_s: Decimal = Field(default=Decimal(600), gt=0)
    hold_s: Decimal = Field(default=Decimal(300), gt=0)


def batch_settings(table: Mapping[str, Any]) -> BatchSettings:
    """The settings a `[batch]` table gives; `ConfigError` naming what is wrong."""
    try:
        parsed = _BatchTable.model_validate(dict(table))
    except pydantic.ValidationError as error:
        problems = "; ".join(
            f"batch.{'.'.join(str(part) for part in problem['loc'])}: {problem['msg']}"
            for problem in error.errors()
        )
        raise ConfigError(problems) from None
    return BatchSettings(
        default=parsed.default,
        lanes=dict(parsed.lanes),
        flush_jobs=parsed.flush_jobs,
        flush_after_ms=_ms(parsed.flush_after_s),
        poll_first_ms=_ms(parsed.poll_first_s),
        poll_max_ms=max(_ms(parsed.poll_max_s), _ms(parsed.poll_first_s)),
        hold_ms=_ms(parsed.hold_s),
    )

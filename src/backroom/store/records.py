"""What the store answers about lanes and LLM usage: lane status and usage reports."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from backroom.core.lanes import LaneLimits, LaneState
from backroom.core.usage import UsageTotals


@dataclass(frozen=True, slots=True)
class LaneStatus:
    """One lane as every worker sees it: its limits as last configured, and its state
    refilled to the time asked about, with its calls in flight counted."""

    name: str
    limits: LaneLimits
    state: LaneState


class UsageGrouping(enum.StrEnum):
    """How a usage report groups calls."""

    MODEL = "model"
    DAY = "day"


@dataclass(frozen=True, slots=True)
class UsageQuery:
    """Calls that ended in `[since, until)` (ms since the epoch), of `tenant` (None:
    every tenant), summed per tenant and model or per tenant and UTC day."""

    since: int
    until: int
    group_by: UsageGrouping
    tenant: str | None = None


@dataclass(frozen=True, slots=True)
class UsageGroup:
    """The totals of one group of a usage report.

    `key` is the model name, or the UTC date (`YYYY-MM-DD`).
    """

    tenant: str
    key: str
    totals: UsageTotals

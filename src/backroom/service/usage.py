"""Usage reports: what LLM calls used and cost, grouped as the caller asks, as JSON or CSV.

    GET /v1/usage?from=2026-05-01&group_by=provider,model,metadata.team&format=csv

`group_by` lists the dimensions, in the order the report shows them: `tenant`,
`provider`, `model`, `prompt_version`, `day` (UTC) and `metadata.KEY` for a key of the
jobs' metadata. A report covers the caller's own tenant, or every tenant for an admin.
A cost is an exact decimal string of US dollars, or null when a call in the group had
no price (its cost is unknown), as in a job's usage.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from typing import Any

from backroom.core.usage import UsageTotals, day_start, next_day_start
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.service.documents import iso, usage_document
from backroom.service.replies import Reply, invalid_field
from backroom.store.records import (
    MetadataKey,
    UsageDimension,
    UsageGroup,
    UsageGrouping,
    UsageQuery,
)

__all__ = ["DEFAULT_GROUP_BY", "UsageRange", "parse_group_by", "usage_csv", "usage_report"]

DEFAULT_GROUP_BY = "tenant,model"
"""What a report groups by when the caller does not say."""

_METADATA_PREFIX = "metadata."
_METADATA_KEY = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
"""A metadata key a report may group by: plain names, so a key is never taken for a
JSON path's syntax by a backend."""
MAX_DIMENSIONS = 6
CSV_MEDIA_TYPE = "text/csv; charset=utf-8"


@dataclass(frozen=True, slots=True)
class UsageRange:
    """A usage report as asked for: calls that ended in `[since, until)` (ms since the
    epoch; by default the current UTC day), grouped by `group_by` (see the module)."""

    since: int | None = None
    until: int | None = None
    group_by: str = DEFAULT_GROUP_BY


def parse_group_by(text: str) -> tuple[UsageDimension, ...]:
    """The dimensions `text` lists (`provider,model,metadata.team`); `ValueError` saying
    what is wrong with a name that is not one, a repeat, or an empty list."""
    names = [name.strip() for name in text.split(",")]
    if not any(names):
        raise ValueError("name at least one dimension")
    if len(names) != len(set(names)) or len(names) > MAX_DIMENSIONS:
        raise ValueError(f"name each dimension once, at most {MAX_DIMENSIONS}")
    return tuple(_dimension(name) for name in names)


def _dimension(name: str) -> UsageDimension:
    if name.startswith(_METADATA_PREFIX):
        key = name.removeprefix(_METADATA_PREFIX)
        if not _METADATA_KEY.fullmatch(key):
            raise ValueError(f"{name!r}: a metadata key is 1-64 of A-Z a-z 0-9 _ . : -")
        return MetadataKey(key)
    try:
        return UsageGrouping(name)
    except ValueError:
        known = ", ".join(str(grouping) for grouping in UsageGrouping)
        raise ValueError(f"unknown dimension {name!r}; use {known} or metadata.KEY") from None


def _group_document(group: UsageGroup, dimensions: tuple[UsageDimension, ...]) -> dict[str, Any]:
    keys = {str(dimension): key for dimension, key in zip(dimensions, group.keys, strict=True)}
    return {**keys, **usage_document(group.totals)}


async def usage_report(app: AppParts, caller: Caller, asked: UsageRange) -> Reply:
    """Tokens and cost of the caller's calls (an admin's: every tenant's) in the range."""
    now = app.clock.now()
    since = day_start(now) if asked.since is None else asked.since
    until = next_day_start(now) if asked.until is None else asked.until
    if until <= since:
        return invalid_field(("query", "to"), "must be later than `from`")
    try:
        dimensions = parse_group_by(asked.group_by)
    except ValueError as error:
        return invalid_field(("query", "group_by"), str(error))
    groups = await app.store.usage_groups(UsageQuery(since, until, dimensions, caller.scope))
    return Reply(
        200,
        {
            "from": iso(since),
            "to": iso(until),
            "group_by": [str(dimension) for dimension in dimensions],
            "groups": [_group_document(group, dimensions) for group in groups],
            "total": usage_document(sum((group.totals for group in groups), UsageTotals())),
        },
    )


def usage_csv(report: dict[str, Any]) -> str:
    """A usage report's groups as CSV: a header row, then one row per group.

    The columns are the report's dimensions, then calls, tokens and cost; an empty
    cell is a missing key or an unknown cost.
    """
    columns = [*report["group_by"], "calls", "input_tokens", "cached_tokens"]
    columns += ["output_tokens", "cost_usd"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    for group in report["groups"]:
        writer.writerow(["" if group[column] is None else group[column] for column in columns])
    return out.getvalue()

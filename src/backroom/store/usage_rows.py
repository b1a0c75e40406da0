"""LLM usage as table rows, and the grouping of usage reports every backend shares.

A usage report groups calls by any of tenant, provider, model, prompt version, UTC day
and keys of the job's metadata. The SQL backends group in SQL over the expressions
`grouped_select` builds (each metadata key a bound parameter, never spliced in); the
in-memory one groups `usage_keys` in Python; all three finish with `merged_groups`,
which gives every backend the same keys in the same order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from backroom.core.usage import DAY_MS, AttemptUsage, UsageTotals, day_label
from backroom.store.records import MetadataKey, UsageDimension, UsageGroup, UsageGrouping
from backroom.store.rows import Row, dump_json, load_json

USAGE_COLUMNS = (
    "job_id",
    "lease_token",
    "attempt",
    "tenant",
    "model",
    "prompt_version",
    "input_tokens",
    "cached_tokens",
    "output_tokens",
    "cost_pico_usd",
    "at",
    "provider",
    "metadata",
    "estimated",
    "cache_write_tokens",
)
"""The columns of `llm_usage`, in the order `usage_columns` gives their values: the
key (job, claim) first, then the columns a repeat of the same call replaces."""

USAGE_KEY = "job_id, lease_token"
"""The key of `llm_usage`: one row per call, by the claim that made it (see `AttemptUsage`)."""


def usage_columns(usage: AttemptUsage) -> tuple[Any, ...]:
    """The values of `USAGE_COLUMNS` for one attempt's usage."""
    return (
        usage.job_id,
        usage.lease_token,
        usage.attempt,
        usage.tenant,
        usage.model,
        usage.prompt_version,
        usage.input_tokens,
        usage.cached_tokens,
        usage.output_tokens,
        usage.cost_pico_usd,
        usage.at,
        usage.provider,
        dump_json(usage.metadata),
        usage.estimated,
        usage.cache_write_tokens,
    )


def usage_from_row(row: Row) -> AttemptUsage:
    """The `AttemptUsage` a row of `llm_usage` holds."""
    values = {column: row[column] for column in USAGE_COLUMNS}
    values["metadata"] = load_json(row["metadata"])
    values["estimated"] = bool(row["estimated"])
    return AttemptUsage(**values)


TOTALS_SELECT = """count(*) AS calls,
       COALESCE(sum(input_tokens), 0) AS input_tokens,
       COALESCE(sum(cached_tokens), 0) AS cached_tokens,
       COALESCE(sum(output_tokens), 0) AS output_tokens,
       COALESCE(sum(cost_pico_usd), 0) AS cost_pico_usd,
       count(*) - count(cost_pico_usd) AS unpriced_calls,
       COALESCE(sum(CASE WHEN estimated THEN 1 ELSE 0 END), 0) AS estimated_calls,
       COALESCE(sum(cache_write_tokens), 0) AS cache_write_tokens"""
"""The select list that sums `llm_usage` rows into `usage_totals_from_row`'s columns."""


def usage_totals_from_row(row: Row) -> UsageTotals:
    """The totals a `TOTALS_SELECT` row holds (PostgreSQL sums to numeric: made int)."""
    return UsageTotals(
        calls=int(row["calls"]),
        input_tokens=int(row["input_tokens"]),
        cached_tokens=int(row["cached_tokens"]),
        output_tokens=int(row["output_tokens"]),
        cost_pico_usd=int(row["cost_pico_usd"]),
        unpriced_calls=int(row["unpriced_calls"]),
        estimated_calls=int(row["estimated_calls"]),
        cache_write_tokens=int(row["cache_write_tokens"]),
    )


_COLUMN_OF = {
    UsageGrouping.TENANT: "tenant",
    UsageGrouping.PROVIDER: "provider",
    UsageGrouping.MODEL: "model",
    UsageGrouping.PROMPT_VERSION: "prompt_version",
    UsageGrouping.DAY: f"at - at % {DAY_MS}",
}


def grouped_select(
    group_by: tuple[UsageDimension, ...], metadata_value: Callable[[int, str], str]
) -> tuple[str, str]:
    """The select list (`expr AS g0, ...`) and GROUP BY list of a grouped report.

    `metadata_value(index, key)` is the backend's expression for the JSON text of
    metadata key `key`, bound as its parameter number `index` (0-based).
    """
    if not group_by:
        raise ValueError("a usage report groups by at least one dimension")
    expressions = []
    metadata_index = 0
    for dimension in group_by:
        if isinstance(dimension, MetadataKey):
            expressions.append(metadata_value(metadata_index, dimension.key))
            metadata_index += 1
        else:
            expressions.append(_COLUMN_OF[dimension])
    select = ", ".join(f"{expression} AS g{i}" for i, expression in enumerate(expressions))
    return select, ", ".join(f"g{i}" for i in range(len(expressions)))


def metadata_keys(group_by: tuple[UsageDimension, ...]) -> list[str]:
    """The metadata keys of `group_by`, in order: the values of its bound parameters."""
    return [dimension.key for dimension in group_by if isinstance(dimension, MetadataKey)]


def _metadata_text(value: Any) -> str:
    """A metadata value as a group key: a string as it is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def group_key(dimension: UsageDimension, raw: Any) -> str | None:
    """The key of one grouped column as a report shows it.

    `raw` is the column's value: a name, the start of a day in ms, or for a metadata key
    the JSON text of its value (NULL when the job's metadata lacks the key).
    """
    if raw is None:
        return None
    if dimension is UsageGrouping.DAY:
        return day_label(int(raw))
    if isinstance(dimension, MetadataKey):
        return _metadata_text(json.loads(raw))
    return str(raw)


def keys_from_row(row: Row, group_by: tuple[UsageDimension, ...]) -> tuple[str | None, ...]:
    """The group keys of a row selected with `grouped_select`."""
    return tuple(group_key(dimension, row[f"g{i}"]) for i, dimension in enumerate(group_by))


def usage_keys(usage: AttemptUsage, group_by: tuple[UsageDimension, ...]) -> tuple[str | None, ...]:
    """The group keys of one call, computed in Python as the SQL backends compute them."""
    keys: list[str | None] = []
    for dimension in group_by:
        if isinstance(dimension, MetadataKey):
            present = dimension.key in usage.metadata
            keys.append(_metadata_text(usage.metadata[dimension.key]) if present else None)
        elif dimension is UsageGrouping.DAY:
            keys.append(day_label(usage.at))
        else:
            keys.append(getattr(usage, _COLUMN_OF[dimension]))
    return tuple(keys)


def merged_groups(
    groups: Iterable[tuple[tuple[str | None, ...], UsageTotals]],
) -> list[UsageGroup]:
    """Groups with equal keys summed, ordered by their keys (None first, then by text).

    Sorting here, not in SQL, orders every backend alike whatever its collation.
    """
    summed: dict[tuple[str | None, ...], UsageTotals] = {}
    for keys, totals in groups:
        summed[keys] = summed.get(keys, UsageTotals()) + totals
    order = sorted(summed, key=lambda keys: [(key is not None, key or "") for key in keys])
    return [UsageGroup(keys, summed[keys]) for keys in order]


def metadata_path(key: str) -> str:
    """The SQLite JSON path of the top-level key `key`, quoted: `$."team"`."""
    return "$." + json.dumps(key)

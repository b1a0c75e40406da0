"""Paid LLM calls as `llm_calls` rows, for both SQL backends (see `CallStore`)."""

from __future__ import annotations

from typing import Any

from backroom.core.spend import CallIntent, CallState, OpenCall
from backroom.store.rows import Row

CALL_COLUMNS = (
    "job_id",
    "lease_token",
    "attempt",
    "tenant",
    "provider",
    "model",
    "reserved_pico_usd",
    "state",
    "opened_at",
)
"""The columns `call_columns` gives values for, in its order."""


def call_columns(intent: CallIntent) -> tuple[Any, ...]:
    """The values of `CALL_COLUMNS` for an open call."""
    return (
        intent.job_id,
        intent.lease_token,
        intent.attempt,
        intent.tenant,
        intent.provider,
        intent.model,
        intent.reserved_pico_usd,
        str(CallState.OPEN),
        intent.opened_at,
    )


def open_call_from_row(row: Row) -> OpenCall:
    """The open call an `llm_calls` row holds."""
    intent = CallIntent(
        job_id=row["job_id"],
        lease_token=row["lease_token"],
        attempt=row["attempt"],
        tenant=row["tenant"],
        provider=row["provider"],
        model=row["model"],
        reserved_pico_usd=row["reserved_pico_usd"],
        opened_at=row["opened_at"],
    )
    return OpenCall(intent, row["response_id"])

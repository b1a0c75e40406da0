"""Migration 018 keys LLM usage by claim: rows recorded before it keep their figures.

Each backend is migrated to 017, given usage rows keyed by attempt as 017 stored them
(with the call records of migration 012 beside them), then migrated on: every row
keeps its tokens and cost, takes its call's lease token where one is known, and a
call recorded after the migration adds to the job's usage instead of replacing any.
"""

from __future__ import annotations

import dataclasses
import sqlite3

import asyncpg
import pytest

from backroom.core.usage import AttemptUsage, UsageTotals
from backroom.store import migrations, open_store
from backroom.store.migrations import Migration

T0 = 1_700_000_000_000
BEFORE = 17
"""The last migration that keyed usage by attempt."""
JOB, PRUNED = 1, 2

_CALL = """
INSERT INTO llm_calls (job_id, lease_token, attempt, tenant, provider, model,
                       reserved_pico_usd, state, opened_at, settled_at)
VALUES (?, ?, ?, 'acme', 'mock', 'gpt', 9000, 'settled', ?, ?)
"""
_USAGE = """
INSERT INTO llm_usage (job_id, attempt, tenant, model, input_tokens, cached_tokens,
                       output_tokens, cost_pico_usd, at)
VALUES (?, ?, 'acme', 'gpt', ?, 0, 5, ?, ?)
"""

LEGACY: list[tuple[str, tuple[int, ...]]] = [
    # Job 1, claim 1 (attempt 1) spent 1,000; the job was redriven and claim 3 (attempt 1
    # again) spent 3,000, which replaced claim 1's row: that row is claim 3's.
    (_CALL, (JOB, 1, 1, T0, T0 + 1)),
    (_CALL, (JOB, 3, 1, T0 + 2, T0 + 3)),
    (_USAGE, (JOB, 1, 30, 3_000, T0 + 3)),
    # Claim 2 (attempt 2) had its call settled unbilled at T0 + 2; the usage of attempt 2
    # was recorded at T0 + 7 with no call record: its claim is not known.
    (_CALL, (JOB, 2, 2, T0 + 1, T0 + 2)),
    (_USAGE, (JOB, 2, 20, 2_000, T0 + 7)),
    # A pruned job: its call records went with it, its usage stayed.
    (_USAGE, (PRUNED, 1, 10, 500, T0 + 4)),
]


async def _insert(url: str, statements: list[tuple[str, tuple[int, ...]]]) -> None:
    """Run `statements` (with `?` parameters) on the database at `url` directly."""
    if url.startswith("sqlite:"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as connection:
            for sql, parameters in statements:
                connection.execute(sql, parameters)
        connection.close()
        return
    postgres = await asyncpg.connect(url)
    try:
        for sql, parameters in statements:
            first, *rest = sql.split("?")
            numbered = first + "".join(f"${n}{part}" for n, part in enumerate(rest, start=1))
            await postgres.execute(numbered, *parameters)
    finally:
        await postgres.close()


def _claims(usages: list[AttemptUsage]) -> list[tuple[int, int, int | None, int]]:
    return [(use.lease_token, use.attempt, use.cost_pico_usd, use.at) for use in usages]


async def test_usage_keyed_by_attempt_keeps_its_figures_keyed_by_claim(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = migrations.load_migrations

    def up_to_017(dialect: str) -> list[Migration]:
        return shipped(dialect)[:BEFORE]

    monkeypatch.setattr(migrations, "load_migrations", up_to_017)
    store = open_store(database_url)
    try:
        await store.migrate()
        await _insert(database_url, LEGACY)
        before = [await store.usage_totals(JOB), await store.spent_pico_usd("acme", T0, T0 + 9)]
        monkeypatch.undo()

        await store.migrate()

        after = [await store.usage_totals(JOB), await store.spent_pico_usd("acme", T0, T0 + 9)]
        assert after == before == [UsageTotals(2, 50, 0, 10, 5_000), 5_500]
        assert _claims(await store.attempt_usages(JOB)) == [
            (-2, 2, 2_000, T0 + 7),  # no call known: -attempt
            (3, 1, 3_000, T0 + 3),  # the call settled at its time: claim 3
        ]
        assert _claims(await store.attempt_usages(PRUNED)) == [(-1, 1, 500, T0 + 4)]
        # A call after the migration, of attempt 1 again (another redrive), adds its own.
        (legacy,) = [use for use in await store.attempt_usages(JOB) if use.lease_token == 3]
        await store.record_usage(dataclasses.replace(legacy, lease_token=4, at=T0 + 8))
        assert (await store.usage_totals(JOB)).cost_pico_usd == 8_000
    finally:
        await store.close()

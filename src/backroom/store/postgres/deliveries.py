"""Webhook deliveries and their attempts on PostgreSQL: stored once per event and receiver."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence

from backroom.core.job import NewJob, SubmitResult
from backroom.core.webhooks import (
    JOB_WEBHOOK,
    DeliveryAttempt,
    NewDelivery,
    OutgoingDelivery,
    SubscriptionOutcome,
    WebhookDelivery,
)
from backroom.store.postgres.database import PooledConnection
from backroom.store.postgres.database import PooledConnection as Connection
from backroom.store.rows import load_json
from backroom.store.webhook_rows import delivery_from_row, secret_from_row, subscription_from_row

SubmitJobs = Callable[[PooledConnection, Sequence[NewJob], int], Awaitable[Sequence[SubmitResult]]]
"""The store's own submission, for the jobs that run deliveries."""

_INSERT_DELIVERIES = """
INSERT INTO webhook_deliveries (tenant, job_id, subscription_id, event_id, event_type, url,
                                message_id, payload, created_at, updated_at)
SELECT *, $9::bigint, $9::bigint
FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[],
            $7::text[], $8::text[])
ON CONFLICT (event_id, subscription_id, event_type) DO NOTHING
RETURNING id
"""

_RECORD_ATTEMPT = """
WITH counted AS (
    UPDATE webhook_deliveries
    SET state = $2, attempts = attempts + 1, last_status = $3, last_latency_ms = $4,
        last_error = $5, updated_at = $6
    WHERE id = $1
    RETURNING id, attempts, subscription_id
),
streak AS (
    -- With an outcome ($7, succeeded): a success ends the subscription's failure streak;
    -- a failure lengthens it and disables at $9 in a row ($10 says so), or at once with
    -- the reason $8.
    UPDATE webhook_subscriptions
    SET failure_streak = CASE WHEN $7 THEN 0 ELSE failure_streak + 1 END,
        enabled = CASE WHEN $8::text IS NOT NULL THEN FALSE
                       WHEN NOT $7 AND failure_streak + 1 >= $9 THEN FALSE
                       ELSE enabled END,
        disabled_reason = CASE
            WHEN $8::text IS NOT NULL THEN $8
            WHEN NOT $7 AND failure_streak + 1 >= $9 AND enabled THEN $10
            ELSE disabled_reason END,
        updated_at = $6
    WHERE $7::boolean IS NOT NULL AND id = (SELECT subscription_id FROM counted)
)
INSERT INTO webhook_delivery_attempts (delivery_id, number, at, status, latency_ms, error)
SELECT id, attempts, $6, $3, $4, $5 FROM counted
RETURNING number
"""
"""$1 delivery, $2 its state after, $3-$5 status, latency, error, $6 now; $7-$10 the
subscription's outcome (all NULL but $9 without one)."""

_OUTGOING = """
SELECT delivery.*,
       (SELECT to_jsonb(subscribed) FROM webhook_subscriptions AS subscribed
        WHERE subscribed.id = delivery.subscription_id)::text AS subscription,
       (SELECT to_jsonb(signer) FROM webhook_signing_secrets AS signer
        WHERE delivery.subscription_id = $2 AND signer.tenant = delivery.tenant)::text AS secret
FROM webhook_deliveries AS delivery
WHERE delivery.id = $1
"""
"""$1 delivery, $2 `JOB_WEBHOOK`: the delivery and, as JSON, what signs it."""


async def add_deliveries(
    connection: PooledConnection,
    deliveries: Sequence[NewDelivery],
    delivery_job: Callable[[int], NewJob],
    submit: SubmitJobs,
    now: int,
) -> list[int]:
    """Store the deliveries not stored before, each with the job that sends it; their ids."""
    if not deliveries:
        return []
    rows = await connection.fetch(
        _INSERT_DELIVERIES,
        [new.tenant for new in deliveries],
        [new.job_id for new in deliveries],
        [new.subscription_id for new in deliveries],
        [new.event_id for new in deliveries],
        [new.event_type for new in deliveries],
        [new.url for new in deliveries],
        [new.message_id for new in deliveries],
        [new.payload for new in deliveries],
        now,
    )
    added = sorted(row["id"] for row in rows)
    if added:
        results = await submit(
            connection, [delivery_job(delivery_id) for delivery_id in added], now
        )
        await connection.execute(
            "UPDATE webhook_deliveries AS d SET delivery_job_id = s.job_id "
            "FROM unnest($1::bigint[], $2::bigint[]) AS s (id, job_id) WHERE d.id = s.id",
            added,
            [result.job.id for result in results],
        )
    return added


async def get_delivery(
    connection: Connection, delivery_id: int, tenant: str | None
) -> WebhookDelivery | None:
    """One delivery, if it exists and concerns `tenant`'s job (any tenant's if None)."""
    row = await connection.fetchrow(
        "SELECT * FROM webhook_deliveries WHERE id = $1 AND ($2::text IS NULL OR tenant = $2)",
        delivery_id,
        tenant,
    )
    return None if row is None else delivery_from_row(row)


async def list_deliveries(
    connection: Connection, job_id: int, tenant: str | None
) -> list[WebhookDelivery]:
    """The deliveries of events of one job, oldest first."""
    rows = await connection.fetch(
        "SELECT * FROM webhook_deliveries WHERE job_id = $1 AND ($2::text IS NULL OR tenant = $2) "
        "ORDER BY id",
        job_id,
        tenant,
    )
    return [delivery_from_row(row) for row in rows]


async def delivery_attempts(connection: Connection, delivery_id: int) -> list[DeliveryAttempt]:
    """Every recorded POST of one delivery, in order."""
    rows = await connection.fetch(
        "SELECT * FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY number",
        delivery_id,
    )
    return [
        DeliveryAttempt(
            row["delivery_id"],
            row["number"],
            row["at"],
            row["status"],
            row["latency_ms"],
            row["error"],
        )
        for row in rows
    ]


async def record_delivery_attempt(
    connection: Connection,
    report: DeliveryAttempt,
    state: str,
    outcome: SubscriptionOutcome | None = None,
) -> DeliveryAttempt:
    """Store one POST of a delivery as its next attempt, and the delivery's state after it;
    with `outcome`, count it for the delivery's subscription (one statement)."""
    number = await connection.fetchval(
        _RECORD_ATTEMPT,
        report.delivery_id,
        state,
        report.status,
        report.latency_ms,
        report.error,
        report.at,
        None if outcome is None else outcome.succeeded,
        None if outcome is None else outcome.disable_reason,
        0 if outcome is None else outcome.disable_after,
        None if outcome is None else outcome.streak_reason,
    )
    return dataclasses.replace(report, number=number or 0)


async def outgoing_delivery(connection: Connection, delivery_id: int) -> OutgoingDelivery | None:
    """A delivery with its subscription or its tenant's job-webhook secret, or None."""
    row = await connection.fetchrow(_OUTGOING, delivery_id, JOB_WEBHOOK)
    if row is None:
        return None
    subscription, secret = row["subscription"], row["secret"]
    return OutgoingDelivery(
        delivery_from_row(row),
        None if subscription is None else subscription_from_row(load_json(subscription)),
        None if secret is None else secret_from_row(load_json(secret)),
    )


async def restart_delivery(
    connection: PooledConnection, delivery_id: int, job_id: int, now: int
) -> None:
    """Point a delivery at a new job that sends it again (same payload, same webhook-id)."""
    await connection.execute(
        "UPDATE webhook_deliveries SET state = 'pending', delivery_job_id = $1, updated_at = $2 "
        "WHERE id = $3",
        job_id,
        now,
        delivery_id,
    )

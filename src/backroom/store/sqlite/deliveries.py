"""Webhook deliveries and their attempts on SQLite: stored once per event and receiver."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Callable, Sequence

from backroom.core.job import NewJob, SubmitResult
from backroom.core.webhooks import (
    JOB_WEBHOOK,
    DeliveryAttempt,
    NewDelivery,
    OutgoingDelivery,
    SubscriptionOutcome,
    WebhookDelivery,
)
from backroom.store.sqlite.subscriptions import (
    find_signing_secret,
    get_subscription,
    record_subscription_outcome,
)
from backroom.store.webhook_rows import delivery_from_row

SubmitJobs = Callable[[sqlite3.Connection, Sequence[NewJob], int], Sequence[SubmitResult]]
"""The store's own submission, for the jobs that run deliveries."""

_INSERT_DELIVERY = """
INSERT INTO webhook_deliveries (tenant, job_id, subscription_id, event_id, event_type, url,
                                message_id, payload, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (event_id, subscription_id, event_type) DO NOTHING
RETURNING id
"""

_RECORD_ATTEMPT = """
INSERT INTO webhook_delivery_attempts (delivery_id, number, at, status, latency_ms, error)
VALUES (?, ?, ?, ?, ?, ?)
"""

_UPDATE_DELIVERY = """
UPDATE webhook_deliveries
SET state = ?, attempts = attempts + 1, last_status = ?, last_latency_ms = ?,
    last_error = ?, updated_at = ?
WHERE id = ?
RETURNING attempts, subscription_id
"""


def add_deliveries(
    connection: sqlite3.Connection,
    deliveries: Sequence[NewDelivery],
    delivery_job: Callable[[int], NewJob],
    submit: SubmitJobs,
    now: int,
) -> list[int]:
    """Store the deliveries not stored before, each with the job that sends it; their ids."""
    added: list[int] = []
    for new in deliveries:
        row = connection.execute(
            _INSERT_DELIVERY,
            (
                new.tenant,
                new.job_id,
                new.subscription_id,
                new.event_id,
                new.event_type,
                new.url,
                new.message_id,
                new.payload,
                now,
                now,
            ),
        ).fetchone()
        if row is not None:
            added.append(row["id"])
    if added:
        results = submit(connection, [delivery_job(delivery_id) for delivery_id in added], now)
        connection.executemany(
            "UPDATE webhook_deliveries SET delivery_job_id = ? WHERE id = ?",
            [
                (result.job.id, delivery_id)
                for result, delivery_id in zip(results, added, strict=True)
            ],
        )
    return added


def get_delivery(
    connection: sqlite3.Connection, delivery_id: int, tenant: str | None
) -> WebhookDelivery | None:
    """One delivery, if it exists and concerns `tenant`'s job (any tenant's if None)."""
    row = connection.execute(
        "SELECT * FROM webhook_deliveries WHERE id = ? AND (? IS NULL OR tenant = ?)",
        (delivery_id, tenant, tenant),
    ).fetchone()
    return None if row is None else delivery_from_row(row)


def list_deliveries(
    connection: sqlite3.Connection, job_id: int, tenant: str | None
) -> list[WebhookDelivery]:
    """The deliveries of events of one job, oldest first."""
    rows = connection.execute(
        "SELECT * FROM webhook_deliveries WHERE job_id = ? AND (? IS NULL OR tenant = ?) "
        "ORDER BY id",
        (job_id, tenant, tenant),
    )
    return [delivery_from_row(row) for row in rows]


def delivery_attempts(connection: sqlite3.Connection, delivery_id: int) -> list[DeliveryAttempt]:
    """Every recorded POST of one delivery, in order."""
    rows = connection.execute(
        "SELECT * FROM webhook_delivery_attempts WHERE delivery_id = ? ORDER BY number",
        (delivery_id,),
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


def record_delivery_attempt(
    connection: sqlite3.Connection,
    report: DeliveryAttempt,
    state: str,
    outcome: SubscriptionOutcome | None = None,
) -> DeliveryAttempt:
    """Store one POST of a delivery as its next attempt, and the delivery's state after it;
    with `outcome`, count it for the delivery's subscription."""
    row = connection.execute(
        _UPDATE_DELIVERY,
        (state, report.status, report.latency_ms, report.error, report.at, report.delivery_id),
    ).fetchone()
    number = row["attempts"] if row is not None else 0
    connection.execute(
        _RECORD_ATTEMPT,
        (report.delivery_id, number, report.at, report.status, report.latency_ms, report.error),
    )
    if outcome is not None and row is not None:
        record_subscription_outcome(connection, row["subscription_id"], outcome, report.at)
    return dataclasses.replace(report, number=number)


def outgoing_delivery(connection: sqlite3.Connection, delivery_id: int) -> OutgoingDelivery | None:
    """A delivery with its subscription or its tenant's job-webhook secret, or None."""
    delivery = get_delivery(connection, delivery_id, None)
    if delivery is None:
        return None
    if delivery.subscription_id == JOB_WEBHOOK:
        return OutgoingDelivery(delivery, secret=find_signing_secret(connection, delivery.tenant))
    subscription = get_subscription(connection, delivery.subscription_id, None)
    return OutgoingDelivery(delivery, subscription)


def restart_delivery(
    connection: sqlite3.Connection,
    delivery_id: int,
    job_id: int,
    now: int,
) -> None:
    """Point a delivery at a new job that sends it again (same payload, same webhook-id)."""
    connection.execute(
        "UPDATE webhook_deliveries SET state = 'pending', delivery_job_id = ?, updated_at = ? "
        "WHERE id = ?",
        (job_id, now, delivery_id),
    )

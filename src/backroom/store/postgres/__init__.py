"""The PostgreSQL store, for many API servers and workers on many machines.

Split by topic as the SQLite store is, each module holding the SQL it runs: `jobs`
(submit, cancel, redrive), `leases` (claim, heartbeat), `finish` (ending attempts:
outcomes and lease sweeps), `history` (what every transition writes besides the job),
`queries` (reads), `handler_writes`, `tenants`, `lanes`, `usage`, `retention`.

Every write that moves jobs is a single statement whose data-modifying CTEs also write
the attempt and event rows, so it commits atomically without an explicit transaction.
Statements that may make a job claimable end with `wake`, a CTE calling `pg_notify`
once when they did; it commits (and is delivered) with the rows it announces. The
final SELECT reads it as `woken` only because PostgreSQL never runs a CTE that nothing
reads (a data-modifying CTE always runs).

A job table's statistics are nearly always stale (its rows change state faster than
autovacuum analyzes them), and a plan misled by them reads a whole partial index on
every call. So statements leave the planner no cheaper-looking wrong path: they reach
jobs by id through `id = ANY (...)`, order by an index's own key, and write a state
test as `(state = ...) IS TRUE` where a partial index whose predicate a plain test
would match (`jobs_claim`, `jobs_leases`) must not be the way in.

`PostgresStore` is loaded on first use, so that reading a URL's options (`url`) does
not import asyncpg into a process that may never connect.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from backroom.store.postgres.store import PostgresStore

__all__ = ["PostgresStore"]


def __getattr__(name: str) -> object:
    if name == "PostgresStore":
        from backroom.store.postgres.store import PostgresStore  # noqa: PLC0415

        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

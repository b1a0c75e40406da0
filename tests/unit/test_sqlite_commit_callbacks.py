"""SQLite's commit callbacks (what wakes feed readers in-process) fire only for changes.

A webhook dispatcher reads its cursor in a write transaction on every pass; if that
commit woke it, an idle worker would loop without end (it did: a third of a core).
"""

from __future__ import annotations

from pathlib import Path

from backroom.core.job import NewJob
from backroom.store.sqlite.store import SqliteStore

T0 = 1_700_000_000_000


async def test_only_a_transaction_that_changed_a_row_calls_back(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "jobs.db"))
    await store.migrate()
    calls: list[str] = []
    store.on_feed_change(lambda: calls.append("changed"))
    try:
        await store.feed_consumer("webhooks", T0)  # a new reader's cursor: a row
        after_new_reader = len(calls)
        await store.feed_consumer("webhooks", T0)  # the same reader again: nothing new
        await store.claim([], 10, "worker", 30_000, T0)  # nothing to claim
        unchanged = len(calls)
        await store.submit(NewJob("noop", None, T0), T0)
        after_submit = len(calls)
    finally:
        await store.close()

    assert (after_new_reader, unchanged, after_submit) == (1, 1, 2)

"""A full SQLite database (simulated with `max_page_count`, SQLITE_FULL) over the API.

Submissions are refused with a 503 problem and Retry-After, readiness says not ready,
and once space comes back both recover by themselves. What was acknowledged is kept,
and what was refused was not stored. `tests/integration/test_sqlite_disk_full.py`
fills a real (tmpfs) disk under a real server.
"""

from __future__ import annotations

import sqlite3

import httpx
from api_support import Keys, assert_problem, bearer, submit

from backroom import App
from backroom.store.sqlite.store import SqliteStore

BIG_INPUT = "x" * 20_000
"""A job input of several pages, so that a few submissions fill the spare pages."""


async def limit_pages(store: SqliteStore, spare: int | None) -> None:
    """Let the database grow by `spare` more pages (None: as it likes)."""

    def apply(connection: sqlite3.Connection) -> None:
        (pages,) = connection.execute("PRAGMA page_count").fetchone()
        limit = 2**30 if spare is None else pages + spare
        connection.execute(f"PRAGMA max_page_count = {limit}")

    # Only the store's own connection can be limited: the pragma is per connection.
    await store._database.write(apply)


async def test_a_full_database_refuses_with_503_and_recovers_when_space_returns(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    store = app.store
    assert isinstance(store, SqliteStore)
    await limit_pages(store, spare=8)
    acknowledged: list[int] = []
    refusals: list[httpx.Response] = []
    while len(refusals) < 3 and len(acknowledged) < 100:
        response = await submit(http, keys.acme, payload=BIG_INPUT)
        if response.status_code == 503:
            refusals.append(response)
        else:
            assert response.status_code == 202, response.text
            acknowledged.append(response.json()["id"])

    assert len(refusals) == 3, "the database never filled up"
    for refused in refusals:
        assert_problem(refused, 503, "store-unavailable")
        assert int(refused.headers["retry-after"]) >= 1
    assert_problem(await http.get("/readyz"), 503, "store-unavailable")
    assert (await http.get("/readyz")).status_code == 503  # still full: still not ready

    await limit_pages(store, spare=None)

    assert (await http.get("/readyz")).json() == {"status": "ready"}
    after = await submit(http, keys.acme, payload=BIG_INPUT)
    assert after.status_code == 202, after.text
    listing = await http.get("/v1/jobs", params={"limit": 200}, headers=bearer(keys.acme))
    stored = sorted(job["id"] for job in listing.json()["jobs"])
    assert stored == [*acknowledged, after.json()["id"]]

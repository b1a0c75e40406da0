"""A revoked API key stops working within the key cache's time on every API process.

Two API apps share one database (as two `backroom serve` processes would), on SQLite
and on PostgreSQL. The key is used without pause on both while the tenant's keys are
revoked through a third app; once the cache time has passed, both answer 401, however
busy the key was.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import httpx
import pytest
from manual_clock import ManualClock

from backroom import App
from backroom.api import ApiSettings, create_api
from backroom.service.api_keys import issue_key, key_id_of
from backroom.service.tenant_admin import revoke_key

CACHE_MS = 2_000
Servers = tuple["App", "ManualClock", list[httpx.AsyncClient]]
STEP_MS = 500


async def _open_apps(
    stack: AsyncExitStack, database_url: str, clock: ManualClock, count: int
) -> list[App]:
    apps = []
    for _ in range(count):
        apps.append(await stack.enter_async_context(App(database_url, clock=clock)))
    return apps


@pytest.fixture
async def clients(database_url: str) -> AsyncIterator[Servers]:
    """An admin app, the shared clock, and HTTP clients of two API apps on one database."""
    clock = ManualClock()
    async with AsyncExitStack() as stack:
        admin, *servers = await _open_apps(stack, database_url, clock, 3)
        clients = []
        for server in servers:
            api = create_api(server, ApiSettings(key_cache_ms=CACHE_MS))
            transport = httpx.ASGITransport(api)
            client = httpx.AsyncClient(transport=transport, base_url="http://backroom.test")
            clients.append(await stack.enter_async_context(client))
        yield admin, clock, clients


@pytest.mark.parametrize("one_key", [False, True], ids=["revoke-all", "revoke-one"])
async def test_a_revoked_key_fails_on_every_server_within_the_cache_time(
    clients: Servers, one_key: bool
) -> None:
    admin, clock, servers = clients
    _, key = await issue_key(admin, "acme")
    headers = {"Authorization": f"Bearer {key}"}
    for server in servers:
        assert (await server.get("/v1/jobs", headers=headers)).status_code == 200

    if one_key:
        await revoke_key(admin, "acme", key_id_of(key))
    else:
        await admin.store.revoke_keys("acme", clock.now())
    revoked_at = clock.now()
    # Used every half second, as a busy client would: the use must not keep it alive.
    while clock.now() - revoked_at <= CACHE_MS:
        for server in servers:
            response = await server.get("/v1/jobs", headers=headers)
            assert response.status_code in (200, 401)
        clock.ms += STEP_MS
    for server in servers:
        response = await server.get("/v1/jobs", headers=headers)
        assert response.status_code == 401, response.text

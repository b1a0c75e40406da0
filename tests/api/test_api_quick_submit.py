"""POST /v1/jobs answers alike whatever shape an acceptable request takes.

Ordinary submissions once had a quick path of their own in front of the route; the
route now reads its request itself and is the only path. These tests remain: an
ordinary submission and one with a charset in its Content-Type, a chunked body and a
read-only key must get the same answers, and a revoked key must stop working once the
key cache's time has passed, as it does on every other route.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
from api_support import Keys, ManualClock, assert_problem, bearer, register_tasks

from backroom import App
from backroom.api import ApiSettings, create_api
from backroom.service.api_keys import add_key, issue_key
from backroom.store.sqlite.store import SqliteStore

ROUTE_ONLY = "application/json; charset=utf-8"
"""A Content-Type the quick path leaves to the route."""


async def _post(
    http: httpx.AsyncClient, key: str, content_type: str, body: Any, **headers: str
) -> httpx.Response:
    return await http.post(
        "/v1/jobs",
        content=json.dumps(body).encode(),
        headers=bearer(key, **{"Content-Type": content_type}, **headers),
    )


def _comparable(response: httpx.Response) -> tuple[int, str, dict[str, Any]]:
    document = response.json()
    for varying in ("id", "created_at", "updated_at", "next_attempt_at"):
        document.pop(varying, None)
    return response.status_code, response.headers["content-type"], document


async def test_the_quick_path_and_the_route_give_the_same_answers(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    body = {"task": "echo", "input": {"text": "hi"}, "priority": 2, "metadata": {"a": 1}}
    answers = []
    for content_type in ("application/json", ROUTE_ONLY):
        key = {"Idempotency-Key": content_type}
        created = await _post(http, keys.acme, content_type, body, **key)
        replayed = await _post(http, keys.acme, content_type, body, **key)
        conflict = await _post(http, keys.acme, content_type, {**body, "priority": 3}, **key)
        assert replayed.headers["idempotent-replayed"] == "true"
        assert_problem(conflict, 422, "idempotency-conflict")
        answers.append([_comparable(created), _comparable(replayed), conflict.json()["status"]])

    assert answers[0] == answers[1]


async def test_a_chunked_body_is_taken_by_the_route(http: httpx.AsyncClient, keys: Keys) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"task": "echo", '
        yield b'"input": 1}'

    headers = bearer(keys.acme, **{"Content-Type": "application/json"})
    response = await http.post("/v1/jobs", content=chunks(), headers=headers)

    assert response.status_code == 202
    assert response.json()["task"] == "echo"


async def test_a_read_only_key_is_refused(http: httpx.AsyncClient, app: App) -> None:
    await issue_key(app, "reader")
    read_only = await add_key(app, "reader", read_only=True)

    response = await _post(http, read_only, "application/json", {"task": "echo", "input": 1})

    assert_problem(response, 403, "read-only-key")


async def test_a_revoked_key_stops_submitting_once_the_cache_time_has_passed(
    tmp_path: Path,
) -> None:
    clock = ManualClock(1_700_000_000_000)
    store = SqliteStore(str(tmp_path / "quick.db"), synchronous="OFF")
    async with App(store=store, clock=clock) as app:
        register_tasks(app)
        _, key = await issue_key(app, "acme")
        api = create_api(app, ApiSettings(key_cache_ms=2_000))
        transport = httpx.ASGITransport(api)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            body = {"task": "echo", "input": 1}
            assert (await _post(http, key, "application/json", body)).status_code == 202
            await app.store.revoke_keys("acme", clock.now())
            clock.ms += 2_000

            refused = await _post(http, key, "application/json", body)

    assert_problem(refused, 401)

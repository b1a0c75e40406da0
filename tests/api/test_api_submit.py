"""POST /v1/jobs: 202, idempotent replays (200), conflicts and invalid bodies (422),
the body limit (413), the tenant cap (429) and missing keys (401)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from api_support import Keys, assert_problem, bearer, submit

from backroom import App


async def test_a_new_job_is_accepted_with_its_location(http: httpx.AsyncClient, keys: Keys) -> None:
    response = await submit(http, keys.acme, payload={"text": "hi"}, priority=5, metadata={"a": 1})

    assert response.status_code == 202
    job = response.json()
    assert response.headers["location"] == f"/v1/jobs/{job['id']}"
    assert "idempotent-replayed" not in response.headers
    assert job["status"] == "queued"
    assert job["task"] == "echo"
    assert job["tenant"] == "acme"
    assert job["queue"] == "interactive"
    assert job["priority"] == 5
    assert job["metadata"] == {"a": 1}
    assert job["attempts"] == 0


async def test_the_same_key_and_body_replay_the_first_job(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    first = await submit(http, keys.acme, payload=[1, 2], idempotency_key="order-1")
    again = await submit(http, keys.acme, payload=[1, 2], idempotency_key="order-1")

    assert (first.status_code, again.status_code) == (202, 200)
    assert again.headers["idempotent-replayed"] == "true"
    assert again.headers["location"] == first.headers["location"]
    assert again.json()["id"] == first.json()["id"]
    assert len(await app.list_jobs()) == 1


async def test_a_quoted_structured_field_key_is_the_same_key(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    quoted = await submit(http, keys.acme, idempotency_key='"say \\"hi\\""')
    bare = await submit(http, keys.acme, idempotency_key='say "hi"')

    assert (quoted.status_code, bare.status_code) == (202, 200)
    assert bare.json()["id"] == quoted.json()["id"]


async def test_the_same_key_with_another_body_is_a_conflict(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    first = await submit(http, keys.acme, payload="a", idempotency_key="k")
    other = await submit(http, keys.acme, payload="b", idempotency_key="k")

    problem = assert_problem(other, 422, "idempotency-conflict")
    assert problem["job_id"] == first.json()["id"]


@pytest.mark.parametrize(
    "header",
    [b"", b"x" * 256, b"caf\xe9", b"tab\there", b'"unterminated', b'"bad \\escape"', b'"in"side"'],
)
async def test_an_invalid_idempotency_key_is_refused(
    http: httpx.AsyncClient, keys: Keys, header: bytes
) -> None:
    headers = {name.encode(): value.encode() for name, value in bearer(keys.acme).items()}
    headers[b"Idempotency-Key"] = header
    response = await http.post("/v1/jobs", json={"task": "echo", "input": None}, headers=headers)

    problem = assert_problem(response, 422, "validation-error")
    assert problem["errors"][0]["loc"] == ["header", "Idempotency-Key"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"input": 1}, ["body", "task"]),
        ({"task": "echo"}, ["body", "input"]),
        ({"task": "nope", "input": 1}, ["body", "task"]),
        ({"task": "echo", "input": 1, "queue": "nope"}, ["body", "queue"]),
        ({"task": "echo", "input": 1, "priority": 10**6}, ["body", "priority"]),
        ({"task": "echo", "input": 1, "max_attempts": 0}, ["body", "max_attempts"]),
        ({"task": "echo", "input": 1, "timeout_s": 0}, ["body", "timeout_s"]),
        ({"task": "echo", "input": 1, "delay_s": -1}, ["body", "delay_s"]),
        ({"task": "echo", "input": 1, "colour": "red"}, ["body", "colour"]),
        ({"task": "ec\u0000ho", "input": 1}, ["body", "task"]),
        # Issue 9, item 7: lax coercions that once passed.
        ({"task": "echo", "input": 1, "priority": True}, ["body", "priority"]),
        ({"task": "echo", "input": 1, "priority": 1.0}, ["body", "priority"]),
        ({"task": "echo", "input": 1, "max_attempts": True}, ["body", "max_attempts"]),
        ({"task": "echo", "input": 1, "timeout_s": 1e-9}, ["body", "timeout_s"]),
    ],
)
async def test_an_invalid_body_names_the_field(
    http: httpx.AsyncClient, keys: Keys, body: dict[str, object], field: list[str]
) -> None:
    response = await http.post("/v1/jobs", json=body, headers=bearer(keys.acme))

    problem = assert_problem(response, 422, "validation-error")
    assert [error["loc"] for error in problem["errors"]] == [field]
    assert ".".join(field) in problem["detail"]


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (b'{"task": "echo", "input": NaN}', ["body", "input"]),
        (b'{"task": "echo", "input": [1, -Infinity]}', ["body", "input"]),
        (b'{"task": "echo", "input": {"a": "\\ud800"}}', ["body", "input"]),
        (b'{"task": "echo\\udfff", "input": 1}', ["body", "task"]),
        (b"{not json", ["body"]),
    ],
)
async def test_json_that_cannot_be_stored_is_refused(
    http: httpx.AsyncClient, keys: Keys, raw: bytes, field: list[str]
) -> None:
    headers = bearer(keys.acme, **{"Content-Type": "application/json"})
    response = await http.post("/v1/jobs", content=raw, headers=headers)

    problem = assert_problem(response, 422, "validation-error")
    assert [error["loc"] for error in problem["errors"]] == [field]


async def test_a_body_over_the_limit_is_refused_before_it_is_read(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    huge = b'{"task": "echo", "input": "' + b"x" * (1024 * 1024) + b'"}'
    headers = bearer(keys.acme, **{"Content-Type": "application/json"})

    response = await http.post("/v1/jobs", content=huge, headers=headers)

    assert_problem(response, 413)


async def test_a_chunked_body_is_cut_off_at_the_limit(http: httpx.AsyncClient, keys: Keys) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"task": "echo", "input": "'
        for _ in range(300):
            yield b"x" * 4096
        yield b'"}'

    headers = bearer(keys.acme, **{"Content-Type": "application/json"})
    response = await http.post("/v1/jobs", content=chunks(), headers=headers)

    assert_problem(response, 413)


async def test_a_tenant_at_its_cap_gets_429_and_keeps_its_key(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    first = await submit(http, keys.capped, payload=1)
    await submit(http, keys.capped, payload=2)

    refused = await submit(http, keys.capped, payload=3, idempotency_key="third")

    assert_problem(refused, 429, "queue-full")
    assert refused.headers["retry-after"] == "5"
    assert refused.headers["cache-control"] == "no-store"
    await http.post(f"/v1/jobs/{first.json()['id']}/cancel", headers=bearer(keys.capped))
    accepted = await submit(http, keys.capped, payload=3, idempotency_key="third")
    assert accepted.status_code == 202


@pytest.mark.parametrize("authorization", [None, "Bearer br_wrong", "Basic abc", "Bearer"])
async def test_a_missing_or_unknown_key_is_401(
    http: httpx.AsyncClient, keys: Keys, authorization: str | None
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    response = await http.post("/v1/jobs", json={"task": "echo", "input": 1}, headers=headers)

    assert_problem(response, 401)
    assert response.headers["www-authenticate"] == "Bearer"


async def test_a_revoked_key_is_401(http: httpx.AsyncClient, keys: Keys, app: App) -> None:
    await app.store.revoke_keys("acme", app.clock.now())

    assert_problem(await submit(http, keys.acme), 401)
    assert (await submit(http, keys.globex)).status_code == 202


@pytest.mark.parametrize("raw", [b"\xff\xfe\x00garbage", b"[" * 100_000])
async def test_a_body_that_cannot_be_decoded_is_422(
    http: httpx.AsyncClient, keys: Keys, raw: bytes
) -> None:
    headers = bearer(keys.acme, **{"Content-Type": "application/json"})
    response = await http.post("/v1/jobs", content=raw, headers=headers)

    problem = assert_problem(response, 422, "validation-error")
    assert problem["errors"][0]["loc"] == ["body"]

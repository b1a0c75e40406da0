"""What the API tests share: test tasks, tenants with keys, and request helpers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from backroom import App, JobContext, Permanent
from backroom.service.api_keys import issue_key

ADMIN_KEY = "br_admin-key-from-the-environment"
PROBLEM_JSON = "application/problem+json"


def register_tasks(app: App) -> None:
    """`echo` returns its input; `boom` fails for good at once."""

    @app.task("echo")
    async def echo(_ctx: JobContext, payload: Any) -> Any:
        return payload

    @app.task("boom")
    async def boom(_ctx: JobContext, _payload: Any) -> None:
        raise Permanent("boom")


@dataclass(frozen=True)
class Keys:
    """API keys of the test tenants: two plain ones, a capped one and an admin one."""

    acme: str
    globex: str
    capped: str
    root: str


async def create_tenants(app: App) -> Keys:
    """Create the test tenants; `capped` may have 2 jobs queued or running."""
    _, acme = await issue_key(app, "acme")
    _, globex = await issue_key(app, "globex")
    _, capped = await issue_key(app, "capped", max_queued=2)
    _, root = await issue_key(app, "root", admin=True)
    return Keys(acme, globex, capped, root)


def bearer(key: str, **headers: str) -> dict[str, str]:
    """Request headers that authenticate with `key`, plus `headers`."""
    return {"Authorization": f"Bearer {key}", **headers}


def assert_problem(
    response: httpx.Response, status: int, kind: str | None = None
) -> dict[str, Any]:
    """Check that `response` is an RFC 9457 problem with `status`; its document."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM_JSON
    problem: dict[str, Any] = response.json()
    assert problem["status"] == status
    assert problem["title"]
    assert problem["detail"]
    expected = "about:blank" if kind is None else f"urn:backroom:problem:{kind}"
    assert problem["type"] == expected
    return problem


async def submit(
    http: httpx.AsyncClient, key: str, task: str = "echo", payload: Any = None, **fields: Any
) -> httpx.Response:
    """POST a job; an `idempotency_key` field becomes the header."""
    idempotency = fields.pop("idempotency_key", None)
    headers = (
        bearer(key) if idempotency is None else bearer(key, **{"Idempotency-Key": idempotency})
    )
    return await http.post(
        "/v1/jobs", json={"task": task, "input": payload, **fields}, headers=headers
    )


class ManualClock:
    """A clock that moves only when the test moves it (`ms`); sleeping moves it too."""

    def __init__(self, ms: int = 0) -> None:
        self.ms = ms

    def now(self) -> int:
        """The test's time in milliseconds."""
        return self.ms

    async def sleep(self, ms: float) -> None:
        """Move the clock on by `ms`; nothing waits."""
        self.ms += round(ms)

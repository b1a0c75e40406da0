"""The dashboard over HTTP, in process: sessions, CSRF, scope, read-only keys, headers."""

from __future__ import annotations

import re

import httpx
from api_support import ADMIN_KEY, Keys, bearer, submit

from backroom import App, run_until_idle
from backroom.core.usage import AttemptUsage
from backroom.service.api_keys import add_key


def _token(page: httpx.Response) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found is not None, page.text
    return found.group(1)


async def _log_in(http: httpx.AsyncClient, key: str) -> httpx.Response:
    form = await http.get("/dashboard/login")
    return await http.post(
        "/dashboard/login",
        data={"csrf": _token(form), "api_key": key, "next": "/dashboard/jobs"},
    )


async def test_pages_ask_to_log_in_and_a_key_logs_in_with_a_strict_http_only_cookie(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    before = await http.get("/dashboard/jobs?state=failed")
    wrong = await _log_in(http, "br_not-a-key")
    logged_in = await _log_in(http, keys.acme)
    page = await http.get("/dashboard/jobs")

    assert before.status_code == 303
    back = "%2Fdashboard%2Fjobs%3Fstate%3Dfailed"
    assert before.headers["location"] == f"/dashboard/login?next={back}"
    assert wrong.status_code == 401
    assert logged_in.status_code == 303
    assert logged_in.headers["location"] == "/dashboard/jobs"
    cookie = logged_in.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/dashboard" in cookie
    assert keys.acme not in logged_in.headers["set-cookie"]
    assert page.status_code == 200
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"


async def test_a_login_without_its_form_token_is_refused(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    response = await http.post("/dashboard/login", data={"api_key": keys.acme})

    assert response.status_code == 403
    assert "backroom_session" not in response.headers.get("set-cookie", "")


async def test_an_action_needs_the_sessions_csrf_token(http: httpx.AsyncClient, keys: Keys) -> None:
    job = (await submit(http, keys.acme, "boom")).json()["id"]
    await _log_in(http, keys.acme)

    forged = await http.post(f"/dashboard/jobs/{job}/cancel", data={"csrf": "forged"})
    page = await http.get(f"/dashboard/jobs/{job}")
    done = await http.post(f"/dashboard/jobs/{job}/cancel", data={"csrf": _token(page)})
    after = await http.get(f"/v1/jobs/{job}", headers=bearer(keys.acme))

    assert forged.status_code == 403
    assert done.status_code == 303
    assert after.json()["status"] == "cancelled"


async def test_a_tenant_sees_only_its_jobs_and_another_tenants_job_is_not_found(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    theirs = (await submit(http, keys.globex, "echo", {"secret": "globex-only"})).json()["id"]
    mine = (await submit(http, keys.acme, "echo", {"mine": 1})).json()["id"]
    await _log_in(http, keys.acme)

    listing = await http.get("/dashboard/jobs")
    other = await http.get(f"/dashboard/jobs/{theirs}")
    own = await http.get(f"/dashboard/jobs/{mine}")
    admin_view = await http.get("/dashboard/jobs?tenant=globex")

    assert f'href="/dashboard/jobs/{mine}"' in listing.text
    assert f'href="/dashboard/jobs/{theirs}"' not in listing.text
    assert other.status_code == 404
    assert "globex-only" not in other.text
    assert own.status_code == 200
    assert f'href="/dashboard/jobs/{theirs}"' not in admin_view.text  # not an admin


async def test_the_admin_key_sees_every_tenant_and_a_read_only_key_cannot_act(
    app: App, http: httpx.AsyncClient, keys: Keys
) -> None:
    job = (await submit(http, keys.globex, "boom")).json()["id"]
    read_only = await add_key(app, "globex", read_only=True)

    await _log_in(http, ADMIN_KEY)
    admin_page = await http.get(f"/dashboard/jobs/{job}")
    await _log_in(http, read_only)
    page = await http.get(f"/dashboard/jobs/{job}")
    refused = await http.post(f"/dashboard/jobs/{job}/cancel", data={"csrf": _token(page)})
    api_refused = await http.post(f"/v1/jobs/{job}/cancel", headers=bearer(read_only))
    api_read = await http.get(f"/v1/jobs/{job}", headers=bearer(read_only))

    assert admin_page.status_code == 200
    assert page.status_code == 200
    assert ">Cancel</button>" not in page.text
    assert refused.status_code == 403
    assert "read-only" in refused.text
    assert api_refused.status_code == 403
    assert api_refused.json()["type"] == "urn:backroom:problem:read-only-key"
    assert api_read.status_code == 200


async def test_only_an_admin_sees_tenants_and_steers_queues(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    await _log_in(http, keys.acme)
    tenants = await http.get("/dashboard/tenants")
    page = await http.get("/dashboard/queues")
    steer = {"csrf": _token(page), "kind": "queue", "name": "interactive", "action": "pause"}
    refused = await http.post("/dashboard/queues/steer", data=steer)
    await _log_in(http, keys.root)
    admin_tenants = await http.get("/dashboard/tenants")
    admin_page = await http.get("/dashboard/queues")
    paused = await http.post("/dashboard/queues/steer", data=steer | {"csrf": _token(admin_page)})
    after = await http.get("/dashboard/queues")

    assert tenants.status_code == 404
    assert refused.status_code == 403
    assert admin_tenants.status_code == 200
    assert "globex" in admin_tenants.text
    assert paused.status_code == 303
    assert "paused since" in after.text


async def test_a_dead_letter_group_is_redriven_whole_and_only_that_group(
    app: App, http: httpx.AsyncClient, keys: Keys
) -> None:
    failed = [(await submit(http, keys.acme, "boom")).json()["id"] for _ in range(2)]
    theirs = (await submit(http, keys.globex, "boom")).json()["id"]
    await run_until_idle(app)
    await _log_in(http, keys.acme)
    page = await http.get("/dashboard/dead-letters")
    form = {"csrf": _token(page), "task": "boom", "error_kind": "Permanent"}
    answer = await http.post("/dashboard/dead-letters/redrive", data=form)
    states = [
        (await http.get(f"/v1/jobs/{job}", headers=bearer(key))).json()["status"]
        for job, key in ((failed[0], keys.acme), (failed[1], keys.acme), (theirs, keys.globex))
    ]

    assert "Redrive 2" in page.text
    assert answer.status_code == 303
    assert "2+job" in answer.headers["location"]
    assert states == ["queued", "queued", "failed"]  # another tenant's group stays


async def test_a_batch_delete_removes_the_selected_finished_jobs_only(
    app: App, http: httpx.AsyncClient, keys: Keys
) -> None:
    finished = [(await submit(http, keys.acme, "echo", {"n": n})).json()["id"] for n in (1, 2)]
    await run_until_idle(app)
    waiting = (await submit(http, keys.acme, "echo", {"n": 3})).json()["id"]
    await _log_in(http, keys.acme)
    page = await http.get("/dashboard/jobs")
    form = {"csrf": _token(page), "action": "delete", "scope": "selected"}
    answer = await http.post(
        "/dashboard/jobs/batch", data=form | {"job": [*map(str, finished), str(waiting)]}
    )
    statuses = [
        (await http.get(f"/v1/jobs/{job}", headers=bearer(keys.acme))).status_code
        for job in (*finished, waiting)
    ]

    assert answer.status_code == 303
    assert "2+job" in answer.headers["location"]
    assert statuses == [404, 404, 200]


async def test_a_jobs_page_shows_each_attempts_llm_usage_and_cost(
    app: App, http: httpx.AsyncClient, keys: Keys
) -> None:
    job = (await submit(http, keys.acme, "echo", {"n": 1})).json()["id"]
    await run_until_idle(app)
    usage = AttemptUsage(
        job, 1, "acme", "gpt-test", None, 1200, 200, 34, 2_500_000_000_000, 0, lease_token=1
    )
    await app.store.record_usage(usage)
    await _log_in(http, keys.acme)

    page = await http.get(f"/dashboard/jobs/{job}")

    assert "gpt-test: 1200 tokens in (200 cached), 34 out, $2.5" in page.text

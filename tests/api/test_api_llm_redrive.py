"""A redriven `llm.respond` job's cost is every call it paid for, before the redrive too.

The real path: the API submits, the worker calls the mock over loopback HTTP through
the official SDK, the answer is cut off (`fail_on_truncation`): billed, and the job
fails for good. Redriven through the API, its attempts start again at 1 and it pays
again; the job's cost, the tenant's usage report and its dashboard page count both.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal

import httpx
import pytest
from api_support import Keys, bearer, submit

from backroom import App, WorkerConfig, run_until_idle
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.pricing import Prices
from backroom.llm.task import RESPOND_TASK, register_llm_tasks

PRICES = Prices(Decimal("0.15"), Decimal("0.075"), Decimal("0.60"))
CUT_OFF = {
    "model": "priced",
    "input": "a redriven job pays again " * 10,
    "max_output_tokens": 4,
    "fail_on_truncation": True,
}


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_mock(MockConfig()) as url:
        yield url


@pytest.fixture
async def respond_task(app: App, base_url: str) -> AsyncIterator[None]:
    model = ModelConfig("priced", prices=PRICES)
    config = LLMConfig((ProviderConfig("mock", base_url, models=(model,)),), "mock")
    respond = register_llm_tasks(app, config, call_timeout_s=10)
    yield
    await respond.aclose()


async def failed_job(http: httpx.AsyncClient, app: App, key: str, job_id: int) -> dict[str, object]:
    await run_until_idle(app, WorkerConfig(poll_interval_ms=10))
    document: dict[str, object] = (await http.get(f"/v1/jobs/{job_id}", headers=bearer(key))).json()
    assert document["status"] == "failed"
    return document


async def test_a_redriven_jobs_cost_counts_its_calls_before_the_redrive(
    http: httpx.AsyncClient, app: App, keys: Keys, respond_task: None
) -> None:
    job_id = (await submit(http, keys.acme, RESPOND_TASK, CUT_OFF)).json()["id"]
    before = await failed_job(http, app, keys.acme, job_id)
    redriven = await http.post(f"/v1/dead-letters/{job_id}/redrive", headers=bearer(keys.acme))
    assert redriven.status_code == 200

    after = await failed_job(http, app, keys.acme, job_id)

    calls = await app.store.attempt_usages(job_id)
    assert [call.attempt for call in calls] == [1, 1]
    first, second = (Decimal(str(call.cost_pico_usd)) / 10**12 for call in calls)
    assert first > 0 and second > 0
    assert before["usage"]["cost_usd"] == f"{first.normalize():f}"  # type: ignore[index]
    assert after["usage"]["calls"] == 2  # type: ignore[index]
    assert Decimal(after["usage"]["cost_usd"]) == first + second  # type: ignore[index]
    report = (await http.get("/v1/usage", headers=bearer(keys.acme))).json()
    assert Decimal(report["total"]["cost_usd"]) == first + second
    # The dashboard shows each attempt #1 with its own call, not one call twice.
    page = await dashboard_page(http, keys.acme, f"/dashboard/jobs/{job_id}")
    shown = re.findall(r"priced: \d+ tokens in \(\d+ cached\), 4 out, \$([0-9.]+)", page)
    assert [Decimal(cost) for cost in shown] == [first, second]


async def dashboard_page(http: httpx.AsyncClient, key: str, path: str) -> str:
    """`path` of the dashboard, logged in with `key`."""
    form = (await http.get("/dashboard/login")).text
    found = re.search(r'name="csrf" value="([^"]+)"', form)
    assert found is not None
    await http.post("/dashboard/login", data={"csrf": found.group(1), "api_key": key})
    return (await http.get(path)).text

"""A tenant's daily budget holds behind LiteLLM's proxy: twenty jobs, twenty at a time,
on a budget that holds about five of their calls, never spend past it.

LiteLLM answers `litellm-mocked` itself and reports the usage of each answer (its own
token counts, not backroom's estimate); backroom prices the model from its config.
"""

from __future__ import annotations

import secrets
from decimal import Decimal
from pathlib import Path

import pytest
from litellm_process import LiteLLMProxy
from proxy_models import LITELLM_MOCKED

from backroom import App, JobState, WorkerConfig, run_until_idle
from backroom.core.usage import DailyBudget, OverBudget, usd
from backroom.llm.config import LLMConfig, ModelConfig
from backroom.llm.pricing import Prices
from backroom.llm.task import RESPOND_TASK, register_llm_tasks
from backroom.runtime.lane_gate import BUDGET_EXHAUSTED
from backroom.service.api_keys import issue_key
from backroom.store.protocol import JobFilter
from backroom.store.sqlite.store import SqliteStore

pytestmark = pytest.mark.slow

JOBS = 20
BUDGET_USD = Decimal("0.02")
# Dear on purpose: a call costs about $0.004, and reserves about $0.01.
PRICES = Prices(Decimal("100"), Decimal("100"), Decimal("400"))


async def test_a_budget_is_a_hard_cap_behind_litellm(
    litellm_proxy: LiteLLMProxy, tmp_path: Path
) -> None:
    priced = ModelConfig(LITELLM_MOCKED, prices=PRICES)
    config = LLMConfig((litellm_proxy.provider(chat_only=True, models=[priced]),))
    app = App(store=SqliteStore(str(tmp_path / "budget.db")))
    register_llm_tasks(app, config, call_timeout_s=30)
    run = secrets.token_hex(4)
    async with app:
        await issue_key(app, "thrifty", daily_budget=DailyBudget.of_usd(BUDGET_USD))
        for number in range(JOBS):
            payload = {"model": LITELLM_MOCKED, "input": f"budget {number} {run}"}
            await app.submit(RESPOND_TASK, {**payload, "max_output_tokens": 16}, tenant="thrifty")
        workers = WorkerConfig(concurrency=JOBS, over_budget=OverBudget.FAIL, poll_interval_ms=20)
        await run_until_idle(app, workers)

        jobs = await app.list_jobs(JobFilter(limit=JOBS))
        usage = [await app.store.usage_totals(job.id) for job in jobs]
    # Every call of the tenant today is one of these jobs'.
    spent = sum(totals.cost_pico_usd for totals in usage)

    budget = DailyBudget.of_usd(BUDGET_USD).limit_pico_usd
    succeeded = [job for job in jobs if job.state is JobState.SUCCEEDED]
    print(f"behind LiteLLM: spent ${usd(spent):f} of ${BUDGET_USD} ({spent / budget:.3f}x)")
    assert spent <= budget
    assert len(succeeded) >= 2
    refused = [job for job in jobs if job.state is JobState.FAILED]
    assert refused and all(job.error and job.error.kind == BUDGET_EXHAUSTED for job in refused)
    # LiteLLM reported every answer's usage: no call was estimated, none left unpaid.
    assert sum(totals.calls for totals in usage) == len(succeeded)
    assert sum(totals.estimated_calls for totals in usage) == 0

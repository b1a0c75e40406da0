"""`llm.respond` with no provider configured answers from the offline simulated one."""

from __future__ import annotations

from pathlib import Path

from backroom import JobState, WorkerConfig, run_until_idle
from backroom.demo.tasks import demo_app
from backroom.llm.config import LLMConfig
from backroom.service.documents import job_document


async def test_an_llm_job_runs_offline_with_usage_and_cost(tmp_path: Path) -> None:
    app = demo_app(f"sqlite:///{tmp_path / 'jobs.db'}", llm=LLMConfig())
    async with app:
        submitted = await app.submit(
            "llm.respond", {"model": "offline-mini", "input": "Summarise the report"}
        )
        await run_until_idle(app, WorkerConfig(poll_interval_ms=20))
        job = await app.get(submitted.job.id)
        document = job_document(job, usage=await app.store.usage_totals(job.id))

    assert job.state is JobState.SUCCEEDED, job.error
    assert "Summarise the report" in job.result["output_text"]
    assert document["usage"]["input_tokens"] > 0
    assert float(document["usage"]["cost_usd"]) > 0

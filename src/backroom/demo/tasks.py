"""Tasks that need no LLM, so `backroom serve` can run a first job offline.

`demo.summarize` pretends to be a slow model: it works in a few timed steps,
reporting progress and a growing partial summary, and now and then its first
attempt fails with a transient error, so a retry shows in the job's history.
`demo.noop` returns at once (benchmarks measure the machinery around it).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from backroom.app import App
from backroom.clock import Clock
from backroom.context import JobContext
from backroom.core.errors import Permanent, Retryable
from backroom.core.job import JSON
from backroom.llm.config import LLMConfig
from backroom.llm.mock.offline import OFFLINE_PROVIDER, offline_config, offline_http_client
from backroom.llm.task import register_llm_tasks

SUMMARY_WORDS = 30


@dataclass(frozen=True, slots=True)
class DemoPace:
    """How `demo.summarize` behaves: `steps` steps of `step_ms` each, and the chance
    that a job's first attempt fails transiently (decided by the job id, so a given
    job behaves the same on every run)."""

    steps: int = 5
    step_ms: int = 300
    first_attempt_failure_rate: float = 0.2


def _text_of(payload: JSON) -> str:
    text = payload.get("text") if isinstance(payload, dict) else payload
    if not isinstance(text, str):
        raise Permanent('the input must be a string or {"text": "..."}')
    return text


def summarizer(pace: DemoPace) -> Callable[[JobContext, JSON], Awaitable[JSON]]:
    """The `demo.summarize` handler for `pace`."""

    async def summarize(ctx: JobContext, payload: JSON) -> JSON:
        """Summarize `payload` (a string or {"text": ...}) in a few slow steps."""
        words = _text_of(payload).split()
        unlucky = random.Random(ctx.job.id).random() < pace.first_attempt_failure_rate
        if ctx.attempt == 1 and unlucky:
            raise Retryable("the pretend model timed out (a transient demo failure)")
        for step in range(1, pace.steps + 1):
            await ctx.clock.sleep(pace.step_ms)
            read = words[: len(words) * step // pace.steps]
            await ctx.progress(step / pace.steps, partial=" ".join(read[:SUMMARY_WORDS]))
        summary = " ".join(words[:SUMMARY_WORDS]) + (" ..." if len(words) > SUMMARY_WORDS else "")
        return {"summary": summary, "words": len(words)}

    return summarize


async def noop(_ctx: JobContext, _payload: JSON) -> None:
    """Do nothing: the cost of a job is then the queue's alone."""


def register_demo_tasks(app: App, pace: DemoPace | None = None) -> None:
    """Register `demo.summarize` and `demo.noop` on `app`."""
    app.task("demo.summarize", timeout_s=60)(summarizer(pace or DemoPace()))
    app.task("demo.noop")(noop)


def demo_app(
    database_url: str | None = None,
    *,
    clock: Clock | None = None,
    pace: DemoPace | None = None,
    llm: LLMConfig | None = None,
) -> App:
    """An `App` with the demo tasks and `llm.respond`: what `backroom serve` runs by default.

    `llm.respond` calls the providers of `llm`; with none configured it answers from
    the offline simulated provider (see `backroom.llm.mock.offline`).
    """
    app = App(database_url, clock=clock)
    register_demo_tasks(app, pace)
    register_respond(app, llm)
    return app


def register_respond(app: App, llm: LLMConfig | None) -> None:
    """Register `llm.respond` on `app`: `llm`'s providers, or the offline simulated one."""
    if llm is not None and llm.providers:
        register_llm_tasks(app, llm)
    else:
        offline = {OFFLINE_PROVIDER: lambda: offline_http_client(app.clock)}
        register_llm_tasks(app, offline_config(), http_clients=offline)

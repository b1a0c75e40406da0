"""How one offloaded job ends from its batch line: its outcome, and its call settled.

    settler = LineSettler(config, store, retry, rng)
    end = settler.outcome(job, line, now)          # a line of an ended batch
    end = settler.sent_back(job, reason, now)      # no line: send the job back
    await store.batch_finish([end, ...], now)      # calls settled, outcomes applied

A succeeded line settles the job's call with its usage at the batch price
(`batch_prices`) and succeeds the job with the same result an online call gives. An
errored line is classified as an online call's error is (`Retryable`: the job is
retried, into a later batch or, on its last attempt, online; `Permanent`: it fails);
the provider bills no failed line. A line that never ran (the batch expired or was
cancelled) and a job with no line at all are sent back the same way, with a
`Retryable` error, their calls unbilled. The caller writes the ends
(`BatchStore.batch_finish`), fenced by each job's lease token.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

from backroom.core.errors import JobError, Permanent, Retryable
from backroom.core.job import Job
from backroom.core.outcome import Outcome, Succeeded
from backroom.core.provider_batch import LineEnd
from backroom.core.retry import ErrorClassifier, RetryPolicy, outcome_for_error
from backroom.core.spend import CallState
from backroom.core.usage import AttemptUsage
from backroom.llm.batch.pricing import batch_prices
from backroom.llm.batch.provider import LineOutcome, LineResult
from backroom.llm.call_cost import attempt_usage
from backroom.llm.config import LLMConfig, ModelConfig
from backroom.llm.result import check_truncation, result_json
from backroom.llm.routes import route_for_lane
from backroom.llm.task_input import RespondInput
from backroom.store.protocol import Store


class LineSettler:
    """Turns batch lines into job outcomes, settling each job's open call."""

    def __init__(
        self,
        config: LLMConfig,
        store: Callable[[], Store],
        retry: RetryPolicy,
        rng: random.Random | None = None,
    ) -> None:
        self._config = config
        self._store = store
        self._retry = retry
        self._rng = rng or random.Random()
        self._classifier = ErrorClassifier()
        self._by_lane: dict[str, tuple[ModelConfig, str]] = {}

    def outcome(self, job: Job, line: LineResult, now: int) -> LineEnd:
        """How `job` ends from its line of an ended batch."""
        if line.outcome is LineOutcome.SUCCEEDED and line.result is not None:
            return self._succeeded(job, line, now)
        if line.outcome is LineOutcome.ERRORED and line.error is not None:
            return LineEnd(job.lease, self._failure(job, line.error, now))
        return self.sent_back(job, "the provider batch ended before this line ran", now)

    def sent_back(self, job: Job, reason: str, now: int) -> LineEnd:
        """`job` sent back (a retry, its call unbilled): `reason` says why."""
        return LineEnd(job.lease, self._failure(job, Retryable(reason), now))

    async def settle_discarded(self, job_id: int, attempt: int, line: LineResult, now: int) -> None:
        """Settle the open call of attempt `attempt` of a job no longer waiting for its
        line (cancelled meanwhile): a line that ran is billed, whatever became of its job."""
        store = self._store()
        job = await store.get(job_id)
        if job is None:
            return
        for call in await store.open_calls(job_id):
            if call.intent.attempt != attempt:
                continue
            usage = None
            if line.outcome is LineOutcome.SUCCEEDED and line.result is not None:
                job_input = RespondInput.parse(job.input)
                usage = self._usage(replace(job, attempt=attempt), job_input, line, now)
            await store.call_settle(job_id, call.intent.lease_token, usage, CallState.SETTLED)

    def _priced(self, job: Job, job_input: RespondInput) -> tuple[ModelConfig, str]:
        """The job's model at the batch price, and its provider (kept by lane)."""
        known = None if job.lane is None else self._by_lane.get(job.lane)
        if known is not None:
            return known
        route = route_for_lane(job_input, self._config, job.lane)
        priced = replace(route.model, prices=batch_prices(route.model.prices))
        if job.lane is not None:
            self._by_lane[job.lane] = (priced, route.provider.name)
        return priced, route.provider.name

    def _usage(self, job: Job, job_input: RespondInput, line: LineResult, now: int) -> AttemptUsage:
        assert line.result is not None
        model, provider = self._priced(job, job_input)
        return attempt_usage(job, job_input, model, line.result.usage, now, provider=provider)

    def _succeeded(self, job: Job, line: LineResult, now: int) -> LineEnd:
        result = line.result
        assert result is not None
        try:
            job_input = RespondInput.parse(job.input)
            usage = self._usage(job, job_input, line, now)
        except Permanent as error:  # a config changed under the job: its model is gone
            return LineEnd(job.lease, self._failure(job, error, now))
        try:
            check_truncation(result, fail_on_truncation=job_input.fail_on_truncation)
        except Permanent as error:
            return LineEnd(job.lease, self._failure(job, error, now), usage)
        # The request only says which features to show (a schema's parse, tool calls).
        body = result_json(result, usage, job_input.request())
        return LineEnd(job.lease, Succeeded(body), usage)

    def _failure(self, job: Job, error: JobError, now: int) -> Outcome:
        return outcome_for_error(
            job, error, policy=self._retry, classifier=self._classifier, now=now, rng=self._rng
        )

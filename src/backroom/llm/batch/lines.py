"""How one offloaded job ends from its batch line: its outcome, and its call settled.

    settler = LineSettler(config, retry, rng)
    end = settler.end(job, attempt, line, now)     # a line of an ended batch
    end = settler.unanswered(job, reason, now)     # no line: send the job back
    await store.batch_finish([end, ...], now)      # calls settled, outcomes applied

`job` is a `LineJob` (`BatchStore.batch_line_jobs`): the columns that end it, and
its input read as JSON. What a result shows and records of the input (a schema's
parse, tool calls, `fail_on_truncation`, `prompt_version`) is read from that JSON
without validating it again (`LineInput`): the attempt that sent the line did, and
an input never changes. The model's batch price is found once per lane.

A succeeded line settles the job's call with its usage at the batch price
(`batch_prices`) and succeeds the job with the same result an online call gives. An
errored line is classified as an online call's error is (`Retryable`: the job is
retried, into a later batch or, on its last attempt, online; `Permanent`: it fails);
the provider bills no failed line. A line that never ran (the batch expired or was
cancelled) and a job with no line at all are sent back the same way, with a
`Retryable` error, their calls unbilled. The caller writes the ends
(`BatchStore.batch_finish`), fenced by each job's lease token.

A job cancelled while its line was in the batch is not finished by its line, but its
call is settled from it: a line that ran was billed by the provider, so its usage is
recorded as the tenant's spend (at the batch price); one that did not run, or never
came back, frees its reservation. The call was left open at the cancel, and a call is
settled only while open, so its reservation ends exactly once.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, replace

import pydantic

from backroom.core.errors import JobError, Permanent, Retryable
from backroom.core.job import JSON, Job, Lease
from backroom.core.outcome import Outcome, Succeeded
from backroom.core.provider_batch import LineEnd, LineJob
from backroom.core.retry import ErrorClassifier, RetryPolicy, outcome_for_error
from backroom.core.usage import AttemptUsage
from backroom.llm.batch.pricing import batch_prices
from backroom.llm.batch.provider import LineOutcome, LineResult
from backroom.llm.call_cost import attempt_usage
from backroom.llm.config import LLMConfig, ModelConfig
from backroom.llm.pricing import Usage
from backroom.llm.result import check_truncation, result_json
from backroom.llm.routes import route_for_lane
from backroom.llm.task_input import RespondInput

log = logging.getLogger("backroom.llm.batch")

_FLAG = pydantic.TypeAdapter(bool)
"""A flag read as `RespondInput` reads it (`"true"`, `1`, ...)."""


@dataclass(frozen=True, slots=True)
class LineInput:
    """What a line's result shows and records of its job's input (`Shown`, `Labelled`)."""

    prompt_version: str | None
    fail_on_truncation: bool
    json_schema: object | None
    tools: tuple[object, ...]

    @classmethod
    def read(cls, payload: JSON) -> LineInput:
        """From a valid `llm.respond` input."""
        fields = payload if isinstance(payload, dict) else {}
        version = fields.get("prompt_version")
        return cls(
            prompt_version=version if isinstance(version, str) else None,
            fail_on_truncation=_FLAG.validate_python(fields.get("fail_on_truncation", False)),
            json_schema=fields.get("json_schema"),
            tools=tuple(fields.get("tools") or ()),
        )


class LineSettler:
    """Turns batch lines into job outcomes, settling each job's open call."""

    def __init__(
        self,
        config: LLMConfig,
        retry: RetryPolicy,
        rng: random.Random | None = None,
    ) -> None:
        self._config = config
        self._retry = retry
        self._rng = rng or random.Random()
        self._classifier = ErrorClassifier()
        self._by_lane: dict[str, tuple[ModelConfig, str]] = {}

    def outcome(self, job: LineJob, line: LineResult, now: int) -> LineEnd:
        """How `job` ends from its line of an ended batch."""
        if line.outcome is LineOutcome.SUCCEEDED and line.result is not None:
            return self._succeeded(job, line, now)
        if line.outcome is LineOutcome.ERRORED and line.error is not None:
            return LineEnd(job.lease, self._failure(job, line.error, now))
        return self.sent_back(job, "the provider batch ended before this line ran", now)

    def sent_back(self, job: Job | LineJob, reason: str, now: int) -> LineEnd:
        """`job` sent back (a retry, its call unbilled): `reason` says why."""
        return LineEnd(job.lease, self._failure(job, Retryable(reason), now))

    def end(self, job: LineJob, attempt: int, line: LineResult, now: int) -> LineEnd:
        """How the line of attempt `attempt` of `job` ends: the job's outcome while it
        still waits for the line, else `discarded`."""
        if job.waiting:
            return self.outcome(job, line, now)
        return self.discarded(job, Lease(job.id, job.line_token, attempt), line, now)

    def discarded(self, job: LineJob, lease: Lease, line: LineResult, now: int) -> LineEnd:
        """The call of a line whose job no longer waits for it (cancelled meanwhile),
        settled without touching the job: a line that ran was billed by the provider,
        so its usage is the tenant's spend; one that did not frees its reservation."""
        usage = None
        if line.outcome is LineOutcome.SUCCEEDED and line.result is not None:
            try:
                labels = LineInput.read(job.input)
                usage = self._usage(job, lease, labels, line.result.usage, now)
            except Permanent as error:  # its model is gone from the config: no price
                log.warning("job %d: the line's usage cannot be priced: %s", job.id, error)
        return LineEnd(lease, None, usage)

    def unanswered(self, job: LineJob, reason: str, now: int) -> LineEnd:
        """A line the provider gave no result for: its job sent back if it still waits
        for it (`reason` says why), else only its call's reservation freed."""
        if job.waiting:
            return self.sent_back(job, reason, now)
        return LineEnd(Lease(job.id, job.line_token, job.attempt), None)

    def _priced(self, job: LineJob) -> tuple[ModelConfig, str]:
        """The job's model at the batch price, and its provider (kept by lane)."""
        known = None if job.lane is None else self._by_lane.get(job.lane)
        if known is not None:
            return known
        route = route_for_lane(RespondInput.parse(job.input), self._config, job.lane)
        priced = replace(route.model, prices=batch_prices(route.model.prices))
        if job.lane is not None:
            self._by_lane[job.lane] = (priced, route.provider.name)
        return priced, route.provider.name

    def _usage(
        self, job: LineJob, claim: Lease, job_input: LineInput, used: Usage, now: int
    ) -> AttemptUsage:
        """What the line of `claim` (the claim that sent it) used and cost."""
        model, provider = self._priced(job)
        return attempt_usage(job, job_input, model, used, now, claim=claim, provider=provider)

    def _succeeded(self, job: LineJob, line: LineResult, now: int) -> LineEnd:
        result = line.result
        assert result is not None
        job_input = LineInput.read(job.input)
        try:
            usage = self._usage(job, job.lease, job_input, result.usage, now)
        except Permanent as error:  # a config changed under the job: its model is gone
            return LineEnd(job.lease, self._failure(job, error, now))
        try:
            check_truncation(result, fail_on_truncation=job_input.fail_on_truncation)
        except Permanent as error:
            return LineEnd(job.lease, self._failure(job, error, now), usage)
        # The input only says which features to show (a schema's parse, tool calls).
        body = result_json(result, usage, job_input)
        return LineEnd(job.lease, Succeeded(body), usage)

    def _failure(self, job: Job | LineJob, error: JobError, now: int) -> Outcome:
        return outcome_for_error(
            job, error, policy=self._retry, classifier=self._classifier, now=now, rng=self._rng
        )

"""What an `llm.respond` call may cost, recorded before it is sent and settled after.

    call = await ledger.open(job, job_input, provider, model, request, now)  # or raises
    ... send call.request ...
    usage = await ledger.answered(call, result, now)   # or: await ledger.failed(call, error, now)

Before a call is sent, its worst-case cost is reserved in the store as an open call
(`backroom.core.spend`): the prompt's upper bound (a byte-level BPE token covers at
least one byte, so a prompt is never more tokens than UTF-8 bytes, plus a few per
message) and every output token it may produce, at the model's prices. A job under a
budget or a cost cap that sets no `max_output_tokens` is sent with
`BUDGETED_OUTPUT_TOKENS`, so that the worst case is a real bound.

A call the job's previous attempt left open (its worker died after sending) is
charged at its reservation before a new one opens, flagged as an estimate. So is a
call that failed without an HTTP answer (a timeout, a cut connection, a broken
stream): the provider may have billed it. A provider's HTTP error is not billed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from backroom.core.errors import BudgetRefused, CostCapReached, JobError, Permanent
from backroom.core.job import Job
from backroom.core.spend import BudgetWindow, CallIntent, CallOpening, CallState, OpenCall
from backroom.core.usage import AttemptUsage, UsageTotals, pico_usd, usd
from backroom.llm.call_cost import (
    BUDGETED_OUTPUT_TOKENS,
    attempt_usage,
    price_pico_usd,
    prompt_tokens_bound,
    text_bytes,
    worst_case_usage,
)
from backroom.llm.config import ModelConfig, ProviderConfig
from backroom.llm.pricing import Usage
from backroom.llm.request import LLMRequest, LLMResult
from backroom.llm.task_input import RespondInput
from backroom.store.call_protocol import CallStore
from backroom.store.records import Tenant


class SpendStore(CallStore, Protocol):
    """What the ledger needs of the store: call records, a job's usage, its tenant."""

    async def usage_totals(self, job_id: int) -> UsageTotals:
        """What every recorded call of the job used, summed."""

    async def get_tenant(self, name: str) -> Tenant | None:
        """The tenant called `name`, or None."""


def _dollars(amount_pico_usd: int) -> str:
    return f"${usd(amount_pico_usd):f}"


@dataclass(frozen=True, slots=True)
class OpenedCall:
    """A call recorded as open: what to send, and what it reserved. With `resume_id`,
    the call is an earlier attempt's background response, to be taken up, not sent."""

    job: Job
    job_input: RespondInput
    model: ModelConfig
    request: LLMRequest
    intent: CallIntent
    resume_id: str | None = None


class SpendLedger:
    """Opens and settles `llm.respond` calls in the store, under budgets and cost caps.

    `store` gives the store when a call needs it: an app's store opens on first use,
    which registering a task must not cause.
    """

    def __init__(self, store: Callable[[], SpendStore]) -> None:
        self._opened = store

    @property
    def _store(self) -> SpendStore:
        return self._opened()

    async def open(
        self,
        job: Job,
        job_input: RespondInput,
        provider: ProviderConfig,
        model: ModelConfig,
        request: LLMRequest,
        now: int,
    ) -> OpenedCall:
        """Record the call as open, after charging any call a past attempt left open;
        or, for a background provider, take up the response a past attempt left.

        Raises `CostCapReached` if its worst case could take the job past its cap,
        `BudgetRefused` if the tenant's budget cannot hold it (nothing is recorded
        then), and `Permanent` for a model without prices under a budget or cap.
        """
        call, window = await self.prepare(job, job_input, provider, model, request, now)
        if call.resume_id is not None:
            return call
        opening = await self._store.call_open(job.lease, call.intent, window)
        if window is not None and not opening.opened:
            raise budget_refusal(job, window, opening, call.intent.reserved_pico_usd or 0)
        return call

    async def prepare(
        self,
        job: Job,
        job_input: RespondInput,
        provider: ProviderConfig,
        model: ModelConfig,
        request: LLMRequest,
        now: int,
    ) -> tuple[OpenedCall, BudgetWindow | None]:
        """The call `open` would record (nothing recorded for it yet) and the tenant's
        budget window it must fit in; a call with a `resume_id` is taken up, not opened.

        Calls past attempts left open are charged first; raises as `open` does but for
        `BudgetRefused`, which the opening decides.
        """
        left = await self._settle_left_open(job, job_input, provider, request, now)
        if left is not None:
            call = OpenedCall(job, job_input, model, request, left.intent, left.response_id)
            return call, None
        tenant = await self._store.get_tenant(job.tenant)
        budget = None if tenant is None else tenant.daily_budget
        cap = _cost_cap(job_input, tenant)
        if (budget is not None or cap is not None) and request.max_output_tokens is None:
            request = replace(request, max_output_tokens=BUDGETED_OUTPUT_TOKENS)
        reserved = price_pico_usd(worst_case_usage(request, model.prices), model.prices)
        if reserved is None and (budget is not None or cap is not None):
            raise Permanent(
                f"model {model.name!r} on provider {provider.name!r} has no price, so its cost "
                "cannot be held to the tenant's budget or the job's max_cost_usd; configure "
                "its prices (input_usd_per_million, output_usd_per_million)"
            )
        if cap is not None and reserved is not None:
            await self._check_cap(job, cap, reserved)
        lease = job.lease
        intent = CallIntent(
            job.id, lease.token, lease.attempt, job.tenant, provider.name, model.name, reserved, now
        )
        window = None if budget is None else BudgetWindow.daily(budget.limit_pico_usd, now)
        return OpenedCall(job, job_input, model, request, intent), window

    async def answered(self, call: OpenedCall, result: LLMResult, now: int) -> AttemptUsage:
        """Settle the call with the usage the provider reported, or an estimate of it."""
        usage = result.usage
        estimated = not usage.reported
        if estimated:
            # No usage came back: an upper estimate, one token per byte, never a silent 0.
            usage = Usage(
                input_tokens=prompt_tokens_bound(call.request),
                output_tokens=text_bytes(result.output_text),
            )
        charged = replace(_usage_of(call, usage, now), estimated=estimated)
        await self._settle(call.intent, charged, CallState.SETTLED)
        return charged

    async def failed(
        self, call: OpenedCall, error: JobError, now: int, *, answered: bool = False
    ) -> None:
        """Settle a call that failed: unbilled after an HTTP error answer (`answered`:
        the provider tells, see `Provider.answered`), otherwise (no answer, or a stream
        cut off) charged at its reservation as an estimate."""
        if call.resume_id is None and answered:
            await self._settle(call.intent, None, CallState.SETTLED)
            return
        worst = worst_case_usage(call.request, call.model.prices)
        charged = replace(_usage_of(call, worst, now), estimated=True)
        await self._settle(call.intent, charged, CallState.CHARGED)

    async def created(self, call: OpenedCall, response_id: str) -> None:
        """Note the id of the call's response on its record, before waiting for it."""
        await self._store.call_response(call.intent.job_id, call.intent.lease_token, response_id)

    async def _settle(
        self, intent: CallIntent, usage: AttemptUsage | None, state: CallState
    ) -> None:
        await self._store.call_settle(intent.job_id, intent.lease_token, usage, state)

    async def _settle_left_open(
        self,
        job: Job,
        job_input: RespondInput,
        provider: ProviderConfig,
        request: LLMRequest,
        now: int,
    ) -> OpenCall | None:
        """Charge, at their reservations, the calls past attempts of `job` left open, but
        for a background provider the last one whose response id is known: that one is
        returned, to be taken up."""
        left = [
            call
            for call in await self._store.open_calls(job.id)
            if call.intent.lease_token != job.lease.token
        ]
        waiting = [call for call in left if provider.background and call.response_id]
        kept = waiting[-1] if waiting else None
        for call in left:
            if call is not kept:
                await self._charge(call, job_input, request, now)
        return kept

    async def _charge(
        self, left: OpenCall, job_input: RespondInput, request: LLMRequest, now: int
    ) -> None:
        intent = left.intent
        worst = worst_case_usage(request)
        usage = AttemptUsage(
            job_id=intent.job_id,
            lease_token=intent.lease_token,
            attempt=intent.attempt,
            tenant=intent.tenant,
            model=intent.model,
            prompt_version=job_input.prompt_version,
            input_tokens=worst.input_tokens,
            cached_tokens=0,
            output_tokens=worst.output_tokens,
            cost_pico_usd=intent.reserved_pico_usd,
            at=now,
            provider=intent.provider,
            estimated=True,
        )
        await self._settle(intent, usage, CallState.CHARGED)

    async def _check_cap(self, job: Job, cap_pico_usd: int, reserved: int) -> None:
        spent = (await self._store.usage_totals(job.id)).cost_pico_usd
        if spent + reserved > cap_pico_usd:
            raise CostCapReached(
                f"job {job.id} has spent {_dollars(spent)} of its max_cost_usd "
                f"{_dollars(cap_pico_usd)}; its next call could cost up to {_dollars(reserved)}, "
                "so no further attempt starts"
            )


def _cost_cap(job_input: RespondInput, tenant: Tenant | None) -> int | None:
    """The job's cost cap in pico-dollars: its own, else its tenant's default."""
    if job_input.max_cost_usd is not None:
        return pico_usd(job_input.max_cost_usd)
    return None if tenant is None else tenant.max_job_cost_pico_usd


def budget_refusal(
    job: Job, window: BudgetWindow, opening: CallOpening, reserved: int
) -> BudgetRefused:
    """The error of a call `job`'s tenant's budget could not hold (`opening` says why)."""
    return BudgetRefused(
        f"tenant {job.tenant!r} has spent {_dollars(opening.spent_pico_usd)} and holds "
        f"{_dollars(opening.open_pico_usd)} for calls in flight of its daily LLM budget of "
        f"{_dollars(window.limit_pico_usd)} (UTC day); this call could cost up to "
        f"{_dollars(reserved)}",
        until_next_day=opening.spent_pico_usd + reserved > window.limit_pico_usd,
    )


def _usage_of(call: OpenedCall, usage: Usage, now: int) -> AttemptUsage:
    """What `call` used, priced, filed under the claim and provider that made it."""
    return attempt_usage(
        call.job,
        call.job_input,
        call.model,
        usage,
        now,
        claim=call.intent.claim,
        provider=call.intent.provider,
    )

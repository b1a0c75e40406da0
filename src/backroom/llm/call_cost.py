"""What an LLM call may cost at most, and what it did cost, before and after it is sent.

The worst case bounds a call: a byte-level BPE token covers at least one byte, so a
prompt is never more tokens than its UTF-8 bytes (plus a few per message, and a bound
per image), and the answer never more than `max_output_tokens`.
"""

from __future__ import annotations

import json
from typing import Protocol

from backroom.core.job import JSON, Lease
from backroom.core.usage import AttemptUsage, pico_usd
from backroom.llm.config import ModelConfig
from backroom.llm.pricing import Prices, Usage, cost_usd
from backroom.llm.request import LLMRequest

BUDGETED_OUTPUT_TOKENS = 4_096
"""The `max_output_tokens` sent with a budgeted or capped call that sets none."""
TOKENS_PER_MESSAGE = 8
"""A bound on the tokens a provider adds around each turn of a conversation."""
TOKENS_PER_IMAGE = 6_000
"""A bound on the input tokens one image counts (gpt-4o-mini's high-detail tiles of a
large image come to about 5,700; most models count far fewer)."""


def text_bytes(text: str) -> int:
    """The UTF-8 length of `text`: at least its token count."""
    return len(text.encode())


def _definitions_bytes(request: LLMRequest) -> int:
    """The bytes of what the request sends besides its turns: tools and a JSON schema."""
    definitions: list[object] = [
        {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
        for tool in request.tools
    ]
    if request.json_schema is not None:
        definitions.append({"name": request.json_schema.name, "schema": request.json_schema.schema})
    return text_bytes(json.dumps(definitions, default=str)) if definitions else 0


def prompt_tokens_bound(request: LLMRequest) -> int:
    """At most how many input tokens `request` can count: one per UTF-8 byte of its
    turns, tools and schema, `TOKENS_PER_MESSAGE` for each turn and the reply's
    priming, and `TOKENS_PER_IMAGE` for each image."""
    turns = request.messages()
    text = sum(text_bytes(turn.text) for turn in turns) + _definitions_bytes(request)
    images = sum(len(turn.images) for turn in turns)
    return text + TOKENS_PER_MESSAGE * (len(turns) + 1) + TOKENS_PER_IMAGE * images


def worst_case_usage(request: LLMRequest, prices: Prices | None = None) -> Usage:
    """The most a call of `request` can use: no cached tokens, and every input token a
    cache write where `prices` make writes dearer than input (Anthropic's)."""
    output = request.max_output_tokens or BUDGETED_OUTPUT_TOKENS
    bound = prompt_tokens_bound(request)
    written = prices is not None and prices.cache_write_price > prices.input_usd_per_million
    return Usage(
        input_tokens=bound, output_tokens=output, cache_write_tokens=bound if written else 0
    )


def price_pico_usd(usage: Usage, prices: Prices | None) -> int | None:
    """What `usage` costs at `prices` in pico-dollars; None without prices."""
    return None if prices is None else pico_usd(cost_usd(usage, prices))


class Charged(Protocol):
    """What a usage record names of its job: a `Job`, or a batch line's `LineJob`."""

    @property
    def tenant(self) -> str:
        """Who pays."""

    @property
    def metadata(self) -> JSON:
        """The job's metadata, copied onto its usage."""


class Labelled(Protocol):
    """What a usage record names of the job's input (a `RespondInput`)."""

    @property
    def prompt_version(self) -> str | None:
        """The label of the prompt's version, if the job gave one."""


def attempt_usage(
    job: Charged,
    job_input: Labelled,
    model: ModelConfig,
    usage: Usage,
    now: int,
    *,
    claim: Lease,
    provider: str | None = None,
) -> AttemptUsage:
    """What the call of `claim` (the job's claim that made it) used and cost, charged
    to `job`'s tenant at `now`.

    Priced at the configured prices of the model the job asked for (a provider may
    answer with a dated variant of it), so usage groups by the names jobs use.
    """
    return AttemptUsage(
        job_id=claim.job_id,
        lease_token=claim.token,
        attempt=claim.attempt,
        tenant=job.tenant,
        model=model.name,
        prompt_version=job_input.prompt_version,
        input_tokens=usage.input_tokens,
        cached_tokens=usage.cached_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        output_tokens=usage.output_tokens,
        cost_pico_usd=price_pico_usd(usage, model.prices),
        at=now,
        provider=provider,
        metadata=job.metadata,
    )

"""The wire format of the LLM routes: lanes and usage reports (for the OpenAPI document).

The bodies are built by `backroom.service.llm`; these models only describe them.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field


class LaneLimitsDocument(BaseModel):
    """A lane's limits as last configured; null means no limit of that kind."""

    max_concurrency: int | None
    requests_per_minute: int | None
    tokens_per_minute: int | None


class LaneDocument(BaseModel):
    """One lane (a provider's model), shared by every worker."""

    name: str = Field(description="`provider/model`.")
    limits: LaneLimitsDocument
    in_flight: int = Field(description="Calls running now.")
    requests_left: int | None = Field(description="Requests the lane may start now.")
    tokens_left: int | None = Field(
        description="Tokens the lane may reserve now (negative: calls used more than reserved)."
    )
    paused_until: datetime | None = Field(
        description="No call starts before this (the provider asked, with a 429)."
    )
    paused: bool = Field(description="A person paused the lane: no job of it starts.")
    paused_at: datetime | None = Field(description="When a person paused it.")
    rate_limited_in_a_row: int = Field(description="429s in a row (the backoff grows with them).")
    failed_in_a_row: int = Field(description="Server errors and timeouts in a row.")
    breaker_open: bool = Field(
        description="Failures in a row reached the breaker's threshold: the lane lets "
        "one probe call through after a cooldown; its success closes the breaker."
    )


class LaneList(BaseModel):
    """Every lane that has had a call or a pause, by name."""

    lanes: list[LaneDocument]


class UsageTotalsDocument(BaseModel):
    """Calls, tokens and cost, summed."""

    calls: int
    input_tokens: int = Field(description="Including cached input tokens.")
    cached_tokens: int
    cache_write_tokens: int = Field(
        0,
        description="Input tokens written to the provider's prompt cache (Anthropic bills "
        "them above the input price); part of input_tokens, as cached_tokens are.",
    )
    output_tokens: int
    cost_usd: str | None = Field(
        description="Exact US dollars, as a decimal string; null when a call had no price "
        "(a model without prices: its cost is unknown)."
    )
    estimated_calls: int = Field(
        0, description="Calls counted by backroom's estimate: the provider reported no usage."
    )


class UsageGroupDocument(UsageTotalsDocument):
    """The totals of one group: its key for each dimension of `group_by` (null where a
    call has none, e.g. a job without that metadata key), then what its calls used.

    Only the dimensions asked for appear; `metadata.KEY` ones too, under that name.
    """

    model_config = ConfigDict(extra="allow")

    tenant: str | None = None
    provider: str | None = None
    model: str | None = None
    prompt_version: str | None = None
    day: str | None = Field(None, description="The UTC date, YYYY-MM-DD.")


class UsageReport(BaseModel):
    """LLM usage in `[from, to)`, grouped."""

    model_config = ConfigDict(populate_by_name=True)

    from_: datetime = Field(alias="from")
    to: datetime
    group_by: list[str] = Field(description="The dimensions, in the order asked for.")
    groups: list[UsageGroupDocument]
    total: UsageTotalsDocument

"""Which lane an LLM call runs in, what it asks of the lane, and what the provider said back.

A lane is one model of one provider, named `provider/model` (`openai/gpt-4o-mini`);
its limits come from the model's entry in the LLM config. The rules a lane follows
are in `backroom.core.lanes`; this module turns LLM requests and responses into
their terms.
"""

from __future__ import annotations

from backroom.core.errors import Permanent
from backroom.core.job import JSON
from backroom.core.lane_throttle import throttle
from backroom.core.lanes import LaneLimits, LaneRequest, LaneState
from backroom.llm.config import LLMConfig
from backroom.llm.model_limits import LaneCharging, ModelLimits
from backroom.llm.pricing import Usage
from backroom.llm.ratelimit_headers import RateLimitSnapshot
from backroom.llm.request import LLMRequest
from backroom.llm.task_input import RespondInput
from backroom.llm.tokens import estimate_image_tokens, estimate_tokens

DEFAULT_OUTPUT_TOKENS = 256
"""Output tokens reserved for a call that sets no `max_output_tokens`, unless its
model's `default_output_tokens` says otherwise.

A guess: a job that knows its answer's length should say so with `max_output_tokens`.
"""


def lane_name(provider: str, model: str) -> str:
    """The lane of `model` on `provider`: `provider/model`."""
    return f"{provider}/{model}"


def lane_limits(limits: ModelLimits) -> LaneLimits:
    """A configured model's limits as its lane's."""
    return LaneLimits(
        max_concurrency=limits.max_concurrency,
        requests_per_minute=limits.requests_per_minute,
        tokens_per_minute=limits.tokens_per_minute,
    )


def reserved_output_tokens(request: LLMRequest, limits: ModelLimits) -> int:
    """The output tokens a call reserves: its `max_output_tokens`, else its model's default."""
    return request.max_output_tokens or limits.default_output_tokens or DEFAULT_OUTPUT_TOKENS


NO_LIMITS = ModelLimits()
"""A model configured with nothing: the defaults of every setting."""


def estimate_call_tokens(request: LLMRequest, limits: ModelLimits = NO_LIMITS) -> int:
    """The tokens a call will count against its lane, estimated before it is sent.

    The prompt's estimate (instructions and every turn, as the provider receives
    them, images included), plus the output it reserves (`reserved_output_tokens`):
    providers count input and output against the same tokens-per-minute limit.
    """
    turns = request.messages()
    prompt = "\n".join(turn.text for turn in turns)
    images = sum(estimate_image_tokens(image.detail) for turn in turns for image in turn.images)
    return estimate_tokens(prompt) + images + reserved_output_tokens(request, limits)


def lane_request(job_input: RespondInput, config: LLMConfig) -> LaneRequest:
    """The lane a validated `llm.respond` input runs in; `Permanent` for an unknown
    provider, or a model it is not configured for."""
    provider = job_input.provider_in(config)
    model = job_input.model_in(provider)
    return LaneRequest(
        lane=lane_name(provider.name, model.name),
        limits=lane_limits(model.limits),
        estimated_tokens=estimate_call_tokens(job_input.request(), model.limits),
    )


def lane_request_for_payload(payload: JSON, config: LLMConfig) -> LaneRequest | None:
    """The lane of a submitted `llm.respond` job, or None if its input is unusable.

    A job with no lane runs at once, and its handler fails it with the reason.
    """
    try:
        return lane_request(RespondInput.parse(payload), config)
    except Permanent:
        return None


def lane_tokens(usage: Usage, reserved_output: int | None = None) -> int:
    """The tokens a finished call counts against its lane: input (cached too) and output.

    `reserved_output` is the output the provider charged at admission, for a model
    whose provider does (`LaneCharging.ADMISSION`): the lane keeps it charged, since
    the provider gives none of it back.
    """
    return usage.input_tokens + max(usage.output_tokens, reserved_output or 0)


def charged_output(request: LLMRequest, limits: ModelLimits) -> int | None:
    """The output tokens the provider charges a call at admission (None: it charges use)."""
    if limits.charge_at is LaneCharging.COMPLETION:
        return None
    return reserved_output_tokens(request, limits)


def throttle_from_headers(
    state: LaneState,
    limits: LaneLimits,
    snapshot: RateLimitSnapshot,
    *,
    sent_at: int,
    now: int,
) -> LaneState:
    """`backroom.core.lane_throttle.throttle` with what a response's `x-ratelimit-*` said."""
    return throttle(state, limits, snapshot.requests, snapshot.tokens, sent_at=sent_at, now=now)

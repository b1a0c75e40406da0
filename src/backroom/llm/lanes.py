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
from backroom.llm.config import LLMConfig, ModelLimits
from backroom.llm.pricing import Usage
from backroom.llm.ratelimit_headers import RateLimitSnapshot
from backroom.llm.request import LLMRequest
from backroom.llm.task_input import RespondInput
from backroom.llm.tokens import estimate_image_tokens, estimate_tokens

DEFAULT_OUTPUT_TOKENS = 256
"""Output tokens reserved for a call that sets no `max_output_tokens`.

A guess: the real count settles the reservation after the call, so a job that knows
its answer's length should say so with `max_output_tokens`.
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


def estimate_call_tokens(request: LLMRequest) -> int:
    """The tokens a call will count against its lane, estimated before it is sent.

    The prompt's estimate (instructions and every turn, as the provider receives
    them, images included), plus `max_output_tokens`, or `DEFAULT_OUTPUT_TOKENS` when
    unset: providers count input and output against the same tokens-per-minute limit.
    """
    turns = request.messages()
    prompt = "\n".join(turn.text for turn in turns)
    images = sum(estimate_image_tokens(image.detail) for turn in turns for image in turn.images)
    output = request.max_output_tokens or DEFAULT_OUTPUT_TOKENS
    return estimate_tokens(prompt) + images + output


def lane_request(job_input: RespondInput, config: LLMConfig) -> LaneRequest:
    """The lane a validated `llm.respond` input runs in; `Permanent` for an unknown
    provider, or a model it is not configured for."""
    provider = job_input.provider_in(config)
    model = job_input.model_in(provider)
    return LaneRequest(
        lane=lane_name(provider.name, model.name),
        limits=lane_limits(model.limits),
        estimated_tokens=estimate_call_tokens(job_input.request()),
    )


def lane_request_for_payload(payload: JSON, config: LLMConfig) -> LaneRequest | None:
    """The lane of a submitted `llm.respond` job, or None if its input is unusable.

    A job with no lane runs at once, and its handler fails it with the reason.
    """
    try:
        return lane_request(RespondInput.parse(payload), config)
    except Permanent:
        return None


def lane_tokens(usage: Usage) -> int:
    """The tokens a finished call counts against its lane: input (cached too) and output."""
    return usage.input_tokens + usage.output_tokens


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

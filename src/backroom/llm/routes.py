"""Where an `llm.respond` job's calls go: its provider and model, then its fallbacks.

    {"model": "gpt-4o", "provider": "openai",
     "fallbacks": [{"provider": "azure", "model": "gpt-4o"}, {"model": "gpt-4o-mini"}]}

Each (provider, model) is a lane; the job's current lane is stored on it (`Job.lane`)
and the worker moves it along the route (see `backroom.core.lane_routes`). The
handler calls whichever (provider, model) the job's current lane names.
"""

from __future__ import annotations

from dataclasses import dataclass

from backroom.core.errors import ConfigError, Permanent
from backroom.core.job import JSON
from backroom.core.lane_routes import LaneRoute
from backroom.core.lanes import LaneRequest
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.lanes import estimate_call_tokens, lane_limits, lane_name
from backroom.llm.task_input import RespondInput


@dataclass(frozen=True, slots=True)
class Route:
    """One (provider, model) a job may call."""

    provider: ProviderConfig
    model: ModelConfig

    @property
    def lane(self) -> str:
        """Its lane's name, `provider/model`."""
        return lane_name(self.provider.name, self.model.name)


def routes(job_input: RespondInput, config: LLMConfig) -> list[Route]:
    """The job's own (provider, model), then each fallback's; `Permanent` naming the
    first one the config rules out (an unknown provider, a model not configured)."""
    provider = job_input.provider_in(config)
    found = [Route(provider, job_input.model_in(provider))]
    for index, fallback in enumerate(job_input.fallbacks):
        try:
            other = config.provider(fallback.provider or provider.name)
            found.append(Route(other, other.allowed_model(fallback.model)))
        except ConfigError as error:
            raise Permanent(f"fallbacks.{index}: {error}") from None
    return found


def route_for_lane(job_input: RespondInput, config: LLMConfig, lane: str | None) -> Route:
    """The route whose lane is `lane` (the job's current one), else the job's own."""
    found = routes(job_input, config)
    return next((route for route in found if route.lane == lane), found[0])


def lane_route(job_input: RespondInput, config: LLMConfig) -> LaneRoute | None:
    """The job's lanes in order with the config's thresholds; None without fallbacks."""
    if not job_input.fallbacks:
        return None
    estimated = estimate_call_tokens(job_input.request())
    lanes = tuple(
        LaneRequest(route.lane, lane_limits(route.model.limits), estimated)
        for route in routes(job_input, config)
    )
    after_attempts = job_input.attempts_per_lane or config.fallback_after_attempts
    return LaneRoute(lanes, config.fallback_after_pause_ms, after_attempts)


def lane_route_for_payload(payload: JSON, config: LLMConfig) -> LaneRoute | None:
    """`lane_route` of a submitted job's input; None if it is unusable (it fails)."""
    try:
        return lane_route(RespondInput.parse(payload), config)
    except Permanent:
        return None

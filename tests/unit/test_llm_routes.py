"""An `llm.respond` job's route: its own (provider, model), then its fallbacks', each a
lane with the model's limits; the thresholds for moving on come from the config."""

from __future__ import annotations

import pytest

from backroom.core.errors import Permanent
from backroom.core.lane_routes import LaneRoute
from backroom.core.lanes import LaneLimits, LaneRequest
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.model_limits import ModelLimits
from backroom.llm.routes import lane_route, lane_route_for_payload, route_for_lane
from backroom.llm.task_input import RespondInput

BIG = ModelConfig("big", ModelLimits(max_concurrency=2))
SMALL = ModelConfig("small")
CONFIG = LLMConfig(
    (
        ProviderConfig("main", "http://main.test/v1", models=(BIG, SMALL)),
        ProviderConfig("spare", "http://spare.test/v1", models=(BIG,)),
    ),
    default_provider="main",
    fallback_after_pause_ms=7_000,
    fallback_after_attempts=3,
)


def parsed(**fields: object) -> RespondInput:
    return RespondInput.parse({"model": "big", "input": "hi", "max_output_tokens": 9, **fields})


def test_a_job_without_fallbacks_has_no_route() -> None:
    assert lane_route(parsed(), CONFIG) is None


def test_the_route_lists_the_jobs_lane_then_each_fallbacks() -> None:
    job_input = parsed(
        fallbacks=[{"provider": "spare", "model": "big"}, {"model": "small"}], attempts_per_lane=1
    )

    route = lane_route(job_input, CONFIG)

    assert route == LaneRoute(
        (
            LaneRequest("main/big", LaneLimits(max_concurrency=2), 10),
            LaneRequest("spare/big", LaneLimits(max_concurrency=2), 10),
            LaneRequest("main/small", LaneLimits(), 10),
        ),
        after_pause_ms=7_000,
        after_attempts=1,
    )
    assert route.next_after("spare/big") == route.lanes[2]
    assert route.current("gone/lane") == route.lanes[0]
    assert route.waits_too_long(7_001, 0) and not route.waits_too_long(7_000, 0)
    assert not route.waits_too_long(None, 0)
    # The handler calls whichever (provider, model) the job's current lane names.
    found = route_for_lane(job_input, CONFIG, "spare/big")
    assert (found.provider.name, found.model.name) == ("spare", "big")


def test_a_fallback_the_config_rules_out_fails_the_job() -> None:
    job_input = parsed(fallbacks=[{"provider": "spare", "model": "small"}])
    with pytest.raises(Permanent, match=r"fallbacks.0: model 'small' is not configured"):
        lane_route(job_input, CONFIG)
    assert lane_route_for_payload(job_input.model_dump(), CONFIG) is None

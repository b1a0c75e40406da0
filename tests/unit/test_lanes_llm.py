"""From an `llm.respond` input to its lane: name, limits, token estimate, header throttle."""

from __future__ import annotations

import dataclasses

import pytest

from backroom.core.errors import Permanent
from backroom.core.lanes import LaneLimits, LaneRequest, full_lane
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.lanes import (
    DEFAULT_OUTPUT_TOKENS,
    estimate_call_tokens,
    lane_limits,
    lane_name,
    lane_request,
    lane_request_for_payload,
    lane_tokens,
    throttle_from_headers,
)
from backroom.llm.mock.prompt import prompt_from_chat, prompt_from_responses
from backroom.llm.model_limits import ModelLimits
from backroom.llm.pricing import Usage
from backroom.llm.ratelimit_headers import parse_rate_limit_headers
from backroom.llm.request import LLMRequest, Message
from backroom.llm.task_input import RespondInput
from backroom.llm.tokens import estimate_tokens

T0 = 1_700_000_000_000
MINI = ModelConfig("gpt-4o-mini", ModelLimits(8, 500, 200_000))
CONFIG = LLMConfig(
    providers=(
        ProviderConfig("openai", "https://api.openai.com/v1", models=(MINI,)),
        ProviderConfig("local", "http://127.0.0.1:8000/v1", chat_only=True, any_model=True),
    ),
    default_provider="openai",
)


def test_a_lane_is_named_provider_slash_model() -> None:
    assert lane_name("openai", "gpt-4o-mini") == "openai/gpt-4o-mini"


def test_model_limits_become_lane_limits() -> None:
    assert lane_limits(MINI.limits) == LaneLimits(8, 500, 200_000)
    assert lane_limits(ModelLimits()) == LaneLimits()


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (
            {"model": "gpt-4o-mini", "input": "abcd" * 10, "max_output_tokens": 50},
            LaneRequest("openai/gpt-4o-mini", LaneLimits(8, 500, 200_000), 60),
        ),
        (
            {"model": "gpt-4o-mini", "input": "abcd" * 10, "provider": "openai"},
            LaneRequest(
                "openai/gpt-4o-mini", LaneLimits(8, 500, 200_000), 10 + DEFAULT_OUTPUT_TOKENS
            ),
        ),
        # On an `any_model` provider, a model the config does not list runs in its own
        # lane, without limits.
        (
            {"model": "llama", "input": "hi", "provider": "local", "max_output_tokens": 1},
            LaneRequest("local/llama", LaneLimits(), 2),
        ),
    ],
    ids=["default-provider", "default-output", "unlisted-model"],
)
def test_lane_request_for_a_payload(payload: dict[str, object], expected: LaneRequest) -> None:
    assert lane_request_for_payload(payload, CONFIG) == expected


@pytest.mark.parametrize(
    "payload",
    [
        {"model": "gpt-4o-mini"},
        {"model": "x", "input": "hi", "provider": "nowhere"},
        {"model": "gpt-4o-mini-typo", "input": "hi"},
        "text",
    ],
    ids=["invalid", "unknown-provider", "unlisted-model", "not-an-object"],
)
def test_an_unusable_payload_has_no_lane(payload: object) -> None:
    assert lane_request_for_payload(payload, CONFIG) is None


def test_an_unknown_provider_is_permanent() -> None:
    job_input = RespondInput.parse({"model": "x", "input": "hi", "provider": "nowhere"})
    with pytest.raises(Permanent, match="unknown LLM provider 'nowhere'"):
        lane_request(job_input, CONFIG)


def test_a_model_the_provider_does_not_list_is_permanent_and_names_the_listed_ones() -> None:
    job_input = RespondInput.parse({"model": "gpt-4o", "input": "hi"})
    with pytest.raises(
        Permanent, match=r"'gpt-4o' is not configured .* \(configured: gpt-4o-mini;"
    ):
        lane_request(job_input, CONFIG)


CONVERSATION = LLMRequest(
    "m",
    (Message("user", "first question"), Message("assistant", "an answer"), Message("user", "ok")),
    instructions="You are terse.",
    max_output_tokens=20,
)


def test_the_input_estimate_is_what_the_mock_provider_counts() -> None:
    turns = [{"role": turn.role, "content": turn.content} for turn in CONVERSATION.messages()]
    responses = prompt_from_responses(
        {"model": "m", "input": turns[1:], "instructions": CONVERSATION.instructions}
    )
    chat = prompt_from_chat({"model": "m", "messages": turns})
    assert responses.text == chat.text
    assert estimate_call_tokens(CONVERSATION) == estimate_tokens(chat.text) + 20


def test_a_prompt_without_max_output_tokens_reserves_the_default() -> None:
    assert estimate_call_tokens(LLMRequest("m", "abcdefgh")) == 2 + DEFAULT_OUTPUT_TOKENS


def test_a_call_counts_input_and_output_tokens_against_its_lane() -> None:
    assert lane_tokens(Usage(input_tokens=100, cached_tokens=60, output_tokens=7)) == 107


def test_headers_of_a_used_up_provider_pause_a_lane_without_limits() -> None:
    headers = {
        "x-ratelimit-limit-requests": "500",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "6m0s",
        "x-ratelimit-remaining-tokens": "1000",
        "x-ratelimit-reset-tokens": "12ms",
    }
    start = full_lane(LaneLimits(), T0)
    throttled = throttle_from_headers(
        start, LaneLimits(), parse_rate_limit_headers(headers), sent_at=T0, now=T0
    )
    assert throttled == dataclasses.replace(start, paused_until=T0 + 360_000)

"""Validating an `llm.respond` input and turning it into the call it asks for."""

from __future__ import annotations

import pytest

from backroom.core.errors import Permanent
from backroom.llm.config import LLMConfig, ProviderConfig
from backroom.llm.request import LLMRequest, Message
from backroom.llm.task_input import RespondInput


def test_a_full_input_becomes_its_request() -> None:
    job_input = RespondInput.parse(
        {
            "model": "gpt-4o-mini",
            "input": [
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello"},
                {"role": "user", "content": "Summarize"},
            ],
            "instructions": "Be brief.",
            "max_output_tokens": 64,
            "temperature": 0.2,
            "prompt_version": "summary-v2",
            "provider": "openai",
            "stream": True,
        }
    )
    assert job_input.request() == LLMRequest(
        model="gpt-4o-mini",
        input=(Message("user", "Hi"), Message("assistant", "Hello"), Message("user", "Summarize")),
        instructions="Be brief.",
        max_output_tokens=64,
        temperature=0.2,
        stream=True,
    )


def test_a_minimal_input_is_a_prompt_with_defaults() -> None:
    job_input = RespondInput.parse({"model": "m", "input": "Hi"})
    assert job_input.request() == LLMRequest("m", "Hi")
    assert (job_input.prompt_version, job_input.provider) == (None, None)


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ({"input": "Hi"}, "model: Field required"),
        ({"model": "", "input": "Hi"}, "model: String should have at least 1 character"),
        ({"model": "m", "input": []}, "input: Value should have at least 1 item"),
        (
            {"model": "m", "input": [{"role": "bot", "content": "x"}]},
            "input.0.role: Input should be 'user'",
        ),
        (
            {"model": "m", "input": "Hi", "max_output_tokens": 0},
            "max_output_tokens: Input should be greater than 0",
        ),
        ({"model": "m", "input": "Hi", "logit_bias": {}}, "logit_bias: Extra inputs are not"),
        (None, "Input should be a valid dictionary"),
    ],
    ids=["no-model", "empty-model", "no-turns", "bad-role", "zero-output", "unknown-field", "null"],
)
def test_an_invalid_input_is_permanent_and_says_why(payload: object, problem: str) -> None:
    with pytest.raises(Permanent) as raised:
        RespondInput.parse(payload)
    message = str(raised.value)
    assert message.startswith("invalid llm.respond input: ")
    assert problem in message


def test_the_provider_is_the_named_one_or_the_default() -> None:
    config = LLMConfig(
        (ProviderConfig("a", "http://a/v1"), ProviderConfig("b", "http://b/v1")), "b"
    )
    assert RespondInput.parse({"model": "m", "input": "x"}).provider_in(config).name == "b"
    assert (
        RespondInput.parse({"model": "m", "input": "x", "provider": "a"}).provider_in(config).name
        == "a"
    )
    with pytest.raises(Permanent, match="unknown LLM provider 'c'"):
        RespondInput.parse({"model": "m", "input": "x", "provider": "c"}).provider_in(config)

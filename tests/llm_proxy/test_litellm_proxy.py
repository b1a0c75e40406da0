"""The LiteLLM proxy fixture itself, through the official OpenAI SDK: each kind of model
answers, and LiteLLM's own 429s and the upstream's are shaped as backroom will meet them.

These pin what LiteLLM does (its headers): if an upgrade changes them, these fail first.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import openai
import pytest
from litellm_process import LiteLLMProxy
from proxy_models import (
    LITELLM_LIMITED,
    LITELLM_LIMITED_RPM,
    LITELLM_MOCKED,
    MOCKED_TEXT,
    UPSTREAM,
    UPSTREAM_LIMITED,
    UPSTREAM_LIMITED_RPM,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def client(litellm_proxy: LiteLLMProxy) -> Iterator[openai.OpenAI]:
    """The SDK's client for the session's proxy, retrying nothing itself."""
    with openai.OpenAI(
        base_url=litellm_proxy.base_url, api_key=litellm_proxy.api_key, max_retries=0
    ) as client:
        yield client


def _ask(client: openai.OpenAI, model: str, text: str) -> str:
    completion = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": text}]
    )
    return completion.choices[0].message.content or ""


def test_a_mocked_and_a_forwarded_model_answer(client: openai.OpenAI) -> None:
    text = f"who answers? {secrets.token_hex(4)}"
    assert _ask(client, LITELLM_MOCKED, text) == MOCKED_TEXT
    # The mock's answer ends with the prompt: it went through to the mock and back.
    assert _ask(client, UPSTREAM, text).endswith(f"] {text}")


def _refusal(client: openai.OpenAI, model: str, limit: int) -> openai.RateLimitError:
    """Calls `model` until it refuses (at most `limit` + 1 calls); the refusal."""
    for number in range(limit + 1):
        try:
            _ask(client, model, f"call {number} {secrets.token_hex(4)}")
        except openai.RateLimitError as refused:
            return refused
    raise AssertionError(f"{model} answered {limit + 1} calls in a row")


def test_litellms_own_rpm_limit_refuses_with_its_own_retry_after_header(
    client: openai.OpenAI,
) -> None:
    refused = _refusal(client, LITELLM_LIMITED, LITELLM_LIMITED_RPM)
    headers = refused.response.headers
    # LiteLLM's own limit: a minute, as a prefixed header only - no standard Retry-After.
    assert headers["llm_provider-retry-after"] == "60"
    assert "retry-after" not in headers
    assert "retry-after-ms" not in headers
    assert "RPM limit=3" in refused.message


def test_an_upstream_429_is_forwarded_with_prefixed_headers(client: openai.OpenAI) -> None:
    refused = _refusal(client, UPSTREAM_LIMITED, UPSTREAM_LIMITED_RPM)
    headers = refused.response.headers
    # The mock's Retry-After reaches the client renamed, in seconds and in milliseconds.
    seconds = int(headers["llm_provider-retry-after"])
    milliseconds = int(headers["llm_provider-retry-after-ms"])
    assert 0 < milliseconds <= 60_000 / UPSTREAM_LIMITED_RPM
    assert seconds * 1000 >= milliseconds
    assert "retry-after" not in headers
    # The remaining count is passed on under both names; the reset only prefixed.
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert headers["llm_provider-x-ratelimit-remaining-requests"] == "0"
    assert "llm_provider-x-ratelimit-reset-requests" in headers
    assert "x-ratelimit-reset-requests" not in headers

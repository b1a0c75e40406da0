"""`respond` with the official SDK over loopback HTTP against the mock: every outcome.

One mock serves the whole module; each test uses its own prompt text, so the mock's
per-request state (fault counts, prompt cache) never leaks between tests.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator

import openai
import pytest

from backroom.core.errors import Permanent, Retryable
from backroom.llm.config import ProviderConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.pricing import Usage
from backroom.llm.providers.openai.call import make_client, respond
from backroom.llm.providers.openai.errors import RateLimited
from backroom.llm.request import LLMRequest, LLMResult, Message

T0 = 1_800_000_000_000  # a whole second, so HTTP dates convert exactly


class FrozenClock:
    """A clock standing still at `T0`: the mock and `respond` share it."""

    def now(self) -> int:
        return T0

    async def sleep(self, ms: float) -> None:
        raise AssertionError("nothing here should wait")


class SteppingClock:
    """Each reading is 100 ms after the previous one."""

    def __init__(self) -> None:
        self.time = T0

    def now(self) -> int:
        self.time += 100
        return self.time

    async def sleep(self, ms: float) -> None:
        raise AssertionError("nothing here should wait")


CLOCK = FrozenClock()


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_mock(MockConfig(), CLOCK) as url:
        yield url


@pytest.fixture
async def client(base_url: str) -> AsyncIterator[openai.AsyncOpenAI]:
    client = make_client(ProviderConfig("mock", base_url), timeout_s=10)
    yield client
    await client.close()


async def _call(
    client: openai.AsyncOpenAI, text: str, *, chat_only: bool = False, stream: bool = False
) -> LLMResult:
    return await respond(
        client, LLMRequest("mock-1", text, stream=stream), chat_only=chat_only, clock=CLOCK
    )


async def _error(
    client: openai.AsyncOpenAI, text: str, *, chat_only: bool = False
) -> BaseException:
    with pytest.raises((Retryable, Permanent)) as raised:
        await _call(client, text, chat_only=chat_only)
    assert isinstance(raised.value.__cause__, openai.OpenAIError)
    return raised.value


@pytest.mark.parametrize("chat_only", [False, True], ids=["responses", "chat"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_call_returns_text_ids_and_usage(
    client: openai.AsyncOpenAI, chat_only: bool, stream: bool
) -> None:
    text = f"What is the answer? chat={chat_only} stream={stream}"
    result = await _call(client, text, chat_only=chat_only, stream=stream)
    assert result.output_text.startswith("[mock ")
    assert result.output_text.endswith(f"] {text}")
    assert result.model == "mock-1"
    assert result.response_id.startswith("chatcmpl-mock" if chat_only else "resp_mock")
    assert result.usage == Usage(
        input_tokens=-(-len(text) // 4),
        cached_tokens=0,
        output_tokens=-(-len(result.output_text) // 4),
    )


@pytest.mark.parametrize("chat_only", [False, True], ids=["responses", "chat"])
async def test_instructions_and_conversations_reach_the_provider(
    client: openai.AsyncOpenAI, chat_only: bool
) -> None:
    request = LLMRequest(
        "mock-1",
        (
            Message("user", "first question"),
            Message("assistant", "an answer"),
            Message("user", "follow-up"),
        ),
        instructions="You are terse.",
        max_output_tokens=100,
        temperature=0.2,
    )
    result = await respond(client, request, chat_only=chat_only, clock=CLOCK)
    assert result.output_text.endswith("] follow-up")
    # Instructions plus three turns, one per line, as the mock counts them.
    prompt = "You are terse.\nfirst question\nan answer\nfollow-up"
    assert result.usage.input_tokens == -(-len(prompt) // 4)


@pytest.mark.parametrize("chat_only", [False, True], ids=["responses", "chat"])
async def test_a_repeated_call_reports_cached_input(
    client: openai.AsyncOpenAI, chat_only: bool
) -> None:
    text = f"the same long question, asked twice (chat={chat_only})"
    first = await _call(client, text, chat_only=chat_only)
    second = await _call(client, text, chat_only=chat_only)
    assert first.usage.cached_tokens == 0
    assert second.usage.cached_tokens == second.usage.input_tokens > 0


@pytest.mark.parametrize("chat_only", [False, True], ids=["responses", "chat"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_max_output_tokens_truncates(
    client: openai.AsyncOpenAI, chat_only: bool, stream: bool
) -> None:
    request = LLMRequest("mock-1", "tell me everything " * 10, max_output_tokens=4, stream=stream)
    result = await respond(client, request, chat_only=chat_only, clock=CLOCK)
    assert len(result.output_text) == 16
    assert result.usage.output_tokens == 4


@pytest.mark.parametrize("chat_only", [False, True], ids=["responses", "chat"])
async def test_streamed_text_is_reported_as_it_grows(
    client: openai.AsyncOpenAI, chat_only: bool
) -> None:
    reports: list[str] = []

    async def on_delta(text: str) -> None:
        reports.append(text)

    words = " ".join(f"word{n}" for n in range(20))
    request = LLMRequest("mock-1", words, stream=True)
    result = await respond(
        client, request, chat_only=chat_only, clock=SteppingClock(), on_delta=on_delta
    )
    # 22 deltas, a reading 100 ms apart for each: a report every third delta.
    assert len(reports) == 7
    assert all(result.output_text.startswith(report) for report in reports)
    assert [len(report) for report in reports] == sorted({len(report) for report in reports})


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (400, "BadRequestError"),
        (401, "AuthenticationError"),
        (403, "PermissionDeniedError"),
        (404, "NotFoundError"),
        (422, "UnprocessableEntityError"),
        (418, "APIStatusError"),
    ],
)
async def test_client_errors_are_permanent(
    client: openai.AsyncOpenAI, status: int, error_class: str
) -> None:
    error = await _error(client, f"[fault:{status}]")
    assert type(error) is Permanent
    assert str(error).startswith(
        f"{error_class} (HTTP {status}): Scripted fault: HTTP {status} for this request. "
        "(POST /v1/responses)"
    )


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (408, "APIStatusError"),
        (409, "ConflictError"),
        (500, "InternalServerError"),
        (502, "InternalServerError"),
        (503, "InternalServerError"),
    ],
)
async def test_server_and_transient_errors_are_retryable(
    client: openai.AsyncOpenAI, status: int, error_class: str
) -> None:
    error = await _error(client, f"[fault:{status}]")
    assert type(error) is Retryable
    assert error.after_ms is None
    assert (
        str(error)
        == f"{error_class} (HTTP {status}): Scripted fault: HTTP {status} for this request. "
        "(POST /v1/responses)"
    )


@pytest.mark.parametrize("chat_only", [False, True], ids=["responses", "chat"])
async def test_a_rate_limit_is_retryable_and_pauses_for_retry_after(
    client: openai.AsyncOpenAI, chat_only: bool
) -> None:
    error = await _error(client, "[fault:429:retry-after-ms=1500]", chat_only=chat_only)
    assert isinstance(error, RateLimited)
    assert error.after_ms == 1500
    path = "/v1/chat/completions" if chat_only else "/v1/responses"
    assert str(error) == (
        f"RateLimitError (HTTP 429): Scripted fault: HTTP 429 for this request. (POST {path})"
    )


@pytest.mark.parametrize(
    ("options", "after_ms"),
    [
        ("retry-after-ms=250", 250),
        ("retry-after-ms=12.5", 13),
        ("retry-after=2", 2000),
        ("retry-after=0.75", 750),
        ("retry-after=130", 130_000),
        ("retry-after=3600", 3_600_000),
        ("retry-after-date=45", 45_000),
        ("retry-after-date=600", 600_000),
        ("retry-after-ms=100:retry-after=9", 100),
        ("retry-after=later", None),
    ],
)
async def test_every_retry_after_form(
    client: openai.AsyncOpenAI, options: str, after_ms: int | None
) -> None:
    error = await _error(client, f"[fault:503:{options}]")
    assert type(error) is Retryable
    assert error.after_ms == after_ms


async def test_should_retry_overrides_the_status(client: openai.AsyncOpenAI) -> None:
    assert type(await _error(client, "[fault:503:should-retry=false]")) is Permanent
    assert type(await _error(client, "[fault:400:should-retry=true]")) is Retryable


@pytest.mark.parametrize("chat_only", [False, True], ids=["responses", "chat"])
async def test_insufficient_quota_is_permanent_and_says_so(
    client: openai.AsyncOpenAI, chat_only: bool
) -> None:
    error = await _error(client, "[fault:insufficient_quota]", chat_only=chat_only)
    assert type(error) is Permanent
    assert str(error).startswith("insufficient_quota: the provider account has no quota")
    assert "RateLimitError (HTTP 429): You exceeded your current quota" in str(error)


async def test_the_client_never_retries_by_itself(client: openai.AsyncOpenAI) -> None:
    text = "[fault:500:first=2] flaky"
    assert type(await _error(client, text)) is Retryable
    assert type(await _error(client, text)) is Retryable
    result = await _call(client, text)
    assert result.output_text.endswith("] [fault:500:first=2] flaky")


async def test_a_timeout_is_retryable(base_url: str) -> None:
    client = make_client(ProviderConfig("mock", base_url), timeout_s=0.2)
    async with client:
        error = await _error(client, "[fault:timeout]")
    assert type(error) is Retryable
    assert str(error) == "APITimeoutError: Request timed out."


async def test_a_refused_connection_is_retryable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Nothing listens on the port any more.
    client = make_client(ProviderConfig("gone", f"http://127.0.0.1:{port}/v1"), timeout_s=5)
    async with client:
        error = await _error(client, "hello?")
    assert type(error) is Retryable
    assert str(error).startswith("APIConnectionError: Connection error. (ConnectError: ")

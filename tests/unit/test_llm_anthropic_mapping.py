"""The Anthropic provider's translations, without a server: a request's arguments, a
batch's state, error types, and the `anthropic-ratelimit-*` headers."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from anthropic.types.messages import MessageBatch

from backroom.core.errors import Permanent, Retryable
from backroom.llm.batch.provider import BatchLine, BatchState
from backroom.llm.features import FunctionTool, ImagePart, JsonSchema, Sampling, TextPart
from backroom.llm.providers.anthropic.batch import batch_params, batch_status
from backroom.llm.providers.anthropic.errors import error_for_type
from backroom.llm.providers.anthropic.params import DEFAULT_MAX_TOKENS, message_arguments
from backroom.llm.ratelimit_headers import PARSERS
from backroom.llm.request import LLMRequest, Message

MODEL = "claude-haiku-4-5"


def test_a_conversation_maps_to_system_messages_and_blocks() -> None:
    turns = (
        Message("developer", "Be terse."),
        Message("user", (TextPart("Look:"), ImagePart("data:image/png;base64,AAAA"))),
        Message("assistant", "A square."),
        Message("user", (ImagePart("https://example.test/cat.jpg"),)),
    )
    arguments = message_arguments(LLMRequest(MODEL, turns, instructions="You are Claude."))

    assert arguments["system"] == "You are Claude.\n\nBe terse."
    assert arguments["max_tokens"] == DEFAULT_MAX_TOKENS and arguments["stream"] is False
    first, reply, last = arguments["messages"]
    assert first == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Look:"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"},
            },
        ],
    }
    assert reply == {"role": "assistant", "content": "A square."}
    url = {"type": "url", "url": "https://example.test/cat.jpg"}
    assert last["content"] == [{"type": "image", "source": url}]


def test_features_map_to_their_messages_api_names() -> None:
    tool = FunctionTool("lookup", "Look it up", {"type": "object"})
    schema = JsonSchema("answer", {"type": "object"})
    request = LLMRequest(
        MODEL,
        "hi",
        max_output_tokens=50,
        temperature=0.5,
        tools=(tool,),
        tool_choice="required",
        json_schema=schema,
        reasoning_effort="minimal",
        sampling=Sampling(top_p=0.9, stop=("END",)),
    )
    arguments = message_arguments(request, prompt_cache=True)

    assert arguments["max_tokens"] == 50
    expected_tool = {"name": "lookup", "input_schema": {"type": "object"}}
    assert arguments["tools"] == [expected_tool | {"description": "Look it up"}]
    assert arguments["tool_choice"] == {"type": "any"}
    assert arguments["output_config"] == {
        "format": {"type": "json_schema", "schema": {"type": "object"}},
        "effort": "low",
    }
    assert arguments["stop_sequences"] == ["END"]
    assert arguments["extra_body"] == {"temperature": 0.5, "top_p": 0.9}
    assert arguments["cache_control"] == {"type": "ephemeral"}


def test_a_batch_line_is_the_online_call_unstreamed_and_flat() -> None:
    request = LLMRequest(MODEL, "hi", stream=True, temperature=0.1)
    params = batch_params(BatchLine("job-1-1", request))
    assert "stream" not in params and "extra_body" not in params
    assert params["temperature"] == 0.1 and params["model"] == MODEL


def _batch(status: str, **fields: Any) -> MessageBatch:
    counts = {"processing": 0, "succeeded": 3, "errored": 1, "canceled": 0, "expired": 0}
    moment = datetime(2027, 1, 1, tzinfo=UTC)
    document: dict[str, Any] = {
        "id": "msgbatch_1",
        "type": "message_batch",
        "processing_status": status,
        "request_counts": counts | fields.pop("counts", {}),
        "created_at": moment,
        "expires_at": moment,
    }
    return MessageBatch.model_validate(document | fields)


@pytest.mark.parametrize(
    ("batch", "state"),
    [
        (_batch("in_progress", counts={"processing": 2}), BatchState.OPEN),
        (_batch("canceling"), BatchState.CANCELLING),
        (_batch("ended"), BatchState.ENDED),
        (_batch("ended", counts={"expired": 2}), BatchState.EXPIRED),
        (_batch("ended", cancel_initiated_at=datetime.now(UTC)), BatchState.CANCELLED),
    ],
)
def test_a_batchs_status_in_neutral_terms(batch: MessageBatch, state: BatchState) -> None:
    status = batch_status(batch)
    assert status.state is state and status.provider_status == batch.processing_status
    assert (status.counts.succeeded, status.counts.failed) == (3, 1)


@pytest.mark.parametrize(
    ("error_type", "retryable"),
    [
        ("overloaded_error", True),
        ("api_error", True),
        ("rate_limit_error", True),
        ("timeout_error", True),
        ("invalid_request_error", False),
        ("authentication_error", False),
        ("not_found_error", False),
    ],
)
def test_error_types_are_classified_like_online_errors(error_type: str, retryable: bool) -> None:
    error = error_for_type(error_type, "words")
    assert isinstance(error, Retryable if retryable else Permanent)
    assert str(error) == f"{error_type}: words"


def test_anthropic_headers_fall_back_and_ignore_what_does_not_parse() -> None:
    parse = PARSERS["anthropic"]
    snapshot = parse(
        {
            "anthropic-ratelimit-tokens-limit": "90000",
            "anthropic-ratelimit-tokens-remaining": "lots",
            "anthropic-ratelimit-requests-reset": "not a time",
            "x-should-retry": "false",
        },
        0,
    )
    assert snapshot.tokens.limit == 90_000 and snapshot.tokens.remaining is None
    assert snapshot.requests.reset_ms is None and snapshot.should_retry is False
    passed = parse({"anthropic-ratelimit-requests-reset": "1970-01-01T00:00:01Z"}, 5_000)
    assert passed.requests.reset_ms == 0

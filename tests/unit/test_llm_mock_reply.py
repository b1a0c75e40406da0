"""The mock's reading of requests and its deterministic replies."""

from __future__ import annotations

import pydantic
import pytest

from backroom.llm.mock.prompt import Prompt, prompt_from_chat, prompt_from_responses
from backroom.llm.mock.reply import compose_reply, prompt_key
from backroom.llm.pricing import Usage


def test_a_responses_body_with_a_plain_string() -> None:
    prompt = prompt_from_responses(
        {"model": "m", "input": "hi there", "instructions": "be kind", "max_output_tokens": 20}
    )
    assert prompt == Prompt("m", "be kind\nhi there", "hi there", 20, stream=False)


def test_a_responses_body_with_messages_and_content_parts() -> None:
    body = {
        "model": "m",
        "stream": True,
        "input": [
            {"role": "system", "content": "rules"},
            {"role": "user", "content": [{"type": "input_text", "text": "first"}]},
            {"role": "assistant", "content": "reply"},
            {"type": "message", "role": "user", "content": "second"},
        ],
    }
    prompt = prompt_from_responses(body)
    assert prompt.text == "rules\nfirst\nreply\nsecond"
    assert prompt.last_user_text == "second"
    assert prompt.stream


def test_a_chat_body_reads_either_token_limit_and_the_usage_option() -> None:
    body = {
        "model": "m",
        "messages": [{"role": "system", "content": "rules"}, {"role": "user", "content": "q"}],
        "max_tokens": 7,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    assert prompt_from_chat(body) == Prompt("m", "rules\nq", "q", 7, True, stream_usage=True)
    newer = {"model": "m", "messages": [{"role": "user", "content": "q"}]}
    assert prompt_from_chat(newer | {"max_completion_tokens": 9}).max_output_tokens == 9
    assert not prompt_from_chat(newer).stream_usage


@pytest.mark.parametrize(
    "body",
    [
        {"input": "no model"},
        {"model": "m"},
        {"model": "m", "input": 3},
        {"model": "m", "input": "x", "max_output_tokens": 0},
        [],
    ],
)
def test_malformed_responses_bodies_are_refused(body: object) -> None:
    with pytest.raises(pydantic.ValidationError):
        prompt_from_responses(body)


def test_a_chat_body_needs_messages() -> None:
    with pytest.raises(pydantic.ValidationError):
        prompt_from_chat({"model": "m", "messages": []})


def _prompt(text: str, max_output_tokens: int | None = None) -> Prompt:
    return Prompt("m", text, text, max_output_tokens, stream=False)


def test_replies_are_derived_from_the_prompt_alone() -> None:
    first = compose_reply(_prompt("hello world"), number=1, created_s=5, cached=False)
    again = compose_reply(_prompt("hello world"), number=2, created_s=9, cached=False)
    other = compose_reply(_prompt("hello there"), number=3, created_s=9, cached=False)
    assert (
        first.text == again.text == f"[mock {prompt_key(_prompt('hello world'))[:8]}] hello world"
    )
    assert other.text != first.text
    assert first.usage == Usage(input_tokens=3, cached_tokens=0, output_tokens=7)
    assert not first.incomplete


def test_a_cached_reply_counts_all_input_as_cached() -> None:
    reply = compose_reply(_prompt("hello world"), number=1, created_s=0, cached=True)
    assert reply.usage.cached_tokens == reply.usage.input_tokens == 3


def test_max_output_tokens_cuts_the_reply_short() -> None:
    reply = compose_reply(_prompt("a long question indeed", 3), number=1, created_s=0, cached=False)
    assert len(reply.text) == 12
    assert reply.usage.output_tokens == 3
    assert reply.incomplete


def test_deltas_are_words_that_join_back_into_the_text() -> None:
    reply = compose_reply(_prompt("  spaced   out words "), number=1, created_s=0, cached=False)
    assert "".join(reply.deltas()) == reply.text
    assert reply.deltas()[-3:] == ["spaced   ", "out ", "words "]

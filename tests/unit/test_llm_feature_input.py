"""Validating the features of an `llm.respond` input: schemas, tools, parts, sampling."""

from __future__ import annotations

import pytest

from backroom.core.errors import Permanent
from backroom.llm.features import (
    FunctionTool,
    ImagePart,
    JsonSchema,
    Sampling,
    TextPart,
)
from backroom.llm.lanes import estimate_call_tokens
from backroom.llm.request import LLMRequest, Message
from backroom.llm.task_input import RespondInput

SCHEMA = {"type": "object", "properties": {"x": {"type": "integer"}}}
PNG = "data:image/png;base64,iVBORw0KGgo="


def test_every_feature_becomes_part_of_the_request() -> None:
    job_input = RespondInput.parse(
        {
            "model": "m",
            "input": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Look"},
                        {"type": "image", "url": "https://example.test/a.png", "detail": "high"},
                        {"type": "image", "url": PNG},
                    ],
                }
            ],
            "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True},
            "tools": [{"name": "lookup", "parameters": SCHEMA}],
            "tool_choice": "required",
            "reasoning_effort": "low",
            "top_p": 0.9,
            "stop": "END",
            "seed": 7,
            "metadata": {"customer": "acme"},
            "fail_on_truncation": True,
        }
    )
    turn = Message(
        "user",
        (TextPart("Look"), ImagePart("https://example.test/a.png", "high"), ImagePart(PNG)),
    )
    assert job_input.request() == LLMRequest(
        "m",
        (turn,),
        json_schema=JsonSchema("answer", SCHEMA, strict=True),
        tools=(FunctionTool("lookup", parameters=SCHEMA),),
        tool_choice="required",
        reasoning_effort="low",
        sampling=Sampling(top_p=0.9, stop=("END",), seed=7, metadata={"customer": "acme"}),
    )
    assert job_input.fail_on_truncation
    assert turn.text == "Look"
    assert len(turn.images) == 2


def test_stop_may_be_a_list() -> None:
    job_input = RespondInput.parse({"model": "m", "input": "x", "stop": ["a", "b"]})
    assert job_input.request().sampling.stop == ("a", "b")


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"json_schema": {"name": "bad name!", "schema": SCHEMA}}, "json_schema.name: String"),
        ({"json_schema": {"name": "n", "schema": {}}}, "json_schema.schema: Dictionary should"),
        ({"json_schema": {"name": "n"}}, "json_schema.schema: Field required"),
        ({"tools": []}, "tools: List should have at least 1 item"),
        ({"tools": [{"name": "f", "code": "x"}]}, "tools.0.code: Extra inputs"),
        ({"tools": [{"name": "f"}, {"name": "f"}]}, "tool names must be unique"),
        ({"tool_choice": "required"}, "tool_choice 'required' needs tools"),
        ({"tool_choice": "sometimes"}, "tool_choice: Input should be 'auto', 'none' or 'required'"),
        ({"reasoning_effort": "max"}, "reasoning_effort: Input should be 'minimal'"),
        ({"top_p": 1.5}, "top_p: Input should be less than or equal to 1"),
        ({"stop": []}, "give 1 to 4 stop sequences"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "give 1 to 4 stop sequences"),
        ({"stop": [""]}, "a stop sequence must not be empty"),
        ({"seed": 1.5}, "seed: Input should be a valid integer"),
        ({"metadata": {"k": 1}}, "metadata.k: Input should be a valid string"),
        ({"metadata": {f"k{n}": "v" for n in range(17)}}, "at most 16 pairs"),
        ({"metadata": {"k" * 65: "v"}}, "must be 1 to 64 characters"),
        ({"metadata": {"k": "v" * 513}}, "the value of 'k' is over 512 characters"),
        ({"fail_on_truncation": "maybe"}, "fail_on_truncation: Input should be a valid boolean"),
    ],
)
def test_an_invalid_feature_is_permanent_and_says_why(
    fields: dict[str, object], problem: str
) -> None:
    with pytest.raises(Permanent) as raised:
        RespondInput.parse({"model": "m", "input": "x", **fields})
    assert str(raised.value).startswith("invalid llm.respond input: ")
    assert problem in str(raised.value)


@pytest.mark.parametrize(
    ("content", "role", "problem"),
    [
        ([], "user", "input.0.content: List should have at least 1 item"),
        (
            [{"type": "video", "url": "https://x"}],
            "user",
            "does not match any of the expected tags",
        ),
        (
            [{"type": "image", "url": "ftp://x/a.png"}],
            "user",
            "must be an http(s) URL or a data:image",
        ),
        (
            [{"type": "image", "url": "data:text/plain;base64,aGk="}],
            "user",
            "must be an http(s) URL",
        ),
        (
            [{"type": "image", "url": PNG, "detail": "max"}],
            "user",
            "Input should be 'auto', 'low' or 'high'",
        ),
        ([{"type": "image", "url": PNG}], "assistant", "only user messages may carry images"),
    ],
)
def test_an_invalid_content_part_is_permanent(content: object, role: str, problem: str) -> None:
    payload = {"model": "m", "input": [{"role": role, "content": content}]}
    with pytest.raises(Permanent) as raised:
        RespondInput.parse(payload)
    assert problem in str(raised.value)


def test_images_count_in_the_token_estimate_of_the_lane() -> None:
    text_only = LLMRequest("m", (Message("user", (TextPart("abcd"),)),), max_output_tokens=10)
    with_images = LLMRequest(
        "m",
        (Message("user", (TextPart("abcd"), ImagePart(PNG, "low"), ImagePart(PNG))),),
        max_output_tokens=10,
    )
    assert estimate_call_tokens(text_only) == 1 + 10
    assert estimate_call_tokens(with_images) == 1 + 85 + 765 + 10

"""A batch line's write-back reads its job's input without validating it again.

`LineInput.read` must say what `RespondInput.parse` says about what a result shows
and records (a schema's parse, tool calls, `fail_on_truncation`, `prompt_version`),
for every valid input; `core.json_read.loads` must read what `json.loads` reads.
"""

from __future__ import annotations

import json

import pytest

from backroom.core.json_read import loads
from backroom.llm.batch.lines import LineInput
from backroom.llm.task_input import RespondInput

SCHEMA = {"type": "object", "properties": {"x": {"type": "integer"}}}
BASE = {"model": "m", "input": "Say hi"}


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"prompt_version": "v7", "fail_on_truncation": True},
        {"fail_on_truncation": "true"},
        {"fail_on_truncation": 0},
        {"fail_on_truncation": "off", "prompt_version": None},
        {"json_schema": {"name": "answer", "schema": SCHEMA, "strict": True}},
        {"tools": [{"name": "lookup", "parameters": SCHEMA}], "tool_choice": "required"},
        {"json_schema": None, "tools": None, "offload": "batch"},
    ],
)
def test_a_line_input_says_what_the_validated_input_says(extra: dict[str, object]) -> None:
    payload = BASE | extra
    parsed = RespondInput.parse(payload)
    request = parsed.request()
    read = LineInput.read(loads(json.dumps(payload)))
    assert read.prompt_version == parsed.prompt_version
    assert read.fail_on_truncation == parsed.fail_on_truncation
    assert (read.json_schema is None) == (request.json_schema is None)
    assert bool(read.tools) == bool(request.tools)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, 2.5, -0.0, 1e300, null, true, "é\\u00e9\\n"]}',
        "[NaN, Infinity, -Infinity]",
        "18446744073709551616",
        "[-9223372036854775809, 1e400]",
        '"\\ud800"',
        '{"k": 1, "k": 2}',
        '{"text": "\u00e9t\u00e9 \u2167", "n": [123456789012345678, -1234567890123456789012]}',
        '["\u00fcber", 99999999999999999999, "1234567890123456789"]',
    ],
)
def test_json_read_reads_what_the_standard_library_reads(text: str) -> None:
    expected = json.loads(text)
    read = loads(text.encode())
    assert repr(read) == repr(expected)
    assert repr(loads(text)) == repr(expected)


def test_json_read_refuses_what_is_not_json() -> None:
    with pytest.raises(ValueError):
        loads(b"{not json")


def test_json_read_reads_a_text_with_a_lone_surrogate_as_the_standard_library_does() -> None:
    text = '["\ud800", 123456789012345678901234]'
    assert repr(loads(text)) == repr(json.loads(text))

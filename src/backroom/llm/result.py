"""The result of an `llm.respond` job, as JSON: the answer, how it ended, what it used.

    output_text        the answer's text ("" when the model only called tools)
    output_parsed      with `json_schema`: the answer parsed as JSON, or null when it
                       does not parse (a truncated answer, a model that strayed)
    tool_calls         [{call_id, name, arguments}]: `arguments` is the model's JSON
                       text, as it came
    status             completed | incomplete (the Responses API's word)
    finish_reason      stop | length | tool_calls | content_filter (chat completions')
    incomplete_details {reason: max_output_tokens | content_filter} or null
    response_id, model
    usage              {input_tokens, cached_tokens, output_tokens, reasoning_tokens,
                       cost_usd, estimated, cache_write_tokens?}: reasoning tokens are
                       part of the output tokens, cached (cache reads) and cache-write
                       tokens part of the input tokens (`cache_write_tokens` only when
                       the provider wrote its prompt cache, as Anthropic reports);
                       `estimated` when the provider reported no usage

Both APIs' answers are translated, so a result reads the same whichever API the
provider speaks. With `fail_on_truncation`, an answer cut off by `max_output_tokens`
fails the job instead (`check_truncation`), after its usage was recorded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Protocol

from backroom.core.errors import Permanent
from backroom.core.job import JSON
from backroom.core.usage import AttemptUsage, usd
from backroom.llm.request import LLMResult


class Shown(Protocol):
    """What a result shows of its request (an `LLMRequest`): a schema's parse, tool calls."""

    @property
    def json_schema(self) -> object | None:
        """The schema asked for, if any: the result shows `output_parsed`."""

    @property
    def tools(self) -> Sequence[object]:
        """The tools offered, if any: the result shows `tool_calls`."""


def _parsed(result: LLMResult) -> JSON:
    try:
        parsed: JSON = json.loads(result.output_text)
    except ValueError:
        return None
    return parsed


def result_json(result: LLMResult, usage: AttemptUsage, request: Shown) -> JSON:
    """The job's result: the answer, how it ended, its ids, and what it used."""
    cost = None if usage.cost_pico_usd is None else f"{usd(usage.cost_pico_usd):f}"
    finish = result.finish
    body: dict[str, JSON] = {"output_text": result.output_text}
    if request.json_schema is not None:
        body["output_parsed"] = _parsed(result)
    if request.tools:
        body["tool_calls"] = [
            {"call_id": call.call_id, "name": call.name, "arguments": call.arguments}
            for call in result.tool_calls
        ]
    incomplete = None if finish.incomplete_reason is None else {"reason": finish.incomplete_reason}
    counts: dict[str, JSON] = {
        "input_tokens": usage.input_tokens,
        "cached_tokens": usage.cached_tokens,
        "output_tokens": usage.output_tokens,
        "reasoning_tokens": result.reasoning_tokens,
        "cost_usd": cost,
        "estimated": usage.estimated,
    }
    if result.usage.cache_write_tokens:  # only providers that bill cache writes report them
        counts["cache_write_tokens"] = result.usage.cache_write_tokens
    return body | {
        "status": finish.status,
        "finish_reason": finish.finish_reason,
        "incomplete_details": incomplete,
        "response_id": result.response_id,
        "model": result.model,
        "usage": counts,
    }


def check_truncation(result: LLMResult, *, fail_on_truncation: bool) -> None:
    """`Permanent` when `fail_on_truncation` is set and the answer was cut off.

    Permanent: the same request with the same limit is cut off again.
    """
    if fail_on_truncation and result.finish.truncated:
        raise Permanent(
            f"truncated: the answer was cut off at the output token limit "
            f"({result.usage.output_tokens} output tokens, status {result.finish.status}, "
            f"finish_reason {result.finish.finish_reason}); raise max_output_tokens, or "
            f"leave fail_on_truncation unset to accept a partial answer"
        )

"""The result of an `llm.respond` job, as JSON: the answer, its ids and what it used."""

from __future__ import annotations

from backroom.core.job import JSON
from backroom.core.usage import AttemptUsage, usd
from backroom.llm.request import LLMResult


def result_json(result: LLMResult, usage: AttemptUsage) -> JSON:
    """The job's result: the answer, its ids, and what it used."""
    cost = None if usage.cost_pico_usd is None else f"{usd(usage.cost_pico_usd):f}"
    return {
        "output_text": result.output_text,
        "response_id": result.response_id,
        "model": result.model,
        "usage": {
            "input_tokens": usage.input_tokens,
            "cached_tokens": usage.cached_tokens,
            "output_tokens": usage.output_tokens,
            "cost_usd": cost,
        },
    }

"""The models of the session's LiteLLM proxy (the `litellm_proxy` fixture), by name.

- `LITELLM_MOCKED`: answered by LiteLLM itself (`mock_response`, `MOCKED_TEXT`).
- `LITELLM_LIMITED`: the same, limited by LiteLLM to 3 requests a minute (its own
  429s). Its window is a clock minute shared by the whole session: a test that needs a
  fresh one starts its own proxy (`litellm_proxy_factory`).
- `UPSTREAM`: forwarded to a `backroom mock-llm` process (`mock-1` there), so the
  mock's headers and scripted faults (`[fault:500]` in a prompt) come through LiteLLM.
- `UPSTREAM_LIMITED`: forwarded to a second mock, limited to 2 requests a minute
  (`mock-llm --rpm 2`), whose 429s LiteLLM forwards as `llm_provider-retry-after(-ms)`.
- `LITELLM_JOBS_LIMITED` and `UPSTREAM_JOBS_LIMITED`: the same two limits for the jobs of
  test_proxy_rate_limits.py alone, so that no other test has used their window (LiteLLM
  counts per model, the mock per upstream model: `mock-jobs` there).

A test that needs a model of its own adds it here (a name no other test uses) rather
than starting a proxy of its own: the session's proxy starts while the tests before
it run (see conftest.py), another one costs 10-40 s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from litellm_process import mocked_model, upstream_model

LITELLM_MOCKED = "litellm-mocked"
LITELLM_LIMITED = "litellm-rpm3"
LITELLM_LIMITED_RPM = 3
MOCKED_TEXT = "Hello from LiteLLM"
UPSTREAM = "mock-upstream"
UPSTREAM_LIMITED = "mock-upstream-rpm2"
UPSTREAM_LIMITED_RPM = 2
LITELLM_JOBS_LIMITED = "litellm-rpm3-jobs"
UPSTREAM_JOBS_LIMITED = "mock-upstream-rpm2-jobs"


def session_models() -> list[dict[str, Any]]:
    """The LiteLLM `model_list` of the session's proxy."""
    return [
        mocked_model(LITELLM_MOCKED, MOCKED_TEXT),
        mocked_model(LITELLM_LIMITED, MOCKED_TEXT, rpm=LITELLM_LIMITED_RPM),
        upstream_model(UPSTREAM, "mock-1"),
        upstream_model(UPSTREAM_LIMITED, "mock-1", mock="limited"),
        mocked_model(LITELLM_JOBS_LIMITED, MOCKED_TEXT, rpm=LITELLM_LIMITED_RPM),
        upstream_model(UPSTREAM_JOBS_LIMITED, "mock-jobs", mock="limited"),
    ]


def session_mocks() -> Mapping[str, Sequence[str]]:
    """The `backroom mock-llm` options of each mock behind the session's proxy."""
    return {
        "mock": ("--stream-interval-ms", "5"),
        "limited": ("--rpm", str(UPSTREAM_LIMITED_RPM)),
    }

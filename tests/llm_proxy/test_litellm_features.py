"""Request features and error bodies behind LiteLLM's proxy, through `respond`.

The `mock-upstream` model is forwarded by LiteLLM to `backroom mock-llm`: a JSON
schema and tools must cross LiteLLM's translation both ways, and LiteLLM's own error
bodies (not always OpenAI's shape) must reach the job's error.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator

import openai
import pytest
from litellm_process import LiteLLMProxy
from proxy_models import UPSTREAM

from backroom.core.errors import Permanent
from backroom.llm.config import ProviderConfig
from backroom.llm.features import Finish, FunctionTool, JsonSchema
from backroom.llm.providers.openai.call import make_client, respond
from backroom.llm.request import LLMRequest

pytestmark = pytest.mark.slow

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "sure": {"type": "boolean"}},
    "required": ["answer", "sure"],
    "additionalProperties": False,
}


class SystemClock:
    def now(self) -> int:
        return 0

    async def sleep(self, ms: float) -> None:
        raise AssertionError("nothing here should wait")


@pytest.fixture
async def client(litellm_proxy: LiteLLMProxy) -> AsyncIterator[openai.AsyncOpenAI]:
    client = make_client(litellm_proxy.provider(chat_only=True), timeout_s=60)
    yield client
    await client.close()


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_structured_output_crosses_the_proxy(
    client: openai.AsyncOpenAI, stream: bool
) -> None:
    request = LLMRequest(
        UPSTREAM,
        f"Structured, please {secrets.token_hex(4)}",
        json_schema=JsonSchema("verdict", SCHEMA, strict=True),
        stream=stream,
    )
    result = await respond(client, request, chat_only=True, clock=SystemClock())
    assert json.loads(result.output_text) == {"answer": "mock answer", "sure": True}
    assert result.finish == Finish("completed", "stop")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_tool_call_crosses_the_proxy(client: openai.AsyncOpenAI, stream: bool) -> None:
    tool = FunctionTool(
        "lookup", "Look a word up.", {"type": "object", "properties": {"word": {"type": "string"}}}
    )
    request = LLMRequest(UPSTREAM, f"Call it {secrets.token_hex(4)}", tools=(tool,), stream=stream)
    result = await respond(client, request, chat_only=True, clock=SystemClock())
    (call,) = result.tool_calls
    assert call.name == "lookup"
    assert json.loads(call.arguments) == {"word": "mock word"}
    assert result.finish.finish_reason == "tool_calls"


async def test_a_non_openai_error_body_from_the_proxy_is_kept(
    litellm_proxy: LiteLLMProxy,
) -> None:
    # A base URL one folder off: LiteLLM's web framework answers 404 {"detail": ...}.
    provider = ProviderConfig(
        "off", litellm_proxy.base_url + "/nowhere", api_key=litellm_proxy.api_key
    )
    async with make_client(provider, timeout_s=60) as client:
        with pytest.raises(Permanent) as raised:
            await respond(client, LLMRequest(UPSTREAM, "hi"), chat_only=False, clock=SystemClock())
    message = str(raised.value)
    assert message.startswith(
        'NotFoundError (HTTP 404): {"detail": "Not Found"} (POST /v1/nowhere/responses)'
    )
    assert message.endswith("set `chat_only = true` on its provider in the LLM config")

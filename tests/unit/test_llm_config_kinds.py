"""Provider kinds (`openai`, `anthropic`), their defaults, and batch and cache prices."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from backroom.core.errors import ConfigError
from backroom.llm.config import ANTHROPIC_URL, OPENAI_URL, LLMConfig, load_llm_config
from backroom.llm.pricing import Prices, Usage, cost_usd

TWO_KINDS = """
default_provider = "openai"
[providers.openai]
[providers.anthropic]
kind = "anthropic"
[providers.claude-proxy]
kind = "anthropic"
base_url = "http://127.0.0.1:4000"
prompt_cache = true
[providers.anthropic.models."claude-haiku-4-5"]
input_usd_per_million = 1
output_usd_per_million = 5
cached_input_usd_per_million = 0.1
cache_write_usd_per_million = 1.25
batch_input_usd_per_million = 0.4
"""


def _load(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> LLMConfig:
    path = tmp_path / "llm.toml"
    path.write_text(text)
    return load_llm_config(path, env or {})


def test_each_kind_has_its_own_url_and_key_variable(tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": "sk-openai", "ANTHROPIC_API_KEY": "sk-ant"}
    config = _load(tmp_path, TWO_KINDS, env)

    openai, anthropic, proxy = config.providers
    assert (openai.kind, openai.base_url, openai.api_key) == ("openai", OPENAI_URL, "sk-openai")
    assert (anthropic.kind, anthropic.base_url) == ("anthropic", ANTHROPIC_URL)
    assert anthropic.api_key == "sk-ant"
    # A provider of another name never gets Anthropic's key unasked.
    assert (proxy.api_key, proxy.base_url, proxy.prompt_cache) == (
        None,
        "http://127.0.0.1:4000",
        True,
    )


def test_anthropic_base_url_comes_from_its_variable(tmp_path: Path) -> None:
    env = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    config = _load(tmp_path, TWO_KINDS, env)
    assert config.provider("anthropic").base_url == "http://127.0.0.1:9"
    assert config.provider("openai").base_url == OPENAI_URL


def test_configured_cache_write_and_batch_prices(tmp_path: Path) -> None:
    prices = _load(tmp_path, TWO_KINDS).provider("anthropic").model("claude-haiku-4-5").prices
    assert prices == Prices(
        Decimal(1), Decimal("0.1"), Decimal(5), Decimal("1.25"), Decimal("0.4"), None
    )
    batch = prices.for_batch()
    assert batch == Prices(Decimal("0.4"), Decimal("0.05"), Decimal("2.5"), Decimal("0.625"))


def test_builtin_anthropic_models_carry_cache_write_prices(tmp_path: Path) -> None:
    config = _load(tmp_path, TWO_KINDS)
    prices = config.provider("anthropic").model("claude-opus-4-5-20251101").prices
    assert prices is not None
    assert prices.cache_write_price == Decimal("6.25")
    assert prices.cached_input_usd_per_million == Decimal("0.50")
    openai = config.provider("openai").model("gpt-4o-mini").prices
    assert openai is not None and openai.cache_write_price == openai.input_usd_per_million


def test_cache_writes_cost_their_own_price_and_half_in_a_batch() -> None:
    prices = Prices(Decimal(3), Decimal("0.3"), Decimal(15), Decimal("3.75"))
    usage = Usage(input_tokens=3000, cached_tokens=1000, output_tokens=100, cache_write_tokens=1000)
    online = cost_usd(usage, prices)
    # 1,000 uncached x 3 + 1,000 read x 0.3 + 1,000 written x 3.75 + 100 x 15 micro-dollars
    assert online == Decimal("0.00855")
    assert cost_usd(usage, prices.for_batch()) * 2 == online


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("chat_only = true", "chat_only and background are OpenAI settings"),
        ("background = true", "chat_only and background are OpenAI settings"),
        ('kind = "gemini"', "kind"),
    ],
)
def test_settings_of_another_kind_are_refused(tmp_path: Path, setting: str, message: str) -> None:
    text = f'[providers.claude]\nkind = "anthropic"\n{setting}\n'.replace(
        'kind = "anthropic"\nkind = "gemini"', 'kind = "gemini"'
    )
    with pytest.raises(ConfigError, match=message):
        _load(tmp_path, text)


def test_prompt_cache_is_only_for_anthropic(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="prompt_cache is an Anthropic setting"):
        _load(tmp_path, "[providers.openai]\nprompt_cache = true\n")

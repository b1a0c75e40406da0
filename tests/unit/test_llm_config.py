"""Providers, limits and prices from a TOML file and the environment."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from backroom.core.errors import ConfigError
from backroom.llm.config import OPENAI_URL, LLMConfig, ModelConfig, ProviderConfig, load_llm_config
from backroom.llm.model_limits import ModelLimits
from backroom.llm.pricing import Prices

FULL = """
default_provider = "local"

[providers.openai]
api_key_env = "OPENAI_API_KEY"

[providers.openai.models."gpt-4o-mini"]
max_concurrency = 8
requests_per_minute = 500
tokens_per_minute = 200_000
input_usd_per_million = 0.15
cached_input_usd_per_million = 0.075
output_usd_per_million = 0.60

[providers.openai.models."gpt-4o"]
input_usd_per_million = 2.5
output_usd_per_million = 10

[providers.local]
base_url = "http://127.0.0.1:8100/v1"
chat_only = true

[providers.local.models.llama]
max_concurrency = 2
"""


def _load(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> LLMConfig:
    path = tmp_path / "backroom.toml"
    path.write_text(text)
    return load_llm_config(path, env or {})


def test_a_full_file(tmp_path: Path) -> None:
    config = _load(tmp_path, FULL, {"OPENAI_API_KEY": "sk-test"})
    openai, local = config.providers
    assert openai == ProviderConfig(
        name="openai",
        base_url=OPENAI_URL,
        api_key="sk-test",
        chat_only=False,
        models=(
            ModelConfig(
                "gpt-4o-mini",
                ModelLimits(max_concurrency=8, requests_per_minute=500, tokens_per_minute=200_000),
                Prices(Decimal("0.15"), Decimal("0.075"), Decimal("0.60")),
            ),
            ModelConfig(
                "gpt-4o", ModelLimits(), Prices(Decimal("2.5"), Decimal("2.5"), Decimal(10))
            ),
        ),
    )
    assert local == ProviderConfig(
        name="local",
        base_url="http://127.0.0.1:8100/v1",
        api_key=None,
        chat_only=True,
        models=(ModelConfig("llama", ModelLimits(max_concurrency=2)),),
    )
    assert config.provider() is local
    assert config.provider("openai") is openai


def test_prices_stay_exact_decimals(tmp_path: Path) -> None:
    config = _load(tmp_path, FULL, {"OPENAI_API_KEY": "sk-test"})
    prices = config.provider("openai").model("gpt-4o-mini").prices
    assert prices is not None
    assert prices.input_usd_per_million == Decimal("0.15")
    assert str(prices.output_usd_per_million) == "0.60"


def test_an_unconfigured_model_has_no_limits_and_unknown_prices(tmp_path: Path) -> None:
    config = _load(tmp_path, FULL, {"OPENAI_API_KEY": "sk-test"})
    local = config.provider("openai").model("my-local-model")
    assert local == ModelConfig("my-local-model", ModelLimits(), None)


def test_a_common_model_without_configured_prices_takes_the_builtin_ones(tmp_path: Path) -> None:
    config = _load(tmp_path, FULL, {"OPENAI_API_KEY": "sk-test"})
    o3 = config.provider("openai").model("o3")
    snapshot = config.provider("openai").model("claude-sonnet-4-20250514")

    assert o3.prices == Prices(Decimal("2.00"), Decimal("0.50"), Decimal("8.00"))
    assert snapshot.prices == Prices(
        Decimal("3.00"), Decimal("0.30"), Decimal("15.00"), Decimal("3.7500")
    )


def test_configured_prices_override_the_builtin_ones_and_may_be_turned_off(
    tmp_path: Path,
) -> None:
    path = tmp_path / "llm.toml"
    path.write_text(
        '[providers.local]\nbase_url = "http://127.0.0.1:1/v1"\nbuiltin_prices = false\n'
        '[providers.openai]\nbase_url = "http://127.0.0.1:2/v1"\n'
        '[providers.openai.models."gpt-4o"]\n'
        "input_usd_per_million = 1.5\noutput_usd_per_million = 3\n"
    )
    config = load_llm_config(path, {})

    assert config.provider("local").model("gpt-4o").prices is None
    overridden = config.provider("openai").model("gpt-4o").prices
    assert overridden == Prices(Decimal("1.5"), Decimal("1.5"), Decimal("3"))


def test_the_api_key_never_appears_in_a_repr(tmp_path: Path) -> None:
    config = _load(tmp_path, FULL, {"OPENAI_API_KEY": "sk-secret"})
    assert "sk-secret" not in repr(config)


def test_no_file_and_the_usual_environment_make_an_openai_provider() -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9000/v1", "OPENAI_API_KEY": "sk-env"}
    provider = load_llm_config(None, env).provider()
    # It lists no models, so it takes any: OPENAI_API_KEY alone lets every model run.
    assert provider == ProviderConfig(
        "openai", "http://127.0.0.1:9000/v1", api_key="sk-env", any_model=True
    )
    assert provider.allowed_model("my-model") == ModelConfig("my-model")


def test_a_provider_takes_only_its_listed_models_unless_any_model(tmp_path: Path) -> None:
    config = _load(tmp_path, FULL, {"OPENAI_API_KEY": "sk-test"})
    openai = config.provider("openai")
    assert openai.allowed_model("gpt-4o") is openai.models[1]
    with pytest.raises(ConfigError, match=r"'o3' is not configured .* gpt-4o-mini, gpt-4o;"):
        openai.allowed_model("o3")
    loose = _load(
        tmp_path, FULL.replace("chat_only = true", "any_model = true"), {"OPENAI_API_KEY": "k"}
    )
    assert loose.provider("local").allowed_model("my-model") == ModelConfig("my-model")
    assert loose.provider("local").allowed_model("llama").limits.max_concurrency == 2


def test_no_file_and_no_environment_make_no_provider() -> None:
    config = load_llm_config(None, {})
    assert config.providers == ()
    with pytest.raises(ConfigError, match="no LLM provider named and no default"):
        config.provider()


def test_the_environment_adds_openai_next_to_the_files_providers(tmp_path: Path) -> None:
    text = '[providers.local]\nbase_url = "http://127.0.0.1:8100/v1"\n'
    config = _load(tmp_path, text, {"OPENAI_API_KEY": "sk-env"})
    assert [provider.name for provider in config.providers] == ["local", "openai"]
    with pytest.raises(ConfigError, match="no LLM provider named and no default"):
        config.provider()


def test_a_provider_without_base_url_uses_openai_base_url(tmp_path: Path) -> None:
    config = _load(tmp_path, "[providers.proxy]\n", {"OPENAI_BASE_URL": "http://proxy.test/v1"})
    assert config.provider("proxy").base_url == "http://proxy.test/v1"


def test_an_unknown_provider_is_named_with_the_known_ones(tmp_path: Path) -> None:
    config = _load(tmp_path, FULL, {"OPENAI_API_KEY": "sk-test"})
    with pytest.raises(
        ConfigError, match=r"unknown LLM provider 'azure' \(configured: openai, local\)"
    ):
        config.provider("azure")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("providers = 3", r"providers: Input should be a valid dictionary"),
        ("[providers.a]\nbase = 1", r"providers\.a\.base: Extra inputs are not permitted"),
        ("[providers.a]\nbase_url = 'ftp://x'", r"providers\.a\.base_url: String should match"),
        (
            "[providers.a.models.m]\nmax_concurrency = 0",
            r"models\.m\.max_concurrency: .*greater than 0",
        ),
        (
            "[providers.a.models.m]\ntokens_per_minute = 'lots'",
            r"models\.m\.tokens_per_minute: Input should be a valid integer",
        ),
        (
            "[providers.a.models.m]\noutput_usd_per_million = -1",
            r"models\.m\.output_usd_per_million: .*greater than or equal to 0",
        ),
        (
            "[providers.a.models.m]\ninput_usd_per_million = 1",
            r"provider 'a': model 'm': give both input_usd_per_million and output_usd_per_million",
        ),
        (
            "[providers.a]\napi_key_env = 'A_KEY'",
            r"provider 'a': its API key variable A_KEY is not set",
        ),
        ("default_provider = 'b'\n[providers.a]", r"default_provider: unknown LLM provider 'b'"),
        ("[providers.a", r"is not valid TOML"),
    ],
)
def test_bad_files_say_what_is_wrong_and_where(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as raised:
        _load(tmp_path, text)
    assert str(tmp_path / "backroom.toml") in str(raised.value)


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read LLM config .*nope\.toml: No such file"):
        load_llm_config(tmp_path / "nope.toml", {})


def test_only_the_openai_provider_is_sent_openai_api_key_unasked(tmp_path: Path) -> None:
    text = "[providers.openai]\n[providers.other]\nbase_url = 'https://other.test/v1'\n"
    config = _load(tmp_path, text, {"OPENAI_API_KEY": "sk-openai"})
    assert config.provider("openai").api_key == "sk-openai"
    assert config.provider("other").api_key is None

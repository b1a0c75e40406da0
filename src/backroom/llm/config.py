"""LLM providers, their models' limits and prices, from a TOML file and the environment.

    default_provider = "openai"          # optional when only one provider is configured
    fallback_after_pause_s = 30          # a job with fallbacks leaves a lane paused longer
    fallback_after_attempts = 2          # ... or after this many failed attempts in it

    [batch]                              # batch offload: see backroom.llm.batch.config
    default = "batch-queue"              # never | always | batch-queue

    [providers.openai]
    base_url = "https://api.openai.com/v1"   # default: $OPENAI_BASE_URL, else OpenAI's URL
    api_key_env = "OPENAI_API_KEY"           # the variable must then be set (see below)
    chat_only = false                        # true: use chat completions, not responses
    any_model = false                        # true: accept models not listed below
    builtin_prices = true                    # false: no built-in prices (price_table.py)
    background = false                       # true: Responses API background mode

    [providers.claude]
    kind = "anthropic"                       # default "openai": the API it speaks
    api_key_env = "ANTHROPIC_API_KEY"        # base_url default: Anthropic's own
    prompt_cache = false                     # true: ask Anthropic to cache each prompt

    [providers.openai.models."gpt-4o-mini"]
    max_concurrency = 8                      # each limit is optional: absent means none
    requests_per_minute = 500
    tokens_per_minute = 200000
    default_output_tokens = 256              # reserved when a job sets no max_output_tokens
    charge_at = "admission"                  # or "completion": see LaneCharging
    input_usd_per_million = 0.15             # prices are optional, as a group
    cached_input_usd_per_million = 0.075     # default: the input price
    output_usd_per_million = 0.60
    cache_write_usd_per_million = 0.15      # default: the input price
    batch_input_usd_per_million = 0.075     # batch API prices; default: half the online
    batch_output_usd_per_million = 0.30     # ones (cache reads and writes: half too)

A provider without `api_key_env` sends no key, except the one named `openai`, which
takes `OPENAI_API_KEY` if it is set, and an `anthropic` one named `anthropic`, which
takes `ANTHROPIC_API_KEY`. With no file, or a file that names no `openai`
provider, setting `OPENAI_API_KEY` or `OPENAI_BASE_URL` adds a provider named `openai`
built from those two variables. The environment is handed in as a mapping: this module
never reads `os.environ` itself.

A job may name only a model its provider lists (others are refused at submit), so a
typo never gets a lane; `any_model = true` takes any name. The provider built from the
environment alone lists none, so it is `any_model`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from backroom.core.errors import ConfigError
from backroom.llm.model_limits import LaneCharging, ModelLimits
from backroom.llm.price_table import builtin_prices
from backroom.llm.pricing import Prices
from backroom.llm.settings import LLMConfig, ModelConfig, ProviderConfig, ProviderKind

__all__ = ["LLMConfig", "ModelConfig", "ProviderConfig", "ProviderKind", "load_llm_config"]

OPENAI_URL = "https://api.openai.com/v1"
ANTHROPIC_URL = "https://api.anthropic.com"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
ENV_PROVIDER = "openai"
# Per kind: the provider name that picks up a key variable unasked, that variable, the
# variable naming its URL, and its default URL.
_KIND_DEFAULTS: dict[str, tuple[str, str, str, str]] = {
    "openai": (ENV_PROVIDER, DEFAULT_KEY_ENV, "OPENAI_BASE_URL", OPENAI_URL),
    "anthropic": ("anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", ANTHROPIC_URL),
}


class _ModelTable(BaseModel):
    """One `[providers.NAME.models."MODEL"]` table as written in the file."""

    model_config = ConfigDict(extra="forbid")

    max_concurrency: int | None = Field(default=None, gt=0)
    requests_per_minute: int | None = Field(default=None, gt=0)
    tokens_per_minute: int | None = Field(default=None, gt=0)
    default_output_tokens: int | None = Field(default=None, gt=0)
    charge_at: LaneCharging = LaneCharging.ADMISSION
    input_usd_per_million: Decimal | None = Field(default=None, ge=0)
    cached_input_usd_per_million: Decimal | None = Field(default=None, ge=0)
    output_usd_per_million: Decimal | None = Field(default=None, ge=0)
    cache_write_usd_per_million: Decimal | None = Field(default=None, ge=0)
    batch_input_usd_per_million: Decimal | None = Field(default=None, ge=0)
    batch_output_usd_per_million: Decimal | None = Field(default=None, ge=0)

    def to_config(self, name: str, builtin: bool) -> ModelConfig:
        """This table for model `name`; without prices, the built-in ones if `builtin`."""
        limits = ModelLimits(
            self.max_concurrency,
            self.requests_per_minute,
            self.tokens_per_minute,
            self.default_output_tokens,
            self.charge_at,
        )
        prices = self._prices(name) or (builtin_prices(name) if builtin else None)
        return ModelConfig(name, limits, prices)

    def _prices(self, name: str) -> Prices | None:
        given = (
            self.input_usd_per_million,
            self.cached_input_usd_per_million,
            self.output_usd_per_million,
            self.cache_write_usd_per_million,
            self.batch_input_usd_per_million,
            self.batch_output_usd_per_million,
        )
        if all(price is None for price in given):
            return None
        if self.input_usd_per_million is None or self.output_usd_per_million is None:
            raise ConfigError(
                f"model {name!r}: give both input_usd_per_million and output_usd_per_million, "
                "or no prices at all"
            )
        cached = self.cached_input_usd_per_million
        return Prices(
            self.input_usd_per_million,
            self.input_usd_per_million if cached is None else cached,
            self.output_usd_per_million,
            self.cache_write_usd_per_million,
            self.batch_input_usd_per_million,
            self.batch_output_usd_per_million,
        )


class _ProviderTable(BaseModel):
    """One `[providers.NAME]` table as written in the file."""

    model_config = ConfigDict(extra="forbid")

    kind: ProviderKind = "openai"
    base_url: str | None = Field(default=None, pattern=r"^https?://\S+$")
    api_key_env: str | None = Field(default=None, min_length=1)
    chat_only: bool = False
    any_model: bool = False
    builtin_prices: bool = True
    background: bool = False
    prompt_cache: bool = False
    models: dict[str, _ModelTable] = {}


class _ConfigFile(BaseModel):
    """The whole file."""

    model_config = ConfigDict(extra="forbid")

    default_provider: str | None = None
    fallback_after_pause_s: Decimal = Field(default=Decimal(30), ge=0)
    fallback_after_attempts: int = Field(default=2, gt=0)
    providers: dict[str, _ProviderTable] = {}
    batch: dict[str, Any] = {}


def _api_key(name: str, table: _ProviderTable, env: Mapping[str, str]) -> str | None:
    if table.api_key_env is None:
        # Only OpenAI's own provider picks up OPENAI_API_KEY unasked (and Anthropic's
        # ANTHROPIC_API_KEY): any other could be a third party, never to be sent a key
        # by default.
        own_name, key_env = _KIND_DEFAULTS[table.kind][:2]
        return env.get(key_env) if name == own_name else None
    api_key = env.get(table.api_key_env)
    if api_key is None:
        raise ConfigError(
            f"provider {name!r}: its API key variable {table.api_key_env} is not set "
            "in the environment"
        )
    return api_key


def _provider(name: str, table: _ProviderTable, env: Mapping[str, str]) -> ProviderConfig:
    if table.kind != "openai" and (table.chat_only or table.background):
        raise ConfigError(
            f"provider {name!r}: chat_only and background are OpenAI settings, "
            f"not for kind {table.kind!r}"
        )
    if table.kind != "anthropic" and table.prompt_cache:
        raise ConfigError(f"provider {name!r}: prompt_cache is an Anthropic setting")
    api_key = _api_key(name, table, env)
    try:
        models = tuple(
            model.to_config(model_name, table.builtin_prices)
            for model_name, model in table.models.items()
        )
    except ConfigError as error:
        raise ConfigError(f"provider {name!r}: {error}") from None
    url_env, default_url = _KIND_DEFAULTS[table.kind][2:]
    return ProviderConfig(
        name=name,
        base_url=table.base_url or env.get(url_env) or default_url,
        api_key=api_key,
        chat_only=table.chat_only,
        models=models,
        any_model=table.any_model,
        builtin_prices=table.builtin_prices,
        background=table.background,
        kind=table.kind,
        prompt_cache=table.prompt_cache,
    )


def _read(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as file:
            # Prices must stay exact decimals: never let them pass through float.
            return tomllib.load(file, parse_float=Decimal)
    except OSError as error:
        raise ConfigError(f"cannot read LLM config {path}: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"LLM config {path} is not valid TOML: {error}") from None


def _validate(document: dict[str, Any], source: str) -> _ConfigFile:
    try:
        return _ConfigFile.model_validate(document)
    except pydantic.ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in problem['loc'])}: {problem['msg']}"
            for problem in error.errors()
        )
        raise ConfigError(f"LLM config {source}: {problems}") from None


def load_llm_config(path: Path | None, env: Mapping[str, str]) -> LLMConfig:
    """Providers from the TOML file at `path` (if any) and the environment `env`.

    Raises ConfigError, naming the file and the offending key, for anything invalid.
    """
    document = {} if path is None else _read(path)
    source = "<none>" if path is None else str(path)
    parsed = _validate(document, source)
    try:
        providers = [_provider(name, table, env) for name, table in parsed.providers.items()]
    except ConfigError as error:
        raise ConfigError(f"LLM config {source}: {error}") from None
    has_env_settings = "OPENAI_API_KEY" in env or "OPENAI_BASE_URL" in env
    if ENV_PROVIDER not in parsed.providers and has_env_settings:
        # Built from the environment alone, it lists no models: it takes any.
        providers.append(_provider(ENV_PROVIDER, _ProviderTable(any_model=True), env))
    config = LLMConfig(
        tuple(providers),
        parsed.default_provider,
        fallback_after_pause_ms=int(parsed.fallback_after_pause_s * 1000),
        fallback_after_attempts=parsed.fallback_after_attempts,
        batch=parsed.batch,
    )
    if parsed.default_provider is not None:
        try:
            config.provider(parsed.default_provider)
        except ConfigError as error:
            raise ConfigError(f"LLM config {source}: default_provider: {error}") from None
    return config

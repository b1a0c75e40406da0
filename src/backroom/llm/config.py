"""LLM providers, their models' limits and prices, from a TOML file and the environment.

    default_provider = "openai"          # optional when only one provider is configured
    fallback_after_pause_s = 30          # a job with fallbacks leaves a lane paused longer
    fallback_after_attempts = 2          # ... or after this many failed attempts in it

    [providers.openai]
    base_url = "https://api.openai.com/v1"   # default: $OPENAI_BASE_URL, else OpenAI's URL
    api_key_env = "OPENAI_API_KEY"           # the variable must then be set (see below)
    chat_only = false                        # true: use chat completions, not responses
    any_model = false                        # true: accept models not listed below
    builtin_prices = true                    # false: no built-in prices (price_table.py)
    background = false                       # true: Responses API background mode

    [providers.openai.models."gpt-4o-mini"]
    max_concurrency = 8                      # each limit is optional: absent means none
    requests_per_minute = 500
    tokens_per_minute = 200000
    default_output_tokens = 256              # reserved when a job sets no max_output_tokens
    charge_at = "admission"                  # or "completion": see LaneCharging
    input_usd_per_million = 0.15             # prices are optional, as a group
    cached_input_usd_per_million = 0.075     # default: the input price
    output_usd_per_million = 0.60

A provider without `api_key_env` sends no key, except the one named `openai`, which
takes `OPENAI_API_KEY` if it is set. With no file, or a file that names no `openai`
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
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from backroom.core.errors import ConfigError
from backroom.llm.model_limits import LaneCharging, ModelLimits
from backroom.llm.price_table import builtin_prices
from backroom.llm.pricing import Prices

OPENAI_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
ENV_PROVIDER = "openai"


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """One model of a provider: its limits, and its prices if they are known."""

    name: str
    limits: ModelLimits = field(default_factory=ModelLimits)
    prices: Prices | None = None


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    """An OpenAI-compatible endpoint and the models backroom knows about on it."""

    name: str
    base_url: str
    # Kept out of repr so that logging a config never prints a secret.
    api_key: str | None = field(default=None, repr=False)
    chat_only: bool = False
    models: tuple[ModelConfig, ...] = ()
    builtin_prices: bool = True
    background: bool = False  # see `backroom.llm.providers.openai.background`
    any_model: bool = False
    """Accept models that `models` does not list (with no limits and no prices)."""

    def model(self, name: str) -> ModelConfig:
        """The configured model `name`, or one with no limits and the built-in prices."""
        return self.configured_model(name) or self._unlisted(name)

    def configured_model(self, name: str) -> ModelConfig | None:
        """The model `name` as `models` lists it, or None."""
        for model in self.models:
            if model.name == name:
                return model
        return None

    def model_names(self) -> list[str]:
        """The names of the listed models, in the order configured."""
        return [model.name for model in self.models]

    def allowed_model(self, name: str) -> ModelConfig:
        """The model `name` if a job may use it here; `ConfigError` naming the listed
        models if this provider neither lists it nor takes `any_model`."""
        model = self.configured_model(name)
        if model is not None:
            return model
        if self.any_model:
            return self._unlisted(name)
        listed = ", ".join(self.model_names()) or "none"
        raise ConfigError(
            f"model {name!r} is not configured for LLM provider {self.name!r} "
            f"(configured: {listed}; set any_model = true on the provider to allow any)"
        )

    def _unlisted(self, name: str) -> ModelConfig:
        return ModelConfig(name, prices=builtin_prices(name) if self.builtin_prices else None)


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """Every configured provider, and which one a job gets when it names none."""

    providers: tuple[ProviderConfig, ...] = ()
    default_provider: str | None = None
    fallback_after_pause_ms: int = 30_000
    """A job with fallbacks moves on when its lane will have no room for longer."""
    fallback_after_attempts: int = 2
    """... or when this many of its attempts in the lane failed (a job may say otherwise)."""

    def provider(self, name: str | None = None) -> ProviderConfig:
        """The provider called `name`, or the default one; ConfigError if there is none."""
        wanted = name or self.default_provider
        if wanted is None:
            if len(self.providers) == 1:
                return self.providers[0]
            raise ConfigError(
                "no LLM provider named and no default: configure one provider, "
                "set default_provider, or pass a provider"
            )
        for provider in self.providers:
            if provider.name == wanted:
                return provider
        known = ", ".join(provider.name for provider in self.providers) or "none"
        raise ConfigError(f"unknown LLM provider {wanted!r} (configured: {known})")


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
        )


class _ProviderTable(BaseModel):
    """One `[providers.NAME]` table as written in the file."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = Field(default=None, pattern=r"^https?://\S+$")
    api_key_env: str | None = Field(default=None, min_length=1)
    chat_only: bool = False
    any_model: bool = False
    builtin_prices: bool = True
    background: bool = False
    models: dict[str, _ModelTable] = {}


class _ConfigFile(BaseModel):
    """The whole file."""

    model_config = ConfigDict(extra="forbid")

    default_provider: str | None = None
    fallback_after_pause_s: Decimal = Field(default=Decimal(30), ge=0)
    fallback_after_attempts: int = Field(default=2, gt=0)
    providers: dict[str, _ProviderTable] = {}


def _api_key(name: str, table: _ProviderTable, env: Mapping[str, str]) -> str | None:
    if table.api_key_env is None:
        # Only OpenAI's own provider picks up OPENAI_API_KEY unasked: any other could
        # be a third party, which must never be sent OpenAI's key by default.
        return env.get(DEFAULT_KEY_ENV) if name == ENV_PROVIDER else None
    api_key = env.get(table.api_key_env)
    if api_key is None:
        raise ConfigError(
            f"provider {name!r}: its API key variable {table.api_key_env} is not set "
            "in the environment"
        )
    return api_key


def _provider(name: str, table: _ProviderTable, env: Mapping[str, str]) -> ProviderConfig:
    api_key = _api_key(name, table, env)
    try:
        models = tuple(
            model.to_config(model_name, table.builtin_prices)
            for model_name, model in table.models.items()
        )
    except ConfigError as error:
        raise ConfigError(f"provider {name!r}: {error}") from None
    return ProviderConfig(
        name=name,
        base_url=table.base_url or env.get("OPENAI_BASE_URL") or OPENAI_URL,
        api_key=api_key,
        chat_only=table.chat_only,
        models=models,
        any_model=table.any_model,
        builtin_prices=table.builtin_prices,
        background=table.background,
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
    )
    if parsed.default_provider is not None:
        try:
            config.provider(parsed.default_provider)
        except ConfigError as error:
            raise ConfigError(f"LLM config {source}: default_provider: {error}") from None
    return config

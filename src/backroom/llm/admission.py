"""What `llm.respond` refuses at submit: a provider or model no attempt could use, its
own or a fallback's, and for a capped submitter any of them without prices.

A job naming a model its provider does not list (and the provider does not take
`any_model`) would otherwise be stored, claimed and failed; worse, before lanes were
tied to the config, it got a lane of its own with no limits. Refused at submit, the
client hears at once which models it may name.

A submitter is capped when its tenant has a daily budget or a job cost cap, or the
input sets its own `max_cost_usd`: no cap could hold the calls of a model whose price
is unknown, so each model the job may call, its own and every fallback's, must have one.
"""

from __future__ import annotations

from backroom.core.errors import ConfigError, InputRefused, Permanent
from backroom.core.job import JSON
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.task_input import RespondInput
from backroom.tasks import Submitter

Field = tuple[str | int, ...]


def check_respond_input(payload: JSON, submitter: Submitter, config: LLMConfig) -> None:
    """Raise `InputRefused` if `payload` names a provider or model `config` rules out,
    or, for a capped submitter, a model without prices.

    An input that does not parse at all is left for its job to fail with every
    problem named (the handler's `Permanent`), as before.
    """
    try:
        job_input = RespondInput.parse(payload)
    except Permanent:
        return
    capped = submitter.has_budget or submitter.has_cost_cap or job_input.max_cost_usd is not None
    own = _allowed(config, job_input.provider, job_input.model, ())
    _check_priced(own, capped, submitter, ("model",))
    provider = own[0]
    for index, fallback in enumerate(job_input.fallbacks):
        field: Field = ("fallbacks", index)
        allowed = _allowed(config, fallback.provider or provider.name, fallback.model, field)
        _check_priced(allowed, capped, submitter, (*field, "model"))


def _allowed(
    config: LLMConfig, provider_name: str | None, model_name: str, field: Field
) -> tuple[ProviderConfig, ModelConfig]:
    """The provider and model a job may use, or `InputRefused` at `field`."""
    try:
        provider = config.provider(provider_name)
    except ConfigError as error:
        known = [provider.name for provider in config.providers]
        raise InputRefused((*field, "provider"), str(error), {"providers": known}) from None
    try:
        return provider, provider.allowed_model(model_name)
    except ConfigError as error:
        details = {"provider": provider.name, "models": provider.model_names()}
        raise InputRefused((*field, "model"), str(error), details) from None


def _check_priced(
    allowed: tuple[ProviderConfig, ModelConfig], capped: bool, submitter: Submitter, field: Field
) -> None:
    provider, model = allowed
    if not capped or model.prices is not None:
        return
    # A fallback names its provider; the job's own model is the provider's it named.
    named = f"model {model.name!r} of provider {provider.name!r}" if len(field) > 1 else None
    raise InputRefused(
        field,
        f"{named or f'model {model.name!r}'} has no prices, so its cost cannot be held to "
        f"tenant {submitter.tenant!r}'s budget or a job cost cap (provider "
        f"{provider.name!r}); use a priced model or configure its prices",
    )

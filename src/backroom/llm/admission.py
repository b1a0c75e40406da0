"""What `llm.respond` refuses at submit: a provider or model no attempt could use, its
own or a fallback's, and for a tenant with a budget a fallback without prices.

A job naming a model its provider does not list (and the provider does not take
`any_model`) would otherwise be stored, claimed and failed; worse, before lanes were
tied to the config, it got a lane of its own with no limits. Refused at submit, the
client hears at once which models it may name.
"""

from __future__ import annotations

from backroom.core.errors import ConfigError, InputRefused, Permanent
from backroom.core.job import JSON
from backroom.llm.config import LLMConfig, ProviderConfig
from backroom.llm.task_input import RespondInput
from backroom.tasks import Submitter


def check_respond_input(payload: JSON, submitter: Submitter, config: LLMConfig) -> None:
    """Raise `InputRefused` if `payload` names a provider or model `config` rules out.

    An input that does not parse at all is left for its job to fail with every
    problem named (the handler's `Permanent`), as before.
    """
    try:
        job_input = RespondInput.parse(payload)
    except Permanent:
        return
    try:
        provider = config.provider(job_input.provider)
    except ConfigError as error:
        known = [provider.name for provider in config.providers]
        raise InputRefused(("provider",), str(error), {"providers": known}) from None
    try:
        provider.allowed_model(job_input.model)
    except ConfigError as error:
        details = {"provider": provider.name, "models": provider.model_names()}
        raise InputRefused(("model",), str(error), details) from None
    _check_fallbacks(job_input, provider, submitter, config)


def _check_fallbacks(
    job_input: RespondInput, provider: ProviderConfig, submitter: Submitter, config: LLMConfig
) -> None:
    """Each fallback must be configured too; priced when the tenant has a budget (an
    unpriced call would spend it without counting)."""
    for index, fallback in enumerate(job_input.fallbacks):
        field = ("fallbacks", index)
        try:
            other = config.provider(fallback.provider or provider.name)
        except ConfigError as error:
            known = [provider.name for provider in config.providers]
            raise InputRefused((*field, "provider"), str(error), {"providers": known}) from None
        try:
            model = other.allowed_model(fallback.model)
        except ConfigError as error:
            details = {"provider": other.name, "models": other.model_names()}
            raise InputRefused((*field, "model"), str(error), details) from None
        if submitter.has_budget and model.prices is None:
            reason = (
                f"model {model.name!r} of provider {other.name!r} has no prices, and tenant "
                f"{submitter.tenant!r} has a daily budget: configure its prices to use it"
            )
            raise InputRefused((*field, "model"), reason)

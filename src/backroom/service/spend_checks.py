"""The submit-time check of a job's LLM cost: a capped caller may not use a model
whose price is unknown, since no budget or cost cap could hold its calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from backroom.core.job import JSON
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.service.replies import Reply, invalid_field
from backroom.tasks import Task

if TYPE_CHECKING:
    from backroom.service.submit import Submission


def _unpriced_model(task: Task | None, caller: Caller, input: JSON) -> str | None:
    """The model without a price the job would call, if the caller's spend is capped
    (a daily budget, a job cost cap, or the input's own `max_cost_usd`)."""
    if task is None or task.unpriced_model is None:
        return None
    capped = caller.daily_budget is not None or caller.max_job_cost_pico_usd is not None
    if not capped and not (isinstance(input, dict) and input.get("max_cost_usd") is not None):
        return None
    return task.unpriced_model(input)


def unpriced_refusal(app: AppParts, caller: Caller, submission: Submission) -> Reply | None:
    """A 422 naming the model, for a capped caller's job of a model without a price."""
    unpriced = _unpriced_model(app.tasks.get(submission.task), caller, submission.input)
    if unpriced is None:
        return None
    return invalid_field(
        ("body", "input", "model"),
        f"model {unpriced!r} has no price, so its cost cannot be held to the tenant's "
        "budget or a job cost cap; use a priced model or configure its prices",
    )

"""What a submission's input is checked against besides plain JSON: the task's own
check (`Task.check_input`), which may depend on the tenant's budget; and the lane the
input names."""

from __future__ import annotations

from backroom.core.errors import InputRefused, InvalidJson
from backroom.core.job import JSON
from backroom.service.context import AppParts
from backroom.service.replies import Reply, invalid_field
from backroom.tasks import Submitter, Task


def checked_lane(task: Task | None, input: JSON, submitter: Submitter) -> str | None:
    """The lane a job of `task` with `input` runs in (None: none), once the task's check
    passed; `InputRefused` if it refuses the input."""
    if task is None:
        return None
    if task.check_input is not None:
        task.check_input(input, submitter)
    request = None if task.lane_request is None else task.lane_request(input)
    return None if request is None else request.lane


async def submitter_caps(app: AppParts, task: str, tenant: str) -> Submitter:
    """`tenant` with its spend caps (a daily budget, a job cost cap), read from the
    store only for a task that checks inputs."""
    known = app.tasks.get(task)
    if known is None or known.check_input is None:
        return Submitter(tenant)
    stored = await app.store.get_tenant(tenant)
    if stored is None:
        return Submitter(tenant)
    return Submitter(
        tenant,
        has_budget=stored.daily_budget is not None,
        has_cost_cap=stored.max_job_cost_pico_usd is not None,
    )


def refused_input(error: InvalidJson | InputRefused) -> Reply:
    """The 422 for an input or metadata that is not plain JSON, or that its task refused
    (with what helps fix it, e.g. the configured models)."""
    if isinstance(error, InvalidJson):
        return invalid_field(("body", error.field), error.reason)
    return invalid_field(("body", "input", *error.field), error.reason, **error.details)

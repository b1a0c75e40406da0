"""Many jobs of one task and one set of options, checked into a `NewJobs` (`App.new_jobs`).

The first input is checked and built exactly as `build_job` builds a single job, and
its job is the template of the others; each further input is checked as plain JSON and
by the task's own input check, and gets its lane and (with a key) its fingerprint, the
same a single submission of it would get. No `NewJob` is built per input.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TypedDict, Unpack

from backroom.core.idempotency import fingerprint
from backroom.core.job import DEFAULT_TENANT, JSON, NewJob
from backroom.core.job_batch import NewJobs
from backroom.core.plain_json import check_plain_json
from backroom.service.context import AppParts
from backroom.service.submit import Submission, build_job, key_options
from backroom.service.submit_input import checked_lane
from backroom.tasks import Submitter


class JobsOptions(TypedDict, total=False):
    """What `App.new_jobs` takes besides the task and inputs: each job's key, and the
    options every job shares (those of `App.new_job`)."""

    keys: Sequence[str | None] | None
    tenant: str
    queue: str | None
    priority: int
    max_attempts: int | None
    timeout_s: float | None
    delay_s: float
    metadata: dict[str, JSON] | None
    max_active: int | None


def new_jobs(
    app: AppParts, task: str, inputs: Sequence[JSON], **options: Unpack[JobsOptions]
) -> NewJobs:
    """A job of `task` for each of `inputs`, with `options` (see `JobsOptions`)."""
    shared = Submission(
        task,
        None,
        None,
        options.get("queue"),
        options.get("priority", 0),
        options.get("max_attempts"),
        options.get("timeout_s"),
        options.get("delay_s", 0),
        options.get("metadata") or {},
    )
    tenant, max_active = options.get("tenant", DEFAULT_TENANT), options.get("max_active")
    return build_jobs(
        app, shared, inputs, options.get("keys"), tenant=tenant, max_active=max_active
    )


def build_jobs(
    app: AppParts,
    options: Submission,
    inputs: Sequence[JSON],
    keys: Sequence[str | None] | None = None,
    *,
    tenant: str = DEFAULT_TENANT,
    max_active: int | None = None,
) -> NewJobs:
    """A job of `options` (its task, queue, priority, ...; its input and key ignored)
    for each of `inputs`, with `keys[n]` as the n-th one's idempotency key. Raises what
    `build_job` raises, for the first input that earns it; `ValueError` when `keys` is
    not as long as `inputs`."""
    if keys is not None and len(keys) != len(inputs):
        raise ValueError(f"{len(keys)} keys for {len(inputs)} inputs")
    if not inputs:
        return NewJobs(NewJob(options.task, None, app.clock.now()), inputs)
    first = dataclasses.replace(options, input=inputs[0], key=None if keys is None else keys[0])
    template = build_job(app, first, tenant=tenant, max_active=max_active)
    task = app.tasks.get(options.task)
    submitter = Submitter(tenant)
    for input in inputs:
        check_plain_json(input, "input")
    lanes: list[str | None] | None = None
    if task is not None and (task.check_input is not None or task.lane_request is not None):
        lanes = [template.lane]
        lanes += [checked_lane(task, input, submitter) for input in inputs[1:]]
    fingerprints: list[str | None] | None = None
    if keys is not None:
        shared = key_options(first, template.queue, template.max_attempts)
        fingerprints = [
            None if key is None else fingerprint(options.task, input, shared)
            for input, key in zip(inputs, keys, strict=True)
        ]
    return NewJobs(template, inputs, keys, fingerprints, lanes)

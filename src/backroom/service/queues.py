"""Steering the queues and lanes: pause, resume and list them, for every worker at once.

A pause is kept in the store, so every worker on every machine honours it at its next
claim: no job of a paused queue or lane starts until a person resumes it, and jobs
already running go on to their end. Queues and lanes span tenants, so only an admin
pauses, resumes or lists them. Like every operation, each takes the app and a
`Caller` and returns a `Reply`; `queue_documents` and `lane_documents` are the plain
data behind the lists, for pages that render them.
"""

from __future__ import annotations

from typing import Any

from backroom.core.lanes import LaneLimits, full_lane
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.service.documents import iso
from backroom.service.llm import lane_document
from backroom.service.replies import Reply, invalid_field, problem
from backroom.store.records import LaneStatus, Pause, PauseKind, QueueStats
from backroom.telemetry.job_log import log_pause

__all__ = ["lane_documents", "list_lanes", "list_queues", "pause_lane", "pause_queue"]
__all__ += ["queue_documents", "resume_lane", "resume_queue"]

MAX_NAME_LENGTH = 200
"""The longest queue or lane name one can pause (a name longer than any in use)."""


def _refused(caller: Caller, kind: PauseKind) -> Reply | None:
    if caller.admin:
        return None
    return problem(403, f"only an admin may steer the {kind}s, which every tenant shares")


def _bad_name(name: str) -> Reply | None:
    if not name.strip() or len(name) > MAX_NAME_LENGTH or not name.isprintable():
        return invalid_field(
            ("path", "name"), f"must be 1 to {MAX_NAME_LENGTH} printable characters"
        )
    return None


def pause_document(pause: Pause | None) -> dict[str, Any]:
    """Whether a queue or lane is paused by a person, and since when."""
    return {
        "paused": pause is not None,
        "paused_at": None if pause is None else iso(pause.paused_at),
    }


async def _pause(app: AppParts, caller: Caller, kind: PauseKind, name: str) -> Reply:
    refused = _refused(caller, kind) or _bad_name(name)
    if refused is not None:
        return refused
    pause = await app.store.pause(kind, name, app.clock.now())
    log_pause(str(kind), name, True, by=caller.tenant)
    return Reply(200, {"kind": str(kind), "name": name, **pause_document(pause)})


async def _resume(app: AppParts, caller: Caller, kind: PauseKind, name: str) -> Reply:
    refused = _refused(caller, kind) or _bad_name(name)
    if refused is not None:
        return refused
    was_paused = await app.store.resume(kind, name)
    if was_paused:
        log_pause(str(kind), name, False, by=caller.tenant)
    body = {"kind": str(kind), "name": name, **pause_document(None), "was_paused": was_paused}
    return Reply(200, body)


async def pause_queue(app: AppParts, caller: Caller, name: str) -> Reply:
    """Pause the queue `name` for every worker (admin only); pausing twice keeps the first."""
    return await _pause(app, caller, PauseKind.QUEUE, name)


async def resume_queue(app: AppParts, caller: Caller, name: str) -> Reply:
    """Resume the queue `name`; its due jobs start at once (`was_paused` says if it was)."""
    return await _resume(app, caller, PauseKind.QUEUE, name)


async def pause_lane(app: AppParts, caller: Caller, name: str) -> Reply:
    """Pause the LLM lane `name` (say `openai/gpt-4o-mini`) for every worker (admin only)."""
    return await _pause(app, caller, PauseKind.LANE, name)


async def resume_lane(app: AppParts, caller: Caller, name: str) -> Reply:
    """Resume the LLM lane `name`; its due jobs start at once."""
    return await _resume(app, caller, PauseKind.LANE, name)


def _paused(pauses: list[Pause], kind: PauseKind) -> dict[str, Pause]:
    return {pause.name: pause for pause in pauses if pause.kind is kind}


def _queue_document(stats: QueueStats | None, name: str, pause: Pause | None) -> dict[str, Any]:
    empty = QueueStats(name, 0, 0, 0, 0, 0, None)
    entry = stats or empty
    age = entry.oldest_queued_age_ms
    return {
        "name": name,
        "queued": entry.queued,
        "running": entry.running,
        "succeeded": entry.succeeded,
        "failed": entry.failed,
        "cancelled": entry.cancelled,
        "oldest_queued_age_seconds": None if age is None else age / 1000,
        "failure_rate_last_hour": entry.failure_rate,
        **pause_document(pause),
    }


async def queue_documents(app: AppParts) -> list[dict[str, Any]]:
    """Every queue with jobs or a pause, by name: its jobs by state (its depth is
    `queued`), the age of its oldest due queued job, its failure rate over the last
    hour, and whether a person paused it."""
    stats = {entry.queue: entry for entry in await app.store.stats(app.clock.now())}
    paused = _paused(await app.store.pauses(), PauseKind.QUEUE)
    names = sorted({name for name in stats if name is not None} | set(paused))
    return [_queue_document(stats.get(name), name, paused.get(name)) for name in names]


async def list_queues(app: AppParts, caller: Caller) -> Reply:
    """Every queue with jobs or a pause (admin only; see `queue_documents`)."""
    refused = _refused(caller, PauseKind.QUEUE)
    if refused is not None:
        return refused
    return Reply(200, {"queues": await queue_documents(app)})


async def lane_documents(app: AppParts) -> list[dict[str, Any]]:
    """Every lane that has had a call or a pause, by name: its limits, calls in flight,
    what its buckets hold, its pause after a 429 (`paused_until`) and a person's."""
    now = app.clock.now()
    lanes = {lane.name: lane for lane in await app.store.lanes(now)}
    paused = _paused(await app.store.pauses(), PauseKind.LANE)
    for name in paused.keys() - lanes.keys():
        # Paused before its first call: no limits known yet, nothing in flight.
        lanes[name] = LaneStatus(name, LaneLimits(), full_lane(LaneLimits(), now))
    return [
        {**lane_document(lanes[name], now), **pause_document(paused.get(name))}
        for name in sorted(lanes)
    ]


async def list_lanes(app: AppParts, caller: Caller) -> Reply:
    """Every lane as every worker sees it now (admin only; see `lane_documents`)."""
    refused = _refused(caller, PauseKind.LANE)
    if refused is not None:
        return refused
    return Reply(200, {"lanes": await lane_documents(app)})

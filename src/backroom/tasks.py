"""Tasks: named handlers that jobs run, registered on an `App`, never globally."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from backroom.core.errors import ConfigError
from backroom.core.job import JSON, Job
from backroom.core.lane_routes import LaneRoute
from backroom.core.lanes import LaneRequest
from backroom.core.retry import RetryPolicy

if TYPE_CHECKING:
    from backroom.context import JobContext

Handler = Callable[["JobContext", Any], Awaitable[JSON]] | Callable[["JobContext", Any], JSON]
"""`async def handler(ctx, input)` or a plain function, which runs in a thread."""

LaneRequester = Callable[[JSON], LaneRequest | None]
"""A task's function from a job's input to what the job asks of its LLM lane (the
lane's name and limits, the tokens it expects to use); None when it runs in none."""


LaneRouter = Callable[[JSON], LaneRoute | None]
"""A task's function from a job's input to its lanes in order, its own first and then
its fallbacks (see `backroom.core.lane_routes`); None when it has no alternatives."""


@dataclass(frozen=True, slots=True)
class Submitter:
    """Who submits a job, as far as a task's input check needs to know."""

    tenant: str
    has_budget: bool = False
    """The tenant has a daily LLM budget: what it asks for must be priced."""
    has_cost_cap: bool = False
    """The tenant caps what one job may cost: what it asks for must be priced too."""


InputCheck = Callable[[JSON, Submitter], None]
"""A task's check of a job's input at submit, before anything is stored: it raises
`InputRefused` for an input no attempt could run (a model no provider is configured
for, say), so that the client hears of it at once rather than from a failed job."""


@dataclass(frozen=True, slots=True)
class Task:
    """A handler under a stable name, with its defaults.

    `timeout_s` bounds one attempt (a timeout is a retryable failure); `retry`
    overrides the app's policy for this task; `queue` is where its jobs go by default.
    `lane_request` picks the LLM lane of a job from its input: the job then starts only
    when its lane has room, counts against its tenant's daily budget, and waits without using
    an attempt while either is spent (see `backroom.runtime.lane_gate`). `lane_route`
    gives a job alternative lanes to move to (its current one is stored on the job).
    `check_input` refuses, at submit, an input no attempt could run. `gate_free` says
    of a job that its attempt passes no lane gate: it goes to a provider's batch API,
    outside the online rate limits (its budget is still reserved by its handler).
    """

    name: str
    handler: Handler
    timeout_s: float | None = None
    retry: RetryPolicy | None = None
    queue: str | None = None
    lane_request: LaneRequester | None = None
    check_input: InputCheck | None = None
    lane_route: LaneRouter | None = None
    gate_free: Callable[[Job], bool] | None = None
    is_async: bool = field(init=False, repr=False, compare=False)
    """True when the handler is a coroutine function (runs on the event loop); found
    once, not for every attempt."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "is_async", inspect.iscoroutinefunction(self.handler))


class TaskRegistry:
    """The tasks an app knows, by name."""

    def __init__(self) -> None:
        self._tasks: dict[str, Task] = {}
        self._registered: tuple[str, ...] = ()
        self.services: list[Callable[[], Coroutine[Any, Any, None]]] = []
        """Loops every worker runs beside its tasks until it stops (a batch poller)."""

    def add(self, task: Task) -> Task:
        """Register `task`; a second task under the same name is a mistake."""
        if not task.name or task.name != task.name.strip():
            raise ConfigError(f"invalid task name {task.name!r}")
        if task.name in self._tasks:
            raise ConfigError(f"task {task.name!r} is registered twice")
        self._tasks[task.name] = task
        self._registered = tuple(sorted(self._tasks))
        return task

    def get(self, name: str) -> Task | None:
        """The task named `name`, or None."""
        return self._tasks.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tasks

    def __len__(self) -> int:
        return len(self._tasks)

    def __iter__(self) -> Iterator[Task]:
        return iter(self._tasks.values())

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        return list(self._registered)

    def registered(self) -> tuple[str, ...]:
        """Every registered name, sorted (kept as tasks are added: cheap to ask often)."""
        return self._registered

    def queues(self) -> tuple[str, ...]:
        """The queues tasks name as their default, each once, in registration order."""
        return tuple(dict.fromkeys(task.queue for task in self if task.queue))

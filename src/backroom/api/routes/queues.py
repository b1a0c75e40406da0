"""`/v1/queues` and `/v1/{queues,lanes}/{name}/pause|resume`: steering every worker (admin)."""

# No `from __future__ import annotations`: FastAPI must see the route signatures'
# local `CallerDependency` alias as a real type, not as a string it cannot resolve.
from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Response

from backroom.api.auth import Authenticator
from backroom.api.models.queues import PauseDocument, QueueList
from backroom.api.responses import problem_responses, to_response
from backroom.app import App
from backroom.service import queues
from backroom.service.callers import Caller
from backroom.service.context import AppParts
from backroom.service.replies import Reply

Steer = Callable[[AppParts, Caller, str], Awaitable[Reply]]

# A lane's name holds a slash (`openai/gpt-4o-mini`): its path parameter takes it.
_STEERING: tuple[tuple[str, Steer, str], ...] = (
    ("/queues/{name}/pause", queues.pause_queue, "Pause a queue for every worker"),
    ("/queues/{name}/resume", queues.resume_queue, "Resume a paused queue"),
    ("/lanes/{name:path}/pause", queues.pause_lane, "Pause an LLM lane for every worker"),
    ("/lanes/{name:path}/resume", queues.resume_lane, "Resume a paused LLM lane"),
)


def queues_router(app: App, authenticate: Authenticator) -> APIRouter:
    """The queue listing and the pause and resume routes of queues and lanes."""
    router = APIRouter(prefix="/v1", tags=["queues and lanes"])
    CallerDependency = Annotated[Caller, Depends(authenticate)]

    @router.get(
        "/queues",
        response_model=QueueList,
        summary="The queues: jobs by state, oldest queued age, pauses (admin)",
        responses=problem_responses(401, 403),
    )
    async def list_queues(caller: CallerDependency) -> Response:
        return to_response(await queues.list_queues(app, caller))

    def declare(path: str, steer: Steer, summary: str) -> None:
        async def steering(
            caller: CallerDependency,
            name: Annotated[str, Path(description="The queue's or lane's name.")],
        ) -> Response:
            return to_response(await steer(app, caller, name))

        router.add_api_route(
            path,
            steering,
            methods=["POST"],
            response_model=PauseDocument,
            summary=f"{summary} (admin)",
            # 404: a name with a line break matches no route (a path parameter stops there).
            responses=problem_responses(401, 403, 404, 422),
            name=steer.__name__,
        )

    for path, steer, summary in _STEERING:
        declare(path, steer, summary)
    return router

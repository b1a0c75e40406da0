"""Background responses in the mock: `POST /v1/responses` with `background: true`
answers at once with a queued response, which `GET /v1/responses/{id}` shows
`in_progress` until the mock's latency has passed, then completed (as OpenAI keeps
a background response, to be retrieved by id, after the request that made it).

`created` counts the background responses made: a test that kills a worker while it
waits checks that its job's next attempt took up the same response, creating none.
"""

from __future__ import annotations

from fastapi.responses import JSONResponse

from backroom.clock import Clock
from backroom.llm.mock.errors import error_response
from backroom.llm.mock.reply import Reply
from backroom.llm.mock.responses import response_body, response_in


class BackgroundResponses:
    """The background responses one mock made, by id, each with when it is done."""

    def __init__(self, clock: Clock, latency_ms: int) -> None:
        self._clock = clock
        self._latency_ms = latency_ms
        self._made: dict[str, tuple[Reply, int]] = {}
        self.created = 0

    def create(self, reply: Reply, headers: dict[str, str]) -> JSONResponse:
        """Keep `reply` as a background response; answer with it queued."""
        body = response_in(reply, "queued")
        self._made[str(body["id"])] = (reply, self._clock.now() + self._latency_ms)
        self.created += 1
        return JSONResponse(body, headers=headers)

    def retrieve(self, response_id: str) -> JSONResponse:
        """The response as it stands: in progress until its time, then done; 404 if unknown."""
        made = self._made.get(response_id)
        if made is None:
            return error_response(404, f"No response found with id '{response_id}'.")
        reply, done_at = made
        if self._clock.now() < done_at:
            return JSONResponse(response_in(reply, "in_progress"))
        return JSONResponse(response_body(reply))

"""The queues a server accepts follow its configuration and the queues its tasks name."""

from __future__ import annotations

from typing import Any

import httpx
from api_support import ADMIN_KEY, assert_problem, bearer

from backroom import App, JobContext
from backroom.api import ApiSettings, create_api
from backroom.store.sqlite.store import SqliteStore


async def test_a_queue_a_task_names_is_accepted_without_configuring_it(tmp_path: Any) -> None:
    app = App(store=SqliteStore(str(tmp_path / "queues.db"), synchronous="OFF"))

    @app.task("render", queue="gpu")
    async def render(_ctx: JobContext, _payload: Any) -> None:
        """A task whose jobs go to the `gpu` queue."""

    async with app:
        api = create_api(app, ApiSettings(admin_key=ADMIN_KEY, queues=("interactive",)))
        transport = httpx.ASGITransport(api)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            named = await http.post(
                "/v1/jobs",
                json={"task": "render", "input": 1, "queue": "gpu"},
                headers=bearer(ADMIN_KEY),
            )
            configured = await http.post(
                "/v1/jobs",
                json={"task": "render", "input": 2, "queue": "interactive"},
                headers=bearer(ADMIN_KEY),
            )
            unknown = await http.post(
                "/v1/jobs",
                json={"task": "render", "input": 3, "queue": "batch"},
                headers=bearer(ADMIN_KEY),
            )

    assert named.status_code == 202, named.text
    assert named.json()["queue"] == "gpu"
    assert configured.status_code == 202
    problem = assert_problem(unknown, 422, "validation-error")
    assert "use gpu, interactive" in problem["detail"]

"""GET /v1/usage grouped by provider, model, prompt version, day, tenant and metadata
keys, as JSON or CSV; a call without a price has an unknown (null) cost."""

from __future__ import annotations

import dataclasses
from typing import Any

import httpx
from api_support import Keys, assert_problem, bearer

from backroom import App
from backroom.core.usage import AttemptUsage


def team_usage(job_id: int, provider: str, model: str, team: str | None, cost: int | None) -> Any:
    metadata = {} if team is None else {"team": team}
    return AttemptUsage(
        job_id, 1, "acme", model, "v2", 10, 0, 5, cost, 0, provider, metadata, lease_token=1
    )


async def seed_teams(app: App) -> None:
    """acme's calls to two providers of one model name, for two teams and none."""
    now = app.clock.now()
    for usage_row in [
        team_usage(1, "openai", "gpt-4o", "search", 1_000_000),
        team_usage(2, "azure", "gpt-4o", "search", 2_000_000),
        team_usage(3, "openai", "gpt-4o", "ads", 4_000_000),
        team_usage(4, "openai", "gpt-4o", None, None),
    ]:
        await app.store.record_usage(dataclasses.replace(usage_row, at=now))


async def test_usage_groups_by_provider_model_and_a_metadata_key(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    await seed_teams(app)

    response = await http.get(
        "/v1/usage",
        params={"group_by": "provider,model,metadata.team"},
        headers=bearer(keys.acme),
    )

    assert response.status_code == 200
    report = response.json()
    assert report["group_by"] == ["provider", "model", "metadata.team"]
    # One model name on two providers stays two groups; a job without the key is null.
    assert [
        (group["provider"], group["model"], group["metadata.team"], group["cost_usd"])
        for group in report["groups"]
    ] == [
        ("azure", "gpt-4o", "search", "0.000002"),
        ("openai", "gpt-4o", None, None),
        ("openai", "gpt-4o", "ads", "0.000004"),
        ("openai", "gpt-4o", "search", "0.000001"),
    ]
    assert "tenant" not in report["groups"][0]
    # A call without a price makes the cost unknown (null), never "0".
    assert report["total"]["calls"] == 4
    assert report["total"]["cost_usd"] is None
    by_version = await http.get(
        "/v1/usage", params={"group_by": "prompt_version"}, headers=bearer(keys.acme)
    )
    assert by_version.json()["groups"][0]["prompt_version"] == "v2"


async def test_usage_as_csv_by_query_or_accept_header(
    http: httpx.AsyncClient, keys: Keys, app: App
) -> None:
    await seed_teams(app)
    asked = {"group_by": "metadata.team,provider"}

    by_query = await http.get(
        "/v1/usage", params={**asked, "format": "csv"}, headers=bearer(keys.acme)
    )
    by_accept = await http.get(
        "/v1/usage", params=asked, headers={**bearer(keys.acme), "Accept": "text/csv"}
    )

    for response in (by_query, by_accept):
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/csv; charset=utf-8"
        assert response.text.splitlines() == [
            "metadata.team,provider,calls,input_tokens,cached_tokens,output_tokens,cost_usd",
            ",openai,1,10,0,5,",
            "ads,openai,1,10,0,5,0.000004",
            "search,azure,1,10,0,5,0.000002",
            "search,openai,1,10,0,5,0.000001",
        ]
    refused = await http.get(
        "/v1/usage", params={"group_by": "week", "format": "csv"}, headers=bearer(keys.acme)
    )
    assert_problem(refused, 422, "validation-error")

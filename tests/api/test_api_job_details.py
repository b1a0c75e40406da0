"""A single job's read shows its input, idempotency key and a pending cancel; the
OpenAPI document carries examples of a submission and of a job."""

from __future__ import annotations

import httpx
from api_support import Keys, bearer, submit
from fastapi import FastAPI

from backroom.api.models.jobs import JobDocument, SubmitRequest


async def test_a_job_read_shows_its_input_key_and_pending_cancel(
    http: httpx.AsyncClient, keys: Keys
) -> None:
    created = await submit(http, keys.acme, "echo", {"doc": 7}, idempotency_key="report-7")
    job_id = created.json()["id"]

    read = (await http.get(f"/v1/jobs/{job_id}", headers=bearer(keys.acme))).json()
    listed = (await http.get("/v1/jobs", headers=bearer(keys.acme))).json()["jobs"][0]

    assert (read["input"], read["idempotency_key"], read["cancel_requested"]) == (
        {"doc": 7},
        "report-7",
        False,
    )
    assert "input" not in listed  # listings stay small


def test_the_openapi_document_has_examples_that_validate(api: FastAPI) -> None:
    schemas = api.openapi()["components"]["schemas"]

    (submission,) = schemas["SubmitRequest"]["examples"]
    (job,) = schemas["JobDocument"]["examples"]
    SubmitRequest.model_validate(submission)
    JobDocument.model_validate(job)

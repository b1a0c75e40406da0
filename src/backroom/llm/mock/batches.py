"""The mock's OpenAI Files and Batches endpoints, on the state of `mock.batch_jobs`.

POST /v1/files                  upload (multipart: file, purpose=batch)
GET  /v1/files/{id}/content     a file's bytes (input, output or error file)
POST /v1/batches                create a batch from an uploaded file, with metadata
GET  /v1/batches/{id}           a batch as it stands (it completes by the clock)
GET  /v1/batches                list, newest first (`limit`, `after`)
POST /v1/batches/{id}/cancel    cancel it
"""

from __future__ import annotations

from email.parser import BytesParser
from email.policy import HTTP

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from backroom.llm.mock.batch_jobs import MockBatchApi
from backroom.llm.mock.errors import error_response

_MAX_LIST = 100


def _uploaded_file(content_type: str, body: bytes) -> bytes | None:
    """The `file` part of a multipart/form-data body, or None."""
    head = f"Content-Type: {content_type}\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + body)
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            return payload if isinstance(payload, bytes) else None
    return None


def _not_found(kind: str, name: str) -> JSONResponse:
    return error_response(404, f"No {kind} found with id '{name}'.")


class _BatchRoutes:
    """The endpoints, as methods over one `MockBatchApi`."""

    def __init__(self, api: MockBatchApi) -> None:
        self.api = api

    async def upload_file(self, request: Request) -> Response:
        """Store an uploaded file."""
        content = _uploaded_file(request.headers.get("content-type", ""), await request.body())
        if content is None:
            return error_response(400, "Invalid request: no file part in the upload")
        file_id = self.api.add_file(content)
        created = self.api.clock.now() // 1000
        return JSONResponse(
            {"id": file_id, "object": "file", "bytes": len(content), "created_at": created}
            | {"filename": "batch.jsonl", "purpose": "batch", "status": "processed"}
        )

    async def file_content(self, file_id: str) -> Response:
        """A file's bytes."""
        if file_id not in self.api.files:
            return _not_found("file", file_id)
        return Response(self.api.files[file_id], media_type="application/octet-stream")

    async def create_batch(self, request: Request) -> Response:
        """A new batch; answered `create_delay_ms` later, the batch already made."""
        body = await request.json()
        if body.get("input_file_id") not in self.api.files:
            return error_response(400, "Invalid request: unknown input_file_id")
        metadata = body.get("metadata") or {}
        batch = self.api.create(body["input_file_id"], body["endpoint"], metadata)
        if self.api.config.create_delay_ms:
            await self.api.clock.sleep(self.api.config.create_delay_ms)
        return JSONResponse(batch.body())

    async def retrieve_batch(self, batch_id: str) -> Response:
        """A batch as it stands."""
        if batch_id not in self.api.batches:
            return _not_found("batch", batch_id)
        return JSONResponse(self.api.refresh(self.api.batches[batch_id]).body())

    async def list_batches(self, limit: int = 20, after: str | None = None) -> Response:
        """Batches newest first, a page at a time."""
        ordered = list(reversed(self.api.batches.values()))
        if after is not None:
            ids = [batch.id for batch in ordered]
            ordered = ordered[ids.index(after) + 1 :] if after in ids else []
        page = [self.api.refresh(batch).body() for batch in ordered[: min(limit, _MAX_LIST)]]
        first, last = (page[0]["id"], page[-1]["id"]) if page else (None, None)
        more = len(ordered) > len(page)
        return JSONResponse(
            {"object": "list", "data": page, "first_id": first, "last_id": last, "has_more": more}
        )

    async def cancel_batch(self, batch_id: str) -> Response:
        """Cancel a batch."""
        if batch_id not in self.api.batches:
            return _not_found("batch", batch_id)
        return JSONResponse(self.api.cancel(self.api.batches[batch_id]).body())


def install_batch_routes(app: FastAPI, api: MockBatchApi) -> None:
    """Add the Files and Batches endpoints to the mock `app`."""
    routes = _BatchRoutes(api)
    app.post("/v1/files")(routes.upload_file)
    app.get("/v1/files/{file_id}/content")(routes.file_content)
    app.post("/v1/batches")(routes.create_batch)
    app.get("/v1/batches/{batch_id}")(routes.retrieve_batch)
    app.get("/v1/batches")(routes.list_batches)
    app.post("/v1/batches/{batch_id}/cancel")(routes.cancel_batch)

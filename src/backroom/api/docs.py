"""`/docs`: Swagger UI from assets served here, so the docs work offline.

FastAPI's default page loads Swagger UI from a CDN and is blank without the internet;
these assets come from the `swagger-ui-bundle-v2` package (Swagger UI 5, which reads
the OpenAPI 3.1 document FastAPI writes).
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from starlette.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path  # type: ignore[import-untyped]

ASSETS = "/docs/assets"


def install_docs(api: FastAPI) -> None:
    """Serve Swagger UI at `/docs` with its assets under `/docs/assets` (no auth)."""
    api.mount(ASSETS, StaticFiles(directory=str(swagger_ui_path)), name="docs-assets")

    @api.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=api.openapi_url or "/openapi.json",
            title=f"{api.title}: API docs",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon-32x32.png",
        )

"""`/docs` loads Swagger UI from the server itself, so it works without the internet."""

from __future__ import annotations

import re

import httpx


async def test_the_docs_page_and_its_assets_come_from_the_server(http: httpx.AsyncClient) -> None:
    page = await http.get("/docs")

    assert page.status_code == 200
    sources = re.findall(r"""(?:src|href)=['"]([^'"]+)['"]""", page.text)
    assert sources
    assert all(source.startswith("/") for source in sources), sources
    assert "cdn" not in page.text
    script = await http.get("/docs/assets/swagger-ui-bundle.js")
    css = await http.get("/docs/assets/swagger-ui.css")
    assert (script.status_code, css.status_code) == (200, 200)
    assert "SwaggerUIBundle" in script.text

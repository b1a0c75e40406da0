"""The dashboard's templates (Jinja2, autoescaped) and the filters they use."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.responses import HTMLResponse

from backroom.core.workers import LOST_AFTER_BEATS
from backroom.dashboard.charts import bar_chart, spend_chart
from backroom.service.documents import usd_text

# Each state has a symbol as well as a colour, for readers who do not tell colours apart.
STATE_SYMBOLS = {
    "queued": "○",
    "running": "◐",
    "succeeded": "✓",
    "failed": "✕",
    "cancelled": "⊘",
    # How an attempt ended, besides the states above.
    "retry": "↻",
    "lease_expired": "⊗",
    "interrupted": "⊖",
    "deferred": "‖",
    # A worker's state in the registry (`backroom.core.workers`).
    "alive": "●",
    "lost": "⚠",
    "stopped": "■",
    "unregistered": "?",
}

# No inline script or style anywhere: every asset comes from this server.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def when(ms: int | None) -> str:
    """An epoch-millisecond time as `YYYY-MM-DD HH:MM:SS` UTC ("" for None)."""
    if ms is None:
        return ""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


def span(ms: int | None) -> str:
    """A duration in the largest unit that keeps it readable: `850 ms`, `12 s`, `3 min`."""
    if ms is None:
        return ""
    if ms < 1_000:
        return f"{ms} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 86_400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86_400:.1f} d"


def percent(share: float) -> str:
    """A share as a percentage with one decimal."""
    return f"{share * 100:.1f}%"


def templates() -> Environment:
    """The dashboard's template environment."""
    environment = Environment(
        loader=PackageLoader("backroom.dashboard", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters |= {"when": when, "span": span, "percent": percent, "usd": usd_text}
    environment.globals |= {
        "STATE_SYMBOLS": STATE_SYMBOLS,
        "LOST_AFTER_BEATS": LOST_AFTER_BEATS,
        "bar_chart": bar_chart,
        "spend_chart": spend_chart,
    }
    return environment


def html(environment: Environment, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    """Template `name` rendered with `context`, with the dashboard's security headers."""
    body = environment.get_template(name).render(**context)
    return HTMLResponse(body, status_code=status, headers=SECURITY_HEADERS)

"""Installing OpenTelemetry's tracer provider as the standard `OTEL_*` variables say.

`backroom worker` and `backroom serve` call `configure_from_environment` at start. It
does nothing unless the SDK is installed (`backroom[otel]`) and the environment asks
for traces: `OTEL_TRACES_EXPORTER` (`otlp` or `console`), or an OTLP endpoint
(`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), which the
exporter reads itself with the other `OTEL_EXPORTER_OTLP_*` settings. `OTEL_SDK_DISABLED`
turns it off; `OTEL_SERVICE_NAME` names the service (`backroom` by default).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

log = logging.getLogger("backroom.telemetry")

_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def wanted_exporter(environ: Mapping[str, str]) -> str | None:
    """The exporter the environment asks for (`otlp`, `console`), or None for none.

    >>> wanted_exporter({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    'otlp'
    >>> wanted_exporter({"OTEL_TRACES_EXPORTER": "none"}) is None
    True
    """
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    named = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if named:
        return None if named == "none" else named.split(",")[0].strip()
    return "otlp" if any(environ.get(name) for name in _ENDPOINTS) else None


def _exporter(name: str) -> SpanExporter | None:
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter  # noqa: PLC0415

        return ConsoleSpanExporter()
    if name == "otlp":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # noqa: PLC0415
                OTLPSpanExporter,
            )
        except ImportError:
            log.warning("traces not exported: the OTLP exporter is not installed (backroom[otel])")
            return None
        return OTLPSpanExporter()
    log.warning("traces not exported: unknown OTEL_TRACES_EXPORTER %r", name)
    return None


def configure_from_environment(environ: Mapping[str, str]) -> str | None:
    """Install a tracer provider exporting as `environ` asks; the exporter's name, or
    None when traces stay off (not asked for, or the SDK is not installed)."""
    name = wanted_exporter(environ)
    if name is None:
        return None
    try:
        from opentelemetry import trace  # noqa: PLC0415
        from opentelemetry.sdk.resources import Resource  # noqa: PLC0415
        from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
        from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: PLC0415
    except ImportError:
        log.warning("traces not exported: the OpenTelemetry SDK is not installed (backroom[otel])")
        return None
    exporter = _exporter(name)
    if exporter is None:
        return None
    # Resource.create reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES itself.
    default = {} if environ.get("OTEL_SERVICE_NAME") else {"service.name": "backroom"}
    provider = TracerProvider(resource=Resource.create(default))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    log.info("exporting traces (%s)", name)
    return name

"""What a process tells about its work: Prometheus counters, log lines and traces.

`Telemetry` is one per `App` (no globals): the worker tells it when an attempt starts
and ends, the LLM call sink when a provider call ends, and it turns each into its
counters (`process_metrics`), one structured log line (`job_log`) and spans
(`tracing`, when the OpenTelemetry SDK is installed). The service logs the changes
callers make (submit, cancel, redrive, pauses) through `job_log` itself.
"""

from __future__ import annotations

from backroom.telemetry.observer import LlmCall, Telemetry

__all__ = ["LlmCall", "Telemetry"]

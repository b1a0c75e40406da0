"""The app the dashboard's browser test serves: a task that fails until told to pass,
reporting progress on the way, and a quick one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backroom import App, JobContext, Permanent

app = App()


@app.task("report.build")
async def build_report(ctx: JobContext, payload: dict[str, Any]) -> dict[str, Any]:
    """Fail for good while the file `payload["pass_when"]` is missing; once it exists,
    report progress with a growing partial output, pausing between steps so a person
    (or a browser test) sees it grow, and succeed."""
    if not Path(payload["pass_when"]).exists():
        raise Permanent(f"the upstream file {Path(payload['pass_when']).name} is missing")
    lines: list[str] = []
    for step in range(1, 4):
        lines.append(f"section {step} written")
        await ctx.progress(step / 4, partial=list(lines))
        await ctx.clock.sleep(payload.get("pause_ms", 400))
    return {"sections": len(lines)}


@app.task("email.send")
async def send_email(ctx: JobContext, payload: Any) -> str:
    """Succeed at once."""
    return "sent"

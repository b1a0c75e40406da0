"""Server-rendered SVG bar charts: one bar per time slot, failures stacked on successes.

Only geometry is computed here; the template draws it. Failures are drawn hatched as
well as in their own colour, so they stand out for readers who do not tell the colours
apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from backroom.service.overview import Series

WIDTH = 240
HEIGHT = 48
GAP = 1


@dataclass(frozen=True, slots=True)
class Bar:
    """One slot's bar: x and width, then the succeeded (lower) and failed (upper) parts
    as y and height; `label` is its tooltip."""

    x: float
    width: float
    ok_y: float
    ok_height: float
    failed_y: float
    failed_height: float
    label: str


@dataclass(frozen=True, slots=True)
class Chart:
    """A chart's bars in a WIDTH x HEIGHT box, and the largest slot's count."""

    bars: tuple[Bar, ...]
    peak: int
    width: int = WIDTH
    height: int = HEIGHT


def _minutes(ms: int) -> str:
    minutes = ms // 60_000
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h"


def bar_chart(series: Series, now: int) -> Chart:
    """The bars of `series`, scaled so its busiest slot fills the height."""
    peak = max((slot.finished for slot in series.slots), default=0)
    count = max(len(series.slots), 1)
    step = WIDTH / count
    bars = []
    for index, slot in enumerate(series.slots):
        scale = HEIGHT / peak if peak else 0.0
        ok = (slot.succeeded + slot.cancelled) * scale
        failed = slot.failed * scale
        ago = _minutes(max(0, now - slot.start - series.slot_ms))
        label = (
            f"{slot.succeeded} succeeded, {slot.failed} failed, {slot.cancelled} cancelled "
            f"({_minutes(series.slot_ms)} ending {ago} ago)"
        )
        bars.append(
            Bar(
                x=round(index * step, 2),
                width=round(max(step - GAP, 1), 2),
                ok_y=round(HEIGHT - ok, 2),
                ok_height=round(ok, 2),
                failed_y=round(HEIGHT - ok - failed, 2),
                failed_height=round(failed, 2),
                label=label,
            )
        )
    return Chart(tuple(bars), peak)

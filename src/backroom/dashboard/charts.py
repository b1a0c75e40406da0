"""Server-rendered SVG bar charts: one bar per time slot, failures stacked on successes.

Only geometry is computed here; the template draws it. Failures are drawn hatched as
well as in their own colour, so they stand out for readers who do not tell the colours
apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from backroom.service.documents import usd_text
from backroom.service.overview import Series

WIDTH = 240
HEIGHT = 48
GAP = 1


@dataclass(frozen=True, slots=True)
class Bar:
    """One slot's bar: x and width, then the lower (good) and upper (failed) parts as y
    and height; `label` is its tooltip."""

    x: float
    width: float
    ok_y: float
    ok_height: float
    failed_y: float
    failed_height: float
    label: str


@dataclass(frozen=True, slots=True)
class Chart:
    """A chart's bars in a WIDTH x HEIGHT box, and the largest bar's value."""

    bars: tuple[Bar, ...]
    peak: int
    width: int = WIDTH
    height: int = HEIGHT


def _minutes(ms: int) -> str:
    minutes = ms // 60_000
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h"


def stacked_bars(values: Sequence[tuple[int, int, str]]) -> Chart:
    """Bars of (good, failed, label) values, scaled so the tallest fills the height."""
    peak = max((good + failed for good, failed, _ in values), default=0)
    step = WIDTH / max(len(values), 1)
    scale = HEIGHT / peak if peak else 0.0
    bars = []
    for index, (good, failed, label) in enumerate(values):
        good_height, failed_height = good * scale, failed * scale
        bars.append(
            Bar(
                x=round(index * step, 2),
                width=round(max(step - GAP, 1), 2),
                ok_y=round(HEIGHT - good_height, 2),
                ok_height=round(good_height, 2),
                failed_y=round(HEIGHT - good_height - failed_height, 2),
                failed_height=round(failed_height, 2),
                label=label,
            )
        )
    return Chart(tuple(bars), peak)


def bar_chart(series: Series, now: int) -> Chart:
    """The bars of a queue's finishes: succeeded and cancelled below, failed above."""
    values = []
    for slot in series.slots:
        ago = _minutes(max(0, now - slot.start - series.slot_ms))
        label = (
            f"{slot.succeeded} succeeded, {slot.failed} failed, {slot.cancelled} cancelled "
            f"({_minutes(series.slot_ms)} ending {ago} ago)"
        )
        values.append((slot.succeeded + slot.cancelled, slot.failed, label))
    return stacked_bars(values)


def spend_chart(daily: Sequence[tuple[str, int]]) -> Chart:
    """The bars of a tenant's spend per day (pico-dollars)."""
    return stacked_bars([(amount, 0, f"{day}: ${usd_text(amount)}") for day, amount in daily])

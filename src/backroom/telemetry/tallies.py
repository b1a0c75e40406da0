"""Counters and histograms kept as plain numbers, made Prometheus metrics when read.

A worker process counts every attempt, yet most never serve what they counted:
`prometheus_client`'s package imports its exposition module, and with it http.server,
email and urllib.request, ~30-40 ms of CPU at every process's start. These tallies
need nothing of it until a scrape (`TallyCollector.collect`), and read out exactly as
the library's own `Counter` and `Histogram` do: the same samples in the same order
(`_total` and `_created`; cumulative `_bucket`s, `_count`, `_sum` and `_created`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from backroom.clock import SystemClock

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric


def _wall_seconds() -> float:
    """Now, in unix seconds (a series' `_created`)."""
    return SystemClock().now() / 1000


class CounterSeries:
    """One counter series: its value, and when it was first counted (unix seconds)."""

    __slots__ = ("created", "value")

    def __init__(self) -> None:
        self.value = 0.0
        self.created = _wall_seconds()

    def inc(self, amount: float = 1) -> None:
        """Add `amount` (not negative, as for a Prometheus counter)."""
        if amount < 0:
            raise ValueError("Counters can only be incremented by non-negative amounts.")
        self.value += amount


class HistogramSeries:
    """One histogram series: the count in each bucket (the last: above every bound),
    the sum of what was observed, and when it was first counted."""

    __slots__ = ("bounds", "counts", "created", "total")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0.0
        self.created = _wall_seconds()

    def observe(self, amount: float) -> None:
        """Count `amount` in the first bucket whose bound is at least it."""
        self.total += amount
        self.counts[bisect_left(self.bounds, amount)] += 1


class Tally:
    """A counter (no `buckets`) or histogram family: its series by label values."""

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: Sequence[str],
        buckets: Sequence[float] | None = None,
    ) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self.bounds = None if buckets is None else tuple(float(bound) for bound in buckets)
        self.series: dict[tuple[str, ...], CounterSeries | HistogramSeries] = {}

    def labels(self, *values: str) -> CounterSeries | HistogramSeries:
        """The series of these label values, made on first use."""
        key = tuple(str(value) for value in values)
        series = self.series.get(key)
        if series is None:
            made = CounterSeries() if self.bounds is None else HistogramSeries(self.bounds)
            series = self.series[key] = made
        return series

    def counter(self, *values: str) -> CounterSeries:
        """`labels` of a counter family."""
        series = self.labels(*values)
        assert isinstance(series, CounterSeries)
        return series

    def histogram(self, *values: str) -> HistogramSeries:
        """`labels` of a histogram family."""
        series = self.labels(*values)
        assert isinstance(series, HistogramSeries)
        return series


class TallyCollector:
    """A Prometheus collector of tallies (register it on a `CollectorRegistry`)."""

    def __init__(self, tallies: Iterable[Tally]) -> None:
        self._tallies = tuple(tallies)

    def collect(self) -> Iterable[Metric]:
        """Each tally as the metric family the library's own class would collect."""
        from prometheus_client import metrics  # noqa: PLC0415
        from prometheus_client.metrics_core import Metric  # noqa: PLC0415
        from prometheus_client.utils import floatToGoString  # noqa: PLC0415

        created = bool(getattr(metrics, "_use_created", True))
        found: list[Metric] = []
        for tally in self._tallies:
            metric = Metric(
                tally.name, tally.documentation, "counter" if tally.bounds is None else "histogram"
            )
            for values, series in list(tally.series.items()):
                labels = dict(zip(tally.labelnames, values, strict=True))
                if isinstance(series, CounterSeries):
                    metric.add_sample(f"{tally.name}_total", labels, series.value)
                else:
                    cumulative = 0.0
                    for bound, count in zip(
                        (*series.bounds, float("inf")), series.counts, strict=True
                    ):
                        cumulative += count
                        le = {**labels, "le": floatToGoString(bound)}  # type: ignore[no-untyped-call]
                        metric.add_sample(f"{tally.name}_bucket", le, cumulative)
                    metric.add_sample(f"{tally.name}_count", labels, cumulative)
                    metric.add_sample(f"{tally.name}_sum", labels, series.total)
                if created:
                    metric.add_sample(f"{tally.name}_created", labels, series.created)
            found.append(metric)
        return found

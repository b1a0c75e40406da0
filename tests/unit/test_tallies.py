"""Tallies read out exactly as prometheus_client's own Counter and Histogram would."""

from __future__ import annotations

import re

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from backroom.telemetry.tallies import Tally, TallyCollector

BUCKETS = (0.01, 0.5, 1, 30)
OBSERVED = (0.0, 0.01, 0.2, 0.5, 0.75, 1, 29.9, 30, 31, 1e6)


def _without_created(text: bytes) -> str:
    return re.sub(r"(_created\{[^}]*\}) \S+", r"\1 T", text.decode())


def test_a_counter_and_a_histogram_read_as_the_librarys() -> None:
    theirs = CollectorRegistry()
    counter = Counter("c", "Counted.", ["process", "kind"], registry=theirs)
    histogram = Histogram("h", "Timed.", ["process"], buckets=BUCKETS, registry=theirs)
    counted = Tally("c", "Counted.", ["process", "kind"])
    timed = Tally("h", "Timed.", ["process"], buckets=BUCKETS)
    ours = CollectorRegistry()
    ours.register(TallyCollector([counted, timed]))
    for kind, amount in (("a", 1), ("b", 2.5), ("a", 0)):
        counter.labels("p", kind).inc(amount)
        counted.counter("p", kind).inc(amount)
    for process in ("p", "q"):
        for value in OBSERVED:
            histogram.labels(process).observe(value)
            timed.histogram(process).observe(value)
    assert _without_created(generate_latest(ours)) == _without_created(generate_latest(theirs))


def test_an_empty_family_still_says_what_it_is() -> None:
    theirs = CollectorRegistry()
    Counter("c", "Counted.", ["process"], registry=theirs)
    ours = CollectorRegistry()
    ours.register(TallyCollector([Tally("c", "Counted.", ["process"])]))
    assert generate_latest(ours) == generate_latest(theirs)

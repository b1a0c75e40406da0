"""A job's lanes in order, its own and its fallbacks, and when it moves to the next.

A job whose task gives it alternatives (an `llm.respond` job's `fallbacks`) runs in
the first lane of its route at first; it moves to the next (the store records the
move on the job and its attempt) when its lane will not have room for longer than
`after_pause_ms`, or when `after_attempts` of its attempts in that lane failed. The
job's `max_attempts` still bounds its attempts over every lane together.
"""

from __future__ import annotations

from dataclasses import dataclass

from backroom.core.lanes import LaneRequest


@dataclass(frozen=True, slots=True)
class LaneRoute:
    """The lanes a job may run in, in order (at least one), and when it moves on."""

    lanes: tuple[LaneRequest, ...]
    after_pause_ms: int
    after_attempts: int

    def __post_init__(self) -> None:
        if not self.lanes or self.after_pause_ms < 0 or self.after_attempts < 1:
            raise ValueError(f"a route needs a lane and positive thresholds: {self}")

    def position(self, lane: str | None) -> int:
        """Where `lane` (the job's current one) is in the route; 0 if it is not in it."""
        for index, request in enumerate(self.lanes):
            if request.lane == lane:
                return index
        return 0

    def current(self, lane: str | None) -> LaneRequest:
        """What a call asks of the job's current lane `lane`."""
        return self.lanes[self.position(lane)]

    def next_after(self, lane: str | None) -> LaneRequest | None:
        """The lane after `lane`, or None when it is the last.

        >>> from backroom.core.lanes import LaneLimits
        >>> a, b = LaneRequest("p/a", LaneLimits(), 1), LaneRequest("p/b", LaneLimits(), 1)
        >>> route = LaneRoute((a, b), after_pause_ms=1_000, after_attempts=2)
        >>> route.next_after("p/a") == b, route.next_after("p/b")
        (True, None)
        """
        following = self.position(lane) + 1
        return self.lanes[following] if following < len(self.lanes) else None

    def waits_too_long(self, ready_at: int | None, now: int) -> bool:
        """Whether a lane ready only at `ready_at` (None: unknown, a full lane) is worth
        leaving: it will not have room within `after_pause_ms`."""
        return ready_at is not None and ready_at - now > self.after_pause_ms

"""The jobs page's filter, read from and written back to its query string."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlencode

from starlette.datastructures import QueryParams

from backroom.core.job import JobState
from backroom.service.browse import JobFilter

PAGE_SIZE = 50
_FIELDS = ("task", "queue", "tenant", "from", "until", "q")


def _time(text: str | None) -> int | None:
    """A `datetime-local` value (`2026-12-01T18:30`, read as UTC) in epoch ms; None if
    absent or not a time."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def _cursor(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() and len(text) < 19 else None


@dataclass(frozen=True, slots=True)
class JobsQuery:
    """What the jobs page was asked for: the filter's fields as typed, and the states."""

    states: tuple[JobState, ...]
    fields: dict[str, str]
    cursor: int | None

    @classmethod
    def parse(cls, params: QueryParams) -> JobsQuery:
        """The query a page's URL (or a batch form's `filter` field) holds."""
        states = tuple(JobState(s) for s in params.getlist("state") if s in set(JobState))
        fields = {name: params.get(name, "").strip() for name in _FIELDS}
        return cls(states, {k: v for k, v in fields.items() if v}, _cursor(params.get("cursor")))

    def job_filter(self, tenant: str | None, limit: int = PAGE_SIZE) -> JobFilter:
        """The store filter; `tenant` is the one the viewer may and chose to see."""
        return JobFilter(
            tenant,
            self.states,
            self.fields.get("queue"),
            self.fields.get("task"),
            self.cursor,
            limit,
            _time(self.fields.get("from")),
            _time(self.fields.get("until")),
            self.fields.get("q"),
        )

    def query_string(self, cursor: int | None = None) -> str:
        """This filter as a query string (at `cursor`: another page of it)."""
        pairs = [("state", str(state)) for state in self.states] + list(self.fields.items())
        if cursor is not None:
            pairs.append(("cursor", str(cursor)))
        return urlencode(pairs)

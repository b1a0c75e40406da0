"""Bulk submissions without an object per job: `NewJobs` in, `SubmittedJobs` out.

`NewJobs` holds many new jobs of one task and one set of options as columns (the
inputs, and each job's key, fingerprint and lane where they differ); it is a sequence
of `NewJob`, each built only when asked for, so a store that does not know it still
stores it right, and a store that does reads the columns. `SubmittedJobs` is what a
bulk submission returns: each job's id and whether this call created it, with the
`SubmitResult` (and its `Job`) built only when a caller reads it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from itertools import repeat
from typing import overload

from backroom.core.job import JSON, Job, NewJob, SubmitResult
from backroom.core.transitions import new_job


class NewJobs(Sequence[NewJob]):
    """New jobs that share everything of `template` but their input, key, fingerprint
    and lane: `inputs[n]`, `keys[n]`, `fingerprints[n]` and `lanes[n]` (None: the
    template's for every job). `App.new_jobs` builds one checked."""

    __slots__ = ("fingerprints", "inputs", "keys", "lanes", "template")

    def __init__(
        self,
        template: NewJob,
        inputs: Sequence[JSON],
        keys: Sequence[str | None] | None = None,
        fingerprints: Sequence[str | None] | None = None,
        lanes: Sequence[str | None] | None = None,
    ) -> None:
        for column in (keys, fingerprints, lanes):
            if column is not None and len(column) != len(inputs):
                raise ValueError("every column of NewJobs needs one value per input")
        self.template = template
        self.inputs = inputs
        self.keys = keys
        self.fingerprints = fingerprints
        self.lanes = lanes

    def __len__(self) -> int:
        return len(self.inputs)

    @overload
    def __getitem__(self, index: int) -> NewJob: ...

    @overload
    def __getitem__(self, index: slice) -> list[NewJob]: ...

    def __getitem__(self, index: int | slice) -> NewJob | list[NewJob]:
        if isinstance(index, slice):
            return [self[n] for n in range(*index.indices(len(self)))]
        input = self.inputs[index]
        template = self.template
        return dataclasses.replace(
            template,
            input=input,
            idempotency_key=template.idempotency_key if self.keys is None else self.keys[index],
            fingerprint=(
                template.fingerprint if self.fingerprints is None else self.fingerprints[index]
            ),
            lane=template.lane if self.lanes is None else self.lanes[index],
        )


def has_keys(jobs: Sequence[NewJob]) -> bool:
    """Whether any of `jobs` has an idempotency key (without building a `NewJobs`' jobs)."""
    if isinstance(jobs, NewJobs):
        if jobs.keys is None:
            return jobs.template.idempotency_key is not None
        return any(key is not None for key in jobs.keys)
    return any(new.idempotency_key is not None for new in jobs)


def has_caps(jobs: Sequence[NewJob]) -> bool:
    """Whether any of `jobs` caps its tenant's active jobs (`NewJob.max_active`)."""
    if isinstance(jobs, NewJobs):
        return jobs.template.max_active is not None
    return any(new.max_active is not None for new in jobs)


def keys_of(jobs: Sequence[NewJob]) -> Iterable[tuple[str, str | None]]:
    """Each job's tenant and idempotency key, in order (a `NewJobs`' from its columns)."""
    if isinstance(jobs, NewJobs):
        tenant = jobs.template.tenant
        keys = jobs.keys or repeat(jobs.template.idempotency_key, len(jobs))
        return [(tenant, key) for key in keys]
    return [(new.tenant, new.idempotency_key) for new in jobs]


class SubmittedJobs(Sequence[SubmitResult]):
    """Each submission's result, in order: `ids[n]` is its job's id and `created[n]`
    whether this call created it (False: its key named a job stored already, or one
    earlier in the batch). `results[n]` is the `SubmitResult`, its `Job` built then.

    A created job's `Job` is what its `NewJob` (`jobs[n]`, or `jobs[sources[n]]`)
    becomes when stored at `now`; `stored[n]` is a job read from the store instead.
    """

    __slots__ = ("_jobs", "_now", "_sources", "_stored", "created", "ids")

    def __init__(
        self,
        jobs: Sequence[NewJob],
        now: int,
        ids: Sequence[int],
        created: Sequence[bool] | None = None,
        *,
        sources: Sequence[int] | None = None,
        stored: dict[int, Job] | None = None,
    ) -> None:
        self.ids = ids
        self.created: Sequence[bool] = [True] * len(ids) if created is None else created
        self._jobs = jobs
        self._now = now
        self._sources = sources
        self._stored = stored or {}

    @classmethod
    def of(cls, results: Sequence[SubmitResult]) -> SubmittedJobs:
        """The results built already, as `SubmittedJobs`."""
        return cls(
            (),
            0,
            [result.job.id for result in results],
            [result.created for result in results],
            stored={n: result.job for n, result in enumerate(results)},
        )

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> SubmitResult: ...

    @overload
    def __getitem__(self, index: slice) -> list[SubmitResult]: ...

    def __getitem__(self, index: int | slice) -> SubmitResult | list[SubmitResult]:
        if isinstance(index, slice):
            return [self[n] for n in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self.ids)
        job = self._stored.get(index)
        if job is None:
            source = index if self._sources is None else self._sources[index]
            job = new_job(self.ids[index], self._jobs[source], self._now)
        return SubmitResult(job, self.created[index])

    def __iter__(self) -> Iterator[SubmitResult]:
        for n in range(len(self.ids)):
            yield self[n]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SubmittedJobs(ids={list(self.ids)!r}, created={list(self.created)!r})"

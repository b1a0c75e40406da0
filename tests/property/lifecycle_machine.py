"""A hypothesis state machine over the job lifecycle.

Random sequences of submit / claim / heartbeat / finish / expire / cancel / redrive run
against the reference store (the pure core), with current, stale, superseded and forged
lease tokens; after every step the invariants below must hold. `perform` is the one
place an operation is carried out, so a subclass can also run each one on a real store
and compare the two.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
)
from reference_store import ReferenceStore

from backroom.core import transitions
from backroom.core.errors import IdempotencyConflict
from backroom.core.idempotency import fingerprint
from backroom.core.job import ErrorInfo, Job, JobState, Lease, NewJob
from backroom.core.outcome import (
    Cancelled,
    Deferred,
    Failed,
    Outcome,
    Released,
    RetryAt,
    Succeeded,
)
from backroom.store.protocol import RedriveFilter

START = 1_700_000_000_000
TASK = "summarise"
BOOM = ErrorInfo("RuntimeError", "boom")
LEASE_LENGTHS = (1_000, 10_000)

Submission = tuple[str, dict[str, int], str | None, str, int, int, int]
"""Tenant, payload, idempotency key, queue, priority, max attempts, delay."""

# Three lanes: `interactive` is served first, `batch` last, others by name between.
QUEUES = ("interactive", "email", "batch")

submissions: st.SearchStrategy[Submission] = st.tuples(
    st.sampled_from(["acme", "globex"]),
    st.sampled_from([{"doc": 1}, {"doc": 2}]),
    st.none() | st.sampled_from(["k1", "k2", "k3"]),
    # Most jobs share a lane and a priority, where the tenants have to take turns.
    st.sampled_from([*QUEUES, "interactive"]),
    st.sampled_from([0, 0, 1, 2]),
    st.integers(1, 3),
    st.sampled_from([0, 0, 2_000]),
)
# Every lane, one lane, or two in an order that puts `batch` first.
queue_selections = st.sampled_from([(), (), ("email",), ("batch", "interactive")])
lease_lengths = st.sampled_from(LEASE_LENGTHS)
# The token of the worker a claim took the job from (-1), or a forged one far beyond any
# token a run of a few dozen steps reaches by claiming.
token_offsets = st.sampled_from([-1, 1_000])
# Steps of time as long as the leases, so that a step can end exactly when a lease
# does; the odd millisecond moves off that edge.
time_steps = st.sampled_from([1, 1_000, 1_000, 10_000])

Ending = tuple[type[Outcome], object, int]
"""How an attempt ends: the kind of outcome, a result, and a retry delay."""

endings: st.SearchStrategy[Ending] = st.tuples(
    st.sampled_from([Succeeded, RetryAt, Failed, Cancelled, Released, Deferred]),
    st.sampled_from([None, 7, "done", {"summary": "short", "words": [1, 2]}]),
    st.sampled_from([0, 1_000, 5_000]),
)


class LifecycleMachine(RuleBasedStateMachine):
    """Drives the reference store with random operations and checks the invariants."""

    job_ids = Bundle("job_ids")
    leases = Bundle("leases")

    def __init__(self) -> None:
        super().__init__()
        self.reference = ReferenceStore()
        self.now = START
        self.created: list[int] = []
        # Every fencing token a claim handed out, per job, in order.
        self.tokens_issued: dict[int, list[int]] = defaultdict(list)
        # The jobs as the last step left them, and which jobs the last step redrove.
        self.before: dict[int, Job] = {}
        self.redriven: set[int] = set()

    def perform(self, operation: str, *args: Any) -> Any:
        """Carry out one `Store` operation on the reference and return its result."""
        return getattr(self.reference, operation)(*args)

    @initialize(target=job_ids, specs=st.lists(submissions, min_size=3, max_size=8))
    def submit_some(self, specs: list[Submission]) -> object:
        """Start with a few jobs, so most runs get to claim and finish."""
        return multiple(*(job_id for spec in specs for job_id in self._submit(spec)))

    @rule(target=job_ids, spec=submissions)
    def submit(self, spec: Submission) -> object:
        """Submit a job, sometimes under an idempotency key used before."""
        return multiple(*self._submit(spec))

    @precondition(lambda self: self._any_job(JobState.QUEUED))
    @rule(
        target=leases,
        queues=queue_selections,
        limit=st.integers(1, 3),
        worker_id=st.sampled_from(["w1", "w2"]),
        lease_ms=lease_lengths,
    )
    def claim(self, queues: tuple[str, ...], limit: int, worker_id: str, lease_ms: int) -> object:
        """Claim due jobs; their leases join the pool that later steps finish with."""
        claimed: list[Job] = self.perform(
            "claim", list(queues), limit, worker_id, lease_ms, self.now
        )
        for job in claimed:
            self.tokens_issued[job.id].append(job.lease_token)
        return multiple(*(job.lease for job in claimed))

    @precondition(lambda self: self._any_job(JobState.RUNNING))
    @rule(index=st.integers(0, 2), lease_ms=lease_lengths)
    def heartbeat_worker(self, index: int, lease_ms: int) -> None:
        """One worker extends every lease it holds, as its heartbeat loop does."""
        worker_id = self._running(index).worker_id
        held = [job.lease for job in self.reference.jobs.values() if job.worker_id == worker_id]
        self.perform("heartbeat", held, lease_ms, self.now)

    @rule(
        pool=st.lists(leases, min_size=1, max_size=3, unique_by=lambda lease: lease.job_id),
        lease_ms=lease_lengths,
    )
    def heartbeat(self, pool: list[Lease], lease_ms: int) -> None:
        """Extend leases from the pool: current, stale or forged."""
        self.perform("heartbeat", pool, lease_ms, self.now)

    @precondition(lambda self: self._any_job(JobState.RUNNING))
    @rule(index=st.integers(0, 2), ending=endings)
    def finish_current(self, index: int, ending: Ending) -> None:
        """End a running job's attempt under its current lease."""
        lease = self._running(index).lease
        self.perform("finish", [(lease, self._outcome(lease, ending))], self.now)

    @rule(
        batch=st.lists(
            st.tuples(leases, endings),
            min_size=1,
            max_size=3,
            unique_by=lambda entry: entry[0].job_id,
        )
    )
    def finish(self, batch: list[tuple[Lease, Ending]]) -> None:
        """End attempts under leases from the pool (current, stale or forged) in one call."""
        results = [(lease, self._outcome(lease, ending)) for lease, ending in batch]
        self.perform("finish", results, self.now)

    @precondition(lambda self: self._any_job(JobState.RUNNING))
    @rule(index=st.integers(0, 2), token_offset=token_offsets, ending=endings)
    def zombie_writes(self, index: int, token_offset: int, ending: Ending) -> None:
        """A worker whose lease was taken over (or a forger) writes to a running job."""
        job = self._running(index)
        zombie = Lease(job.id, job.lease_token + token_offset, job.attempt)
        self.perform("heartbeat", [zombie], max(LEASE_LENGTHS), self.now)
        self.perform("finish", [(zombie, self._outcome(zombie, ending))], self.now)

    @precondition(lambda self: self._any_job(JobState.RUNNING) or self._waiting())
    @rule(step=time_steps)
    def expire(self, step: int) -> None:
        """Let time pass, then sweep the leases that ran out."""
        self.now += step
        self.perform("expire_leases", self.now)

    @precondition(lambda self: self._any_job(JobState.QUEUED, JobState.RUNNING))
    @rule(index=st.integers(0, 2))
    def cancel_twice(self, index: int) -> None:
        """Cancel a queued or running job, then again: a cancelled job stays as it is."""
        live = self._jobs_in(JobState.QUEUED, JobState.RUNNING)
        job_id = live[index % len(live)].id
        self.perform("cancel", job_id, self.now)
        self.perform("cancel", job_id, self.now)

    @precondition(lambda self: self._any_job(JobState.FAILED))
    @rule(job_id=st.none() | job_ids)
    def redrive(self, job_id: int | None) -> None:
        """Redrive one job (whatever its state), or every failed job."""
        where = RedriveFilter() if job_id is None else RedriveFilter(job_ids=(job_id,))
        redriven: list[Job] = self.perform("redrive", where, self.now)
        self.redriven = {job.id for job in redriven}

    @invariant()
    def no_job_is_lost(self) -> None:
        """Every job a submission created is still there, and no other."""
        assert sorted(self.reference.jobs) == sorted(self.created)

    @invariant()
    def jobs_are_well_formed(self) -> None:
        """Attempts stay within budget; a lease exactly while running; an end when terminal."""
        for job in self.reference.jobs.values():
            running = job.state is JobState.RUNNING
            assert 0 <= job.attempt <= job.max_attempts
            assert not running or job.attempt >= 1
            assert (job.lease_expires_at is not None) == running
            assert (job.worker_id is not None) == running
            assert (job.finished_at is not None) == job.state.terminal

    @invariant()
    def leases_are_fenced(self) -> None:
        """Each claim got a higher token than the last; at most one lease of a job is live."""
        for job_id, tokens in self.tokens_issued.items():
            assert tokens == sorted(set(tokens))
            assert tokens[-1] == self.reference.jobs[job_id].lease_token
            live = [token for token in tokens if self.reference.holds(Lease(job_id, token, 0))]
            assert len(live) <= 1

    @invariant()
    def every_change_is_a_legal_move(self) -> None:
        """Tokens never go back; states move along the lifecycle; only redrive leaves an end."""
        for job in self.reference.jobs.values():
            old = self.before.get(job.id)
            if old is None:
                continue
            assert job.lease_token >= old.lease_token
            if old.state is job.state:
                continue
            assert (old.state, job.state) in transitions.ALLOWED
            if old.state.terminal:
                assert old.state is JobState.FAILED
                assert job.id in self.redriven
        self.before = dict(self.reference.jobs)
        self.redriven = set()

    def _submit(self, spec: Submission) -> list[int]:
        tenant, payload, key, queue, priority, max_attempts, delay = spec
        new = NewJob(
            task=TASK,
            input=payload,
            tenant=tenant,
            run_at=self.now + delay,
            queue=queue,
            priority=priority,
            max_attempts=max_attempts,
            idempotency_key=key,
            fingerprint=fingerprint(TASK, payload),
        )
        try:
            submitted = self.perform("submit", new, self.now)
        except IdempotencyConflict:
            return []
        if not submitted.created:
            return []
        self.created.append(submitted.job.id)
        return [submitted.job.id]

    def _jobs_in(self, *states: JobState) -> list[Job]:
        return [job for job in self.reference.jobs.values() if job.state in states]

    def _any_job(self, *states: JobState) -> bool:
        return bool(self._jobs_in(*states))

    def _waiting(self) -> bool:
        return any(job.run_at > self.now for job in self._jobs_in(JobState.QUEUED))

    def _running(self, index: int) -> Job:
        running = self._jobs_in(JobState.RUNNING)
        return running[index % len(running)]

    def _outcome(self, lease: Lease, ending: Ending) -> Outcome:
        kind, result, delay = ending
        if kind is Succeeded:
            return Succeeded(result)
        if kind is RetryAt:
            # A worker never retries after the last attempt: it fails the job (see
            # `outcome_for_error`), and the core refuses such a retry.
            if lease.attempt >= self.reference.jobs[lease.job_id].max_attempts:
                return Failed(BOOM)
            return RetryAt(self.now + delay, BOOM)
        if kind is Failed:
            return Failed(BOOM)
        if kind is Deferred:
            return Deferred(self.now + delay)
        return Cancelled() if kind is Cancelled else Released()

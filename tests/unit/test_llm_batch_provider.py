"""The batch protocol's values: custom ids, states, counts and the providers' limits."""

from __future__ import annotations

from backroom.llm.batch.provider import (
    ANTHROPIC_BATCH_LIMITS,
    OPENAI_BATCH_LIMITS,
    BatchCounts,
    BatchState,
    custom_id,
    parse_custom_id,
)


def test_a_custom_id_names_its_job_and_attempt_and_reads_back() -> None:
    assert parse_custom_id(custom_id(123456789, 8)) == (123456789, 8)
    assert len(custom_id(2**63 - 1, 50)) <= 64  # Anthropic's limit on custom ids


def test_ids_backroom_never_wrote_are_refused() -> None:
    for value in ("", "job-", "job-1", "job-x-1", "task-1-1", "job-1-2-3"):
        assert parse_custom_id(value) is None


def test_only_ended_expired_cancelled_or_failed_batches_are_done() -> None:
    assert {state for state in BatchState if state.done} == {
        BatchState.ENDED,
        BatchState.EXPIRED,
        BatchState.CANCELLED,
        BatchState.FAILED,
    }


def test_pending_lines_are_those_without_a_result() -> None:
    assert BatchCounts(total=10, succeeded=6, failed=1).pending == 3
    assert BatchCounts().pending == 0


def test_the_providers_limits() -> None:
    assert OPENAI_BATCH_LIMITS.max_requests == 50_000
    assert OPENAI_BATCH_LIMITS.max_bytes == 200 * 1024 * 1024
    assert ANTHROPIC_BATCH_LIMITS.max_requests == 100_000
    assert ANTHROPIC_BATCH_LIMITS.max_bytes == 256 * 1024 * 1024

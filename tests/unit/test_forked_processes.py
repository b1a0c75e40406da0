"""`run_processes`: N forked children, a failure stopping the others, and (for burst
workers) children that end one by one without stopping the rest."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from backroom.runtime.processes import Child, run_processes

DEADLINE_S = 10.0


def _with_sigterm_blocked(count: int, child: Child, stop_together: bool) -> int:
    """`run_processes` with SIGTERM blocked in the children from their first instruction
    (they wait for it with `sigtimedwait`): a stop that comes before a child runs is
    still seen."""
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])
    try:
        return run_processes(count, child, stop_together=stop_together)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])


def _reaped(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_failing_child_stops_the_others_and_gives_its_status(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def child(index: int) -> None:
        if index == 0:
            raise SystemExit(3)
        signal.pause()  # until stopped
        (tmp_path / "never").touch()

    status = run_processes(2, child, stop_together=False)

    assert status == 3
    assert not (tmp_path / "never").exists()
    assert [record.getMessage().split(" ", 2)[2] for record in caplog.records] == [
        "ended with status 3: stopping the others"
    ]


def test_without_stop_together_a_child_that_ends_leaves_the_others_running(
    tmp_path: Path,
) -> None:
    def child(index: int) -> None:
        if index == 0:
            (tmp_path / "first").write_text(str(os.getpid()))
            return
        deadline = time.monotonic() + DEADLINE_S
        while not (tmp_path / "first").exists() or not _reaped(
            int((tmp_path / "first").read_text() or 0)
        ):
            assert time.monotonic() < deadline, "the first child was never reaped"
            time.sleep(0.001)
        # The parent has seen the first child end: a stop would come now.
        stopped = signal.sigtimedwait([signal.SIGTERM], 0.5) is not None
        (tmp_path / "second").write_text("stopped" if stopped else "ran on")

    status = _with_sigterm_blocked(2, child, stop_together=False)

    assert status == 0
    assert (tmp_path / "second").read_text() == "ran on"


def test_with_stop_together_a_child_that_ends_stops_the_others(tmp_path: Path) -> None:
    def child(index: int) -> None:
        if index == 0:
            return
        stopped = signal.sigtimedwait([signal.SIGTERM], DEADLINE_S) is not None
        (tmp_path / "second").write_text("stopped" if stopped else "ran on")

    status = _with_sigterm_blocked(2, child, stop_together=True)

    assert status == 0
    assert (tmp_path / "second").read_text() == "stopped"

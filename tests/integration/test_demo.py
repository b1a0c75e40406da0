"""The seeds' example timeline, printed by the real engine, byte for byte."""

from __future__ import annotations

import subprocess
import sys

import pytest

from backroom.demo.timeline import run_demo

EXPECTED = """\
submit k1: job-1 (new)
submit k2: job-2 (new)
submit k1: job-1 (duplicate, same job)
submit k3: job-3 (new)
t=0 job-1 attempt 1: succeeded
t=500 job-2 attempt 1: timeout, retry at t=1500
t=1000 job-3 attempt 1: timeout, retry at t=2000
t=1500 job-2 attempt 2: succeeded
t=2000 job-3 attempt 2: timeout, retry at t=4000
t=4000 job-3 attempt 3: failed for good
job-1 succeeded attempts=1 result=summary of report
job-2 succeeded attempts=2 result=summary of flaky
job-3 failed attempts=3 result=-
"""


def lines(**options: int) -> list[str]:
    printed: list[str] = []
    run_demo(emit=printed.append, **options)
    return printed


def test_demo_prints_the_seeds_timeline_exactly() -> None:
    assert "\n".join(lines()) + "\n" == EXPECTED


@pytest.mark.slow
def test_the_cli_prints_the_same_bytes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "backroom", "demo"], capture_output=True, check=True, timeout=60
    )
    assert done.stdout.decode() == EXPECTED


def test_four_attempts_fail_job_3_at_7000() -> None:
    printed = lines(max_attempts=4)
    assert "t=4000 job-3 attempt 3: timeout, retry at t=7000" in printed
    assert "t=7000 job-3 attempt 4: failed for good" in printed


def test_five_attempts_outlast_the_clock() -> None:
    printed = lines(max_attempts=5)
    assert "t=7000 job-3 attempt 4: timeout, retry at t=11000" in printed
    assert printed[-1] == "job-3 queued attempts=4 result=-"


def test_two_jobs_per_tick_start_the_first_two_together() -> None:
    printed = lines(per_tick=2)
    assert printed[4:6] == [
        "t=0 job-1 attempt 1: succeeded",
        "t=0 job-2 attempt 1: timeout, retry at t=1000",
    ]

"""What a job's two log lines (started, succeeded) cost the worker, in microseconds a job.

    python -m bench.job_log_cost [--jobs 20000] [--rounds 5] [--before SRC]

Each format as `backroom worker` configures it (`--log-level warning`: no line;
`info`: readable lines; `--log-json`), the lines written to a stream that drops them
(the cost of the process, not of the disk), on an event loop so that the lines of a
pass go out together as in a worker. With `--before`, the same in a process running
another copy of `src/` (the code before a change), rounds alternating. Printed: the
median of the rounds per format, and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import statistics
import subprocess
import sys
import time

MODES = ("warning", "text", "json")
T0 = 1_700_000_000_000


class _Dropped(io.TextIOBase):
    """A standard error that takes every line and keeps none."""

    def write(self, text: str) -> int:
        return len(text)


def cost(mode: str, jobs: int) -> float:
    """Microseconds a job for its two lines in `mode`."""
    from backroom.cli.logs import configure_logging  # noqa: PLC0415  # the copy under test
    from backroom.core.job import Job, JobState  # noqa: PLC0415
    from backroom.core.outcome import Succeeded  # noqa: PLC0415
    from backroom.telemetry.job_log import log_attempt_end, log_started  # noqa: PLC0415

    job = Job(123_456, "default", "noop", "interactive", 0, JobState.RUNNING, None, 1, 3,
              None, T0, T0, T0, started_at=T0 + 20)  # fmt: skip
    sys.stderr = _Dropped()
    configure_logging("warning" if mode == "warning" else "info", mode == "json")

    async def lines() -> float:
        started = time.perf_counter()
        for n in range(jobs):
            log_started(job)
            log_attempt_end(job, Succeeded(None), T0 + 30)
            if n % 100 == 99:  # a worker's loop pass: a batch of jobs
                await asyncio.sleep(0)
        return time.perf_counter() - started

    seconds = asyncio.run(lines())
    sys.stderr = sys.__stderr__
    return seconds / jobs * 1e6


def child(source: str, jobs: int) -> dict[str, float]:
    """One round of every mode in a process running `source` (src/ of some copy)."""
    code = f"import json, bench.job_log_cost as c; print(json.dumps(c.round_of({jobs})))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, os.getcwd()])}
    output = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    )
    return dict(json.loads(output.stdout))


def round_of(jobs: int) -> dict[str, float]:
    """Every mode once, in this process."""
    return {mode: cost(mode, jobs) for mode in MODES}


def main() -> None:
    """Alternate the rounds of this copy and `--before`, then print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", default="", help="src/ of the code to compare with")
    args = parser.parse_args()
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    sources = {"this": here, **({"before": args.before} if args.before else {})}
    found: dict[str, list[dict[str, float]]] = {name: [] for name in sources}
    loads = []
    for _ in range(args.rounds):
        for name, source in sources.items():
            loads.append(os.getloadavg()[0])
            found[name].append(child(source, args.jobs))
    print(f"load average {statistics.median(loads):.1f} ({min(loads):.1f}-{max(loads):.1f})")
    print("| code | " + " | ".join(MODES) + " |")
    for name, rounds in found.items():
        medians = [statistics.median(r[mode] for r in rounds) for mode in MODES]
        print(f"| {name} | " + " | ".join(f"{value:.1f} us" for value in medians) + " |")


if __name__ == "__main__":
    main()

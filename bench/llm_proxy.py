"""LLM calls behind LiteLLM's proxy: backroom's goodput there beside the same calls
straight to the mock, and one worker's memory with 1,000 calls in flight.

    python -m bench.llm_proxy                                   # the note's run
    python -m bench.llm_proxy --jobs 200 --rpm 120 --tpm 12000  # a quick check

The workload and the limits are those of `bench.llm_lanes`: `--jobs` distinct prompts
against a mock limited to `--rpm` requests and `--tpm` tokens per minute, run as
`llm.respond` jobs by two `backroom worker` processes whose shared lane is configured
with the same limits. Rows, each with a fresh mock (full buckets):

- the theoretical minimum makespan the limits allow;
- backroom straight to the mock (as in `bench.llm_lanes`);
- backroom behind LiteLLM's proxy (installed as the tests install it, see
  tests/llm_proxy/), with the mock behind it: LiteLLM forwards each call and the
  mock's 429s, renaming their waits `llm_provider-retry-after(-ms)`.

The memory table gives one worker's resident memory with `--memory-jobs` calls held
open by the mock (`bench.llm_lanes.memory_row`), read once the worker has that many
established TCP connections to it (counted from /proc).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench.llm_backroom import Lane, backroom_lane_run
from bench.llm_lanes import (
    MODEL,
    WORKER_PROCESSES,
    Limits,
    backroom_run,
    make_workload,
    memory_row,
    minimum_makespan_s,
    serving_mock,
    workload_parser,
)
from bench.llm_loops import RunStats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "llm_proxy"))  # the tests' LiteLLM harness
from litellm_process import running_litellm, upstream_model  # noqa: E402

KEY_ENV = "OPENAI_API_KEY"
"""Where the provider named `openai` takes its key from: here, the proxy's master key."""


@dataclass(frozen=True, slots=True)
class ProxyLane(Lane):
    """A lane whose provider is named `openai`, so that it takes its key from KEY_ENV."""

    def toml(self, base_url: str) -> str:
        """The lane's config file, its provider renamed."""
        return Lane.toml(self, base_url).replace("[providers.mock", "[providers.openai")


@contextmanager
def serving_proxy(limits: Limits) -> Iterator[str]:
    """LiteLLM's proxy, its one model forwarded to a fresh `backroom mock-llm` with
    `limits`; yields the proxy's base URL, its key in the environment (`KEY_ENV`)."""
    mock_options = ["--rpm", str(limits.requests_per_minute)]
    mock_options += ["--tpm", str(limits.tokens_per_minute)]
    mock_options += ["--latency-ms", str(limits.latency_ms)]
    with (
        tempfile.TemporaryDirectory() as folder,
        running_litellm(
            Path(folder), [upstream_model(MODEL, MODEL)], mocks={"mock": mock_options}
        ) as proxy,
    ):
        os.environ[KEY_ENV] = proxy.api_key
        try:
            yield proxy.base_url
        finally:
            del os.environ[KEY_ENV]


def proxy_run(limits: Limits, payloads: list[dict[str, object]], concurrency: int) -> RunStats:
    """The workload as jobs of two worker processes behind the proxy (lane as the mock's)."""
    lane = ProxyLane(MODEL, concurrency, limits.requests_per_minute, limits.tokens_per_minute)
    with serving_proxy(limits) as base_url:
        return backroom_lane_run(base_url, lane, payloads, WORKER_PROCESSES, concurrency)


def row(name: str, stats: RunStats, minimum_s: float, direct_s: float) -> str:
    """One run as a table row: its makespan against the minimum and the direct run."""
    share = stats.rate_limited / stats.calls if stats.calls else 0.0
    calls_per_job = stats.calls / len(stats.attempts) if stats.attempts else 0.0
    return (
        f"| {name} | {stats.makespan_s:.1f} | {stats.makespan_s / minimum_s:.2f}x "
        f"| {stats.makespan_s / direct_s:.2f}x | {stats.calls:,} "
        f"| {stats.rate_limited:,} ({share:.1%}) | {calls_per_job:.2f} "
        f"| {max(stats.attempts, default=0)} | {stats.failed} |"
    )


def main() -> None:
    """Run every row and print markdown tables."""
    parser = workload_parser(__doc__.splitlines()[0])
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    limits = Limits(args.rpm, args.tpm, args.latency_ms)
    workload = make_workload(args.jobs)
    payloads = [call.payload() for call in workload]
    minimum_s = minimum_makespan_s(workload, limits, args.concurrency)
    print(
        f"{args.jobs:,} calls, mock limited to {args.rpm:,} requests and {args.tpm:,} tokens "
        f"per minute, {args.latency_ms} ms latency, {args.concurrency} calls at a time\n"
    )
    print(
        "| run | makespan s | vs minimum | vs direct | calls | 429s | calls per job "
        "| most calls per job | failed |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with serving_mock(limits.mock_config()) as base_url:
        direct = backroom_run(base_url, workload, limits, args.concurrency)
    proxied = proxy_run(limits, payloads, args.concurrency)
    print(f"| theoretical minimum (limits) | {minimum_s:.1f} | 1.00x | | {args.jobs:,} | 0 | 1 |")
    print(row("backroom, straight to the mock", direct, minimum_s, direct.makespan_s))
    print(row("backroom, behind LiteLLM's proxy", proxied, minimum_s, direct.makespan_s))
    if not args.skip_memory:
        print("\n| memory | resident | target |\n| --- | ---: | --- |")
        print(memory_row(args.memory_jobs))


if __name__ == "__main__":
    main()

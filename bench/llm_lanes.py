"""LLM calls against a rate-limited mock: backroom's shared lanes beside a naive loop.

    python -m bench.llm_lanes                                  # the issue's run
    python -m bench.llm_lanes --jobs 200 --rpm 180 --tpm 18000   # a quick check
    python -m bench.llm_lanes --providers admission,completion   # only those rows

The buckets hold a minute's allowance, so the limits bind only when the workload is
larger than that: for a quick check, shrink the limits with the job count.

The workload is `--jobs` `llm.respond`-shaped calls (distinct prompts, with
`max_output_tokens`) against the mock provider (`serve_mock`) limited to `--rpm`
requests and `--tpm` tokens per minute. Each run gets a fresh mock in its own
process, so every run starts with full buckets. Rows:

- the theoretical minimum makespan the limits allow (see `minimum_makespan_s`);
- a naive loop: `--concurrency` loops in one process, each taking the next job and
  retrying it with its own exponential backoff and jitter, sharing nothing about the
  limits (see `bench.llm_loops`);
- the lane rules alone: the same loops, each call first granted by one lane shared in
  memory (`backroom.core.lanes`, no store), as a reference for the next row;
- backroom: the same calls as jobs run by two worker processes (`backroom_run`),
  against each provider accounting of `--providers` (`mock-llm --charge-at`: `usage`,
  `admission` or `completion`), the lane's `charge_at` matching; and, as a control,
  the admission-charging provider with a lane that wrongly refunds unused output.

Each row reports makespan (first call to last answer) against the minimum for that
provider's accounting, calls made, 429s received, and calls per job (mean and most).
A last table gives one worker's resident memory with `--memory-jobs` calls in flight.
"""

from __future__ import annotations

import argparse
import multiprocessing
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from backroom.core.lanes import MS_PER_MINUTE, LaneLimits
from backroom.llm.mock.charge import ChargeAt
from backroom.llm.mock.prompt import prompt_from_responses
from backroom.llm.mock.reply import compose_reply
from backroom.llm.mock.server import MockConfig, serve_mock
from backroom.llm.model_limits import LaneCharging
from backroom.llm.request import LLMRequest
from bench.llm_backroom import Lane, backroom_lane_run, worker_memory
from bench.llm_loops import RunStats, lane_rules_run, naive_run

MODEL = "mock-bench"
MAX_OUTPUT_TOKENS = 64
MOCK_START_TIMEOUT_S = 30
WORKER_PROCESSES = 2
MEMORY_LATENCY_MS = 600_000
"""How long the mock holds each call in the memory row: long enough for all to be in
flight (the worker is stopped as soon as it holds them all)."""


@dataclass(frozen=True, slots=True)
class Call:
    """One job's call, and the tokens the mock will count for it (input plus output)."""

    prompt: str
    tokens: int
    input_tokens: int

    def charged(self, charge_at: ChargeAt) -> int:
        """What a provider with this accounting counts for the call, in the end."""
        if charge_at is ChargeAt.ADMISSION:
            return self.input_tokens + MAX_OUTPUT_TOKENS
        return self.tokens

    def request(self) -> LLMRequest:
        """The call as `respond` takes it."""
        return LLMRequest(MODEL, self.prompt, max_output_tokens=MAX_OUTPUT_TOKENS)

    def payload(self) -> dict[str, object]:
        """The call as an `llm.respond` job's input."""
        return {"model": MODEL, "input": self.prompt, "max_output_tokens": MAX_OUTPUT_TOKENS}


def mock_tokens(prompt: str) -> tuple[int, int]:
    """(input plus output, input) tokens of `prompt`'s call, computed as the mock does."""
    body = {"model": MODEL, "input": prompt, "max_output_tokens": MAX_OUTPUT_TOKENS}
    reply = compose_reply(prompt_from_responses(body), number=0, created_s=0, cached=False)
    return reply.usage.input_tokens + reply.usage.output_tokens, reply.usage.input_tokens


def make_workload(jobs: int) -> list[Call]:
    """`jobs` distinct prompts of 40 to 65 tokens; answers of about the same length."""
    calls = []
    for number in range(jobs):
        filler = "lorem ipsum " * (9 + number % 5 * 2)
        prompt = f"Job {number:05d}: summarize the following text. {filler}".strip()
        calls.append(Call(prompt, *mock_tokens(prompt)))
    return calls


@dataclass(frozen=True, slots=True)
class Limits:
    """The mock's limits and answer latency."""

    requests_per_minute: int
    tokens_per_minute: int
    latency_ms: int
    charge_at: ChargeAt = ChargeAt.USAGE

    def lane_limits(self, concurrency: int) -> LaneLimits:
        """The same limits as a lane's, with `concurrency` calls at a time."""
        return LaneLimits(concurrency, self.requests_per_minute, self.tokens_per_minute)

    def mock_config(self) -> MockConfig:
        """A mock server enforcing these limits."""
        return MockConfig(
            latency_ms=self.latency_ms,
            requests_per_minute=self.requests_per_minute,
            tokens_per_minute=self.tokens_per_minute,
            charge_at=self.charge_at,
        )


def minimum_makespan_s(workload: list[Call], limits: Limits, concurrency: int) -> float:
    """The shortest possible time from the first call to the last answer.

    The mock's buckets start full (a minute's allowance) and refill continuously, so
    the last call can start no sooner than the time both buckets need to refill what
    the whole workload takes beyond one full bucket; it then answers after the latency.
    Orders do not matter: only the totals reach the last call. Nor can `concurrency`
    slots get through more than one call per latency each.
    """
    requests_over = len(workload) - limits.requests_per_minute
    charged = sum(call.charged(limits.charge_at) for call in workload)
    tokens_over = charged - limits.tokens_per_minute
    last_start_ms = max(
        0.0,
        requests_over * MS_PER_MINUTE / limits.requests_per_minute,
        tokens_over * MS_PER_MINUTE / limits.tokens_per_minute,
    )
    rounds = -(-len(workload) // concurrency)
    return max(last_start_ms + limits.latency_ms, rounds * limits.latency_ms) / 1000


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_until_listening(port: int, mock: multiprocessing.process.BaseProcess) -> None:
    deadline = time.perf_counter() + MOCK_START_TIMEOUT_S
    while time.perf_counter() < deadline:
        if not mock.is_alive():
            raise RuntimeError("the mock server exited during start-up")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            time.sleep(0.05)
        else:
            return
    raise RuntimeError(f"the mock server did not listen on port {port} in time")


@contextmanager
def serving_mock(config: MockConfig) -> Iterator[str]:
    """A fresh mock server in its own process (full buckets); yields its base URL."""
    port = _free_port()
    context = multiprocessing.get_context("spawn")
    mock = context.Process(target=serve_mock, args=(config, "127.0.0.1", port), daemon=True)
    mock.start()
    try:
        _wait_until_listening(port, mock)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        mock.terminate()
        mock.join(MOCK_START_TIMEOUT_S)


def backroom_run(
    base_url: str,
    workload: list[Call],
    limits: Limits,
    concurrency: int,
    lane_charge: LaneCharging = LaneCharging.COMPLETION,
) -> RunStats:
    """The workload as `llm.respond` jobs run by `WORKER_PROCESSES` `backroom worker`
    processes, with `concurrency` slots in all, whose shared lane has the mock's limits
    and counts output tokens as `lane_charge` says.

    Makespan runs from the first attempt's start to the last answer, as stored; calls
    and 429s are counted from the stored attempts (see `bench.llm_backroom`).
    """
    lane = Lane(
        MODEL, concurrency, limits.requests_per_minute, limits.tokens_per_minute, lane_charge
    )
    payloads = [call.payload() for call in workload]
    return backroom_lane_run(base_url, lane, payloads, WORKER_PROCESSES, concurrency)


def memory_row(jobs: int) -> str:
    """One worker's resident memory with `jobs` calls in flight (target <= 150 MB),
    read once it holds `jobs` established connections to the mock (sockets open).

    The mock answers after `MEMORY_LATENCY_MS` and limits nothing, so every job's call
    is in flight at once; the lane limits nothing either.
    """
    payloads = [call.payload() for call in make_workload(jobs)]
    with serving_mock(MockConfig(latency_ms=MEMORY_LATENCY_MS)) as base_url:
        rss_kib, peak_kib = worker_memory(base_url, Lane(MODEL, None, None, None), payloads)
    return (
        f"| 1 worker process, {jobs:,} calls in flight | {rss_kib / 1024:.0f} MB RSS "
        f"(peak {peak_kib / 1024:.0f} MB) | target <= 150 MB |"
    )


def _row(provider: str, stats: RunStats, minimum_s: float) -> str:
    share = stats.rate_limited / stats.calls if stats.calls else 0.0
    worst = max(stats.attempts, default=0)
    mean = sum(stats.attempts) / len(stats.attempts) if stats.attempts else 0.0
    return (
        f"| {provider} | {stats.name} | {stats.makespan_s:.1f} | {minimum_s:.1f} "
        f"| {stats.makespan_s / minimum_s:.2f}x | {stats.calls:,} "
        f"| {stats.rate_limited:,} ({share:.1%}) | {mean:.2f} / {worst} | {stats.failed} |"
    )


LANE_CHARGING = {
    ChargeAt.USAGE: LaneCharging.COMPLETION,
    ChargeAt.ADMISSION: LaneCharging.ADMISSION,
    ChargeAt.COMPLETION: LaneCharging.COMPLETION,
}
"""The lane accounting that matches each provider accounting."""


def _reference_rows(workload: list[Call], limits: Limits, concurrency: int, seed: int) -> None:
    """The naive loop and the lane rules alone, against the default provider."""
    minimum_s, provider = minimum_makespan_s(workload, limits, concurrency), "`usage`"
    requests = [call.request() for call in workload]
    with serving_mock(limits.mock_config()) as base_url:
        print(_row(provider, naive_run(base_url, requests, concurrency, seed), minimum_s))
    with serving_mock(limits.mock_config()) as base_url:
        stats = lane_rules_run(base_url, requests, limits.lane_limits(concurrency), concurrency)
        print(_row(provider, stats, minimum_s))


def _backroom_row(
    workload: list[Call], limits: Limits, concurrency: int, lane_charge: LaneCharging
) -> None:
    minimum_s = minimum_makespan_s(workload, limits, concurrency)
    with serving_mock(limits.mock_config()) as base_url:
        stats = backroom_run(base_url, workload, limits, concurrency, lane_charge)
    provider = f"`{limits.charge_at}`, lane `charge_at = {lane_charge}`"
    print(_row(provider, stats, minimum_s))


def workload_parser(description: str) -> argparse.ArgumentParser:
    """The options of the workload, the mock's limits and the memory row."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--jobs", type=int, default=1_000)
    parser.add_argument("--rpm", type=int, default=600, help="the mock's requests per minute")
    parser.add_argument("--tpm", type=int, default=60_000, help="the mock's tokens per minute")
    parser.add_argument("--latency-ms", type=int, default=100, help="the mock's answer delay")
    parser.add_argument("--concurrency", type=int, default=100, help="calls in flight at most")
    parser.add_argument("--memory-jobs", type=int, default=1_000, help="calls held in flight")
    return parser


def main() -> None:
    """Run every row and print a markdown table."""
    parser = workload_parser(__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--providers", default="usage,admission,completion")
    parser.add_argument("--no-reference", action="store_true", help="skip naive and lane rows")
    args = parser.parse_args()
    workload = make_workload(args.jobs)
    total_tokens = sum(call.tokens for call in workload)
    print(
        f"{args.jobs:,} calls, {total_tokens:,} tokens used, mock limited to {args.rpm:,} "
        f"requests and {args.tpm:,} tokens per minute, {args.latency_ms} ms latency\n"
    )
    print("| provider | run | makespan s | minimum s | vs minimum | calls | 429s "
          "| calls per job (mean / most) | failed |")  # fmt: skip
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    if not args.no_reference:
        _reference_rows(workload, Limits(args.rpm, args.tpm, args.latency_ms), args.concurrency,
                        args.seed)  # fmt: skip
    for name in args.providers.split(","):
        limits = Limits(args.rpm, args.tpm, args.latency_ms, ChargeAt(name))
        _backroom_row(workload, limits, args.concurrency, LANE_CHARGING[limits.charge_at])
        if limits.charge_at is ChargeAt.ADMISSION:
            _backroom_row(workload, limits, args.concurrency, LaneCharging.COMPLETION)
    if args.memory_jobs:
        print("\n| memory | resident | target |\n| --- | ---: | --- |")
        print(memory_row(args.memory_jobs))


if __name__ == "__main__":
    main()

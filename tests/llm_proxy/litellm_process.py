"""LiteLLM's proxy, and a `backroom mock-llm` behind it, as real processes on loopback.

`running_litellm(folder, models)` writes a LiteLLM config, starts `litellm --config`
on a free 127.0.0.1 port with a master key of its own, offline
(LITELLM_LOCAL_MODEL_COST_MAP=True), and yields a `LiteLLMProxy` once its health
endpoint answers. `started_litellm` starts the same processes but yields at once a
function that waits for them, so a proxy can start while other work goes on.
Models are LiteLLM `model_list` entries; `mocked_model` builds one
that LiteLLM answers itself (`mock_response`), `upstream_model` one that it forwards to
a `backroom mock-llm` process started beside it, so the mock's rate-limit headers, 429s
and scripted faults reach backroom the way LiteLLM really forwards them
(`llm_provider-*` headers, its own error bodies).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from litellm_install import ensure_litellm, litellm_command

from backroom.llm.config import ModelConfig, ProviderConfig

# Importing LiteLLM's proxy takes ~12 s of CPU: far longer on a loaded 2-core machine.
STARTUP_DEADLINE_S = 240
STOP_TIMEOUT_S = 30
CLI_STARTER = "from backroom.cli.main import main; main()"
# No retries inside LiteLLM by default: what backroom does with a refusal is under test.
DEFAULT_LITELLM_SETTINGS: Mapping[str, Any] = {"num_retries": 0, "request_timeout": 600}
# Deployment rpm/tpm are only routing hints unless this check enforces them (with 429s).
DEFAULT_ROUTER_SETTINGS: Mapping[str, Any] = {
    "num_retries": 0,
    "optional_pre_call_checks": ["enforce_model_rate_limits"],
}


def mocked_model(name: str, response: str = "Hello from LiteLLM", **params: Any) -> dict[str, Any]:
    """A model LiteLLM answers itself with `response`; `params` adds e.g. `rpm=3`."""
    return {
        "model_name": name,
        "litellm_params": {"model": f"openai/{name}", "mock_response": response, **params},
    }


def mock_placeholder(mock: str) -> str:
    """Stands for the base URL of the mock called `mock` until it is running."""
    return f"{{mock-llm:{mock}}}"


def upstream_model(
    name: str, upstream: str = "mock-1", *, mock: str = "mock", **params: Any
) -> dict[str, Any]:
    """A model LiteLLM forwards to the `backroom mock-llm` called `mock` as `upstream`."""
    litellm_params = {
        "model": f"openai/{upstream}",
        "api_base": mock_placeholder(mock),
        "api_key": "sk-mock-upstream",
        **params,
    }
    return {"model_name": name, "litellm_params": litellm_params}


@dataclass(frozen=True)
class LiteLLMProxy:
    """A running LiteLLM proxy: its OpenAI base URL, key, models, and log file."""

    base_url: str
    """`http://127.0.0.1:PORT/v1`, as the OpenAI SDK takes it."""
    api_key: str
    models: tuple[str, ...]
    log: Path
    mock_urls: Mapping[str, str] = field(default_factory=dict)
    """The base URL of each `backroom mock-llm` behind it, by the name models use."""

    @property
    def mock_url(self) -> str:
        """The base URL of the mock called `mock` (the default of `upstream_model`)."""
        return self.mock_urls["mock"]

    def provider(
        self, name: str = "litellm", *, chat_only: bool = False, models: Sequence[ModelConfig] = ()
    ) -> ProviderConfig:
        """A backroom provider for this proxy (its key, and `models`' limits and prices);
        it takes any model name the proxy serves (`any_model`), listed or not."""
        return ProviderConfig(
            name,
            self.base_url,
            api_key=self.api_key,
            chat_only=chat_only,
            models=tuple(models),
            any_model=True,
        )

    def log_text(self) -> str:
        """What the proxy has logged so far."""
        return self.log.read_text(errors="replace")


ProxyFactory = Callable[..., LiteLLMProxy]
"""The `litellm_proxy_factory` fixture: `running_litellm`'s arguments but the folder."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the process to use it binds it later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until_answers(
    url: str, process: subprocess.Popen[bytes], log: Path, ok: Callable[[int], bool]
) -> None:
    """Poll `url` until its status passes `ok`; fail at once if the process exits."""
    deadline = time.monotonic() + STARTUP_DEADLINE_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"{process.args!r} exited during start-up:\n{_tail(log)}")
        try:
            if ok(httpx.get(url, timeout=2).status_code):
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)  # a real process is starting: poll it, up to the deadline
    raise AssertionError(f"{url} did not answer within {STARTUP_DEADLINE_S} s:\n{_tail(log)}")


def _tail(log: Path, lines: int = 40) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


@contextmanager
def _process(command: list[str], log: Path, **options: Any) -> Iterator[subprocess.Popen[bytes]]:
    """Run `command` with its output in `log`; SIGTERM it (then SIGKILL) at the end."""
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, **options)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@dataclass(frozen=True)
class _Starting:
    """A process that was started: `wait()` polls `url` until its status passes `ok`."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path
    ok: Callable[[int], bool]

    def wait(self) -> None:
        """Return once it answers (at once if it did before); fail if it exits or times out."""
        wait_until_answers(self.url, self.process, self.log, self.ok)


@contextmanager
def _started_mock_llm(folder: Path, port: int, *options: str) -> Iterator[_Starting]:
    """`backroom mock-llm OPTIONS` on `port`, started but not yet waited for."""
    command = [sys.executable, "-c", CLI_STARTER, "mock-llm", "--port", str(port), *options]
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "mock-llm.log"
    with _process(command, log) as process:
        # The mock has no health route: any HTTP answer (a 404) means it listens.
        yield _Starting(f"http://127.0.0.1:{port}/v1/health", process, log, lambda _: True)


def _environment(master_key: str) -> dict[str, str]:
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("OPENAI_")
    }
    environment.update(
        LITELLM_LOCAL_MODEL_COST_MAP="True",  # offline: no fetch of the remote price map
        LITELLM_MASTER_KEY=master_key,  # LiteLLM refuses to start without one
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    return environment


def _config(
    models: Sequence[Mapping[str, Any]],
    mock_urls: Mapping[str, str],
    litellm_settings: Mapping[str, Any] | None,
    router_settings: Mapping[str, Any] | None,
) -> dict[str, Any]:
    text = json.dumps(list(models))
    for mock, url in mock_urls.items():
        text = text.replace(mock_placeholder(mock), url)
    return {
        "model_list": json.loads(text),
        "litellm_settings": {**DEFAULT_LITELLM_SETTINGS, **(litellm_settings or {})},
        "router_settings": {**DEFAULT_ROUTER_SETTINGS, **(router_settings or {})},
    }


def _mocks_used(models: Sequence[Mapping[str, Any]]) -> list[str]:
    text = json.dumps(list(models))
    return sorted(set(re.findall(r"\{mock-llm:([^}]+)\}", text)))


@contextmanager
def started_litellm(
    folder: Path,
    models: Sequence[Mapping[str, Any]],
    *,
    mocks: Mapping[str, Sequence[str]] | None = None,
    litellm_settings: Mapping[str, Any] | None = None,
    router_settings: Mapping[str, Any] | None = None,
) -> Iterator[Callable[[], LiteLLMProxy]]:
    """Start `running_litellm`'s processes and yield at once a function that waits until
    they all answer and returns the proxy (at once when they did before)."""
    venv = ensure_litellm()
    folder.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        ports = {mock: free_port() for mock in _mocks_used(models)}
        starting = [
            stack.enter_context(
                _started_mock_llm(folder / mock, port, *(mocks or {}).get(mock, ()))
            )
            for mock, port in ports.items()
        ]
        mock_urls = {mock: f"http://127.0.0.1:{port}/v1" for mock, port in ports.items()}
        config = folder / "litellm.yaml"  # JSON is YAML: LiteLLM reads it as its config
        settings = _config(models, mock_urls, litellm_settings, router_settings)
        config.write_text(json.dumps(settings, indent=2))
        key = f"sk-backroom-{secrets.token_hex(16)}"
        port = free_port()
        command = [str(litellm_command(venv)), "--config", str(config)]
        command += ["--host", "127.0.0.1", "--port", str(port)]
        log = folder / "litellm.log"
        process = stack.enter_context(_process(command, log, env=_environment(key), cwd=folder))
        url = f"http://127.0.0.1:{port}"
        starting.append(_Starting(f"{url}/health/liveliness", process, log, lambda c: c == 200))
        names = tuple(str(model["model_name"]) for model in models)

        def ready() -> LiteLLMProxy:
            for one in starting:
                one.wait()
            return LiteLLMProxy(f"{url}/v1", key, names, log, mock_urls)

        yield ready


@contextmanager
def running_litellm(
    folder: Path,
    models: Sequence[Mapping[str, Any]],
    *,
    mocks: Mapping[str, Sequence[str]] | None = None,
    litellm_settings: Mapping[str, Any] | None = None,
    router_settings: Mapping[str, Any] | None = None,
) -> Iterator[LiteLLMProxy]:
    """LiteLLM's proxy serving `models` on 127.0.0.1; each stopped at the end.

    Every mock a model forwards to runs as `backroom mock-llm OPTIONS`, with the
    options `mocks` gives its name (none otherwise). `litellm_settings` and
    `router_settings` are merged over the defaults (no retries inside LiteLLM,
    deployment rpm/tpm enforced).
    """
    options = {"litellm_settings": litellm_settings, "router_settings": router_settings}
    with started_litellm(folder, models, mocks=mocks, **options) as ready:
        yield ready()

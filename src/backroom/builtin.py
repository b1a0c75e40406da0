"""`backroom.builtin:app`: the built-in tasks as an App of their own.

`llm.respond`, `demo.summarize` and `demo.noop` are what `backroom serve` runs by
default. To run them in a separate worker process:

    backroom worker --app backroom.builtin:app           # the built-in tasks only
    backroom worker --app myproject.jobs:app --builtin-tasks   # yours and them

The app names no database, so the worker's `--db` or `BACKROOM_DATABASE_URL` decides.
`llm.respond` calls the providers of `BACKROOM_CONFIG` and `OPENAI_*`, or the offline
simulated provider when none is configured, exactly as `backroom serve` does.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from backroom.app import App
from backroom.config import Settings, environment
from backroom.demo.tasks import demo_app, register_demo_tasks, register_respond
from backroom.llm.config import LLMConfig, load_llm_config

__all__ = ["add_builtin_tasks", "builtin_app", "configured_llm"]


def configured_llm(path: Path | None = None) -> LLMConfig:
    """The LLM providers of the TOML file at `path` (else BACKROOM_CONFIG) and OPENAI_*."""
    settings = Settings.from_env()
    chosen = path or (Path(settings.config_path) if settings.config_path else None)
    return load_llm_config(chosen, environment())


def add_builtin_tasks(target: App, llm: LLMConfig) -> None:
    """Register the built-in tasks on `target` (the CLI's `--builtin-tasks`)."""
    register_demo_tasks(target)
    register_respond(target, llm)


@cache
def builtin_app() -> App:
    """The built-in tasks, on the database the CLI chooses: `backroom.builtin:app`."""
    return demo_app(llm=configured_llm())


def __getattr__(name: str) -> App:
    # `app` is built on first use, so that importing this module for `add_builtin_tasks`
    # (with `--config`) reads no provider configuration of its own.
    if name == "app":
        return builtin_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

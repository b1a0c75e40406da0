"""What the HTTP API needs to know besides the app: limits, queues and the admin key."""

from __future__ import annotations

from dataclasses import dataclass, field

from backroom.api.body_limit import DEFAULT_MAX_BODY_BYTES
from backroom.config import Settings
from backroom.core.job import DEFAULT_QUEUES
from backroom.tasks import TaskRegistry
from backroom.webhooks.targets import TargetPolicy


@dataclass(frozen=True, slots=True)
class ApiSettings:
    """Settings of one API instance.

    admin_key           a key that acts on every tenant's jobs (None: only admin tenants)
    max_body_bytes      larger request bodies are refused with 413
    queues              the queues a submission may name, most urgent first, besides
                        those the app's tasks name (see `queues_with`)
    full_retry_after_s  the Retry-After of a 429 sent when a tenant is at its cap
    key_cache_ms        how long a key's tenant is remembered (a revoked key keeps
                        working that long in a running server; 0: always ask the store)
    webhook_policy      which addresses webhooks may go to (public ones, plus
                        BACKROOM_WEBHOOK_ALLOW)
    dashboard_secret    signs dashboard session cookies (None: one made once and kept
                        in the store, shared by every server on it)
    metrics_token       the Bearer token `GET /metrics` asks for (None: open to all)
    """

    admin_key: str | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    queues: tuple[str, ...] = DEFAULT_QUEUES
    full_retry_after_s: int = 5
    key_cache_ms: int = 2_000
    webhook_policy: TargetPolicy = field(default_factory=TargetPolicy)
    dashboard_secret: str | None = field(default=None, repr=False)
    metrics_token: str | None = None

    def queues_with(self, tasks: TaskRegistry) -> tuple[str, ...]:
        """The configured queues, then those `tasks` name as their default."""
        return tuple(dict.fromkeys((*self.queues, *tasks.queues())))

    @classmethod
    def from_settings(cls, settings: Settings) -> ApiSettings:
        """The API settings the process settings (the environment) imply."""
        return cls(
            admin_key=settings.admin_key,
            webhook_policy=TargetPolicy.from_setting(settings.webhook_allow),
            dashboard_secret=settings.dashboard_secret,
            metrics_token=settings.metrics_token,
        )

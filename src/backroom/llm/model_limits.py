"""How hard one model may be used, and how its provider counts output tokens."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class LaneCharging(enum.StrEnum):
    """When the provider counts a call's output tokens against its tokens per minute.

    `admission`: the request's `max_output_tokens` (or the model's
    `default_output_tokens`) when the call is admitted, never given back, as OpenAI
    documents it: the lane keeps the reserved output charged. `completion`: the
    output really produced, when the answer ends: the lane gives back what the call
    reserved and did not use.
    """

    ADMISSION = "admission"
    COMPLETION = "completion"


@dataclass(frozen=True, slots=True)
class ModelLimits:
    """How hard one model may be used; None means no limit of that kind.

    `default_output_tokens` is reserved for a call that sets no `max_output_tokens`
    (None: `backroom.llm.lanes.DEFAULT_OUTPUT_TOKENS`); `charge_at` is the
    provider's accounting of output tokens (`LaneCharging`).
    """

    max_concurrency: int | None = None
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    default_output_tokens: int | None = None
    charge_at: LaneCharging = LaneCharging.ADMISSION

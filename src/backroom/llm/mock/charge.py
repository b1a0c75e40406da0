"""When the mock charges a call's tokens to its model's bucket (see `mock_limits`).

Apart from the limits themselves so that the command line can offer the choices
without loading the web stack.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ChargeAt(enum.StrEnum):
    """When the mock charges a call's tokens to its model's bucket (see the module)."""

    USAGE = "usage"
    ADMISSION = "admission"
    COMPLETION = "completion"


@dataclass(frozen=True, slots=True)
class TokenCharge:
    """One call's tokens as the mock's accounting sees them."""

    input_tokens: int
    output_tokens: int
    max_output_tokens: int | None

    def at_admission(self, charge_at: ChargeAt) -> int:
        """The tokens the bucket must hold to admit the call."""
        if charge_at is ChargeAt.ADMISSION and self.max_output_tokens is not None:
            return self.input_tokens + self.max_output_tokens
        if charge_at is ChargeAt.COMPLETION:
            return self.input_tokens
        return self.input_tokens + self.output_tokens

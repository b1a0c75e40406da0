"""Webhook signatures, per the Standard Webhooks specification.

A delivery carries three headers: `webhook-id` (the same for every retry of one event, so
a receiver can deduplicate), `webhook-timestamp` (seconds, new at every attempt) and
`webhook-signature`: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per secret and
separated by spaces, so that while a secret is being rotated the receiver may verify with
either the old or the new one. The body is signed exactly as it is sent.

Secrets look like `whsec_<base64 of 32 random bytes>`, as the specification's libraries
expect; the `standardwebhooks` package both signs here and verifies in receivers' code.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Sequence
from datetime import UTC, datetime

from standardwebhooks import Webhook

WHSEC_PREFIX = "whsec_"


def new_secret() -> str:
    """A fresh signing secret: `whsec_` and 32 random bytes in base64."""
    return WHSEC_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def signature_headers(
    message_id: str, timestamp_s: int, body: str, signing_secrets: Sequence[str]
) -> dict[str, str]:
    """The three Standard Webhooks headers for `body`, signed with every secret given."""
    when = datetime.fromtimestamp(timestamp_s, tz=UTC)
    signatures = [Webhook(secret).sign(message_id, when, body) for secret in signing_secrets]
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp_s),
        "webhook-signature": " ".join(signatures),
    }

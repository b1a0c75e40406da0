"""A provider-independent token estimate, for budgets made before a call is sent."""

from __future__ import annotations

# English text averages about four characters per token in OpenAI's tokenizers; a
# rough count is enough to reserve budget, and real usage corrects it afterwards.
CHARS_PER_TOKEN = 4
# OpenAI counts 85 tokens for an image at low detail, and 85 plus 170 per 512-pixel
# tile at high detail: 765 for a 1024x1024 image, the size most images are scaled to.
LOW_DETAIL_IMAGE_TOKENS = 85
IMAGE_TOKENS = 765


def estimate_tokens(text: str) -> int:
    """About how many tokens `text` is: one per four characters, rounded up.

    >>> estimate_tokens(""), estimate_tokens("abcd"), estimate_tokens("abcde")
    (0, 1, 2)
    """
    return -(-len(text) // CHARS_PER_TOKEN)


def estimate_image_tokens(detail: str | None) -> int:
    """About how many input tokens an image is at `detail` (`low`, `high`, `auto`)."""
    return LOW_DETAIL_IMAGE_TOKENS if detail == "low" else IMAGE_TOKENS

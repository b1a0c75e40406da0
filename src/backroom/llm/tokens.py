"""A provider-independent token estimate, for budgets made before a call is sent."""

from __future__ import annotations

# English text averages about four characters per token in OpenAI's tokenizers; a
# rough count is enough to reserve budget, and real usage corrects it afterwards.
CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """About how many tokens `text` is: one per four characters, rounded up.

    >>> estimate_tokens(""), estimate_tokens("abcd"), estimate_tokens("abcde")
    (0, 1, 2)
    """
    return -(-len(text) // CHARS_PER_TOKEN)

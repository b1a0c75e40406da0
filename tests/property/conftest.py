"""Shared set-up for the property tests."""

import pytest

# The machine and the reference store live in helper modules; rewrite their asserts
# too, so a broken invariant reports the values it compared.
pytest.register_assert_rewrite("lifecycle_machine", "reference_store")

"""Batch offload: jobs sent through a provider's batch API at its batch price."""

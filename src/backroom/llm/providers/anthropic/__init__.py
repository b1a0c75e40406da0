"""Anthropic's Messages API through the `anthropic` SDK, behind the provider seam."""

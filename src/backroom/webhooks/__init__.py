"""Signed webhooks: subscriptions, the Standard Webhooks signature, the SSRF guard, delivery."""

"""A Python client for a backroom server: `Client` (blocking), `AsyncClient`, and their errors."""

from backroom.client.clients import AsyncClient, Client

__all__ = ["AsyncClient", "Client"]

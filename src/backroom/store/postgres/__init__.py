"""The PostgreSQL store, for many API servers and workers on many machines."""

from backroom.store.postgres.store import PostgresStore

__all__ = ["PostgresStore"]

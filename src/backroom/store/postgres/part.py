"""What every part of `PostgresStore` shares: the pool, the claims' session and the
new-work channel.

`PostgresStore` is assembled from one class per part of the `Store` protocol
(`PostgresJobs`, `PostgresLeases`, ...), each in the module that holds its SQL.
"""

from __future__ import annotations

from backroom.core.errors import LeaseLost
from backroom.core.job import Lease
from backroom.store.postgres.claim_session import ClaimSession
from backroom.store.postgres.database import PostgresDatabase
from backroom.store.postgres.feed_hint import FeedHint
from backroom.store.postgres.listener import ChannelListener, PollingOnly
from backroom.store.postgres.upkeep import StatisticsUpkeep


class PostgresPart:
    """The state the parts of `PostgresStore` share; `PostgresStore.__init__` sets it."""

    _database: PostgresDatabase
    _claims: ClaimSession
    """The session every claim of the process runs on (see `claim_session`)."""
    _channel: str
    """The LISTEN/NOTIFY channel on which writes announce claimable work."""
    _listener: ChannelListener | PollingOnly
    _feed_hint: FeedHint
    """Wakes the feed's readers after a claim or finish that did not (see `feed_hint`)."""
    _statistics: StatisticsUpkeep
    """Keeps the planner's statistics where autovacuum does not (see `upkeep`)."""


def lease_lost(lease: Lease) -> LeaseLost:
    """The error of a write whose lease is no longer held."""
    return LeaseLost(f"job {lease.job_id} is no longer held under lease {lease.token}")
